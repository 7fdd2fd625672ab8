#!/bin/bash
# storyctl serve under load beside a running batch (docs/reliability.md#the-service):
# 32 concurrent clients (ab, from apache2-utils) make 20,000 requests of
# the read views and the retry-policy GETs while `run -j 3` takes 200
# stories through fast simulated agents (make check's quick tier,
# tier_count in tests/e2e/lib.sh: a third of both, so that the load
# still spans the batch), and a writer PUTs and DELETEs story and batch
# overrides that do not change any decision.  Then: no
# answer but 2xx, no "database is locked" anywhere, every PUT and DELETE
# logged once, and the batch's records (per story: status, attempts,
# outcomes, decisions; its events; the state branch's commits) equal those
# of the same batch run beside it without a server.  p50/p99 latency and
# requests per second are printed as "# " lines.  127.0.0.1 only, a port
# the kernel picks, every wait bounded.
#
# To load a new route, add a line to LOAD (its share of the requests and
# of the 32 clients).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

STORIES=$(tier_count 200 60)
# the stories the load and the writer name: the last, one in the middle,
# two early ones
LAST=$(printf 's%03d' "$STORIES")
MID=$(printf 's%03d' $((STORIES / 2)))
# path concurrency requests keep-alive(k or -): 32 clients, 20,000 requests
LOAD=(
	"/v1/status 8 5000 k"
	"/v1/status 2 1000 -"
	"/v1/stories 6 4000 k"
	"/v1/stories/$MID 6 4000 k"
	"/v1/stories/s007 2 1000 -"
	"/v1/retry-policy 4 2500 k"
	"/v1/stories/s050/retry-policy 4 2500 -"
)

SRV_PID=
SRV_PORT=
RUN_PID=
BASE_PID=
PIDS=()
cleanup() {
	local p
	for p in "$SRV_PID" "$RUN_PID" "$BASE_PID" "${PIDS[@]}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	rm -rf "$T_TMP"
}
trap cleanup EXIT

if ! command -v ab >/dev/null; then
	not_ok "ab is installed (apache2-utils, scripts/deps)"
	finish
fi

# 200 stories: most succeed at once; every 10th makes progress, fails,
# then succeeds; every 25th always fails (deferred after 3 attempts).
# The simulated agent follows the story's script, so both batches decide
# the same whatever the timing.
new_project '{"max_attempts": 3}'
for i in $(seq 1 "$STORIES"); do
	id=$(printf 's%03d' "$i")
	if [ $((i % 25)) = 0 ]; then
		new_story "$P" "$id" 1 '<!-- sim *: say no luck; exit 1 -->'
	elif [ $((i % 10)) = 0 ]; then
		new_story "$P" "$id" 2 '<!-- sim a1: check 1; exit 1 -->' '<!-- sim *: checkall -->'
	else
		new_story "$P" "$id" 1 '<!-- sim *: checkall -->'
	fi
done
commit_all
BASE=$T_TMP/base
cp -a "$P" "$BASE"
RKEY=$("$STORYCTL" -C "$P" key add load 2>/dev/null)
WKEY=$("$STORYCTL" -C "$P" key add writer --write 2>/dev/null)
serve_up || not_ok "serve started"

