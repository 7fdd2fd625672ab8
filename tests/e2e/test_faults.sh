#!/bin/bash
# Disk full and I/O errors (issue "Reliability and security"): writes to
# the database, the state branch or the attempt logs fail while a batch
# runs.  The controller stops with a clear "storyctl: ..." message and a
# non-zero exit (a full log only marks the attempt), nothing already
# recorded is lost, and `resume` without the fault finishes the batch.
# The faults come from tests/fault/faultshim.c (LD_PRELOAD, docs/faults.md);
# the agent tests/e2e/agents/fault-agent "fills the disk" on cue.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
SHIM="$T_TMP/faultshim.so"
FAULT_AGENT="$STORYCTL_SRC/tests/e2e/agents/fault-agent"
SIM="$STORYCTL_SRC/scripts/sim-agent"

if cc -shared -fPIC -O1 -o "$SHIM" "$STORYCTL_SRC/tests/fault/faultshim.c" -ldl; then
	ok "the fault shim compiles"
else
	not_ok "the fault shim compiles"
	finish
fi

# run_fault VAR=VALUE... -- ARGS...: run_sc -C "$P" ARGS with the shim
# preloaded into storyctl only (FAULT_COMM), every fault it injects
# logged to $T_TMP/fault.log.
run_fault() {
	local envs=()
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	rm -f "$T_TMP/fault.log"
	env LD_PRELOAD="$SHIM" FAULT_COMM=storyctl \
		FAULT_LOG="$T_TMP/fault.log" "${envs[@]}" \
		"$STORYCTL" -C "$P" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	T_RC=$?
	T_OUT=$(cat "$T_TMP/out")
	T_ERR=$(cat "$T_TMP/err")
}

# fault_project NAME [SIM-AGENT-DIRECT]: a project whose two agents are
# fault-agent with the arm file $ARM (or sim-agent itself when a second
# argument is given).
fault_project() {
	local cmd
	ARM="$T_TMP/arm-$1"
	if [ -n "${2:-}" ]; then
		cmd=$(jq -cn --arg a "$SIM" '[$a, "{role}", "{attempt}", "{story_file}"]')
	else
		cmd=$(jq -cn --arg a "$FAULT_AGENT" --arg d "$ARM" \
			'[$a, $d, "{role}", "{attempt}", "{story_file}"]')
	fi
	new_project '{"max_attempts": 4}' "$(jq -cn --argjson c "$cmd" \
		'{primary: {name: "fa-p", command: $c, timeout_s: 60},
		  fallback: {name: "fa-f", command: $c, timeout_s: 60}}')"
}

