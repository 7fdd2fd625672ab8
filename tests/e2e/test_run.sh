#!/bin/bash
# The overnight run end to end (docs/commands.md): a batch of stories driven by
# the simulated agent, every outcome, the strategy's decisions, the
# record in SQLite and on the state branch, and the morning commands.
. "$(dirname "$0")/lib.sh"
# the night as a user gets it: every agent confined (docs/sandbox.md),
# the simulated agent's notes in the one path it may write outside
export SIM_STATE="$T_TMP/sim-state"
mkdir -p "$SIM_STATE"
SANDBOX_JSON='{"enabled": true, "writable": ["'"$SIM_STATE"'"]}'

# --- a mixed night -------------------------------------------------------
new_project '{"max_attempts": 5}'
new_story "$P" a-done 3 '<!-- sim *: checkall -->'
new_story "$P" b-plateau 9 '<!-- sim *: check 5 -->'
new_story "$P" c-network 2 '<!-- sim a1: network -->' '<!-- sim *: checkall -->'
new_story "$P" d-zero 4 '<!-- sim *: err Segmentation fault (core dumped); exit 139 -->'
new_story "$P" e-gatefree 2 '<!-- sim a1: check 1; exit 0 -->' '<!-- sim *: checkall -->'
commit_all
head_before=$(git -C "$P" rev-parse HEAD)
echo "user edit" >>"$P/README.md"
readme_before=$(sha1sum <"$P/README.md")

run_sc -C "$P" run
expect_rc "run with deferred and escalated stories exits 3" 3
expect_match "deferred line is printed verbatim" "$T_OUT" \
	'^Story b-plateau deferred - dev-story hit complexity limit at 5/9$'
expect_match "summary counts statuses" "$T_OUT" 'batch 1: 3 done, 1 deferred, 1 escalated'
expect_match "run ends with where to look next" "$T_OUT" 'storyctl show STORY'
expect_match "plain lines when stdout is not a terminal" "$T_OUT" 'a-done: attempt 1 primary \(sim-p\) started'
check "no terminal escapes when not a terminal" bash -c '! printf "%s" "$1" | grep -q $'"'"'\033'"'"'' _ "$T_OUT"

run_sc -C "$P" list --json
expect_json "list --json is an array of the documented fields" \
	'length == 5 and all(.[]; keys == (["attempts","cost_usd","file","format_version","id","reason","status","subtasks_completed","subtasks_total","tasks_completed","tasks_total"]))'
expect_json "done first time" '.[] | select(.id=="a-done") | .status=="done" and .attempts==1 and .tasks_completed==3'
expect_json "plateau deferred at attempt 4" '.[] | select(.id=="b-plateau") | .status=="deferred" and .attempts==4 and (.reason|test("^D8: plateau confirmed at 5/9 by primary \\(a3\\) and fallback \\(a4\\)"))'
expect_json "network drop then done" '.[] | select(.id=="c-network") | .status=="done" and .attempts==2'
expect_json "zero progress escalated" '.[] | select(.id=="d-zero") | .status=="escalated" and .attempts==5 and (.reason|test("zero progress on all attempts: likely API or connection issue"))'
expect_json "incomplete then done" '.[] | select(.id=="e-gatefree") | .status=="done" and .attempts==2'

run_sc -C "$P" list --status deferred --json
expect_json "list --status filters" 'length == 1 and .[0].id == "b-plateau"'
run_sc -C "$P" list --status bogus
expect_rc "list --status with an unknown status exits 64" 64

run_sc -C "$P" show b-plateau --json
expect_json "show --json has the documented story fields" \
	'has("id") and has("file") and has("status") and has("reason") and has("tasks_completed") and has("tasks_total") and (.attempts|length)==4'
expect_json "show --json attempts have the documented fields" \
	'all(.attempts[]; has("attempt") and has("counted") and has("role") and has("agent") and has("outcome") and has("error_code") and has("exit_code") and has("signal") and has("tasks_completed") and has("tasks_total") and has("stalled_task") and has("started_at") and has("ended_at") and has("duration_ms") and has("delay_ms") and has("decision") and has("reason"))'
