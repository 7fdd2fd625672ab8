#!/bin/bash
# The controller killed, a second controller, timeouts with leftovers and
# a state branch that lags the database (docs/runner.md#kill-sequence,
# docs/state-branch.md#durability).  The
# agent is tests/e2e/agents/gc-agent: the simulated agent with a
# grandchild, SIGTERM handling and a start signal on demand.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
. "$(dirname "$0")/lib_proc.sh"


# progress_rows REV: "id status attempts tasks" of progress.md at REV.
progress_rows() {
	git -C "$P" show "$1:progress.md" 2>/dev/null |
		awk -F' *[|] *' '/^[|] / && $2 != "story" && $2 !~ /^-/ { print $2, $3, $4, $5 }'
}
# list_rows [JSON]: the same from `storyctl list --json` (or JSON given).
list_rows() {
	local j=${1:-}
	[ -n "$j" ] || j=$("$STORYCTL" -C "$P" list --json)
	printf '%s' "$j" | jq -r '.[] | "\(.id) \(.status) \(.attempts) \(.tasks_completed)/\(.tasks_total)"'
}
# progress_agrees REV [JSON]
progress_agrees() {
	local a b
	a=$(progress_rows "$1")
	b=$(list_rows "${2:-}")
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		return 0
	fi
	printf '# progress.md at %s:\n%s\n# list:\n%s\n' "$1" "$a" "$b" | sed 's/^\([^#]\)/#   \1/'
	return 1
}
# story_json_agrees ID: stories/ID.json on the branch has the attempts that
# `storyctl show ID --json` has (number and outcome, in order).
story_json_agrees() {
	local a b
	a=$(git -C "$P" show "storyctl/state:stories/$1.json" 2>/dev/null |
		jq -c '[(.attempts // [])[] | [.attempt, .outcome]]' 2>/dev/null)
	b=$("$STORYCTL" -C "$P" show "$1" --json | jq -c '[.attempts[] | [.attempt, .outcome]]')
	[ -n "$b" ] && [ "$a" = "$b" ] && return 0
	printf '# branch: %s\n# show:   %s\n' "$a" "$b"
	return 1
}
progress_lags() { ! progress_agrees "$@" >/dev/null; }
# all_loose_listed: the state branch has loose objects, and every one of
# them is in .git/storyctl/loose
all_loose_listed() {
	local loose
	loose=$(comm -12 <(find "$P/.git/objects/"?? -type f 2>/dev/null | sed "s|.*/\(..\)/|\1|" | sort) \
		<(git -C "$P" rev-list --objects storyctl/state | cut -d" " -f1 | sort))
	[ -n "$loose" ] && [ -f "$P/.git/storyctl/loose" ] &&
		[ -z "$(comm -23 <(printf '%s\n' "$loose") <(cut -c1-40 "$P/.git/storyctl/loose" | sort -u))" ]
}
no_dup_counted() {
	[ -z "$(sql "SELECT attempt FROM attempts WHERE counted = 1 GROUP BY story_id, attempt HAVING count(*) > 1")" ]
}
integrity_ok() {
	[ "$(sql 'PRAGMA integrity_check')" = ok ] &&
		[ -z "$(sql 'PRAGMA foreign_key_check')" ]
}

# ---- 5, 7: kill -9 of the controller mid-attempt, then resume ----
gc_project kill9
new_story "$P" s1 3 '<!-- gc a1: child tough -->' \
	'<!-- sim a1: check 1; hang -->' '<!-- sim *: checkall -->'
