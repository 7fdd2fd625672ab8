#!/bin/bash
# Hostile agents (issue "Reliability and security"): an agent that closes
# stdout early, floods 300 MB of output, leaves grandchildren that ignore
# SIGTERM, or dies by a signal.  Each is handled and recorded, and the
# controller's peak RSS stays under 64 MB.  The agent is
# tests/e2e/agents/hostile-agent (sim-agent with the misbehaviour on top).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
HOSTILE="$STORYCTL_SRC/tests/e2e/agents/hostile-agent"
RSS_LIMIT_KB=$((64 * 1024))
PIDDIRS=()

. "$STORYCTL_SRC/tests/e2e/lib_ps.sh"

cleanup() {
	local d f p
	for d in "${PIDDIRS[@]}"; do
		for f in "$d"/gc.* "$d"/agent.*; do
			[ -f "$f" ] || continue
			while read -r p; do kill_ours "$p"; done <"$f"
		done
	done
	rm -rf "$T_TMP"
}
trap cleanup EXIT

# hostile_project NAME [POLICY-JSON]: a project whose only agent is
# hostile-agent writing pids under $T_TMP/pids-NAME ($PIDS).
hostile_project() {
	local cmd
	PIDS="$T_TMP/pids-$1"
	mkdir -p "$PIDS"
	PIDDIRS+=("$PIDS")
	cmd=$(jq -cn --arg a "$HOSTILE" --arg d "$PIDS" \
		'[$a, $d, "{role}", "{attempt}", "{story_file}"]')
	new_project "${2:-"{}"}" \
		"$(jq -cn --argjson c "$cmd" '{primary: {name: "hostile", command: $c, timeout_s: 60}}')"
}

# run_peak ARGS...: like run_sc -C "$P" ARGS, and PEAK_KB is the peak RSS
# of the controller in KiB: GNU time's %M when /usr/bin/time exists (the
# largest of the controller and the children it reaped, so an upper
# bound), else (or with RSS_POLL=1) the highest VmHWM of the storyctl
# process seen while polling /proc every 20 ms.
run_peak() {
	local pid v
	PEAK_KB=0
	if [ -x /usr/bin/time ] && [ "${RSS_POLL:-0}" != 1 ]; then
		/usr/bin/time -f %M -o "$T_TMP/rss" "$STORYCTL" -C "$P" "$@" \
			>"$T_TMP/out" 2>"$T_TMP/err"
		T_RC=$?
		PEAK_KB=$(tail -n1 "$T_TMP/rss")
		RSS_HOW="GNU time"
	else
		"$STORYCTL" -C "$P" "$@" >"$T_TMP/out" 2>"$T_TMP/err" &
		pid=$!
		while alive "$pid"; do
			v=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\) kB/\1/p' \
				"/proc/$pid/status" 2>/dev/null)
			[ -n "$v" ] && [ "$v" -gt "$PEAK_KB" ] && PEAK_KB=$v
			sleep 0.02
		done
		wait "$pid"
		T_RC=$?
		RSS_HOW="VmHWM"
	fi
	T_OUT=$(cat "$T_TMP/out")
	T_ERR=$(cat "$T_TMP/err")
	echo "# peak RSS ($RSS_HOW): $PEAK_KB KiB"
}

# expect_peak NAME: the last run_peak stayed under the limit.
expect_peak() {
	if [ -n "$PEAK_KB" ] && [ "$PEAK_KB" -gt 0 ] &&
		[ "$PEAK_KB" -lt "$RSS_LIMIT_KB" ]; then
		ok "$1: controller peak RSS $PEAK_KB KiB < 64 MiB"
	else
		not_ok "$1: controller peak RSS '$PEAK_KB' KiB, limit 64 MiB"
	fi
}