expect_json "roles alternate by parity" '[.attempts[].role] == ["primary","fallback","primary","fallback"]'
expect_json "agents are named" '[.attempts[].agent] == ["sim-p","sim-f","sim-p","sim-f"]'
expect_json "decisions recorded" '[.attempts[].decision] == ["retry","retry","retry","defer"]'
expect_json "times are ISO 8601 UTC" 'all(.attempts[]; (.started_at|test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")) and (.ended_at|test("Z$")))'
expect_json "stalled task recorded" '.attempts[0].stalled_task == "Task 6 of b-plateau"'
expect_json "incomplete has error code and exit 0" '.attempts[0].outcome == "incomplete" and .attempts[0].error_code == "INCOMPLETE" and .attempts[0].exit_code == 0 and .attempts[0].signal == null'
expect_json "file is relative to the repo" '.file == "docs/stories/b-plateau.md"'

run_sc -C "$P" show d-zero --json
expect_json "crash exit code recorded" '.attempts[0].outcome == "crash" and .attempts[0].error_code == "CRASH" and .attempts[0].exit_code == 139'
run_sc -C "$P" show c-network --json
expect_json "network attempt classified" '.attempts[0].outcome == "network" and .attempts[0].error_code == "NETWORK_ERROR"'
expect_json "network sleep is network_sleep_s" '.attempts[0].delay_ms == 200'
expect_json "the network attempt is counted (its number used up)" '.attempts[0].counted == true and .attempts[1].attempt == 2'

run_sc -C "$P" show b-plateau
expect_rc "show exits 0" 0
expect_match "show prints one line per attempt with its reason" "$T_OUT" 'a4 +fallback +sim-f +incomplete .*defer +D8: plateau'
run_sc -C "$P" show nosuch
expect_rc "show of an unknown story exits 64" 64

run_sc -C "$P" status --json
expect_json "status --json counts" '.counts.done == 3 and .counts.deferred == 1 and .counts.escalated == 1 and .state == "finished" and has("cost_usd")'
run_sc -C "$P" status
expect_match "status for people" "$T_OUT" 'batch 1: finished'

run_sc -C "$P" log --json
T_OUT=$(jq -s . <<<"$T_OUT") # JSON lines, one event each
expect_json "event log has the deferred line" 'any(.[]; .kind == "deferred" and .message == "Story b-plateau deferred - dev-story hit complexity limit at 5/9")'
run_sc -C "$P" log
expect_match "log for people" "$T_OUT" 'deferred +b-plateau Story b-plateau deferred'

# the database
check "database is WAL" test "$(sql 'PRAGMA journal_mode')" = wal
check "database schema is versioned" test "$(sql 'PRAGMA user_version')" -ge 1
check "state dir is 0700" test "$(stat -c %a "$P/.storyctl")" = 700
check "database is 0600" test "$(stat -c %a "$P/.storyctl/state.db")" = 600
check "attempt logs are 0600" bash -c 'for f in "$1"/.storyctl/logs/*.log; do [ "$(stat -c %a "$f")" = 600 ] || exit 1; done' _ "$P"
check "every attempt has a log with the agent output" grep -q 'sim-agent: primary attempt 1' "$(sql "SELECT log_path FROM attempts WHERE story_id='a-done'")"
check "no attempt left running" test "$(sql "SELECT count(*) FROM attempts WHERE outcome='running'")" = 0
check "counted attempt numbers have no gap or duplicate" test "$(sql "SELECT count(*) FROM (SELECT story_id, count(*) c, max(attempt) m FROM attempts WHERE counted=1 GROUP BY story_id HAVING c != m)")" = 0
check "a retry decision stores its next attempt, agent and not-before time" test "$(sql "SELECT next_attempt || '/' || next_role || '/' || (not_before_ms - ended_ms) FROM attempts WHERE story_id='c-network' AND attempt=1")" = "2/fallback/200"
check "every retry stores its next attempt" test "$(sql "SELECT count(*) FROM attempts WHERE decision='retry' AND (next_attempt IS NULL OR next_role IS NULL OR not_before_ms IS NULL)")" = 0
check "a decision that ends the story stores none" test "$(sql "SELECT count(*) FROM attempts WHERE decision IN ('done','defer','escalate') AND (next_attempt IS NOT NULL OR next_role IS NOT NULL OR not_before_ms IS NOT NULL)")" = 0
check "the next attempt ran as the stored decision said" test "$(sql "SELECT sum(b.attempt = a.next_attempt AND b.role = a.next_role AND b.started_ms >= a.not_before_ms) || '/' || count(*) FROM attempts a JOIN attempts b ON b.batch_id = a.batch_id AND b.story_id = a.story_id AND b.seq = a.seq + 1 WHERE a.decision = 'retry'")" = "9/9"

