#!/bin/bash
# Chaos under -j 3 (issues 11 and 30; docs/git-work.md#recovery,
# docs/reliability.md#controller-deaths): 24 stories, each in its own
# worktree, and at least 60 stops of five kinds: SIGKILL of the
# controller, SIGKILL of its whole process group (the controller and
# everything in its group, as a terminal's kill of the job would),
# SIGKILL of the controller and its watchdog together (both stopped
# first, so that no agent is ended for them), SIGTERM and SIGINT; each
# followed at once by a `run -j 3` or `resume -j 3`.  The agents are
# tests/e2e/agents/chaos-agent (scripts/sim-agent with a `sleep 300`
# grandchild and the books of who held which tree).  The same batch runs
# beside it in a second repository without a single kill (the
# reference).  Then:
#   * every story ends with the status of the reference and the same
#     number of counted attempts: a controller's death costs nothing.
#     A death leaves the attempt to run again under the same number, and
#     a second death of that number is counted by design, so after a
#     SIGKILL the next SIGKILL waits until every attempt it cut short has
#     a counted row (SIGTERM and SIGINT need no wait: those stops are
#     recorded by the controller, not deaths);
#   * every SIGTERM/SIGINT exits 143/130 (0 or 3 only when the batch had
#     really finished), every SIGKILL 137;
#   * every attempt that start-up recovery closed has the progress the
#     story file in the story's worktree showed after the stop (read by
#     this script between the stop and the next start; at least that
#     after a kill of the watchdog too, whose agents work on until the
#     next start ends them);
#   * no attempt started while an agent a dead controller left, or its
#     grandchild, lived, and no two agents held one story's tree at once;
#   * every story's recorded progress equals its file on its branch
#     storyctl/story/<id>, where its work is committed;
#   * no worktree is left; nothing of either batch lives at the end
#     (agents, grandchildren, watchdogs, controllers: by working
#     directory and by the state dir's mark in /proc/PID/environ);
#   * counted attempts are 1..k per story and the state branch agrees.
# When a batch ends before the stops are done, every story is requeued
# (in both repositories) and the chaos goes on with the next round.
# CHAOS_SEED replays a run (the kill points and kinds), CHAOS_KILLS sets
# the number of stops (60), CHAOS_KEEP=1 keeps the projects.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SEED=${CHAOS_SEED:-3111}
KILLS=${CHAOS_KILLS:-$(tier_count 60 15)}
RANDOM=$SEED
echo "# chaos -j 3 seed $SEED (replay with CHAOS_SEED=$SEED)"
. "$STORYCTL_SRC/tests/e2e/lib_ps.sh"
. "$STORYCTL_SRC/tests/e2e/lib_chaos.sh"
BG_APPEND=1

# project_procs, project_pids, sim_procs, watch_procs, marked_procs:
# lib_ps.sh
nothing_left() {
	[ -z "$(project_pids)" ] && [ -z "$(sim_procs)" ] && [ -z "$(watch_procs)" ] &&
		[ -z "$(marked_procs "$P/.storyctl")" ]
}

REF_PID=
cleanup() {
	[ -n "$REF_PID" ] && kill "$REF_PID" 2>/dev/null
	chaos_cleanup ${P:-} ${R:-}
}
trap cleanup EXIT

