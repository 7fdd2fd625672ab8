#!/bin/bash
# The live dashboard in a real browser (docs/report.md#live): headless
# Chromium opens /?key=KEY of a running `storyctl serve`, keeps the key
# in its cookie, follows the event stream, and shows a decision the
# controller makes while the page is open within 2 seconds, without a
# reload.  The agent of the story waits for a file, so the test, not
# the clock, says when the decision is made.  A screenshot of the live
# page at 1280 px goes to BUILD/screenshots/.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_browser.sh"
cd "$T_TMP" || exit 1
SRV_PID=
RUN_PID=
trap 'wd_stop; [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$RUN_PID" ] && kill "$RUN_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT
SHOTS=$(dirname "$STORYCTL")/screenshots
mkdir -p "$SHOTS"
now_ms() { date +%s%3N; }

# the agent: ticks every box once $GO exists (at most 60 s)
cat >"$T_TMP/gated" <<'SH'
#!/bin/sh
i=0
while [ ! -e "$GO" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sed -i 's/^- \[ \]/- [x]/' "$1"
mkdir -p src && echo "work on $1" >>src/work.txt
echo "all done"
SH
chmod +x "$T_TMP/gated"
export GO="$T_TMP/go"
new_project '{"max_attempts": 2}' '{"primary": {"name": "gated", "command": ["'"$T_TMP/gated"'", "{story_file}"], "timeout_s": 120}}'
new_story "$P" live1 2
commit_all
KEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
serve_up || not_ok "serve started"
"$STORYCTL" -C "$P" run >"$T_TMP/run.out" 2>&1 &
RUN_PID=$!
for _ in $(seq 1 300); do
	[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running'" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done

if ! wd_start 1280 1000; then
	not_ok "chromium and chromedriver start (see $T_TMP/chromedriver.log)"
	finish
fi
wd_get "http://127.0.0.1:$SRV_PORT/?key=$KEY"
V=$(wd_js "return location.pathname + location.search")
check "/?key= sends the browser on to / ($V)" [ "$V" = '"/"' ]
V=$(wd_js "return document.cookie")
check "the key's cookie is HttpOnly: scripts do not see it" [ "$V" = '""' ]
V=$(wd_js "return document.querySelector('svg.timeline g.row[data-story=\"live1\"]').getAttribute('class')")
expect_match "the page shows the story running" "$V" 'st-running'
live=
for _ in $(seq 1 100); do
	live=$(wd_js "return document.body.getAttribute('data-live')")
	[ "$live" = '"1"' ] && break
	sleep 0.1
done
check "the page follows the event stream" [ "$live" = '"1"' ]

# the decision: made when the agent ends; seen when the row says done
touch "$GO"
t_made=
for _ in $(seq 1 600); do
	if [ "$(sql "SELECT count(*) FROM attempts WHERE decision = 'done'" 2>/dev/null)" = 1 ]; then
		t_made=$(now_ms)
		break
	fi
	sleep 0.05
done
check "the controller decided" [ -n "$t_made" ]
t_seen=
for _ in $(seq 1 100); do
	V=$(wd_js "var r = document.querySelector('svg.timeline g.row[data-story=\"live1\"]'); return r ? r.getAttribute('class') : ''")
	case $V in *st-done*)
		t_seen=$(now_ms)
		break
		;;
	esac
	sleep 0.05
done
check "the page shows the decision without a reload" [ -n "$t_seen" ]
lag=$((${t_seen:-0} - ${t_made:-0}))
echo "# decision on the page ${lag} ms after the database had it"
check "within 2 s of the decision (${lag} ms)" [ -n "$t_seen" ] && [ "$lag" -le 2000 ]
V=$(wd_js "return performance.getEntriesByType('navigation').length")
check "one navigation: no reload ($V)" [ "$V" = 1 ]
V=$(wd_js "return document.querySelectorAll('svg.timeline g.bar[data-story=\"live1\"][data-outcome=\"success\"]').length")
check "the attempt's bar is drawn as a success" [ "$V" = 1 ]
wait "$RUN_PID"
RUN_PID=
wd_shot "$SHOTS/dashboard-1280.png"
check "a screenshot of the live page ($SHOTS/dashboard-1280.png)" [ -s "$SHOTS/dashboard-1280.png" ]
finish
