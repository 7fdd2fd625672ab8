#!/bin/bash
# The live dashboard in a real browser (docs/report.md#live,
# docs/api.md#the-dashboard): headless Chromium signs in to a running
# `storyctl serve` through its form, holds a session cookie that is not
# the key (HttpOnly), follows the event stream, and shows a decision the
# controller makes while the page is open within 2 seconds, without a
# reload.  A page on another loopback port (a small server of the test's
# that logs the Cookie header it gets) receives no key, nothing the
# first server lets write or read its JSON, and nothing it accepts at
# all once the key is revoked (a browser sends its cookies for
# 127.0.0.1 to every port: docs/api.md#the-dashboard).  The agent of the
# story waits for a file, so the test, not the clock, says when the
# decision is made.  A screenshot of the live
# page at 1280 px goes to BUILD/screenshots/.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_browser.sh"
cd "$T_TMP" || exit 1
SRV_PID=
RUN_PID=
OTHER_PID=
trap 'wd_stop; [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$RUN_PID" ] && kill "$RUN_PID" 2>/dev/null; [ -n "$OTHER_PID" ] && kill "$OTHER_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT
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
KEY=$("$STORYCTL" -C "$P" key add dash --write 2>/dev/null)
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
U="http://127.0.0.1:$SRV_PORT"
# wd_el CSS: the WebDriver id of the element
wd_el() {
	wd_call POST "/session/$WD_SESSION/element" \
		"$(jq -cn --arg c "$1" '{using: "css selector", value: $c}')" |
		jq -r '.[keys[0]]'
}
wd_get "$U/?key=$KEY"
V=$(wd_js "return document.title")
check "/?key= is not read: the sign-in page ($V)" [ "$V" = '"storyctl: keys never go in addresses"' ]
wd_get "$U/"
V=$(wd_js "return document.title")
check "/ without a session: the sign-in page ($V)" [ "$V" = '"storyctl: sign in"' ]
# the key typed into the form and posted, as a person does
wd_call POST "/session/$WD_SESSION/element/$(wd_el 'input[name=key]')/value" \
	"$(jq -cn --arg k "$KEY" '{text: $k}')" >/dev/null
wd_call POST "/session/$WD_SESSION/element/$(wd_el 'button[type=submit]')/click" '{}' >/dev/null
for _ in $(seq 1 100); do
	V=$(wd_js "return location.pathname + location.search")
	[ "$V" = '"/"' ] && [ "$(wd_js "return document.body.getAttribute('data-live') !== null || !!document.querySelector('svg.timeline')")" = true ] && break
	sleep 0.1
done
check "the form signs in and sends the browser on to / ($V)" [ "$V" = '"/"' ]
V=$(wd_js "return document.cookie")
check "the session cookie is HttpOnly: scripts do not see it" [ "$V" = '""' ]
COOKIES=$(wd_call GET "/session/$WD_SESSION/cookie")
echo "# cookies: $(printf '%s' "$COOKIES" | jq -c '[.[] | {name, httpOnly, sameSite}]')"
check "no cookie holds the key or a part of it" \
	bash -c '! printf "%s" "$1" | grep -qF -e "$2" -e "${2#sc_}"' _ "$COOKIES" "$KEY"
V=$(printf '%s' "$COOKIES" | jq -c --arg n "storyctl_session_$SRV_PORT" '[.[] | select(.name == $n) | {httpOnly, sameSite, path}]')
check "one session cookie named after the port, HttpOnly, Strict, for / ($V)" \
	[ "$V" = '[{"httpOnly":true,"sameSite":"Strict","path":"/"}]' ]
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

# another app on this host, another port: cookies are not kept apart by
# port, so it is sent whatever the browser holds for 127.0.0.1; what it
# logs must be of no use at the dashboard's server
mkdir -p "$T_TMP/other"
cat >"$T_TMP/other.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[1], "a") as f:
            f.write((self.headers.get("Cookie") or "") + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>other</title>other app")
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$T_TMP/other.py" "$T_TMP/other.cookies" >"$T_TMP/other.port" 2>/dev/null &
OTHER_PID=$!
for _ in $(seq 1 100); do [ -s "$T_TMP/other.port" ] && break; sleep 0.1; done
OPORT=$(head -n 1 "$T_TMP/other.port")
wd_get "http://127.0.0.1:$OPORT/"
V=$(wd_js "return document.title")
check "a page of another app on port $OPORT opens ($V)" [ "$V" = '"other"' ]
GOT=$(cat "$T_TMP/other.cookies" 2>/dev/null)
echo "# the other port received Cookie: $(printf '%s\n' "$GOT" | sort -u | tr '\n' ' ' |
	sed 's/=[0-9a-f]\{8\}[0-9a-f]*/=…/g')"
check "it received no key" bash -c '! printf "%s" "$1" | grep -qF -e "$2" -e "${2#sc_}"' _ "$GOT" "$KEY"
# what it got, replayed to the dashboard's server by a client that is
# not a browser: a read-only session at most (a browser keeps cookies
# apart by host, not by port: docs/api.md#the-dashboard)
VALS=$(printf '%s\n' "$GOT" | tr ';' '\n' | sed -n 's/^ *storyctl[^=]*=//p' | sort -u)
writes=0
reads=0
for v in $VALS; do
	for h in "Cookie: storyctl_session_$SRV_PORT=$v" "Cookie: storyctl_key=$v" "X-API-Key: $v"; do
		c=$(curl -s -o /dev/null --max-time 20 -w '%{http_code}' -X POST -H "$h" "$U/v1/stories/live1/requeue")
		[ "$c" = 401 ] || writes=$((writes + 1))
		c=$(curl -s -o /dev/null --max-time 20 -w '%{http_code}' -X PUT -H "$h" -d '{"max_retries": 0}' "$U/v1/retry-policy")
		[ "$c" = 401 ] || writes=$((writes + 1))
		c=$(curl -s -o /dev/null --max-time 20 -w '%{http_code}' -H "$h" "$U/v1/status")
		[ "$c" = 401 ] || reads=$((reads + 1))
	done
done
check "nothing it received can write, though the session is a write key's ($writes accepted)" [ "$writes" = 0 ]
check "... nor read the JSON views ($reads accepted)" [ "$reads" = 0 ]
"$STORYCTL" -C "$P" key revoke dash >/dev/null 2>&1
alive=0
for v in $VALS; do
	c=$(curl -s -o /dev/null --max-time 20 -w '%{http_code}' -b "storyctl_session_$SRV_PORT=$v" "$U/")
	[ "$c" = 401 ] || alive=$((alive + 1))
done
check "once the key is revoked, nothing it received opens even the page ($alive accepted)" [ "$alive" = 0 ]
wd_get "$U/"
V=$(wd_js "return document.title")
check "... and the browser's own session has ended: the sign-in page ($V)" [ "$V" = '"storyctl: sign in"' ]
finish