# ---- 24 stories, six kinds, in two repositories ----
# chaos_project24 NAME: chaos_project (lib_chaos.sh) with the same 24
# stories in each.
chaos_project24() {
	local i
	chaos_project "$1" '{"max_attempts": 5, "kill_grace_s": 0.1}' sim
	for i in $(seq -w 1 24); do
		case $((10#$i % 6)) in
		0) new_story "$P" "s$i-done" 3 '<!-- sim *: sleep 0.1; check 1; sleep 0.1; checkall -->' ;;
		1) new_story "$P" "s$i-plateau" 6 '<!-- sim *: sleep 0.05; check 2; sleep 0.1; check 4 -->' ;;
		2) new_story "$P" "s$i-steps" 5 '<!-- sim a1: check 1; sleep 0.2 -->' \
			'<!-- sim a2: sleep 0.05; check 2; sleep 0.1 -->' \
			'<!-- sim *: sleep 0.1; check 3; sleep 0.05; exit 1 -->' ;;
		3) new_story "$P" "s$i-crash" 3 '<!-- sim a1: sleep 0.1; check 1; exit 2 -->' \
			'<!-- sim *: sleep 0.2; checkall -->' ;;
		4) new_story "$P" "s$i-network" 2 '<!-- sim a1: sleep 0.05; network -->' \
			'<!-- sim *: sleep 0.1; check 1; sleep 0.1; checkall -->' ;;
		5) new_story "$P" "s$i-slow" 4 '<!-- sim *: sleep 0.1; check 2; sleep 0.3; checkall -->' ;;
		esac
	done
	commit_all
}
chaos_project24 ref
R=$P
chaos_project24 chaos
ids=$(ls "$P/docs/stories" | sed 's/\.md$//')
checked() { grep -c '^[-*+] \[[xX]\]' "$1" 2>/dev/null || true; }

# requeue_all: every story of $P that can be put back to pending is
requeue_all() {
	local id n=0
	for id in $ids; do
		"$STORYCTL" -C "$P" requeue "$id" >/dev/null 2>&1 && n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# ---- the reference: the same batch without a kill, beside the chaos ----
# generation g (the batch run to its end after g-1 requeues) starts once
# $T_TMP/ref.go.g exists; $T_TMP/ref.done.g is its exit status.
reference() {
	local P=$R g=1
	trap - EXIT INT TERM
	"$STORYCTL" -C "$P" run -j 3 >"$T_TMP/ref.out" 2>&1
	echo $? >"$T_TMP/ref.done.1"
	while :; do
		g=$((g + 1))
		until [ -e "$T_TMP/ref.go.$g" ] || [ -e "$T_TMP/ref.stop" ]; do sleep 0.1; done
		[ -e "$T_TMP/ref.go.$g" ] || break
		requeue_all
		"$STORYCTL" -C "$P" run -j 3 >>"$T_TMP/ref.out" 2>&1
		echo $? >"$T_TMP/ref.done.$g"
	done
}
reference &
REF_PID=$!

# snapshot [min]: after a stop, the checked boxes of each attempt left
# running, read where its agent worked: "seq id count [min]" lines
# appended to $T_TMP/expect ("min": its agents may still be at work, so
# the recovered progress is at least that)
snapshot() {
	local seq id f
	sql "SELECT seq, story_id FROM attempts WHERE outcome = 'running'" |
		while IFS='|' read -r seq id; do
			f="$P/.storyctl/worktrees/$id/docs/stories/$id.md"
			[ -f "$f" ] || f="$P/docs/stories/$id.md"
			echo "$seq $id $(checked "$f") ${1:-}"
		done >>"$T_TMP/expect"
}

# The attempts the last SIGKILLs cut short, "story|attempt" lines, and
# deaths_settled: every one of them has a counted row that has ended
# (a running row says counted = 1 until it is closed), or its story has
# ended, so that a new death cannot be the second one of its number.
# Read beside a working controller: wait for its locks (sql has no
# timeout), and an answer that did not come is "not settled".
: >"$T_TMP/cut"
sql_wait() { sqlite3 -cmd '.timeout 5000' "$P/.storyctl/state.db" "$1" 2>/dev/null; }
deaths_settled() {
	local id att n st
	while IFS='|' read -r id att; do
		[ -n "$att" ] || continue
		n=$(sql_wait "SELECT count(*) FROM attempts WHERE story_id = '$id' AND attempt = $att AND counted = 1 AND outcome != 'running'")
		[ -n "$n" ] || return 1
		[ "$n" -gt 0 ] && continue
		st=$(sql_wait "SELECT status FROM stories WHERE id = '$id' ORDER BY batch_id DESC LIMIT 1")
		case $st in
		pending | running | "") return 1 ;;
		esac
	done <"$T_TMP/cut"
	return 0
}
settled_or_gone() { deaths_settled || ! alive "$BG"; }
attempt_running_or_gone() {
	[ "$(sql_wait "SELECT count(*) FROM attempts WHERE outcome = 'running'")" -gt 0 ] 2>/dev/null || ! alive "$BG"
}
# note_orphans: what works in $P now that a controller and its watchdog
# are dead, "pid starttime" in $CH/orphans (chaos-agent looks for them)
note_orphans() {
	local p s
	for p in $(project_pids); do
		case $(tr -d '\n' 2>/dev/null <"/proc/$p/comm") in storyctl*) continue ;; esac
		s=$(proc_start "$p") && echo "$p $s" >>"$CH/orphans"
	done
}
batch_finished() {
	[ "$("$STORYCTL" -C "$P" status --json 2>/dev/null | jq -r .state)" = finished ]
}