have_db() { [ -s "$P/.storyctl/state.db" ]; }
integrity_ok() {
	have_db && [ "$(sql 'PRAGMA integrity_check' 2>&1)" = ok ] &&
		[ -z "$(sql 'PRAGMA foreign_key_check' 2>&1)" ]
}
# counted_ok: per story, the counted attempts are numbered 1..k, each once.
counted_ok() {
	have_db && [ "$(sql "SELECT count(*) FROM (SELECT story_id FROM attempts WHERE counted = 1 GROUP BY story_id HAVING count(*) != max(attempt) OR count(DISTINCT attempt) != count(*))")" = 0 ]
}
none_running() {
	have_db && [ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running'")" = 0 ]
}
# recorded: every finished attempt row, one line each.
recorded() {
	have_db || return 0
	sql "SELECT id, story_id, attempt, counted, outcome, error_code, decision, reason FROM attempts WHERE outcome != 'running' ORDER BY id" 2>/dev/null
}
# kept BEFORE: the rows of BEFORE are still the first rows, unchanged.
kept() {
	local n now
	n=$(printf '%s' "$1" | grep -c '^')
	now=$(recorded | head -n "$n")
	[ "$now" = "$1" ] && return 0
	printf '# before:\n%s\n# now:\n%s\n' "$1" "$now" | sed 's/^\([^#]\)/#   \1/'
	return 1
}
all_done() {
	have_db && [ -n "$(sql 'SELECT 1 FROM stories LIMIT 1' 2>/dev/null)" ] &&
		"$STORYCTL" -C "$P" list --json |
		jq -e 'length > 0 and all(.[]; .status == "done")' >/dev/null
}
# progress_rows REV: "id status attempts tasks" of progress.md at REV.
progress_rows() {
	git -C "$P" show "$1:progress.md" 2>/dev/null |
		awk -F' *[|] *' '/^[|] / && $2 != "story" && $2 !~ /^-/ { print $2, $3, $4, $5 }'
}
list_rows() {
	"$STORYCTL" -C "$P" list --json |
		jq -r '.[] | "\(.id) \(.status) \(.attempts) \(.tasks_completed)/\(.tasks_total)"'
}
progress_agrees() {
	local a b
	a=$(progress_rows storyctl/state)
	b=$(list_rows)
	[ -n "$a" ] && [ "$a" = "$b" ] && return 0
	printf '# progress.md:\n%s\n# list:\n%s\n' "$a" "$b" | sed 's/^\([^#]\)/#   \1/'
	return 1
}
story_json_agrees() {
	local a b
	a=$(git -C "$P" show "storyctl/state:stories/$1.json" 2>/dev/null |
		jq -c '[(.attempts // [])[] | [.attempt, .outcome]]' 2>/dev/null)
	b=$("$STORYCTL" -C "$P" show "$1" --json | jq -c '[.attempts[] | [.attempt, .outcome]]')
	[ -n "$b" ] && [ "$a" = "$b" ] && return 0
	printf '# branch: %s\n# show:   %s\n' "$a" "$b"
	return 1
}
branch_lags() { ! progress_agrees >/dev/null; }
# failed_rc: the last run failed, and not as a batch that ended (0 or 3).
failed_rc() { [ "$T_RC" -ne 0 ] && [ "$T_RC" -ne 3 ]; }
shim_hit() {
	grep -q -- "$1" "$T_TMP/fault.log" 2>/dev/null
}
three_stories() {
	new_story "$P" s1 2 "${1:-}" '<!-- sim *: checkall -->'
	new_story "$P" s2 3 "${2:-}" '<!-- sim *: checkall -->'
	new_story "$P" s3 2 '<!-- sim *: checkall -->'
	commit_all
}

# ---- 1: the disk fills while the database records attempt s2/1 ----
for e in ENOSPC:'database or disk is full' EIO:'disk I/O error'; do
	errno=${e%%:*} words=${e#*:}
	fault_project "db-$errno"
	three_stories '' '<!-- fault a1: end -->'
	run_fault FAULT_PATH=.storyctl/state.db FAULT_ERRNO="$errno" FAULT_ARM="$ARM" -- run
	check "db $errno: the shim failed writes to the database" shim_hit 'state\.db'
	check "db $errno: run exits 74, the documented I/O stop (got $T_RC)" \
		[ "$T_RC" = 74 ]
	expect_match "db $errno: stderr names the database and the failure" \
		"$T_ERR" "^storyctl: .*state\\.db.*$words"
	check "db $errno: integrity_check passes after the fault" integrity_ok
	T_OUT=$(recorded)
	expect_match "db $errno: s1's attempt, recorded before the fault, is there" \
		"$T_OUT" '^1\|s1\|1\|1\|success\|\|done\|'
	before=$T_OUT
	check "db $errno: the agent ran s2 before the disk filled" test -e "$ARM"
	run_sc -C "$P" resume
	expect_rc "db $errno: resume without the fault exits 0" 0
	check "db $errno: every story is done after resume" all_done
	check "db $errno: what was recorded before the fault is unchanged" kept "$before"
	check "db $errno: counted attempt numbers are 1..k per story" counted_ok
	check "db $errno: no attempt is left running" none_running
	T_OUT=$(sql "SELECT attempt || ':' || outcome FROM attempts WHERE story_id = 's2' ORDER BY seq" | tr '\n' ' ')
	expect_match "db $errno: s2's unrecorded attempt 1 is closed as interrupted (not counted) and runs again" \
		"$T_OUT" '^1:interrupted 1:success $'
	T_OUT=$(sql "SELECT error_message FROM attempts WHERE story_id = 's2' ORDER BY seq LIMIT 1")
	expect_match "db $errno: its message says the controller stopped on an error, naming it" \
		"$T_OUT" "stopped on an error during this attempt and could not record its end: .*$words"
	check "db $errno: the state branch agrees with list" progress_agrees
	check "db $errno: stories/s2.json agrees with show" story_json_agrees s2
done

# the same with the disk filling while the agent runs (the heartbeats
# fail first), and with a short write: 100 more bytes fit, then nothing
fault_project db-running
three_stories '' '<!-- fault a1: start -->'
sed -i 's/^<!-- sim \*: checkall -->$/<!-- sim *: sleep 1; checkall -->/' "$P/docs/stories/s2.md"
commit_all
run_fault FAULT_PATH=.storyctl/state.db FAULT_AFTER=100 FAULT_ARM="$ARM" -- run
check "db full mid-attempt: run exits non-zero (got $T_RC)" failed_rc
expect_match "db full mid-attempt: stderr names the database" \
	"$T_ERR" '^storyctl: .*state\.db.*database or disk is full'
check "db full mid-attempt: integrity_check passes" integrity_ok
before=$(recorded)
agent=$(cat "$ARM.s2.a1.pid" 2>/dev/null)
check "db full mid-attempt: the agent is not left running" \
	bash -c '! kill -0 "$1" 2>/dev/null' _ "${agent:-0}"
run_sc -C "$P" resume
expect_rc "db full mid-attempt: resume exits 0" 0
check "db full mid-attempt: every story is done" all_done
check "db full mid-attempt: nothing recorded is lost" kept "$before"
check "db full mid-attempt: counted numbers 1..k" counted_ok
check "db full mid-attempt: the branch agrees with list" progress_agrees

# the disk is full before anything starts: the lock file cannot take the pid
fault_project lock direct
three_stories
run_fault FAULT_PATH=.storyctl/lock -- run
check "lock full: run exits non-zero (got $T_RC)" failed_rc
expect_match "lock full: stderr names the lock file" \
	"$T_ERR" '^storyctl: .*\.storyctl/lock.*No space left'
check "lock full: no agent ran" \
	[ "$(grep -c '^- \[x\]' "$P"/docs/stories/*.md | awk -F: '{ n += $2 } END { print n }')" = 0 ]
run_sc -C "$P" run
expect_rc "lock full: the next run without the fault exits 0" 0
check "lock full: every story is done" all_done

# ---- 1b: the disk fills after every commit in turn ----
# With WAL and synchronous=FULL each commit ends with a sync of the WAL:
# FAULT_SYNCS=k lets k syncs through, so the disk is full from the
# (k+1)-th commit on.  A clean run counts the commits; every k is tried.
fault_project sweep-count direct
new_story "$P" s1 2 '<!-- sim a1: check 1 -->' '<!-- sim *: checkall -->'
new_story "$P" s2 2 '<!-- sim *: checkall -->'
commit_all
rm -f "$T_TMP/report"
run_fault FAULT_PATH=.storyctl/state.db FAULT_SYNCS=1000000 \
	FAULT_REPORT="$T_TMP/report" -- run
read -r _ nsync _ <"$T_TMP/report" 2>/dev/null
nsync=${nsync:-0}
check "sweep: a clean run under the shim exits 0 (got $T_RC) after $nsync syncs" \
	test "$T_RC" -eq 0 -a "$nsync" -gt 5
bad_exit='' bad_msg='' bad_int='' bad_kept='' bad_done='' bad_count='' bad_branch=''
for k in $(seq 0 $((nsync - 1))); do
	fault_project "sweep-$k" direct
	new_story "$P" s1 2 '<!-- sim a1: check 1 -->' '<!-- sim *: checkall -->'
	new_story "$P" s2 2 '<!-- sim *: checkall -->'
	commit_all
	run_fault FAULT_PATH=.storyctl/state.db FAULT_SYNCS="$k" -- run
	if [ "$T_RC" -eq 0 ]; then
		# only a fault after the last record (the closing checkpoint)
		# may go unnoticed
		all_done || bad_exit="$bad_exit $k"
	else
		[ "$T_RC" -eq 3 ] && bad_exit="$bad_exit $k"
		printf '%s' "$T_ERR" |
			grep -Eq '^storyctl: .*state\.db.*(disk is full|No space|disk I/O error)' ||
			bad_msg="$bad_msg $k"
	fi
	if have_db; then
		integrity_ok || bad_int="$bad_int $k"
	fi
	before=$(recorded)
	run_sc -C "$P" resume
	# a fault before the batch was created leaves nothing to resume:
	# the next run starts it
	if [ "$T_RC" -eq 0 ] && ! all_done &&
		! { have_db && [ "$(sql 'SELECT count(*) FROM batches' 2>/dev/null)" -gt 0 ] 2>/dev/null; }; then
		run_sc -C "$P" run
	fi
	{ [ "$T_RC" -eq 0 ] && all_done; } || bad_done="$bad_done $k($T_RC)"
	kept "$before" >/dev/null || bad_kept="$bad_kept $k"
	{ counted_ok && none_running; } || bad_count="$bad_count $k"
	progress_agrees >/dev/null || bad_branch="$bad_branch $k"
done
check "sweep: a full disk at every commit makes run fail (not 0/3)${bad_exit:+; wrong at k =$bad_exit}" \
	[ -z "$bad_exit" ]
check "sweep: stderr names the database and the failed write${bad_msg:+; not at k =$bad_msg}" \
	[ -z "$bad_msg" ]
check "sweep: integrity_check passes after each fault${bad_int:+; not at k =$bad_int}" \
	[ -z "$bad_int" ]
check "sweep: resume (or the first run) finishes every story${bad_done:+; not at k(exit) =$bad_done}" \
	[ -z "$bad_done" ]
check "sweep: nothing recorded before the fault is lost${bad_kept:+; lost at k =$bad_kept}" \
	[ -z "$bad_kept" ]
check "sweep: counted attempts 1..k, none left running${bad_count:+; wrong at k =$bad_count}" \
	[ -z "$bad_count" ]
check "sweep: the state branch agrees with list${bad_branch:+; not at k =$bad_branch}" \
	[ -z "$bad_branch" ]

# ---- 2: I/O errors writing the state branch ----
# the objects (blobs, trees, the commit), then the ref's lock file; the
# first cut short after 10 bytes
for c in objects:.git/objects refs:.git/refs/heads/storyctl; do
	what=${c%%:*} path=${c#*:}
	fault_project "git-$what"
	three_stories '<!-- fault a1: end -->'
	run_fault FAULT_PATH="$path" FAULT_ERRNO=EIO FAULT_AFTER=10 FAULT_ARM="$ARM" -- run
	check "branch $what EIO: the shim failed writes under $path" shim_hit "$path"
	check "branch $what EIO: run exits non-zero (got $T_RC)" failed_rc
	expect_match "branch $what EIO: stderr names the state branch and the error" \
		"$T_ERR" '^storyctl: .*storyctl/state.*Input/output error'
	check "branch $what EIO: integrity_check passes" integrity_ok
	T_OUT=$(recorded)
	expect_match "branch $what EIO: the decision is in the database" \
		"$T_OUT" '^1\|s1\|1\|1\|success\|\|done\|'
	before=$T_OUT
	check "branch $what EIO: the branch lags the database" branch_lags
	check "branch $what EIO: no lock or temporary file is left in .git" \
		[ -z "$(find "$P/.git" -name '*.lock' -o -name 'tmp_*')" ]
	check "branch $what EIO: git fsck finds the repository sound" \
		git -C "$P" fsck --no-dangling --no-progress
	tip=$(git -C "$P" rev-parse storyctl/state)
	run_sc -C "$P" resume
	expect_rc "branch $what EIO: resume without the fault exits 0" 0
	first=$(git -C "$P" rev-list --reverse "$tip..storyctl/state" | head -n1)
	msg=$(git -C "$P" log -1 --format=%s "${first:-storyctl/state}")
	expect_match "branch $what EIO: resume first commits the missing state" \
		"$msg" 'sync the state branch|s1: attempt 1'
	check "branch $what EIO: s1's history is on the branch at that commit" \
		bash -c 'git -C "$1" show "$2:stories/s1.json" | jq -e ".attempts | length == 1" >/dev/null' \
		_ "$P" "${first:-storyctl/state}"
	check "branch $what EIO: every story is done" all_done
	check "branch $what EIO: nothing recorded is lost" kept "$before"
	check "branch $what EIO: progress.md agrees with list" progress_agrees
	check "branch $what EIO: stories/s1.json agrees with show" story_json_agrees s1
done
# ---- 3: the attempt logs fill the disk ----
# 40 bytes fit: the agent's first line is cut, the rest is lost; the agent
# goes on and the story is done.
fault_project logs direct
new_story "$P" l1 2 '<!-- sim *: say first words; sleep 0.3; say more after the disk filled; checkall -->'
commit_all
run_fault FAULT_PATH=.storyctl/logs/ FAULT_AFTER=40 -- run
check "logs full: the shim failed writes to the log" shim_hit '\.storyctl/logs/'
expect_rc "logs full: the run still exits 0" 0
run_sc -C "$P" show l1 --json
expect_json "logs full: the attempt is recorded, the story done" \
	'.status == "done" and (.attempts | length) == 1 and .attempts[0].outcome == "success"'
expect_json "logs full: error_message says the log could not be written" \
	'.attempts[0].error_message | test("log.*(No space left|ENOSPC)")'
log=$(printf '%s' "$T_OUT" | jq -r '.attempts[0].log // empty')
check "logs full: the log holds what fit (40 bytes)" \
	[ "$(stat -c %s "$log" 2>/dev/null)" = 40 ]
run_sc -C "$P" show l1
expect_match "logs full: show prints it" "$T_OUT" 'output: .*log.*No space left'

# a failed attempt's excerpt must not hide that its log is incomplete:
# a crash (no excerpt of its own) and a network failure (which has one)
fault_project logs-failed direct
new_story "$P" l2 2 '<!-- sim a1: check 1; err Segmentation fault (core dumped); exit 139 -->' \
	'<!-- sim *: checkall -->'
new_story "$P" l3 2 '<!-- sim a1: check 1; network -->' '<!-- sim *: checkall -->'
commit_all
run_fault FAULT_PATH=.storyctl/logs/ FAULT_AFTER=0 -- run
expect_rc "logs full, failed attempts: the run exits 0 (retried to done)" 0
run_sc -C "$P" show l2 --json
expect_json "logs full, crash: attempt 1 is a crash, the story done" \
	'.attempts[0].outcome == "crash" and .status == "done"'
expect_json "logs full, crash: its error_message says the log is incomplete" \
	'.attempts[0].error_message | test("log.*(No space left|ENOSPC)")'
run_sc -C "$P" show l3 --json
expect_json "logs full, network: attempt 1 is a network failure, the story done" \
	'.attempts[0].outcome == "network" and .status == "done"'
expect_json "logs full, network: its error_message keeps the excerpt and says the log is incomplete" \
	'.attempts[0].error_message | test("ENOTFOUND") and test("log.*(No space left|ENOSPC)")'

# exit 74 is documented where people look
run_sc --help
expect_match "--help documents exit 74" "$T_OUT$T_ERR" '74 +reading or writing the state failed \(disk full'
check "README documents exit 74" grep -q '74 an I/O error on the state' "$STORYCTL_SRC/README.md"

finish