# --- the batch, the same batch without a server, and the load ---------------
"$STORYCTL" -C "$BASE" run -j 3 >"$T_TMP/base.out" 2>&1 &
BASE_PID=$!
"$STORYCTL" -C "$P" run -j 3 >"$T_TMP/run.out" 2>&1 &
RUN_PID=$!
for _ in $(seq 1 300); do
	[ "$(sql 'SELECT count(*) FROM batches' 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
LOAD_START_MS=$(date +%s%3N)
t0=$EPOCHREALTIME
total=0
# the quick tier (make check) sends a third of the requests
share=$(tier_count 3 1)
for i in "${!LOAD[@]}"; do
	read -r path conc n ka <<<"${LOAD[$i]}"
	n=$((n * share / 3))
	total=$((total + n))
	kopt=()
	[ "$ka" = k ] && kopt=(-k)
	# -r: a socket error is counted, it does not stop ab
	timeout 300 ab -r -q "${kopt[@]}" -n "$n" -c "$conc" -s 30 \
		-g "$T_TMP/ab.$i.tsv" -H "X-API-Key: $RKEY" \
		"http://127.0.0.1:$SRV_PORT$path" >"$T_TMP/ab.$i.out" 2>&1 &
	PIDS+=($!)
done
check "the batch was running when the load started" kill -0 "$RUN_PID"

# The writer: overrides equal to the config's policy (3 attempts, 10 ms
# fixed delay), so no decision changes; each answer must be 200.
WRITES=0
WRITE_BAD=0
for _ in $(seq 1 10); do
	for spec in "PUT /v1/stories/$LAST/retry-policy {\"max_retries\":2}" \
		"PUT /v1/retry-policy {\"base_delay_ms\":10}" \
		"DELETE /v1/stories/$LAST/retry-policy -" \
		"DELETE /v1/retry-policy -"; do
		read -r m path body <<<"$spec"
		args=()
		[ "$body" != - ] && args=(--data-binary "$body")
		code=$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' -X "$m" \
			-H "X-API-Key: $WKEY" "${args[@]}" "http://127.0.0.1:$SRV_PORT$path")
		WRITES=$((WRITES + 1))
		[ "$code" = 200 ] || { WRITE_BAD=$((WRITE_BAD + 1)); echo "# $m $path: $code"; }
	done
	sleep 0.5
done
for p in "${PIDS[@]}"; do wait "$p"; done
t1=$EPOCHREALTIME
LOAD_END_MS=$(date +%s%3N)
PIDS=()
wait "$RUN_PID"
RUN_RC=$?
RUN_PID=
wait "$BASE_PID"
BASE_RC=$?
BASE_PID=

# --- the answers ---------------------------------------------------------------
complete=0
non2xx=0
sockerr=0
for i in "${!LOAD[@]}"; do
	read -r path _ n _ <<<"${LOAD[$i]}"
	c=$(sed -n 's/^Complete requests: *\([0-9]*\)/\1/p' "$T_TMP/ab.$i.out")
	x=$(sed -n 's/^Non-2xx responses: *\([0-9]*\)/\1/p' "$T_TMP/ab.$i.out")
	# "(Connect: 0, Receive: 0, Length: 12, Exceptions: 0)": a changing
	# length is expected (the views change as the batch runs)
	e=$(sed -n 's/.*(Connect: \([0-9]*\), Receive: \([0-9]*\), Length: [0-9]*, Exceptions: \([0-9]*\)).*/\1 \2 \3/p' "$T_TMP/ab.$i.out")
	e=$(awk '{print $1 + $2 + $3}' <<<"${e:-0 0 0}")
	complete=$((complete + ${c:-0}))
	non2xx=$((non2xx + ${x:-0}))
	sockerr=$((sockerr + e))
	if [ "${c:-0}" != "$n" ] || [ "${x:-0}" != 0 ] || [ "$e" != 0 ]; then
		echo "# $path: complete ${c:-?}/$n, non-2xx ${x:-0}, socket errors $e"
		tail -n 3 "$T_TMP/ab.$i.out" | sed 's/^/#   /'
	fi
done
check "every request was answered ($complete of $total)" test "$complete" = "$total"
check "no answer but 2xx: no 5xx, no 4xx ($non2xx)" test "$non2xx" = 0
check "no connect, receive or other socket error ($sockerr)" test "$sockerr" = 0
check "every PUT and DELETE of an override: 200 ($WRITE_BAD of $WRITES not)" test "$WRITE_BAD" = 0

# latency over all requests (ab -g: ttime, ms, is column 5)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
tail -q -n +2 "$T_TMP"/ab.*.tsv | cut -f5 | sort -n >"$T_TMP/lat"
nlat=$(wc -l <"$T_TMP/lat")
p50=$(sed -n "$(((nlat * 50 + 99) / 100))p" "$T_TMP/lat")
p99=$(sed -n "$(((nlat * 99 + 99) / 100))p" "$T_TMP/lat")
echo "# load: $complete requests by 32 clients in $secs s = $(awk -v n="$complete" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') requests/s; latency p50 ${p50:-?} ms, p99 ${p99:-?} ms (beside two -j 3 batches)"
check "ab recorded a latency for every request ($nlat)" test "$nlat" = "$total"

# --- the batch -------------------------------------------------------------------
check "the batch under load finished (exit $RUN_RC, 3: deferred stories)" test "$RUN_RC" = 3
check "the batch without a server finished the same (exit $BASE_RC)" test "$BASE_RC" = "$RUN_RC"
under=$(sql "SELECT count(*) FROM attempts WHERE ended_ms BETWEEN $LOAD_START_MS AND $LOAD_END_MS")
all=$(sql "SELECT count(*) FROM attempts")
# the load must really overlap the batch; with a server of about 1 ms a
# request the 20,000 requests can end before the 200 stories do, so a
# quarter of the decisions, not all, fall inside the load's window
check "at least a quarter of the decisions were made under load ($under of $all)" \
	test "$((under * 4))" -ge "$all"
# locked: the text of SQLITE_BUSY, wherever storyctl writes a message
locked=$(cat "$T_TMP/srv.out" "$T_TMP/srv.err" "$T_TMP/run.out" "$T_TMP"/ab.*.out |
	grep -ci 'database is locked\|SQLITE_BUSY')
locked_db=$(sql "SELECT (SELECT count(*) FROM events WHERE message LIKE '%locked%') +
	(SELECT count(*) FROM attempts WHERE error_message LIKE '%locked%' OR reason LIKE '%locked%')")
check "no 'database is locked' in the server's, the controller's or ab's output ($locked)" test "$locked" = 0
check "no 'database is locked' in the event log or the attempts ($locked_db)" test "$locked_db" = 0
check "every override PUT and DELETE is in the event log once ($WRITES)" \
	test "$(sql "SELECT count(*) FROM events WHERE kind = 'policy'")" = "$WRITES"
check "no override is left" test "$(sql 'SELECT count(*) FROM policy_overrides')" = 0

# records DIR: what the batch decided, in an order that does not depend on
# which slot ran what first
records() {
	local db=$1/.storyctl/state.db
	echo "== stories"
	sqlite3 "$db" "SELECT id, status, attempts FROM stories ORDER BY id"
	echo "== attempts"
	sqlite3 "$db" "SELECT story_id, seq, attempt, role, agent, outcome, error_code,
		decision, reason, tasks_completed, tasks_total FROM attempts ORDER BY story_id, seq"
	echo "== events"
	sqlite3 "$db" "SELECT coalesce(story_id, '-'), kind, message FROM events
		WHERE kind <> 'policy' ORDER BY 1, 2, 3"
	echo "== state branch"
	git -C "$1" rev-list --count storyctl/state
	git -C "$1" log --format=%s storyctl/state | sort
}
records "$P" >"$T_TMP/rec.load"
records "$BASE" >"$T_TMP/rec.base"
check "the records are not empty ($STORIES stories, 3 decisions each for the failing ones)" \
	test "$(grep -c '|' "$T_TMP/rec.load")" -gt $((STORIES * 3))
if cmp -s "$T_TMP/rec.load" "$T_TMP/rec.base"; then
	ok "no lost or doubled decision: stories, attempts, events and state-branch commits equal the batch without a server"
else
	not_ok "no lost or doubled decision: the records differ from the batch without a server"
	diff "$T_TMP/rec.base" "$T_TMP/rec.load" | head -20 | sed 's/^/# /'
fi
check "the server still answers after the load" \
	test "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT/v1/status")" = 200
kill -TERM "$SRV_PID"
wait "$SRV_PID"
check "serve exits 0 on SIGTERM after the load" test $? = 0
SRV_PID=
finish
