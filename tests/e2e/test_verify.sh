#!/bin/bash
# Verification (docs/verification.md): gates, the review panel, and
# committing verified work with git.commit_work.
. "$(dirname "$0")/lib.sh"
gate="$STORYCTL_SRC/tests/e2e/agents/gate"
reviewer="$STORYCTL_SRC/tests/e2e/agents/reviewer"

# --- a gate failing, then passing ---------------------------------------------
EXTRA_JSON='"gates": [{"name": "lint", "command": ["'"$gate"'", "lint", "pass"]}, {"name": "tests", "command": ["'"$gate"'", "tests", "failonce"], "timeout_s": 20}],' \
	new_project
new_story "$P" g1 2 '<!-- sim *: saveprompt; checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "gate failing then passing: done (exit 0)" 0
run_sc -C "$P" show g1 --json
expect_json "attempt 1 is gate_failed / GATE_FAILED" '.attempts[0].outcome == "gate_failed" and .attempts[0].error_code == "GATE_FAILED"'
expect_json "the failing gate's name, exit status and output are recorded" '.attempts[0].gate == "tests" and .attempts[0].gate_exit == 2 and (.attempts[0].gate_output | test("expected 200, got 500"))'
expect_json "attempt 2 passes the gates" '.attempts[1].outcome == "success" and .attempts[1].gate == null and .status == "done"'
expect_json "gates run in order: lint passed before tests failed" '.attempts[0].gate != "lint"'
run_sc -C "$P" show g1
expect_match "show prints the gate failure" "$T_OUT" 'gate tests failed \(exit 2\)'
pr=$(cat "$P/.git/prompt.g1.a2")
expect_match "the next prompt says which gate failed and why" "$pr" 'gate "tests" failed \(exit 2\).*'
expect_match "... with its output" "$pr" 'expected 200, got 500'
check "gates run in the story's working tree" test -e "$P/.git/gate-lint.count"

# --- the review panel: a transient failure retried to full consensus ----------------
mk_panel() { # mode1 mode2 mode3 quorum
	printf '"review": {"agents": [["%s", "r1", "%s", "{prompt}"], ["%s", "r2", "%s", "{prompt}"], ["%s", "r3", "%s", "{prompt}"]], "quorum": %s, "retries": 2},' \
		"$reviewer" "$1" "$reviewer" "$2" "$reviewer" "$3" "$4"
}
EXTRA_JSON="$(mk_panel approve approve flaky 2)"'"git": {"commit_work": true},' new_project
new_story "$P" v1 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "panel with a flaky reviewer: done" 0
msg=$(git -C "$P" log -1 --format=%s)
expect_match "the work commit names the last attempt's review" "$msg" '^story v1: done \(attempt 1, sim-p, review 3/3\)$'
expect_match "the transient failure is retried" "$T_OUT" 'reviewer 3 failed \(transient\), retry 1 of 2'
run_sc -C "$P" show v1 --json
expect_json "full consensus recorded as 3/3" '.attempts[0].consensus == "3/3" and .attempts[0].outcome == "success"'
check "the flaky reviewer ran twice" test "$(cat "$P/.git/review-r3.count")" = 2
rp=$(cat "$P/.git/review-prompt.r1")
expect_match "the default review prompt asks for a verdict line" "$rp" 'VERDICT: APPROVE'
expect_match "the review prompt names the story file" "$rp" 'docs/stories/v1\.md'
run_sc -C "$P" show v1
expect_match "show prints the consensus" "$T_OUT" 'review: 3/3'

# --- 2 of 3 approving: degraded consensus passes ----------------------------------------
EXTRA_JSON=$(mk_panel approve reject approve 2) new_project
new_story "$P" v2 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "degraded consensus: done" 0
run_sc -C "$P" show v2 --json
expect_json "degraded consensus recorded as 2/3" '.attempts[0].consensus == "2/3" and .status == "done"'