# ---- the stops ----
kills=0
rounds=0
gen=1
kinds=(kill group both term int)
declare -A by_kind=()
selfexit=()
lingering=()
waited=0
: >"$T_TMP/expect"
ms_now
t0=$MS
while [ "$kills" -lt "$KILLS" ] && [ "$rounds" -lt $((KILLS * 3)) ]; do
	rounds=$((rounds + 1))
	if [ "$rounds" -eq 1 ]; then
		args=(run -j 3)
	else
		if batch_finished; then
			requeue_all || break
			gen=$((gen + 1))
			: >"$T_TMP/ref.go.$gen"
			echo "# round $rounds: the batch had ended, requeued (generation $gen)"
		fi
		case $((RANDOM % 2)) in
		0) args=(run -j 3) ;;
		1) args=(resume -j 3) ;;
		esac
	fi
	kind=${kinds[$((RANDOM % 5))]}
	delay=$((20 + RANDOM % 500))
	start_bg "${args[@]}"
	bg_execd
	case $kind in
	kill | group | both)
		# not a second death of an attempt the last one cut short
		ms_now
		tw=$MS
		wait_for 60 settled_or_gone
		ms_now
		waited=$((waited + MS - tw))
		delay=$((RANDOM % 300))
		;;
	esac
	# two stops in three land while agents work, however slow the
	# machine: the test, not the clock, says an attempt has started (the
	# third stops the controller wherever it is, start-up included)
	[ $((rounds % 3)) != 0 ] && wait_for 60 attempt_running_or_gone
	nap_ms "$delay"
	if ! alive "$BG"; then
		wait_bg 1
		echo "# round $rounds: ${args[*]} ended by itself (exit $BG_RC)"
		case $BG_RC in
		0 | 3 | 75) ;;
		*) selfexit+=("round $rounds: exit $BG_RC: $(tail -n 1 "$T_TMP/bg.err" | cut -c1-200)") ;;
		esac
		continue
	fi
	case $kind in
	kill) kill -KILL "$BG" ;;
	group) kill -KILL -- "-$BG" ;;
	both) kill_both "$BG" ;;
	term) kill -TERM "$BG" ;;
	int) kill -INT "$BG" ;;
	esac
	wait_bg 20
	kills=$((kills + 1))
	by_kind[$kind]=$((${by_kind[$kind]:-0} + 1))
	case $kind:$BG_RC in
	term:143 | int:130 | kill:137 | group:137 | both:137) ;;
	term:0 | term:3 | int:0 | int:3)
		# only a batch that had really ended may say so
		"$STORYCTL" -C "$P" status --json 2>/dev/null |
			jq -e '.state == "finished" and .counts.pending == 0 and .counts.running == 0' >/dev/null ||
			selfexit+=("round $rounds: $kind gave exit $BG_RC with stories pending")
		;;
	*) selfexit+=("round $rounds: $kind gave exit $BG_RC") ;;
	esac
	case $kind in
	kill | group | both)
		sql "SELECT story_id, attempt FROM attempts WHERE outcome = 'running'" >"$T_TMP/cut"
		;;
	esac
	if [ "$kind" = both ]; then
		# its agents work on until the next start ends them
		note_orphans
		snapshot min
		echo "# round $rounds: ${args[*]} stopped by $kind after ${delay} ms (exit $BG_RC)"
		continue
	fi
	ms_now
	tk=$MS
	wait_for 10 nothing_left
	left=$?
	ms_now
	echo "# round $rounds: ${args[*]} stopped by $kind after ${delay} ms (exit $BG_RC), all gone after $((MS - tk)) ms"
	if [ "$left" -ne 0 ]; then
		lingering+=("round $rounds ($kind): $(project_procs | cut -c1-80 | tr '\n' ';')")
		for p in $(project_pids) $(sim_procs); do
			kill_ours "$p"
		done
	fi
	snapshot
