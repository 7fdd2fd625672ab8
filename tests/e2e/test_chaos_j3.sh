#!/bin/bash
# Chaos under -j 3 (issue 11; docs/git-work.md#recovery, docs/state.md): 30
# stories, each in its own worktree, and at least 25 stops of mixed
# kinds: SIGKILL of the controller, SIGKILL of its whole process group
# (the controller and everything in its group, as a terminal's kill of
# the job would), SIGTERM and SIGINT; each followed by a `run -j 3` or
# `resume -j 3`.  Then:
#   * every attempt that start-up recovery closed has the progress the
#     story file in the story's worktree showed after the kill (read by
#     this script between the kill and the next start);
#   * every story ended, and the progress it records equals the story
#     file on its branch storyctl/story/<id>, where its work is committed;
#   * no worktree is left (git worktree list, <state dir>/worktrees);
#   * no agent, watchdog or controller is left after any stop;
#   * counted attempts are 1..k per story and the state branch agrees.
# CHAOS_SEED replays a run (the kill points and kinds), CHAOS_KILLS sets
# the number of stops (25), CHAOS_KEEP=1 keeps the project.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SEED=${CHAOS_SEED:-3111}
KILLS=${CHAOS_KILLS:-25}
RANDOM=$SEED
echo "# chaos -j 3 seed $SEED (replay with CHAOS_SEED=$SEED)"
. "$STORYCTL_SRC/tests/e2e/lib_ps.sh"
BG_APPEND=1

# project_procs, sim_procs and watch_procs: lib_ps.sh
nothing_left() {
	[ -z "$(project_procs)" ] && [ -z "$(sim_procs)" ] && [ -z "$(watch_procs)" ]
}

cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do kill_ours "$p"; done
	if [ -n "${P:-}" ]; then
		for p in $(project_procs | cut -d' ' -f1) $(sim_procs); do
			kill_ours "$p"
		done
	fi
	wait 2>/dev/null
	if [ -n "${CHAOS_KEEP:-}" ]; then
		echo "# kept $T_TMP"
	else
		rm -rf "$T_TMP"
	fi
}
trap cleanup EXIT

# ---- 30 stories, six kinds ----
sim="$STORYCTL_SRC/scripts/sim-agent"
cmd=$(jq -cn --arg s "$sim" '[$s, "{role}", "{attempt}", "{story_file}", "{prompt}", "{repo}"]')
new_project '{"max_attempts": 5}' "$(jq -cn --argjson c "$cmd" \
	'{primary: {name: "sim-p", command: $c, timeout_s: 30},
	  fallback: {name: "sim-f", command: $c, timeout_s: 30}}')"
for i in $(seq -w 1 30); do
	case $((10#$i % 6)) in
	0) new_story "$P" "s$i-done" 3 '<!-- sim *: sleep 0.3; check 1; sleep 0.3; checkall -->' ;;
	1) new_story "$P" "s$i-plateau" 6 '<!-- sim *: sleep 0.2; check 2; sleep 0.3; check 4 -->' ;;
	2) new_story "$P" "s$i-steps" 5 '<!-- sim a1: check 1; sleep 0.5 -->' \
		'<!-- sim a2: sleep 0.2; check 2; sleep 0.3 -->' \
		'<!-- sim *: sleep 0.3; check 3; sleep 0.3; exit 1 -->' ;;
	3) new_story "$P" "s$i-crash" 3 '<!-- sim a1: sleep 0.4; check 1; exit 2 -->' \
		'<!-- sim *: sleep 0.5; checkall -->' ;;
	4) new_story "$P" "s$i-network" 2 '<!-- sim a1: sleep 0.2; network -->' \
		'<!-- sim *: sleep 0.4; check 1; sleep 0.3; checkall -->' ;;
	5) new_story "$P" "s$i-slow" 4 '<!-- sim *: sleep 0.4; check 2; sleep 0.6; checkall -->' ;;
	esac
done
commit_all
ids=$(ls "$P/docs/stories" | sed 's/\.md$//')
checked() { grep -c '^[-*+] \[[xX]\]' "$1" 2>/dev/null || true; }

# snapshot: after a stop, the checked boxes of each attempt left running,
# read where its agent worked: "seq count" lines appended to $T_TMP/expect
snapshot() {
	local seq id f
	sql "SELECT seq, story_id FROM attempts WHERE outcome = 'running'" |
		while IFS='|' read -r seq id; do
			f="$P/.storyctl/worktrees/$id/docs/stories/$id.md"
			[ -f "$f" ] || f="$P/docs/stories/$id.md"
			echo "$seq $id $(checked "$f")"
		done >>"$T_TMP/expect"
}

