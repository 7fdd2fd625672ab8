#!/bin/bash
# The live dashboard in a real browser (docs/report.md#live,
# docs/api.md#the-dashboard): headless Chromium signs in to a running
# `storyctl serve` through its form, holds no cookie at all (the session
# id, not the key, is in the tab's sessionStorage), follows the event
# stream, and shows a decision the controller makes while the page is
# open within 2 seconds, without a reload.  A page on another loopback
# port (a small server of the test's that logs every request header it
# gets) receives no cookie, no key and no session id (a browser sends
# its cookies for 127.0.0.1 to every port, which is why the dashboard
# sets none: docs/api.md#the-dashboard).  Once the key is revoked the
# open page goes back to the sign-in form by itself.  The agent of the
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
V=$(wd_js "return document.title + ' ' + !!document.querySelector('form[action=\"/session\"]')")
check "/ without a session: the sign-in page, with its form ($V)" [ "$V" = '"storyctl: sign in true"' ]
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
V=$(wd_js "return history.length")
echo "# history.length after the sign-in: $V"
V=$(wd_js "return document.cookie")
check "no cookie a script sees ($V)" [ "$V" = '""' ]
COOKIES=$(wd_call GET "/session/$WD_SESSION/cookie")
check "the browser holds no cookie for 127.0.0.1 at all ($COOKIES)" [ "$COOKIES" = '[]' ]
SID=$(wd_js "return sessionStorage.getItem('storyctl_session_' + location.port)" | jq -r '. // empty')
check "the tab's sessionStorage holds the session id, named after the port" \
	bash -c '[[ "$1" =~ ^[0-9a-f]{64}$ ]]' _ "$SID"
check "... which is not the key nor holds a part of it" \
	bash -c '[[ "$1" != *"$2"* ]] && [[ "$1" != *"${2#sc_}"* ]]' _ "$SID" "$KEY"
V=$(wd_js "return document.title")
check "the dashboard is shown in the shell's place ($V)" [ "$V" = '"storyctl report"' ]
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

# each attempt links to its transcript and its diff (docs/report.md#attempts):
# following a link fetches that part into the section it points to
# part_text PART: follow live1's first attempt's PART link, then the text
# of the section it led to, once loaded
part_text() {
	wd_call POST "/session/$WD_SESSION/element/$(wd_el "tr[data-story=live1] a.att[href^='#$1']")/click" '{}' >/dev/null
	for _ in $(seq 1 100); do
		V=$(wd_js "var p = document.getElementById(location.hash.slice(1)); return p && p.getAttribute('data-got') ? location.hash + ' ' + p.querySelector('pre').textContent : ''")
		[ "$V" != '""' ] && break
		sleep 0.1
	done
	printf '%s' "$V"
}
V=$(part_text t)
expect_match "the transcript link leads to the attempt's transcript" "$V" '^"#t-0-0 \[[0-9]+\] text: all done'
V=$(part_text d)
expect_match "the diff link leads to its diff: the file the agent wrote" "$V" '^"#d-0-0 diff --git a/src/work.txt b/src/work.txt.*\+work on'
c=$(curl -s -o /dev/null --max-time 20 -w '%{http_code}' -H "X-Storyctl-Session: $SID" -H 'Sec-Fetch-Site: same-origin' "$U/v1/stories/live1/retry-policy")
check "the session reads no other route ($c)" [ "$c" = 401 ]

# another app on this host, another port: cookies are not kept apart by
# port, so it would be sent whatever the browser held for 127.0.0.1; it
# logs every header of every request it gets, and must get nothing of
# storyctl's
mkdir -p "$T_TMP/other"
cat >"$T_TMP/other.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[1], "a") as f:
            for k, v in self.headers.items():
                f.write(k + ": " + v + "\n")
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
python3 "$T_TMP/other.py" "$T_TMP/other.headers" >"$T_TMP/other.port" 2>/dev/null &
OTHER_PID=$!
for _ in $(seq 1 100); do [ -s "$T_TMP/other.port" ] && break; sleep 0.1; done
OPORT=$(head -n 1 "$T_TMP/other.port")
wd_get "http://127.0.0.1:$OPORT/"
V=$(wd_js "return document.title")
check "a page of another app on port $OPORT opens ($V)" [ "$V" = '"other"' ]
GOT=$(cat "$T_TMP/other.headers" 2>/dev/null)
echo "# the other port received: $(printf '%s\n' "$GOT" | cut -d: -f1 | sort -u | tr '\n' ' ')"
check "it received requests, their headers logged" [ -n "$GOT" ]
check "... and no Cookie header at all" bash -c '! printf "%s\n" "$1" | grep -qi "^cookie:"' _ "$GOT"
check "... no header with the session id" bash -c '[ -n "$2" ] && ! printf "%s" "$1" | grep -qF -- "$2"' _ "$GOT" "$SID"
check "... nor the key, nor a part of it" bash -c '! printf "%s" "$1" | grep -qF -e "$2" -e "${2#sc_}"' _ "$GOT" "$KEY"
V=$(wd_js "return sessionStorage.getItem('storyctl_session_$SRV_PORT') + ' ' + sessionStorage.length")
check "... nor can its page read the dashboard's sessionStorage ($V)" [ "$V" = '"null 0"' ]
# the tab holds the session at the dashboard's origin only; back there
wd_get "$U/"
for _ in $(seq 1 100); do
	V=$(wd_js "return document.title")
	[ "$V" = '"storyctl report"' ] && break
	sleep 0.1
done
check "back at the dashboard, the tab's session shows it again ($V)" [ "$V" = '"storyctl report"' ]
"$STORYCTL" -C "$P" key revoke dash >/dev/null 2>&1
c=$(curl -s -o /dev/null --max-time 20 -w '%{http_code}' -H "X-Storyctl-Session: $SID" "$U/?part=main")
check "once the key is revoked, the session opens nothing ($c)" [ "$c" = 401 ]
# the open page's stream ends; reconnecting it gets 401: the form again
for _ in $(seq 1 100); do
	V=$(wd_js "return document.title + ' ' + !!document.querySelector('form[action=\"/session\"]')")
	[ "$V" = '"storyctl: sign in true"' ] && break
	sleep 0.1
done
check "... the open page goes back to the sign-in form by itself ($V)" [ "$V" = '"storyctl: sign in true"' ]
V=$(wd_js "return document.getElementById('signin').textContent")
expect_match "... saying why" "$V" 'session has ended'
V=$(wd_js "return sessionStorage.length")
check "... and the tab's storage is empty ($V)" [ "$V" = 0 ]
wd_get "$U/"
V=$(wd_js "return document.title")
check "... and a new load is the sign-in page ($V)" [ "$V" = '"storyctl: sign in"' ]
finish