done
ms_now
echo "# $kills stops in $rounds rounds, $gen generations, $((MS - t0)) ms ($waited ms waiting for cut attempts to be counted): ${by_kind[*]@K}"
check "at least $KILLS stops (got $kills)" [ "$kills" -ge "$KILLS" ]
check "every kind of stop happened (${by_kind[*]@K})" \
	[ "${#by_kind[@]}" -eq 5 ]
check "every controller exited as its stop says: SIGTERM 143, SIGINT 130, SIGKILL 137 (${selfexit[*]:-})" \
	[ "${#selfexit[@]}" -eq 0 ]
check "after every stop but a kill of the watchdog too, nothing of the project ran within 10 s (${lingering[*]:-})" \
	[ "${#lingering[@]}" -eq 0 ]

# ---- to the end ----
resume_to_end
final=$FINAL
final_ok() { [ "$final" = 0 ] || [ "$final" = 3 ]; }
check "the final resume finishes the batch with exit 0 or 3 (got $final)" final_ok
final_ok || tail -n 5 "$T_TMP/bg.err" | sed 's/^/# stderr: /'

# ---- the same as without a kill ----
: >"$T_TMP/ref.stop"
wait_for 120 test -e "$T_TMP/ref.done.$gen"
wait "$REF_PID" 2>/dev/null
REF_PID=
check "the reference ran its $gen generations to the end (exit $(cat "$T_TMP/ref.done.$gen" 2>/dev/null))" \
	test -e "$T_TMP/ref.done.$gen"
# per story: status and counted attempts
outcome() {
	"$STORYCTL" -C "$1" list --json | jq -r '.[] | "\(.id) \(.status)"' | sort >"$T_TMP/st"
	sqlite3 "$1/.storyctl/state.db" "SELECT story_id, count(*) FROM attempts WHERE counted = 1 GROUP BY story_id" |
		tr '|' ' ' | sort | join -a1 "$T_TMP/st" - | awk '{ print $1, $2, ($3 == "" ? 0 : $3) }'
}
got=$(outcome "$P")
want=$(outcome "$R")
diffs=$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | grep '^[<>]' | tr '\n' ';')
check "every story's status and counted attempts equal those of the batch run without a kill ($(printf '%s\n' "$got" | awk '{ n[$2]++ } END { for (s in n) printf "%s %d ", s, n[s] }'); differences: ${diffs:-none})" \
	test -n "$got" -a "$got" = "$want"
check "no attempt was cut short by two controller deaths (the driver waits for each to be counted)" \
	[ "$(sql "SELECT count(*) FROM (SELECT 1 FROM attempts a JOIN controller_deaths d ON d.attempt_id = a.id GROUP BY a.story_id, a.attempt HAVING count(*) > 1)" 2>&1)" = 0 ]
n_deaths=$(sql "SELECT count(*) FROM controller_deaths" 2>&1)
check "the deaths' attempts ($n_deaths) were closed interrupted, not counted" \
	[ "$(sql "SELECT count(*) FROM attempts a JOIN controller_deaths d ON d.attempt_id = a.id WHERE a.outcome != 'interrupted' OR a.counted != 0" 2>&1)" = 0 ]

# ---- recovered attempts: progress where the agent worked ----
recovered=0
bad=()
while read -r seq id want min; do
	[ -n "$seq" ] || continue
	got=$(sql "SELECT tasks_completed || ' ' || outcome FROM attempts WHERE seq = $seq AND story_id = '$id'")
	recovered=$((recovered + 1))
	if [ -n "$min" ]; then
		[ "${got%% *}" -ge "$want" ] 2>/dev/null || bad+=("$id seq $seq: recorded ${got:-nothing}, file had $want already")
	else
		[ "${got%% *}" = "$want" ] || bad+=("$id seq $seq: recorded ${got:-nothing}, file had $want")
	fi