# ---- the stops ----
kills=0
rounds=0
kinds=(kill group term int)
declare -A by_kind=()
selfexit=()
lingering=()
: >"$T_TMP/expect"
t0=$(now_ms)
batch_finished() {
	[ "$("$STORYCTL" -C "$P" status --json 2>/dev/null | jq -r .state)" = finished ]
}
requeue_all() {
	local id n=0
	for id in $ids; do
		"$STORYCTL" -C "$P" requeue "$id" >/dev/null 2>&1 && n=$((n + 1))
	done
	echo "# round $rounds: the batch had ended, $n stories requeued"
	[ "$n" -gt 0 ]
}
while [ "$kills" -lt "$KILLS" ] && [ "$rounds" -lt $((KILLS * 3)) ]; do
	rounds=$((rounds + 1))
	if [ "$rounds" -eq 1 ]; then
		args=(run -j 3)
	else
		if batch_finished; then
			requeue_all || break
		fi
		case $((RANDOM % 2)) in
		0) args=(run -j 3) ;;
		1) args=(resume -j 3) ;;
		esac
	fi
	kind=${kinds[$((RANDOM % 4))]}
	delay=$((100 + RANDOM % 1400))
	start_bg "${args[@]}"
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	if ! alive "$BG"; then
		wait_bg 1
		echo "# round $rounds: ${args[*]} ended by itself within ${delay} ms (exit $BG_RC)"
		case $BG_RC in
		0 | 3 | 75) ;;
		*) selfexit+=("round $rounds: exit $BG_RC: $(tail -n 1 "$T_TMP/bg.err" | cut -c1-200)") ;;
		esac
		continue
	fi
	case $kind in
	kill) kill -KILL "$BG" ;;
	group) kill -KILL -- "-$BG" ;;
	term) kill -TERM "$BG" ;;
	int) kill -INT "$BG" ;;
	esac
	wait_bg 20
	kills=$((kills + 1))
	by_kind[$kind]=$((${by_kind[$kind]:-0} + 1))
	tk=$(now_ms)
	wait_for 10 nothing_left
	left=$?
	echo "# round $rounds: ${args[*]} stopped by $kind after ${delay} ms (exit $BG_RC), all gone after $(($(now_ms) - tk)) ms"
	case $kind:$BG_RC in
	term:143 | int:130 | term:0 | term:3 | int:0 | int:3 | kill:* | group:*) ;;
	*) selfexit+=("round $rounds: $kind gave exit $BG_RC") ;;
	esac
	if [ "$left" -ne 0 ]; then
		lingering+=("round $rounds ($kind): $(project_procs | tr '\n' ';')")
		for p in $(project_procs | cut -d' ' -f1) $(sim_procs); do
			kill_ours "$p"
		done
	fi
	snapshot
done
echo "# $kills stops in $rounds rounds, $(($(now_ms) - t0)) ms: ${by_kind[*]@K}"
check "at least $KILLS stops (got $kills)" [ "$kills" -ge "$KILLS" ]
check "every kind of stop happened (${by_kind[*]@K})" \
	[ "${#by_kind[@]}" -eq 4 ]
check "every controller exited as its stop says (${selfexit[*]:-})" \
	[ "${#selfexit[@]}" -eq 0 ]
check "after every stop nothing of the project ran within 10 s (${lingering[*]:-})" \
	[ "${#lingering[@]}" -eq 0 ]

# ---- to the end ----
final=
for i in 1 2 3 4; do
	start_bg resume -j 3
	wait_bg 120
	final=$BG_RC
	echo "# final resume $i: exit $BG_RC"
	[ "$BG_RC" = 75 ] || break
done
final_ok() { [ "$final" = 0 ] || [ "$final" = 3 ]; }
check "the final resume finishes the batch with exit 0 or 3 (got $final)" final_ok
final_ok || tail -n 5 "$T_TMP/bg.err" | sed 's/^/# stderr: /'

# ---- recovered attempts: progress where the agent worked ----
recovered=0
bad=()
while read -r seq id want; do
	[ -n "$seq" ] || continue
	got=$(sql "SELECT tasks_completed || ' ' || outcome FROM attempts WHERE seq = $seq AND story_id = '$id'")
	recovered=$((recovered + 1))
	[ "${got%% *}" = "$want" ] || bad+=("$id seq $seq: recorded ${got:-nothing}, file had $want")
done <"$T_TMP/expect"
echo "# $recovered attempts were left running by a stop"
check "attempts were left running and recovered ($recovered)" [ "$recovered" -ge 3 ]
check "every recovered attempt has its worktree's progress (${bad[*]:-})" \
	[ "${#bad[@]}" -eq 0 ]
check "some recovered attempt had progress (not all 0)" \
	awk '$3 > 0 { found = 1 } END { exit !found }' "$T_TMP/expect"

# ---- the record ----
list=$("$STORYCTL" -C "$P" list --json)
T_OUT=$list
expect_json "all 30 stories are listed" 'length == 30'
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
check "no agent, watchdog or controller of the project is left" \
	wait_for 5 nothing_left
project_procs | sed 's/^/# left: /'

finish