attempt_json() {
	"$STORYCTL" -C "$P" show "$1" --json
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# ---- an agent that closes stdout and stderr, then keeps working ----
hostile_project closeout
new_story "$P" c1 3 '<!-- hostile a1: closeout -->' '<!-- sim *: checkall -->'
commit_all
run_peak run
expect_rc "closed stdout: the run exits 0" 0
T_OUT=$(attempt_json c1)
expect_json "closed stdout: the attempt is a success, the story done" \
	'.status == "done" and (.attempts | length) == 1 and .attempts[0].outcome == "success" and .attempts[0].exit_code == 0'
expect_json "closed stdout: the controller waited for the exit, not for EOF (duration >= 1 s)" \
	'.attempts[0].duration_ms >= 1000'
check "closed stdout: all three boxes are checked in the story" \
	[ "$(grep -c '^- \[x\]' "$P/docs/stories/c1.md")" = 3 ]
expect_peak "closed stdout"

# ---- an agent that floods 300 MB on one line, then finishes ----
hostile_project flood
new_story "$P" f1 2 '<!-- hostile a1: flood 300000000 -->' '<!-- sim *: checkall -->'
commit_all
t0=$(now_ms)
run_peak run
el=$(($(now_ms) - t0))
expect_rc "300 MB flood: the run exits 0 (took $el ms)" 0
T_OUT=$(attempt_json f1)
expect_json "300 MB flood: the attempt is a success, the story done" \
	'.status == "done" and (.attempts | length) == 1 and .attempts[0].outcome == "success"'
log=$(printf '%s' "$T_OUT" | jq -r '.attempts[0].log // empty')
size=$(stat -c %s "$log" 2>/dev/null || echo 0)
check "300 MB flood: the log holds all of it ($size bytes)" \
	[ "$size" -ge 300000000 ]
check "300 MB flood: the log ends with the agent's last words" \
	bash -c 'tail -c 200 "$1" | grep -q "all tasks done"' _ "$log"
expect_peak "300 MB flood"
rm -f "$log"

# ---- an agent that leaves grandchildren ignoring SIGTERM and exits ----
# g1's agent leaves four (two of them orphans, still in its group) and
# exits 0; g2's agent, the next attempt, first looks whether any of them
# is still alive.
hostile_project tough
new_story "$P" g1 2 '<!-- hostile a1: tough 4 -->' '<!-- sim *: checkall -->'
new_story "$P" g2 2 '<!-- hostile a1: seen -->' '<!-- sim *: checkall -->'
commit_all
t0=$(now_ms)
run_peak run
el=$(($(now_ms) - t0))
expect_rc "SIGTERM-proof grandchildren: the run exits 0" 0
check "SIGTERM-proof grandchildren: the run did not wait for them (took $el ms)" \
	[ "$el" -lt 20000 ]
T_OUT=$(attempt_json g1)
expect_json "SIGTERM-proof grandchildren: g1's attempt is a success, the story done" \
	'.status == "done" and .attempts[0].outcome == "success" and .attempts[0].exit_code == 0'
gcs=$(tr "\n" " " <"$PIDS/gc.g1.a1" 2>/dev/null)
check "SIGTERM-proof grandchildren: four were left ($gcs)" \
	[ "$(wc -l <"$PIDS/gc.g1.a1" 2>/dev/null)" = 4 ]
seen=$(tr '\n' ' ' <"$PIDS/seen.g2.a1" 2>/dev/null)
expect_match "SIGTERM-proof grandchildren: none alive when the next attempt started ($seen)" \
	"$seen" '^(gone [0-9]+ ){4}$'
survivors=
for p in $gcs; do alive "$p" && survivors="$survivors $p"; done
check "SIGTERM-proof grandchildren: none alive after the run (alive:${survivors:- none})" \
	[ -z "$survivors" ]
T_OUT=$(attempt_json g2)
expect_json "SIGTERM-proof grandchildren: the next story is done" '.status == "done"'
expect_peak "SIGTERM-proof grandchildren"

# ---- agents that die by a signal ----
hostile_project signal '{"max_attempts": 3}'
new_story "$P" k1 3 '<!-- hostile a1: signal SEGV -->' '<!-- sim a1: check 1 -->' \
	'<!-- sim *: checkall -->'
new_story "$P" k2 3 '<!-- hostile a1: signal KILL -->' '<!-- sim a1: check 2 -->' \
	'<!-- sim *: checkall -->'
commit_all
run_peak run
expect_rc "death by signal: the run exits 0 (both retried to done)" 0
T_OUT=$(attempt_json k1)
expect_json "SIGSEGV: outcome crash CRASH with signal 11 recorded" \
	'.attempts[0].outcome == "crash" and .attempts[0].error_code == "CRASH" and .attempts[0].signal == 11'
expect_json "SIGSEGV: its progress (1/3) is recorded and the story retried to done" \
	'.attempts[0].tasks_completed == 1 and .attempts[0].decision == "retry" and .status == "done" and .attempts[1].attempt == 2'
T_OUT=$(attempt_json k2)
expect_json "SIGKILL: outcome crash CRASH with signal 9 recorded" \
	'.attempts[0].outcome == "crash" and .attempts[0].error_code == "CRASH" and .attempts[0].signal == 9'
expect_json "SIGKILL: the story is retried to done" \
	'.attempts[0].tasks_completed == 2 and .status == "done"'
run_sc -C "$P" show k1
expect_match "SIGSEGV: show lists the crash" "$T_OUT" 'a1 .*crash +CRASH'
expect_peak "death by signal"

# ---- control characters: C1 and the rest, from the agent and its gate ----
# (issue 11, docs/reliability.md) h1's agent prints C1 controls (C2 9B,
# the one-byte CSI, and C2 85), an escape sequence, DEL and a raw 0x9B
# in its error and its final message; its gate prints the same.  h2's
# error fills the 512-byte message with "é" after three short secrets,
# whose "[REDACTED]" marks are longer than they were: the message is cut
# at a character boundary and ends with "…" (docs/state.md#text-fields),
# so show --json keeps it and says it was cut.  Nothing that drives
# a terminal reaches show, show --json, the database or the branch.
cgate="$T_TMP/c1-gate"
cat >"$cgate" <<'SH'
#!/bin/sh
printf 'gate \033[31mFAIL\033[0m x \302\23331m red \302\205next \177del \233raw\n'
exit 2
SH
chmod +x "$cgate"
E=$(printf '\303\251%.0s' $(seq 1 300))
EXTRA_JSON='"gates": [{"name": "tests", "command": ["'"$cgate"'"]}],' \
	hostile_project c1 '{"max_attempts": 2}'
new_story "$P" h1 2 '<!-- hostile a1: c1 -->' '<!-- sim a1: exit 1 -->' \
	'<!-- sim *: checkall -->'
new_story "$P" h2 2 \
	"<!-- sim a1: err connect ECONNREFUSED password=abcd1234 password=abcd5678 password=abcd9999 xx $E; exit 1 -->" \
	'<!-- sim *: exit 1 -->'
commit_all
run_sc -C "$P" run
# C1, ESC, DEL, a raw 0x9B, and (issue 33) the bidi controls U+202A..E,
# U+2066..9 and the invisible U+200B and U+FEFF
CTRL_RE='\xc2[\x80-\x9f]|\x1b|\x7f|[\x00-\x7f]\x9b|\xe2\x80[\x8b\xaa-\xae]|\xe2\x81[\xa6-\xa9]|\xef\xbb\xbf'
controls() { LC_ALL=C grep -c -P "$CTRL_RE"; }
no_controls() {
	local n
	n=$(printf '%s' "$2" | controls)
	if [ "$n" = 0 ]; then ok "$1"; else
		not_ok "$1 ($n lines)"
		printf '%s' "$2" | LC_ALL=C grep -P "$CTRL_RE" |
			cat -v | head -3 | sed 's/^/# /'
	fi
}
T_OUT=$(attempt_json h1)
h1=$T_OUT
expect_json "C1: the error keeps its words" \
	'.attempts[0].error_message | test("ECONNREFUSED") and test("red") and test("next") and test("end") and test("lrt invisible iso")'
# the final message is in the database only (show leaves it out)
expect_match "C1: the final message keeps its words" \
	"$(sqlite3 "$P/.storyctl/state.db" "SELECT result_text FROM attempts WHERE story_id = 'h1'")" \
	'final 31m words here 2J bold'
expect_json "C1: the gate's output keeps its words, a raw 0x9B marked" \
	'[.attempts[].gate_output // empty] | any(test("gate FAIL x 31m red next del \\?raw"))'
no_controls "C1: none in show --json (decoded)" "$(printf '%s' "$h1" | jq -r '.. | strings')"
no_controls "C1: none in show --json (raw)" "$h1"
run_sc -C "$P" show h1
no_controls "C1: none in show" "$T_OUT"
T_OUT=$(attempt_json h2)
expect_json "a message cut to fit stays UTF-8: show --json keeps it" \
	'.attempts[0].error_message | test("password=\\[REDACTED\\].*éé…$")'
no_controls "C1: none in the database" "$(sqlite3 "$P/.storyctl/state.db" .dump)"
no_controls "C1: none on the state branch" "$(git -C "$P" log -p storyctl/state)"

finish