done <"$T_TMP/expect"
echo "# $recovered attempts were left running by a stop"
check "attempts were left running and recovered ($recovered)" [ "$recovered" -ge 3 ]
check "every recovered attempt has its worktree's progress (${bad[*]:-})" \
	[ "${#bad[@]}" -eq 0 ]
check "some recovered attempt had progress (not all 0)" \
	awk '$3 > 0 { found = 1 } END { exit !found }' "$T_TMP/expect"

# ---- the agents ----
n_early=$(cut -d' ' -f1 "$CH/early" | sort -u | wc -l)
check "no attempt started while an agent a dead controller left, or its grandchild, lived ($n_early of $(cut -d' ' -f1,2 "$CH/orphans" | sort -u | wc -l))" \
	[ "$n_early" = 0 ]
sort -u -k1,1 "$CH/early" | head -n 3 | sed 's/^/# early: /'
check "no two agents ever held one story's tree ($(wc -l <"$CH/overlap") overlaps)" \
	[ ! -s "$CH/overlap" ]
head -n 3 "$CH/overlap" | sed 's/^/# overlap: /'

# ---- the record ----
list=$("$STORYCTL" -C "$P" list --json)
T_OUT=$list
expect_json "all 24 stories are listed" 'length == 24'
expect_json "every story ended (done, deferred or escalated)" \
	'all(.[]; .status == "done" or .status == "deferred" or .status == "escalated")'
mismatch=()
for id in $ids; do
	rec=$(printf '%s' "$list" | jq -r --arg id "$id" '.[] | select(.id == $id) | .tasks_completed')
	file=$(git -C "$P" show "storyctl/story/$id:docs/stories/$id.md" 2>/dev/null |
		grep -c '^[-*+] \[[xX]\]')
	[ "$rec" = "$file" ] || mismatch+=("$id: recorded $rec, branch file $file")
done
check "every story's recorded progress equals its file on storyctl/story/<id> (${mismatch[*]:-})" \
	[ "${#mismatch[@]}" -eq 0 ]
check "no worktree is left (git worktree list)" \
	[ "$(git -C "$P" worktree list | wc -l)" = 1 ]
check "no worktree directory is left under .storyctl/worktrees" \
	[ -z "$(ls -A "$P/.storyctl/worktrees" 2>/dev/null)" ]
check "no attempt row is left running" \
	[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running' OR ended_ms IS NULL")" = 0 ]
check "counted attempt numbers are 1..k per story" \
	[ -z "$(sql "SELECT story_id FROM attempts WHERE counted = 1 GROUP BY story_id, attempt HAVING count(*) > 1")" ]
check "PRAGMA integrity_check is ok" [ "$(sql 'PRAGMA integrity_check')" = ok ]
check "the state branch is a valid history (git fsck)" \
	git -C "$P" fsck --no-dangling --no-progress
check "HEAD is still main and the main tree is clean" \
	bash -c '[ "$(git -C "$1" symbolic-ref HEAD)" = refs/heads/main ] &&
		[ -z "$(git -C "$1" status --porcelain)" ]' _ "$P"
check "no agent, grandchild, watchdog or controller of the project is left (by directory and by mark)" \
	wait_for 5 nothing_left
project_procs | cut -c1-100 | sed 's/^/# left: /'
left=0
while read -r p s; do
	[ "$(proc_start "$p")" = "$s" ] && alive "$p" && left=$((left + 1))
done < <(cut -d' ' -f1,2 "$CH/orphans" | sort -u)
while read -r _ _ p s g _; do
	[ "$(proc_start "$p")" = "$s" ] && alive "$p" && left=$((left + 1))
	alive "$g" && grep -qzx 'sleep' "/proc/$g/cmdline" 2>/dev/null && left=$((left + 1))
done <"$CH/spawns"
check "no agent the chaos started, nor its grandchild, lives ($left)" [ "$left" = 0 ]
P=$R
check "nothing of the reference batch is left either" wait_for 5 nothing_left

finish