# the state branch
check "state branch exists" git -C "$P" rev-parse -q --verify refs/heads/storyctl/state
check "HEAD untouched" test "$(git -C "$P" rev-parse HEAD)" = "$head_before"
check "still on main" test "$(git -C "$P" symbolic-ref HEAD)" = refs/heads/main
check "working tree file untouched" test "$(sha1sum <"$P/README.md")" = "$readme_before"
check "index untouched" bash -c '[ -z "$(git -C "$1" diff --cached --name-only)" ]' _ "$P"
progress=$(git -C "$P" show storyctl/state:progress.md)
expect_match "progress.md is a table" "$progress" '^\| story \| status \| attempts \| tasks \| last agent \| last outcome \| reason \|'
expect_match "progress.md has the deferred story" "$progress" '^\| b-plateau \| deferred \| 4 \| 5/9 \| sim-f \| incomplete \|'
sj=$(git -C "$P" show storyctl/state:stories/b-plateau.json)
check "stories/<id>.json is the attempt history" bash -c 'printf "%s" "$1" | jq -e ".id == \"b-plateau\" and (.attempts|length) == 4" >/dev/null' _ "$sj"
msg=$(git -C "$P" log -1 --format=%B storyctl/state -- stories/b-plateau.json)
expect_match "commit message names story, attempt, agent, outcome, decision" "$msg" '^b-plateau: attempt 4 \(fallback sim-f\) incomplete -> defer'
author=$(git -C "$P" log -1 --format='%an <%ae>' storyctl/state)
check "commits are signed by storyctl" test "$author" = "storyctl <storyctl@localhost>"
ncommits=$(git -C "$P" rev-list --count storyctl/state)
ndecisions=$(sql "SELECT count(*) FROM attempts")
check "one commit per decision (plus the batch start)" test "$ncommits" -eq $((ndecisions + 1))

# requeue and resume
run_sc -C "$P" requeue a-done
expect_rc "requeue of a done story is refused" 64
sed -i 's/<!-- sim \*: check 5 -->/<!-- sim *: checkall -->/' "$P/docs/stories/b-plateau.md"
run_sc -C "$P" requeue b-plateau
expect_rc "requeue of a deferred story" 0
run_sc -C "$P" list --json
expect_json "requeued story is pending with history kept" '.[] | select(.id=="b-plateau") | .status=="pending" and .attempts==4'
run_sc -C "$P" resume
expect_rc "resume after requeue (one story still escalated) exits 3" 3
run_sc -C "$P" show b-plateau --json
expect_json "requeued story done at attempt 5, history kept" '.status == "done" and (.attempts|length) == 5 and .attempts[4].attempt == 5 and .attempts[4].role == "primary"'
run_sc -C "$P" resume
expect_rc "resume with nothing to do exits 0" 0
expect_match "resume says there is nothing to do" "$T_OUT" 'nothing to resume'

# --- a story that is all done -------------------------------------------
new_project
new_story "$P" only 2 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "all stories done exits 0" 0
run_sc -C "$P" run
expect_rc "a second run starts a new batch and finds it done" 0
run_sc -C "$P" show only --json
expect_json "already checked story is done without an attempt" '.status == "done" and (.attempts|length) == 0'

