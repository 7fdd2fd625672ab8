#!/bin/bash
# Notifications (docs/notifications.md): the config is checked; webhooks
# get each event's JSON, redacted, and a command gets it on stdin; a
# receiver that hangs, one that answers 500 and one that is down never
# stop the batch or change its result, and cost it at most the bounded
# wait at its end (measured against the same batch without notify);
# every failure is a console line and a "notify" event.  Receivers are
# tests/e2e/agents/notify-receiver on 127.0.0.1, port 0, each living at
# most 120 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_ps.sh"
cd "$T_TMP" || exit 1

RECV="$STORYCTL_SRC/tests/e2e/agents/notify-receiver"
R_PIDS=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local p
	for p in $R_PIDS; do kill "$p" 2>/dev/null; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
# libcurl honours these: the receivers are local
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
ALL='["batch_end", "escalated", "deferred", "stopped", "breaker_open", "usage_limit"]'
SECRET='sk-ant-api03-Zq8xWv4Lr7Tn2Kp9Hs6Dm3Fb1Gc5Jy0Ae'

# recv_up MODE NAME: a receiver in $T_TMP/NAME; sets R_PORT, R_IN.
recv_up() {
	local dir="$T_TMP/$2"
	mkdir -p "$dir/in"
	"$RECV" "$1" "$dir/port" "$dir/in" 120 &
	R_PIDS="$R_PIDS $!"
	R_IN="$dir/in"
	R_PORT=
	for _ in $(seq 1 100); do
		[ -s "$dir/port" ] && R_PORT=$(cat "$dir/port") && return 0
		sleep 0.1
	done
	return 1
}

# The night of every test: one story done, one deferred (a plateau), one
# escalated (both agents refuse its key, printing it: no agent is left,
# the batch stops) and one left pending.
night() {
	new_project '{"max_attempts": 4}'
	new_story "$P" a-done 2 '<!-- sim *: checkall -->'
	new_story "$P" b-plateau 4 '<!-- sim *: check 2 -->'
	new_story "$P" c-esc 2 "<!-- sim *: err Invalid API key: login failed password=hunter2hunter2 key $SECRET; exit 1 -->"
	new_story "$P" d-left 2 '<!-- sim *: checkall -->'
	commit_all
}

ms() { date +%s%3N; }

# --- the config is checked like the rest of it ----------------------------
bad_config() {
	EXTRA_JSON="\"notify\": $2," new_project
	run_sc -C "$P" run
	expect_rc "$1: exit 65" 65
	expect_match "$1: the message names it" "$T_ERR" "$3"
}
bad_config "unknown event" '[{"on": ["batch_ned"], "webhook": "http://127.0.0.1/x"}]' \
	'notify\[0\]\.on\[0\]: unknown event batch_ned \(did you mean batch_end\?\)'
bad_config "unknown key" '[{"on": ["batch_end"], "webhok": "http://127.0.0.1/x"}]' \
	'unknown key notify\[0\]\.webhok \(did you mean webhook\?\)'
bad_config "both targets" '[{"on": ["stopped"], "webhook": "http://127.0.0.1/x", "command": ["true"]}]' \
	'notify\[0\]: has both "webhook" and "command"'
bad_config "not http" '[{"on": ["stopped"], "webhook": "ftp://127.0.0.1/x?token=abcdefgh12345678"}]' \
	'notify\[0\]\.webhook: must be an http:// or https:// URL'
check "a bad URL is not repeated (it may hold a token)" \
	bash -c '! grep -q abcdefgh12345678 <<<"$1"' _ "$T_ERR"
bad_config "a shell string" '[{"on": ["stopped"], "command": "notify-send done"}]' \
	'notify\[0\]\.command: expected an array of strings'

