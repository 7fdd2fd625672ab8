#!/bin/bash
# The remote executor through a fake launcher (docs/cluster.md): `env`
# runs `storyctl job` on this machine, with its scratch directory outside
# the repository and nothing shared but the git remote.  The same batch
# run locally and remotely gives the same records; the work arrives
# through the branch; a timeout stops the job, which pushes what the
# agent did; executor validation.
. "$(dirname "$0")/lib.sh"
. "$STORYCTL_SRC/tests/e2e/lib_remote.sh"
PATH="$(dirname "$STORYCTL"):$PATH"
export PATH

# --- the same batch, local and remote -------------------------------------
remote_batch
run_sc -C "$P" run -j 2
expect_rc "the local run ends with stories deferred and escalated (exit 3)" 3
remote_records >"$T_TMP/local.json"
check "the local records cover the batch" test "$(wc -l <"$T_TMP/local.json")" -eq 4

remote_batch
bare="$T_TMP/remote.git"
git init -q --bare "$bare"
scratch="$T_TMP/scratch"
remote_config "$bare" "[\"env\", \"TMPDIR=$scratch\", \"STORYCTL_TEST_REMOTE=1\"]" '[]'
run_sc -C "$P" run -j 2
expect_rc "the remote run ends the same way (exit 3)" 3
remote_records >"$T_TMP/remote.json"
remote_compare "local and remote runs of the same batch give the same records" \
	"$T_TMP/local.json" "$T_TMP/remote.json"
check "the remote holds the story branches" git -C "$bare" show-ref -q --verify refs/heads/storyctl/story/r-done
check "the job's commit is on the remote" bash -c 'git -C "$1" log --format=%s storyctl/story/r-done | grep -q "^storyctl job: r-done attempt 2"' _ "$bare"
check "the work came back: the story's branch has every box checked" \
	bash -c '! git -C "$1" show storyctl/story/r-done:docs/stories/r-done.md | grep -q "^- \[ \]"' _ "$P"
check "the scratch clones are gone" bash -c '[ -z "$(ls -A "$1" 2>/dev/null)" ]' _ "$scratch"
check "the main working tree is untouched" bash -c '! grep -q "^- \[x\]" "$1"/docs/stories/r-first.md' _ "$P"
log=$(ls "$P"/.storyctl/logs/r-esc.a1.*.log)
check "the agent's output streamed through the launcher into the log" grep -q boom "$log"
argv=$(sql "SELECT argv_json FROM attempts WHERE story_id = 'r-done' LIMIT 1")
expect_match "the record holds the agent's argv, not the launcher's" "$argv" '^\["[^"]*sim-agent"'

# --- -j 1 works in a worktree too ------------------------------------------
new_project
new_story "$P" one 2 '<!-- sim *: checkall -->'
commit_all
git init -q --bare "$T_TMP/one.git"
remote_config "$T_TMP/one.git" "[\"env\", \"TMPDIR=$scratch\"]" '[]'
run_sc -C "$P" run
expect_rc "a remote run with -j 1 succeeds" 0
check "its work is on the story's branch" bash -c 'git -C "$1" show storyctl/story/one:docs/stories/one.md | grep -q "^- \[x\] Task 2"' _ "$P"

# --- a timeout: the job is stopped, pushes what the agent did, cancel runs --
new_project '{"kill_grace_s": 4}'
new_story "$P" slow 3 '<!-- sim *: check 1; hang -->'
commit_all
jq '.agents.primary.timeout_s = 2 | .agents.fallback.timeout_s = 2 | .policy.max_attempts = 1' \
	"$P/storyctl.json" >"$P/x" && mv "$P/x" "$P/storyctl.json"
git init -q --bare "$T_TMP/slow.git"
remote_config "$T_TMP/slow.git" "[\"env\", \"TMPDIR=$scratch\"]" \
	"[\"sh\", \"-c\", \"echo cancelled \$1 \$2 >>$T_TMP/cancel.log\", \"cancel\", \"{story_id}\", \"{attempt}\"]"
