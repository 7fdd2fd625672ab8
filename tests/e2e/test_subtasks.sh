#!/bin/bash
# Subtask progress (issue 13, docs/stories.md): an agent that checks only
# subtasks is not "zero progress" for D6, and the subtasks are recorded
# per attempt and shown by list, list --json, show, show --json, status
# and the state branch; a crashed attempt measured in its worktree
# records them too.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
. "$(dirname "$0")/lib_proc.sh"

# --- an agent that checks only subtasks ---------------------------------
# new_story writes one subtask under each task; the agent of `sub` checks
# one more subtask per attempt and never a whole task; the agent of `idle`
# answers and checks nothing.
new_project '{"max_attempts": 3}'
new_story "$P" sub 3 '<!-- sim a1: subcheck 1 -->' '<!-- sim a2: subcheck 2 -->' \
	'<!-- sim a3: subcheck 3 -->'
new_story "$P" idle 2 '<!-- sim *: say nothing to do -->'
commit_all

run_sc -C "$P" list --json
expect_json "before the first batch list --json reads the subtasks from the files" \
	'(.[] | select(.id == "sub") | .subtasks_completed == 0 and .subtasks_total == 3)'

run_sc -C "$P" run
expect_rc "both stories escalated: exit 3" 3
run_sc -C "$P" list --json
expect_json "subtasks moved, tasks did not: D7 (retries exhausted), not D6" \
	'.[] | select(.id == "sub") | .status == "escalated" and .tasks_completed == 0 and (.reason | test("^D7: retries exhausted at 0/3 \\(subtasks 3/3\\)"))'
expect_json "list --json has the story's latest subtasks" \
	'.[] | select(.id == "sub") | .subtasks_completed == 3 and .subtasks_total == 3'
expect_json "nothing moved: still D6" \
	'.[] | select(.id == "idle") | .status == "escalated" and (.reason | test("^D6: zero progress on all attempts: the agent ran to the end and checked no box")) and .subtasks_completed == 0 and .subtasks_total == 2'
expect_json "list --json keeps the documented fields" \
	'all(.[]; has("id") and has("status") and has("attempts") and has("tasks_completed") and has("tasks_total") and has("reason"))'

run_sc -C "$P" list
expect_match "list has a subtasks column" "$T_OUT" '^story +status +attempts +tasks +subtasks +cost +reason'
expect_match "list shows the subtasks beside the tasks" "$T_OUT" '^sub +escalated +3 +0/3 +3/3 +- +D7: '

run_sc -C "$P" show sub --json
expect_json "show --json: the story's subtasks" '.subtasks_completed == 3 and .subtasks_total == 3'
expect_json "show --json: each attempt's subtasks as the agent left them" \
	'[.attempts[] | .subtasks_completed] == [1, 2, 3] and all(.attempts[]; .subtasks_total == 3 and .tasks_completed == 0 and .outcome == "incomplete")'
run_sc -C "$P" show sub
expect_match "show: the header has the subtasks" "$T_OUT" '^sub +escalated +0/3 tasks +3/3 subtasks +3 attempts'
expect_match "show: each attempt line has its subtasks" "$T_OUT" 'a2 +fallback +sim-f +incomplete +INCOMPLETE +0/3 +2/3 '

check "the database has each attempt's subtasks" \
	test "$(sql "SELECT group_concat(subtasks_completed || '/' || subtasks_total, ' ') FROM (SELECT * FROM attempts WHERE story_id = 'sub' ORDER BY seq)")" = "1/3 2/3 3/3"
progress=$(git -C "$P" show storyctl/state:progress.md)
expect_match "progress.md keeps its columns and adds subtasks last" "$progress" \
	'^\| story \| status \| attempts \| tasks \| last agent \| last outcome \| reason \| subtasks \|$'
expect_match "progress.md shows the subtasks" "$progress" '^\| sub \| escalated \| 3 \| 0/3 \| .* \| 3/3 \|$'
expect_match "progress.md: the idle story's subtasks" "$progress" '^\| idle \| escalated \| 3 \| 0/2 \| .* \| 0/2 \|$'
sj=$(git -C "$P" show storyctl/state:stories/sub.json)
check "stories/<id>.json has the subtasks of the story and of each attempt" \
	bash -c 'printf "%s" "$1" | jq -e ".subtasks_completed == 3 and [.attempts[].subtasks_completed] == [1, 2, 3]" >/dev/null' _ "$sj"

# --- live, then a crash recovered from the story's worktree -------------
# -j 2: each story works in its own worktree.  The agent checks a subtask
# and hangs; the heartbeat shows it; the controller is killed; one more
# subtask is checked in the worktree (work the last heartbeat missed);
# resume closes attempt 1 as interrupted (the controller died, not the
# story: docs/reliability.md#controller-deaths) with what the worktree
# shows, and attempt 1 runs again, this time without the wait ("once").
new_project '{"max_attempts": 3}'
new_story "$P" k1 2 '<!-- sim a1: subcheck 1; once sleep 30 -->' '<!-- sim *: checkall -->'
new_story "$P" k2 2 '<!-- sim a1: subcheck 1; once sleep 30 -->' '<!-- sim *: checkall -->'
commit_all
start_bg run -j 2
live_sub() {
	[ -s "$P/.storyctl/state.db" ] &&
		[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running' AND pid IS NOT NULL AND subtasks_completed = 1 AND subtasks_total = 2" 2>/dev/null)" = 2 ]
}
check "the heartbeat records the subtasks while the agents run" wait_for 20 live_sub
run_sc -C "$P" status --json
expect_json "status --json: the running attempt's subtasks" \
	'.running[0].subtasks_completed == 1 and .running[0].subtasks_total == 2 and .running[0].tasks_completed == 0'
kill -KILL "$BG"
wait "$BG" 2>/dev/null
check "the agents are gone after the controller" wait_for 15 bash -c '! pgrep -f -- "sim-agent .*$1/.storyctl/worktrees" >/dev/null' _ "$P"
wt="$P/.storyctl/worktrees/k1/docs/stories/k1.md"
check "k1 works in its worktree" test -f "$wt"
sed -i 's/^  - \[ \]/  - [x]/' "$wt"
run_sc -C "$P" resume -j 2
expect_rc "resume after kill -9 finishes" 0
check "the interrupted attempt has the subtasks of the worktree" \
	test "$(sql "SELECT outcome || ' ' || subtasks_completed || '/' || subtasks_total FROM attempts WHERE story_id = 'k1' AND attempt = 1 ORDER BY seq LIMIT 1")" = "interrupted 2/2"
check "the other interrupted attempt has its last heartbeat's or file's subtasks" \
	test "$(sql "SELECT outcome || ' ' || subtasks_completed || '/' || subtasks_total FROM attempts WHERE story_id = 'k2' AND attempt = 1 ORDER BY seq LIMIT 1")" = "interrupted 1/2"
finish