# --- 1 of 3: gate_failed, reasons kept and offered to the next attempt --------------------
EXTRA_JSON=$(mk_panel approve reject auth 2) new_project '{"max_attempts": 2}'
new_story "$P" v3 1 '<!-- sim *: saveprompt; checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "panel not approving: the story does not pass (exit 3)" 3
run_sc -C "$P" show v3 --json
expect_json "1 of 3 makes the attempt gate_failed" '.attempts[0].outcome == "gate_failed" and .attempts[0].consensus == "1/3" and .attempts[0].gate == "review"'
expect_json "the reviewers' reasons are kept" '.attempts[0].review_notes | test("returns 500 on empty input")'
check "a permanent reviewer failure is not retried" test "$(cat "$P/.git/review-r3.count")" = 2
pr=$(cat "$P/.git/prompt.v3.a2")
expect_match "the next attempt's prompt carries the reviewers' reasons" "$pr" 'returns 500 on empty input'

# --- a gate program that cannot be found ----------------------------------------------------
EXTRA_JSON='"gates": [{"name": "tests", "command": ["no-such-gate-binary"]}],' new_project
new_story "$P" x 1
commit_all
run_sc -C "$P" run
expect_rc "a missing gate program exits 69 before anything runs" 69
expect_match "the gate is named" "$T_ERR" 'gate tests'
check "nothing ran" test ! -e "$P/.storyctl/state.db"

# --- git.commit_work ---------------------------------------------------------------------
EXTRA_JSON='"git": {"commit_work": true},' new_project '{"max_attempts": 2}'
new_story "$P" w-done 2 '<!-- sim *: checkall; say wrote src/feature.c -->'
new_story "$P" w-defer 6 '<!-- sim *: check 2 -->'
commit_all
git -C "$P" checkout -q -b work
base=$(git -C "$P" rev-parse HEAD)
echo "dirty" >>"$P/README.md"
run_sc -C "$P" run
expect_rc "a dirty working tree is refused (65)" 65
expect_match "the refusal says why" "$T_ERR" 'uncommitted changes'
check "nothing ran on a dirty tree" test "$(sqlite3 "$P/.storyctl/state.db" 'SELECT count(*) FROM attempts' 2>/dev/null || echo 0)" = 0
git -C "$P" checkout -q README.md
mkdir -p "$P/src"
sed -i 's/<!-- sim \*: checkall; say wrote src\/feature.c -->/<!-- sim *: checkall; say wrote the feature -->/' "$P/docs/stories/w-done.md"
git -C "$P" commit -qam "story text"
base=$(git -C "$P" rev-parse HEAD)
run_sc -C "$P" run
expect_rc "commit_work batch with a deferred story exits 3" 3
check "the done story is one commit on the current branch" test "$(git -C "$P" rev-list --count "$base"..work)" = 1
msg=$(git -C "$P" log -1 --format=%s work)
expect_match "its message names the story, attempt and agent" "$msg" '^story w-done: done \(attempt 1, sim-p\)'
check "the commit has the story's files" bash -c 'git -C "$1" show --stat work | grep -q "docs/stories/w-done.md"' _ "$P"
check "the state dir is never committed" bash -c '! git -C "$1" log --all --name-only --format= | grep -q "^\.storyctl"' _ "$P"
check "the deferred story's work is on storyctl/wip/w-defer" bash -c 'git -C "$1" show storyctl/wip/w-defer:docs/stories/w-defer.md | grep -q "^- \[x\] Task 2"' _ "$P"
check "the working tree is clean after the deferred story" bash -c '[ -z "$(git -C "$1" status --porcelain)" ]' _ "$P"
check "the deferred story's boxes are back to unchecked in the tree" bash -c '! grep -q "^- \[x\]" "$1/docs/stories/w-defer.md"' _ "$P"
check "the user's branch has only the done story's commit" test "$(git -C "$P" log --format=%s "$base"..work)" = "story w-done: done (attempt 1, sim-p)"
check "HEAD is still on the user's branch" test "$(git -C "$P" symbolic-ref HEAD)" = refs/heads/work
run_sc -C "$P" show w-defer --json
expect_json "show names the wip branch" '.branch == "storyctl/wip/w-defer"'
finish