run_sc -C "$P" run
expect_rc "the timed-out story ends escalated (exit 3)" 3
run_sc -C "$P" show slow --json
expect_json "the attempt is a timeout" '.attempts[0].outcome == "timeout"'
expect_json "with the progress the job pushed when it was stopped (1/3)" '.attempts[0].tasks_completed == 1'
check "executor.cancel ran with the story and the attempt" grep -qx 'cancelled slow 1' "$T_TMP/cancel.log"
check "no job or agent is left running" bash -c '! pgrep -f "[s]toryctl job .*storyctl/story/slow|[s]im-agent .*slow.md" >/dev/null'

# --- a remote that cannot be reached stops the batch before any attempt -----
new_project
new_story "$P" gone 1
commit_all
remote_config "$T_TMP/no-such-dir/x.git" '["env"]' '[]'
run_sc -C "$P" run
expect_rc "an unreachable remote stops the batch (exit 74)" 74
expect_match "naming the story and the remote" "$T_ERR" 'gone: executor.remote: .*no-such-dir/x.git'
check "no attempt was recorded" test "$(sql 'SELECT count(*) FROM attempts')" = 0
check "the story stays pending for resume" test "$(sql "SELECT status FROM stories WHERE id = 'gone'")" = pending

# --- a password in the remote's URL is not shown (docs/cluster.md#credentials)
# The only way libgit2 takes https credentials from storyctl is the URL;
# port 9 on loopback refuses the connection at once.
new_project
new_story "$P" tok 1
commit_all
remote_config "https://bob:s3cretT0ken99@127.0.0.1:9/team/x.git" '["env"]' '[]'
run_sc -C "$P" run
expect_rc "a remote that refuses the push stops the batch (exit 74)" 74
expect_match "the message names the remote, user and host" "$T_ERR" 'executor.remote: https://bob:.*@127.0.0.1:9/team/x.git: push failed'
check "the password is not in the message" bash -c '! printf "%s\n" "$1" | grep -q s3cretT0ken99' _ "$T_ERR"
check "nor in the state dir's note of the stop" bash -c '! grep -rqa s3cretT0ken99 "$1/.storyctl/lock" "$1/.storyctl/state.db"' _ "$P"

# --- validation ------------------------------------------------------------
new_project
new_story "$P" v 1
bad() {
	jq --argjson e "$2" '. + {executor: $e}' "$P/storyctl.json" >"$T_TMP/bad.json"
	run_sc -C "$P" -c "$T_TMP/bad.json" check
	expect_rc "$1: rejected (exit 65)" 65
	expect_match "$1: the message names the key" "$T_ERR" "$3"
}
bad "an unknown kind" '{"kind": "k8s"}' 'executor.kind'
bad "remote without a URL" '{"kind": "remote", "launch": []}' 'executor.remote'
bad "a key local does not take" '{"kind": "local", "launch": []}' 'executor.launch'
bad "an agent placeholder in launch" '{"kind": "remote", "remote": "x.git", "launch": ["{prompt}"]}' 'executor.launch'
bad "an unknown placeholder in cancel" '{"kind": "remote", "remote": "x.git", "cancel": ["{nope}"]}' 'executor.cancel'
jq '.agents.primary.command += ["{prompt_file}"] | . + {executor: {kind: "remote", remote: "x.git"}}' \
	"$P/storyctl.json" >"$T_TMP/bad.json"
run_sc -C "$P" -c "$T_TMP/bad.json" check
expect_match "{prompt_file} is refused with the remote executor" "$T_ERR" 'prompt_file'

# the agent's program is the worker's business; the launcher is ours
jq '.agents.primary.command[0] = "no-such-agent-here" | .agents.fallback.command[0] = "no-such-agent-here" | . + {executor: {kind: "remote", remote: "x.git", launch: ["env"]}}' \
	"$P/storyctl.json" >"$P/ok.json"
run_sc -C "$P" -c "$P/ok.json" check
expect_rc "check does not look for a remote agent's program here (exit 0)" 0
check "and says nothing is missing" bash -c '! grep -q "not found" <<<"$1"' _ "$T_ERR$T_OUT"
jq '.executor.launch = ["no-such-launcher"]' "$P/ok.json" >"$P/bad.json"
run_sc -C "$P" -c "$P/bad.json" run
expect_rc "run refuses a launcher it cannot find (exit 69)" 69
expect_match "and names executor.launch" "$T_ERR" 'executor.launch'
finish
