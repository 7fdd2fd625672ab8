#!/bin/bash
# The read views of storyctl serve DURING a running batch, not only before
# and after (docs/api.md#read-views): while `run -j 3` works through 24
# stories whose agents check their boxes one at a time, each view is read
# over HTTP and from the CLI's --json in turn, again and again.  A pair
# counts when the database did not change between the two reads (a
# fingerprint of everything the views show, taken before and after); each
# such pair must be byte for byte equal, and there must be enough of them,
# some while stories are running.  127.0.0.1 only, every wait bounded.
#
# To compare a new view, add a line to VIEWS.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

# name | HTTP path (ID: a story the loop picks) | CLI arguments
VIEWS=(
	"status|/v1/status|status --json"
	"list|/v1/stories|list --json"
	"show|/v1/stories/ID|show ID --json"
)
MIN_PAIRS=5 # equal pairs wanted of each view
MIN_RUNNING=4 # ... of which, in all, while an attempt was running

SRV_PID=
SRV_PORT=
RUN_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$RUN_PID" ] && kill "$RUN_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

new_project '{"max_attempts": 2}'
for i in $(seq 1 24); do
	id=$(printf 'd%02d' "$i")
	if [ "$i" = 24 ]; then
		# held running until the loop has its pairs, so that the batch
		# outlasts the reads however slow the machine is
		new_story "$P" "$id" 3 "<!-- sim *: check 1; waitfor $T_TMP/go; checkall -->"
	elif [ $((i % 6)) = 0 ]; then
		# progress, a failure, then the rest: a retry, a second attempt
		new_story "$P" "$id" 3 '<!-- sim a1: check 1; sleep 0.4; exit 1 -->' \
			'<!-- sim *: sleep 0.4; checkall -->'
	else
		new_story "$P" "$id" 3 '<!-- sim *: check 1; sleep 0.8; check 2; sleep 0.8; checkall -->'
	fi
done
commit_all
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
serve_up || not_ok "serve started"

# fingerprint: every row the views are made of, but the heartbeat (which
# moves without anything the views show changing), and whether a
# controller holds the state dir's lock (status's controller_pid: a
# batch's controller lets it go after its last write, so the database
# alone does not show that moment; a shared flock, as `status` takes it)
fingerprint() {
	{
		sqlite3 -cmd '.timeout 5000' "$P/.storyctl/state.db" "
			SELECT * FROM batches;
			SELECT * FROM stories ORDER BY batch_id, id;
			SELECT id, outcome, pid, started_ms, ended_ms, exit_code, tasks_completed,
				tasks_total, subtasks_completed, subtasks_total, decision, reason,
				delay_ms, not_before_ms FROM attempts ORDER BY id;
			SELECT max(id) FROM events;
			SELECT * FROM policy_overrides;" 2>&1
		if flock -s -n "$P/.storyctl/lock" true; then echo free; else echo held; fi
	} | md5sum
}

"$STORYCTL" -C "$P" run -j 3 >"$T_TMP/run.out" 2>&1 &
RUN_PID=$!
for _ in $(seq 1 300); do
	[ -e "$P/.storyctl/state.db" ] && [ "$(sql 'SELECT count(*) FROM batches' 2>/dev/null)" = 1 ] && break
	sleep 0.1
done

declare -A equal unstable differ
running=0
rounds=0
k=0
# until the batch ends, at most 120 s
deadline=$(($(date +%s) + 120))
while kill -0 "$RUN_PID" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
	rounds=$((rounds + 1))
	for v in "${VIEWS[@]}"; do
		IFS='|' read -r name path args <<<"$v"
		k=$((k + 1))
		id=$(printf 'd%02d' $((k % 24 + 1)))
		path=${path//ID/$id}
		args=${args//ID/$id}
		f1=$(fingerprint)
		code=$(curl -s --max-time 20 -o "$T_TMP/http.json" -w '%{http_code}' \
			-H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT$path")
		# shellcheck disable=SC2086 # args are words on purpose
		"$STORYCTL" -C "$P" $args >"$T_TMP/cli.json" 2>/dev/null
		f2=$(fingerprint)
		if [ "$f1" != "$f2" ]; then
			unstable[$name]=$((${unstable[$name]:-0} + 1))
		elif [ "$code" = 200 ] && cmp -s "$T_TMP/http.json" "$T_TMP/cli.json"; then
			equal[$name]=$((${equal[$name]:-0} + 1))
			[ "$name" = status ] && jq -e '.running | length > 0' "$T_TMP/http.json" >/dev/null &&
				running=$((running + 1))
		else
			differ[$name]=$((${differ[$name]:-0} + 1))
			if [ "${differ[$name]}" = 1 ]; then
				echo "# $name ($path): HTTP $code differs from storyctl $args:"
				diff "$T_TMP/http.json" "$T_TMP/cli.json" | head -10 | sed 's/^/#   /'
			fi
		fi
	done
	enough=1
	for v in "${VIEWS[@]}"; do
		[ "${equal[${v%%|*}]:-0}" -ge "$MIN_PAIRS" ] || enough=0
	done
	[ "$enough" = 1 ] && [ "$running" -ge "$MIN_RUNNING" ] && : >"$T_TMP/go"
done
: >"$T_TMP/go"
wait "$RUN_PID"
rc=$?
RUN_PID=
check "the batch ran to its end meanwhile (exit $rc)" test "$rc" = 0
for v in "${VIEWS[@]}"; do
	name=${v%%|*}
	echo "# $name: ${equal[$name]:-0} equal pairs, ${unstable[$name]:-0} left out (the database moved), ${differ[$name]:-0} different"
	check "$name: no pair read from an unchanged database differs (${differ[$name]:-0})" \
		test "${differ[$name]:-0}" = 0
	check "$name: at least $MIN_PAIRS equal pairs during the batch (${equal[$name]:-0})" \
		test "${equal[$name]:-0}" -ge "$MIN_PAIRS"
done
check "at least $MIN_RUNNING equal status pairs while an attempt ran ($running)" \
	test "$running" -ge "$MIN_RUNNING"
kill -TERM "$SRV_PID"
wait "$SRV_PID"
SRV_PID=
finish