# --- permanent error hands over to the fallback --------------------------
new_project
new_story "$P" p1 2 '<!-- sim primary: auth -->' '<!-- sim *: checkall -->'
new_story "$P" p2 2 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "permanent on primary, fallback finishes: exit 0" 0
expect_match "the disabled agent is announced" "$T_OUT" 'primary agent \(sim-p\) disabled for the rest of this run: Invalid API key'
run_sc -C "$P" show p1 --json
expect_json "auth error classified permanent/AUTH" '.attempts[0].outcome == "permanent" and .attempts[0].error_code == "AUTH"'
expect_json "fallback took over" '.attempts[1].role == "fallback" and .status == "done"'
run_sc -C "$P" show p2 --json
expect_json "the next story runs on the fallback only" '.attempts[0].role == "fallback"'

# --- both agents permanent: the batch stops, resumable -------------------
new_project
new_story "$P" q1 2 '<!-- sim *: auth -->'
new_story "$P" q2 2 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "no agent left: exit 75" 75
run_sc -C "$P" list --json
expect_json "first story escalated, the rest pending" '(.[] | select(.id=="q1") | .status=="escalated") and (.[] | select(.id=="q2") | .status=="pending")'
sed -i 's/<!-- sim \*: auth -->/<!-- sim *: checkall -->/' "$P/docs/stories/q1.md"
run_sc -C "$P" resume
expect_rc "resume after fixing auth runs the rest" 3
run_sc -C "$P" list --json
expect_json "resumed story done" '.[] | select(.id=="q2") | .status=="done"'

# --- ... and when that was the last story open: exit 3, nothing to resume
# (docs/retry-strategy.md, D2; issue 31) ---------------------------------
new_project
new_story "$P" q1 2 '<!-- sim *: auth -->'
commit_all
run_sc -C "$P" run
expect_rc "no agent left on the only story: exit 3, as docs/commands.md says" 3
run_sc -C "$P" resume
expect_match "... and resume has nothing to resume" "$T_OUT" '^nothing to resume'

# --- usage limit: wait, same attempt again, not counted -------------------
new_project '{"max_wait_s": 1}'
new_story "$P" u1 2 "<!-- sim a1: once usage $(( $(date +%s) + 1 )); checkall -->"
commit_all
run_sc -C "$P" run
expect_rc "usage limit then done: exit 0" 0
run_sc -C "$P" show u1 --json
expect_json "usage limit recorded as not counted, decision wait" '.attempts[0].outcome == "usage_limit" and .attempts[0].counted == false and .attempts[0].decision == "wait" and .attempts[0].error_code == "USAGE_LIMIT"'
expect_json "usage limit wait capped by max_wait_s" '.attempts[0].delay_ms <= 1000 and .attempts[0].delay_ms > 0'
expect_json "the same attempt number runs again and is counted" '.attempts[1].attempt == 1 and .attempts[1].counted == true and .status == "done"'

# --- the only agent paused past max_wait_s: stop (75); resume honours it --
# (issue 12: a night whose agents are all paused past the cap stops rather
# than sleeping for hours; a resume before the reset starts no agent)
sim="$STORYCTL_SRC/scripts/sim-agent"
new_project '{"max_wait_s": 60}' '{"primary": {"name": "sim-p", "command": ["'"$sim"'", "{role}", "{attempt}", "{story_file}"], "timeout_s": 30}}'
new_story "$P" w1 2 "<!-- sim a1: once usage $(($(date +%s) + 3600)); checkall -->"
commit_all
run_sc -C "$P" run
expect_rc "the only agent paused an hour past max_wait_s 60: exit 75" 75
expect_match "the stop says when to resume" "$T_OUT" 'paused .*policy\.max_wait_s.*resume after'
run_sc -C "$P" resume
expect_rc "resume while the agent is still paused stops again (75)" 75
check "the resume started no agent" [ "$(sql "SELECT count(*) FROM attempts")" = 1 ]

# --- rate limit honours Retry-After -------------------------------------
new_project
new_story "$P" r1 2 '<!-- sim a1: ratelimit 1 -->' '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
run_sc -C "$P" show r1 --json
expect_json "rate limit classified" '.attempts[0].outcome == "rate_limit" and .attempts[0].error_code == "RATE_LIMIT"'
expect_json "Retry-After honoured (larger than the backoff)" '.attempts[0].delay_ms >= 1000'

