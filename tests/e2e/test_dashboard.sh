#!/bin/bash
# The live dashboard at / of storyctl serve (docs/report.md#live,
# docs/api.md#the-dashboard) with curl: a key is needed (401 in words),
# /?key= sets an HttpOnly SameSite=Strict cookie and sends the browser on
# to /, the page is the report's with its one script allowed by a CSP
# hash, ?part=main is the <main> alone, and a cookie is never a key for
# a write.  The same page in a real browser, following a running batch,
# is tests/browser/test_dashboard.sh (make check-browser).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
SRV_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

new_project '{"max_attempts": 2}'
new_story "$P" d1 2 '<!-- sim *: checkall; work -->'
new_story "$P" d2 2 '<!-- sim *: err Segmentation fault (core dumped); exit 139 -->'
commit_all
run_sc -C "$P" run
expect_rc "a night with a story that needs a person" 3
KEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
serve_up || not_ok "serve started"
U="http://127.0.0.1:$SRV_PORT"

code() { curl -s --max-time 20 -o "$T_TMP/body" -D "$T_TMP/head" -w '%{http_code}' "$@"; }
header() { tr -d '\r' <"$T_TMP/head" | sed -n "s/^$1: //Ip" | head -n 1; }

check "/ without a key: 401" [ "$(code "$U/")" = 401 ]
expect_match "as HTML" "$(header Content-Type)" '^text/html'
expect_match "in words a person reads" "$(cat "$T_TMP/body")" 'Open this page as <code>/\?key=KEY</code>'
check "/?key= with a wrong key: 401" [ "$(code "$U/?key=sc_nope")" = 401 ]
check "/?key= with a key: 303" [ "$(code "$U/?key=$KEY")" = 303 ]
check "on to / (the key leaves the address bar)" [ "$(header Location)" = / ]
COOKIE=$(header Set-Cookie)
expect_match "the cookie holds the key, HttpOnly, SameSite=Strict, for /" "$COOKIE" \
	"^storyctl_key=$KEY; Path=/; HttpOnly; SameSite=Strict$"
check "with the cookie: 200" [ "$(code -b "storyctl_key=$KEY" "$U/")" = 200 ]
PAGE=$(cat "$T_TMP/body")
expect_match "the report's page" "$PAGE" '^<!doctype html>'
expect_match "with the live script" "$PAGE" "new EventSource\('/v1/events/stream'\)"
CSP=$(header Content-Security-Policy)
expect_match "a CSP: nothing from elsewhere, the one script by its hash" "$CSP" \
	"^default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/]+=*'; connect-src 'self'"
HASH=$(printf '%s' "$PAGE" | sed -n 's/.*<script>\(.*\)<\/script>.*/\1/p' | tr -d '\n' |
	openssl dgst -sha256 -binary | base64)
check "the CSP hash is the script's ($HASH)" bash -c '[[ "$1" == *"sha256-$2"* ]]' _ "$CSP" "$HASH"
check "no-store and no referrer" \
	[ "$(header Cache-Control)$(header Referrer-Policy)" = no-storeno-referrer ]
check "X-API-Key works for / too" [ "$(code -H "X-API-Key: $KEY" "$U/")" = 200 ]
check "?part=main is the <main> alone" \
	bash -c '[ "$(curl -s -b "storyctl_key=$1" "$2/?part=main" | head -c 18)" = "<main id=\"report\">" ]' _ "$KEY" "$U"
MAIN=$(curl -s -b "storyctl_key=$KEY" "$U/?part=main")
expect_match "it lists the escalated story under Needs you" "$MAIN" \
	'<li class="story st-escalated" data-story="d2"'
check "the cookie is a key for the JSON views too (GET)" \
	[ "$(code -b "storyctl_key=$KEY" "$U/v1/status")" = 200 ]
check "a write key's cookie cannot write: 401" \
	[ "$(code -X POST -b "storyctl_key=$WKEY" "$U/v1/stories/d2/requeue")" = 401 ]
check "the same with X-API-Key: 200" \
	[ "$(code -X POST -H "X-API-Key: $WKEY" "$U/v1/stories/d2/requeue")" = 200 ]
check "POST /: 405" [ "$(code -X POST -H "X-API-Key: $WKEY" "$U/")" = 405 ]
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
check "the key is in no server output" bash -c '! grep -qF -- "$1" "$2"/srv.out "$2"/srv.err' _ "$KEY" "$T_TMP"
SRV_PID=
finish
