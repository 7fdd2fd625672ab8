# shellcheck shell=bash
# tests/browser/lib_browser.sh - a real browser for the end-to-end tests:
# Debian's headless Chromium driven through Debian's chromedriver over
# the W3C WebDriver protocol, with curl and jq (docs/report.md#tests).
# Everything stays on 127.0.0.1: chromedriver listens on a port the
# kernel picks, and Chromium runs with its background networking off.
# Source after lib.sh.  Needs: chromium, chromedriver, curl, jq, base64.
#
#   wd_start [WIDTH HEIGHT]  start chromedriver and a session (WD_URL)
#   wd_get URL               load a page and wait for it
#   wd_js SCRIPT [ARG...]    run a script (a function body, args as JSON
#                            values), print its return value as JSON
#   wd_size WIDTH HEIGHT     resize the window
#   wd_shot FILE             save a screenshot of the viewport as PNG
#   wd_stop                  end the session and chromedriver

WD_PID=
WD_URL=
WD_SESSION=

# wd_call METHOD PATH [JSON]: the answer's .value, as JSON.
wd_call() {
	local m=$1 path=$2 body=${3:-}
	if [ -n "$body" ]; then
		curl -s --max-time 60 -X "$m" -H 'Content-Type: application/json' \
			--data-binary "$body" "$WD_URL$path" | jq -c '.value'
	else
		curl -s --max-time 60 -X "$m" "$WD_URL$path" | jq -c '.value'
	fi
}

wd_start() {
	local w=${1:-1280} h=${2:-900} port='' caps
	command -v chromedriver >/dev/null && command -v chromium >/dev/null ||
		return 1
	chromedriver --port=0 >"$T_TMP/chromedriver.log" 2>&1 &
	WD_PID=$!
	for _ in $(seq 1 100); do
		port=$(sed -n 's/.*started successfully on port \([0-9]*\).*/\1/p' \
			"$T_TMP/chromedriver.log")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || return 1
	WD_URL="http://127.0.0.1:$port"
	mkdir -p "$T_TMP/chrome-profile"
	caps=$(jq -cn --arg w "$w" --arg h "$h" --arg prof "$T_TMP/chrome-profile" '{
		capabilities: {alwaysMatch: {browserName: "chrome",
		  "goog:chromeOptions": {binary: "/usr/bin/chromium", args: [
		    "--headless=new", "--no-sandbox", "--disable-gpu",
		    "--disable-quic", "--no-first-run",
		    "--disable-background-networking",
		    "--disable-component-update", "--disable-sync",
		    "--disable-dev-shm-usage", "--hide-scrollbars",
		    "--force-device-scale-factor=1",
		    ("--window-size=" + $w + "," + $h),
		    ("--user-data-dir=" + $prof)]}}}}')
	WD_SESSION=$(curl -s --max-time 90 -X POST -H 'Content-Type: application/json' \
		--data-binary "$caps" "$WD_URL/session" | jq -r '.value.sessionId // empty')
	[ -n "$WD_SESSION" ]
}

wd_get() {
	wd_call POST "/session/$WD_SESSION/url" "$(jq -cn --arg u "$1" '{url: $u}')" >/dev/null
}

wd_js() {
	local script=$1 args
	shift
	args=$(printf '%s\n' "$@" | jq -cs '.')
	[ $# -eq 0 ] && args='[]'
	wd_call POST "/session/$WD_SESSION/execute/sync" \
		"$(jq -cn --arg s "$script" --argjson a "$args" '{script: $s, args: $a}')"
}

wd_size() {
	wd_call POST "/session/$WD_SESSION/window/rect" \
		"$(jq -cn --argjson w "$1" --argjson h "$2" '{width: $w, height: $h}')" >/dev/null
}

wd_shot() {
	wd_call GET "/session/$WD_SESSION/screenshot" | jq -r '.' | base64 -d >"$1"
}

wd_stop() {
	[ -n "$WD_SESSION" ] && curl -s --max-time 20 -X DELETE "$WD_URL/session/$WD_SESSION" >/dev/null
	[ -n "$WD_PID" ] && kill "$WD_PID" 2>/dev/null && wait "$WD_PID" 2>/dev/null
	WD_SESSION=
	WD_PID=
}