# --- delivered: a webhook and a command -----------------------------------
recv_up ok ok || not_ok "the receiver started"
OK_IN=$R_IN
cat >"$T_TMP/cmd" <<'SH'
#!/bin/sh
# a command notifier: append the event from stdin as one line
cat >>"$1"
echo >>"$1"
SH
chmod +x "$T_TMP/cmd"
EXTRA_JSON="\"notify\": [{\"on\": $ALL, \"webhook\": \"http://127.0.0.1:$R_PORT/hook\"},
  {\"on\": [\"escalated\", \"batch_end\"], \"command\": [\"$T_TMP/cmd\", \"$T_TMP/cmd.jsonl\"]}]," night
run_sc -C "$P" run
expect_rc "a night with notify exits as without (75: stopped)" 75
jq -s . "$OK_IN"/*.json >"$T_TMP/ok.json" 2>/dev/null
T_OUT=$(cat "$T_TMP/ok.json")
expect_json "the webhook got deferred, escalated, stopped and batch_end, in order" \
	'[.[].event] == ["deferred", "escalated", "stopped", "batch_end"]'
expect_json "every event has the documented fields" \
	'all(.[]; .format_version == 1 and .batch_id == 1 and (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")) and (.time_ms | type) == "number" and (.reason | type) == "string" and (.root | type) == "string")'
expect_json "deferred names the story, the plateau and the command to act" \
	'.[0] | .story_id == "b-plateau" and (.reason | test("plateau confirmed at 2/4")) and .command == "storyctl requeue b-plateau"'
expect_json "escalated names the story, its reason and its agent's error" \
	'.[1] | .story_id == "c-esc" and (.reason | test("^D2: permanent failure")) and (.error | test("^Invalid API key")) and .command == "storyctl requeue c-esc"'
expect_json "stopped says why and how to go on" \
	'.[2] | .story_id == null and (.reason | test("no enabled agent remains")) and .command == "storyctl resume"'
expect_json "batch_end has the counts and the status" \
	'.[3] | .story_id == null and .batch_status == "stopped" and .counts == {"pending":1,"running":0,"done":1,"deferred":1,"escalated":1,"blocked":0,"invalid":0} and .command == "storyctl status" and .reason == "batch 1 stopped: 1 pending, 1 done, 1 deferred, 1 escalated"'
check "no secret reaches the receiver" \
	bash -c '! grep -qE "hunter2hunter2|Zq8xWv4Lr7Tn2Kp9" "$1"/*.json' _ "$OK_IN"
check "the secret arrives as [REDACTED]" grep -q 'key \[REDACTED\]' "$T_TMP/ok.json"
T_OUT=$(jq -s . "$T_TMP/cmd.jsonl" 2>/dev/null)
expect_json "the command got the JSON on stdin, only the events it is for" \
	'[.[].event] == ["escalated", "batch_end"] and .[0].story_id == "c-esc"'
run_sc -C "$P" log --json
check "nothing failed, nothing is logged about notify" \
	bash -c '! grep -q "\"notify\"" <<<"$1"' _ "$T_OUT"

# --- breaker_open and usage_limit, to a command ---------------------------
EXTRA_JSON="\"breaker\": {\"after\": 2, \"cooldown_s\": 0.3},
  \"notify\": [{\"on\": $ALL, \"command\": [\"$T_TMP/cmd\", \"$T_TMP/breaker.jsonl\"]}]," \
	new_project '{"max_attempts": 1}'
for s in n1 n2 n3; do new_story "$P" "$s" 2 '<!-- sim *: network -->'; done
commit_all
run_sc -C "$P" run
expect_rc "the breaker stops the batch (75) with notify as without" 75
T_OUT=$(jq -s . "$T_TMP/breaker.jsonl" 2>/dev/null)
expect_json "breaker_open when it pauses and when it stops, then stopped and batch_end" \
	'[.[] | select(.event != "escalated")] | [.[].event] == ["breaker_open", "breaker_open", "stopped", "batch_end"] and (.[0].reason | test("^breaker: 2 stories in a row")) and (.[1].reason | test("^breaker open")) and .[1].command == "storyctl log"'

EXTRA_JSON="\"notify\": [{\"on\": [\"usage_limit\"], \"command\": [\"$T_TMP/cmd\", \"$T_TMP/usage.jsonl\"]}]," \
	new_project '{"max_wait_s": 2}'
new_story "$P" u1 1 "<!-- sim a1: once usage $(($(date +%s) + 1)); checkall -->"
commit_all
run_sc -C "$P" run
expect_rc "a usage limit then done (0)" 0
T_OUT=$(jq -s . "$T_TMP/usage.jsonl" 2>/dev/null)
expect_json "usage_limit names the story and the agent, and nothing else was sent" \
	'length == 1 and .[0].event == "usage_limit" and .[0].story_id == "u1" and .[0].agent == "sim-p" and (.[0].reason | test("hit its usage limit: no attempt of it before "))'

# --- receivers that fail never stop or slow the batch ---------------------
# the same night without notify: the time to compare with
night
t0=$(ms)
run_sc -C "$P" run
t_base=$(($(ms) - t0))
expect_rc "the night without notify" 75
base_rc=$T_RC
base_list=$("$STORYCTL" -C "$P" list --json | jq -c '[.[] | {id, status, attempts}]')

recv_up hang hang || not_ok "the hanging receiver started"
HANG_PORT=$R_PORT HANG_IN=$R_IN
recv_up 500 e500 || not_ok "the 500 receiver started"
E500_PORT=$R_PORT E500_IN=$R_IN
recv_up ok down || not_ok "the receiver to stop started"
DOWN_PORT=$R_PORT
kill "${R_PIDS##* }"
wait "${R_PIDS##* }" 2>/dev/null
cat >"$T_TMP/hang-cmd" <<'SH'
#!/bin/sh
# a command notifier that never reads and never exits
echo $$ >"$1"
sleep 300
SH
chmod +x "$T_TMP/hang-cmd"
EXTRA_JSON="\"notify\": [{\"on\": $ALL, \"webhook\": \"http://127.0.0.1:$HANG_PORT/hook\"},
  {\"on\": $ALL, \"webhook\": \"http://127.0.0.1:$E500_PORT/services/XSECRETPATHX?token=abcdefgh12345678\"},
  {\"on\": $ALL, \"webhook\": \"http://127.0.0.1:$DOWN_PORT/hook\"},
  {\"on\": [\"escalated\"], \"command\": [\"$T_TMP/hang-cmd\", \"$T_TMP/hang.pid\"]}]," night
t0=$(ms)
run_sc -C "$P" run
t_fail=$(($(ms) - t0))
expect_rc "failing receivers: the same exit status" "$base_rc"
check "failing receivers: the same stories, statuses and attempts" \
	test "$("$STORYCTL" -C "$P" list --json | jq -c '[.[] | {id, status, attempts}]')" = "$base_list"
# Delivered on the loop, the hanging receivers would hold it 3 tries x 5 s
# per event before the next attempt could start.  Off the loop the next
# attempt starts while the first hung request is still held: an order
# of events, not a wall-clock budget that load could break (issue 34).
echo "# wall time: ${t_base} ms without notify, ${t_fail} ms with failing receivers"
first_hung=$(cat "$HANG_IN"/*.hung 2>/dev/null | sort -n | head -n 1)
next_start=$(sql "SELECT min(started_ms) FROM attempts WHERE started_ms > ${first_hung:-0}")
echo "# first hung request at ${first_hung:-none}, the next attempt at ${next_start:-none}"
check "an attempt started while the first hung request was held (not after its 3 tries)" \
	test -n "$first_hung" -a -n "$next_start" -a "${next_start:-0}" -lt $((${first_hung:-0} + 15000))
check "the hanging receiver was reached" bash -c 'ls "$1"/*.hung >/dev/null 2>&1' _ "$HANG_IN"
check "the 500 receiver was tried again" \
	test "$(find "$E500_IN" -name '*.json' | wc -l)" -ge 3
expect_match "a 500 is logged on the console after its tries" "$T_OUT" \
	"^notify: deferred to webhook http://127\.0\.0\.1:$E500_PORT failed: HTTP 500 \(3 tries\)$"
expect_match "a receiver that is down is logged" "$T_OUT" \
	"^notify: deferred to webhook http://127\.0\.0\.1:$DOWN_PORT failed: .*(refused|connect).* \(3 tries\)$"
expect_match "what was still on its way is given up, and said" "$T_OUT" \
	'^notify: [0-9]+ notifications? still undelivered 5 s after the batch ended: given up$'
check "the webhook's path and query are never shown" \
	bash -c '! grep -qE "XSECRETPATHX|abcdefgh12345678" <<<"$1"' _ "$T_OUT"
check "the hanging command was started" test -s "$T_TMP/hang.pid"
hang_pid=$(cat "$T_TMP/hang.pid" 2>/dev/null)
if [ -n "$hang_pid" ] && ! group_alive "$hang_pid"; then
	ok "the hanging command's group is gone when run exits"
else
	not_ok "the hanging command's group is gone when run exits"
fi
run_sc -C "$P" log --json -n 1000
T_OUT=$(jq -s . <<<"$T_OUT")
expect_json "the failures are in the event log" \
	'[.[] | select(.kind == "notify")] | length >= 3 and any(.[]; .message | test("HTTP 500 \\(3 tries\\)")) and any(.[]; .message | test("given up"))'

finish