# --- one agent only -------------------------------------------------------
sim="$STORYCTL_SRC/scripts/sim-agent"
new_project '{"max_attempts": 4}' '{"primary": {"command": ["'"$sim"'", "{role}", "{attempt}", "{story_file}"]}}'
new_story "$P" s1 4 '<!-- sim *: check 2 -->'
commit_all
run_sc -C "$P" run
run_sc -C "$P" show s1 --json
expect_json "without a fallback every attempt uses the primary" '[.attempts[].role] | unique == ["primary"]'
expect_json "single agent plateau: three at the same T defers at 4" '.status == "deferred" and (.attempts|length) == 4'

# --- retry_on filter escalates at once -----------------------------------
new_project '{"retry_on": ["overloaded"]}'
new_story "$P" f1 2 '<!-- sim *: exit 1 -->'
commit_all
run_sc -C "$P" run
run_sc -C "$P" show f1 --json
expect_json "a failure matching none of retry_on is escalated" '.status == "escalated" and (.attempts|length) == 1'

# --- bad input ------------------------------------------------------------
new_project
new_story "$P" ok 1 '<!-- sim *: checkall -->'
printf '# empty\n\nno tasks here\n' >"$P/docs/stories/empty.md"
commit_all
run_sc -C "$P" run
expect_rc "an invalid story does not stop the batch (exit 3)" 3
run_sc -C "$P" list --json
expect_json "story without tasks is invalid, the other done" '(.[] | select(.id=="empty") | .status=="invalid") and (.[] | select(.id=="ok") | .status=="done")'
run_sc -C "$P" check
expect_rc "check reports the story without tasks (65)" 65

new_project '{}' '{"primary": {"command": ["no-such-agent-binary", "{prompt}"]}}'
new_story "$P" x 1
commit_all
run_sc -C "$P" run
expect_rc "an agent that cannot be found exits 69" 69
expect_match "the missing program is named" "$T_ERR" '^storyctl: agent primary .*no-such-agent-binary'
check "nothing ran" test ! -e "$P/.storyctl/state.db"

new_project '{"max_atempts": 3}'
new_story "$P" x 1
run_sc -C "$P" run
expect_rc "unknown key exits 65" 65
expect_match "unknown key is named with its path" "$T_ERR" 'policy\.max_atempts'
printf '{"agents": {\n  "primary": {"preset": "claude"},\n}\n' >"$P/storyctl.json"
run_sc -C "$P" check
expect_rc "broken JSON exits 65" 65
expect_match "broken JSON names file and line" "$T_ERR" 'storyctl\.json:[0-9]+'

d=$(mktemp -d "$T_TMP/noconf.XXXXXX")
run_sc -C "$d" run
expect_rc "no config found exits 64" 64

# --- init and check --------------------------------------------------------
P=$(new_repo)
mkdir -p "$P/docs/stories"
printf '# S\n\n- [ ] one\n' >"$P/docs/stories/1-1.md"
run_sc -C "$P" init
expect_rc "init writes a starter config" 0
check "init config lists the stories" bash -c 'jq -e ".stories == [\"docs/stories/1-1.md\"] and .agents.primary.preset == \"claude\"" "$1/storyctl.json" >/dev/null' _ "$P"
check "init ignores the state dir" grep -qx '.storyctl/' "$P/.gitignore"
run_sc -C "$P" init
expect_rc "init refuses to overwrite" 64
run_sc -C "$P" agents --json
expect_json "agents --json lists the four presets" '[.presets[].name] | contains(["claude","codex","gemini","aider"])'
expect_json "agents --json shows configured agents" '.agents.primary.name == "claude" and .agents.fallback.name == "codex"'
mkdir -p "$P/sub/dir"
run_sc -C "$P/sub/dir" agents --json
expect_json "the config is found upward like git finds .git" '.config | test("storyctl.json$")'
finish