commit_all
start_bg run
one_checked() { [ "$(grep -c '^- \[x\]' "$P/docs/stories/s1.md")" = 1 ]; }
# running, and the agent has checked its one box (then it hangs)
if wait_for 10 attempt_running 1 && wait_for 10 one_checked; then
	apid=$(cat "$PIDS/agent.a1")
	gpid=$(cat "$PIDS/gc.a1")
	dead=$BG
	check "kill -9: the agent and its SIGTERM-proof grandchild run" \
		all_alive "$apid" "$gpid"
	kill -KILL "$dead"
	wait_bg 5
	check "kill -9: the controller died of SIGKILL (got $BG_RC)" \
		[ "$BG_RC" = 137 ]
	# what its commits wrote is listed for the next batch's first pack,
	# with no step at the batch's end (docs/state-branch.md#carried-over)
	check "kill -9: every object of the branch left loose is listed" \
		all_loose_listed
	check "kill -9: the agent is gone within 10 s" wait_for 10 gone "$apid"
	check "kill -9: the grandchild is gone within 10 s" \
		wait_for 10 gone "$gpid"
	check "kill -9: nothing is left in the agent's group" \
		wait_for 10 group_gone "$apid"
	check "kill -9: the db shows one running row" \
		[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running'")" = 1 ]
	run_sc -C "$P" status --json
	expect_json "kill -9: status shows the running attempt, controller gone" \
		'.running[0].story == "s1" and .running[0].attempt == 1 and .running[0].controller_alive == false and .controller_pid == null'
	run_sc -C "$P" status
	expect_match "kill -9: status text says the controller is gone" \
		"$T_OUT" 'now: s1 attempt 1\b.*controller gone'
	# 7: the lock is stale: the file still names the dead controller, but
	# nobody holds it
	check "stale lock: the lock file names the dead pid $dead" \
		[ "$(tr -d ' \n' <"$P/.storyctl/lock")" = "$dead" ]
	check "stale lock: no process holds it" \
		flock -n "$P/.storyctl/lock" true

	sed -i '/^<!-- gc a1:/d; /^<!-- sim a1:/d' "$P/docs/stories/s1.md"
	run_sc -C "$P" resume
	expect_rc "kill -9: resume takes the stale lock over and exits 0" 0
	expect_match "kill -9: resume says it closed the stale attempt" \
		"$T_OUT" "s1: attempt 1 .*dead controller.*interrupted"
	T_OUT=$(sql "SELECT outcome || '|' || error_code || '|' || decision || '|' || counted FROM attempts WHERE seq = 1")
	expect_match "kill -9: the stale row is closed as interrupted, not counted (the controller's death costs the story nothing)" \
		"$T_OUT" '^interrupted\|INTERRUPTED\|none\|0$'
	T_OUT=$(sql "SELECT error_message FROM attempts WHERE seq = 1")
	expect_match "kill -9: its error message says the controller died" \
		"$T_OUT" "controller \\(pid $dead\\) died"
	T_OUT=$(sql "SELECT tasks_completed || '/' || tasks_total FROM attempts WHERE seq = 1")
	expect_match "kill -9: the stale row has the progress of the story file" \
		"$T_OUT" '^1/3$'
	T_OUT=$(sql "SELECT attempt || ':' || outcome FROM attempts ORDER BY seq" | tr '\n' ' ')
	expect_match "kill -9: the same attempt number ran again" \
		"$T_OUT" '^1:interrupted 1:success $'
	check "kill -9: counted attempt numbers are 1..k" counted_numbers_ok
	check "kill -9: no attempt number is counted twice" no_dup_counted
	check "kill -9: no row is left running" \
		[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running'")" = 0 ]
	check "kill -9: the story is done" [ "$(story_status s1)" = "done" ]
	check "kill -9: integrity_check and foreign_key_check pass" integrity_ok
	check "kill -9: the branch agrees with the database" \
		progress_agrees storyctl/state
	check "kill -9: one controller death is on record for it" \
		[ "$(sql "SELECT count(*) FROM controller_deaths d JOIN attempts a ON a.id = d.attempt_id WHERE a.seq = 1 AND d.controller_pid = $dead")" = 1 ]
	check "kill -9: after resume, the dead controller's objects and the new ones are listed" \
		all_loose_listed
	check "stale lock: released after resume (no pid in the file)" \
		[ -z "$(tr -d ' \n' <"$P/.storyctl/lock")" ]
else
	not_ok "kill -9: attempt 1 runs (no running row within 10 s)"
fi

# ---- 6: a second controller while the first works ----
gc_project two
new_story "$P" s1 2 '<!-- gc a1: wait -->' '<!-- sim *: checkall -->'
commit_all
start_bg run
if wait_for 10 attempt_running 1; then
	first=$BG
	check "second controller: the lock file names the first ($first)" \
		[ "$(tr -d ' \n' <"$P/.storyctl/lock")" = "$first" ]
	for cmd in run resume; do
		run_sc -C "$P" "$cmd"
		expect_rc "second controller: '$cmd' exits 75" 75
		expect_match "second controller: '$cmd' names the first one's pid" \
			"$T_ERR" "^storyctl: .*pid $first\\b"
	done
	run_sc -C "$P" status --json
	expect_json "second controller: status still works beside it" \
		".controller_pid == $first and .running[0].attempt == 1 and .running[0].controller_alive == true"
	check "second controller: the first still runs" alive "$first"
	: >"$PIDS/go"
	wait_bg 20
	check "second controller: the first finishes with exit 0 (got $BG_RC)" \
		[ "$BG_RC" = 0 ]
	T_OUT=$(sql "SELECT attempt || ':' || outcome FROM attempts ORDER BY seq" | tr '\n' ' ')
	expect_match "second controller: the first's attempt is its only one" \
		"$T_OUT" '^1:success $'
	check "second controller: it made no batch of its own" \
		[ "$(sql 'SELECT count(*) FROM batches')" = 1 ]
	check "second controller: the story is done" [ "$(story_status s1)" = "done" ]
else
	not_ok "second controller: attempt 1 runs (no running row within 10 s)"
fi

# ---- 8: timeout with a grandchild left behind ----
# primary: timeout_s 1, kill_grace_s 1; its grandchild ignores SIGTERM.
# Attempt 2 (the fallback) waits for a go so the check runs between them.
gc_project timeout '' '{"timeout_s": 1}'
new_story "$P" s1 2 '<!-- gc a1: child tough -->' \
	'<!-- sim a1: check 1; hang -->' '<!-- gc a2: wait -->' \
	'<!-- sim *: checkall -->'
commit_all
t0=$(now_ms)
start_bg run
if wait_for 20 attempt_running 2; then
	gpid=$(cat "$PIDS/gc.a1")
	apid=$(cat "$PIDS/agent.a1")
	T_OUT=$(sql "SELECT outcome || '|' || error_code || '|' || counted || '|' || decision FROM attempts WHERE seq = 1")
	expect_match "timeout: attempt 1 is a counted timeout TIMEOUT, retried" \
		"$T_OUT" '^timeout\|TIMEOUT\|1\|retry$'
	check "timeout: the SIGTERM-proof grandchild is gone after the attempt" \
		gone "$gpid"
	check "timeout: the agent is gone after the attempt" gone "$apid"
	check "timeout: nothing is left in its group" group_gone "$apid"
	: >"$PIDS/go"
	wait_bg 20
	check "timeout: the run ends with exit 0 (got $BG_RC)" [ "$BG_RC" = 0 ]
	check "timeout: the whole run took less than 30 s" \
		[ $(($(now_ms) - t0)) -lt 30000 ]
	check "timeout: the story is done by attempt 2" \
		[ "$(sql "SELECT attempt || ':' || outcome FROM attempts WHERE seq = 2")" = 2:success ]
else
	not_ok "timeout: attempt 2 starts within 20 s"
	sql "SELECT attempt, outcome, error_code FROM attempts" | sed 's/^/# /'
fi

# stall_timeout_s 1: the agent prints its first line, then nothing, and
# checks nothing.  timeout_s 20 is the limit a missed stall would hit.
gc_project stall '{"max_attempts": 1}' '{"timeout_s": 20, "stall_timeout_s": 1}'
new_story "$P" s1 2 '<!-- sim *: hang -->'
commit_all
t0=$(now_ms)
start_bg run
wait_bg 40
el=$(($(now_ms) - t0))
T_OUT=$(sql "SELECT outcome || '|' || error_code FROM attempts" 2>&1)
expect_match "stall: the silent attempt is a timeout STALLED" \
	"$T_OUT" '^timeout\|STALLED$'
check "stall: ended well before timeout_s (took ${el} ms)" [ "$el" -lt 15000 ]
check "stall: run exits 3, the story needs a person (got $BG_RC)" \
	[ "$BG_RC" = 3 ]
check "stall: the agent is gone" gone "$(cat "$PIDS/agent.a1" 2>/dev/null)"

# ---- 9: the state branch lags the database ----
# a) an unfinished batch: the only agent is refused (auth) on s1, which
#    is escalated, and the batch stops (D2) with s2 pending; the branch
#    loses its last commit.
P=$(new_repo)
sim="$STORYCTL_SRC/scripts/sim-agent"
cat >"$P/storyctl.json" <<JSON
{"stories_glob": "docs/stories/*.md",
 "agents": {"primary": {"name": "sim", "command": ["$sim", "{role}", "{attempt}", "{story_file}"], "timeout_s": 30}},
 "policy": {"poll_interval_s": 0.2, "kill_grace_s": 1,
   "backoff": {"strategy": "fixed", "base_delay_ms": 10, "max_delay_ms": 100, "jitter": 0}}}
JSON
printf '.storyctl/\n' >"$P/.gitignore"
new_story "$P" s1 2 '<!-- sim a1: auth -->' '<!-- sim *: checkall -->'
new_story "$P" s2 2 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "lag: the batch stops when no agent is left (75)" 75
T_OUT=$(list_rows | tr '\n' ';')
expect_match "lag: s1 is escalated, s2 still pending" "$T_OUT" \
	'^s1 escalated 1 0/2;s2 pending 0 0/2;$'
tip=$(git -C "$P" rev-parse storyctl/state)
git -C "$P" update-ref refs/heads/storyctl/state "$tip~1"
before=$("$STORYCTL" -C "$P" list --json)
check "lag: the branch now lags the database" \
	progress_lags storyctl/state "$before"
run_sc -C "$P" resume
expect_rc "lag: resume runs s2 and exits 3 (s1 stays escalated)" 3
first=$(git -C "$P" rev-list --reverse "$tip~1..storyctl/state" | head -n1)
check "lag: resume committed to the branch" [ -n "$first" ]
check "lag: its first commit carries the state the branch missed" \
	progress_agrees "${first:-storyctl/state}" "$before"
check "lag: progress.md agrees with storyctl list at the end" \
	progress_agrees storyctl/state
check "lag: stories/s1.json agrees with storyctl show s1" story_json_agrees s1
check "lag: stories/s2.json agrees with storyctl show s2" story_json_agrees s2

# Exit 75 says the batch can be resumed (docs/commands.md#exit-codes).  When the story that
# leaves no agent is the batch's last one, nothing is left to resume.
P=$(new_repo)
cat >"$P/storyctl.json" <<JSON
{"stories_glob": "docs/stories/*.md",
 "agents": {"primary": {"name": "sim", "command": ["$sim", "{role}", "{attempt}", "{story_file}"], "timeout_s": 30}},
 "policy": {"poll_interval_s": 0.2, "kill_grace_s": 1}}
JSON
new_story "$P" s1 2 '<!-- sim *: checkall -->'
new_story "$P" s2 2 '<!-- sim a1: auth -->'
run_sc -C "$P" run
rc75=$T_RC
case $rc75 in 3 | 75) ;; *) printf '%s\n' "$T_ERR" | head -5 | sed 's/^/# stderr: /' ;; esac
run_sc -C "$P" resume
if [ "$rc75" -eq 75 ]; then
	check "D2 at the last story: exit 75 only if resume has work (resume said: $T_OUT)" \
		[ "$(sql 'SELECT count(*) FROM attempts')" -gt 2 ]
else
	check "D2 at the last story: run exits 3, everything is decided (got $rc75)" \
		[ "$rc75" -eq 3 ]
fi

# b) a finished batch: the branch lost the last decision; the next start
#    (here a resume with nothing left to run) commits it.
gc_project lagdone
new_story "$P" s1 2 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "lag after the end: run exits 0" 0
tip=$(git -C "$P" rev-parse storyctl/state)
git -C "$P" update-ref refs/heads/storyctl/state "$tip~1"
run_sc -C "$P" resume
expect_rc "lag after the end: resume exits 0" 0
check "lag after the end: resume commits the missing state" \
	[ "$(git -C "$P" rev-parse storyctl/state)" != "$(git -C "$P" rev-parse "$tip~1")" ]
check "lag after the end: progress.md agrees with storyctl list" \
	progress_agrees storyctl/state
check "lag after the end: stories/s1.json agrees with storyctl show s1" \
	story_json_agrees s1

finish
