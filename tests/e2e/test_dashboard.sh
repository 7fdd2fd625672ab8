#!/bin/bash
# The live dashboard at / of storyctl serve (docs/report.md#live,
# docs/api.md#the-dashboard) with curl: without a session / is the
# sign-in's shell (200: the form, and the script); the key is posted
# once to /session and exchanged for a random session id, never the
# key, which the answer's page (200) hands to its script to keep in the
# tab's sessionStorage; no answer ever sets a cookie, and a session is
# read from the X-Storyctl-Session header only (a cookie or a query
# parameter holding it is ignored); a session reads the page, its
# event stream and an attempt's transcript and diff only, never writes, ends when its key is revoked, and is
# good on its own server only; /?key= is refused (400).  The page is the
# report's with its one script allowed by a CSP hash, ?part=main is the
# <main> alone.  The same in a real browser,
# following a running batch, is tests/browser/test_dashboard.sh (make
# check-browser); a session's expiry is tests/unit/test_serve_session.c.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
SRV_PID=
SRV2_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$SRV2_PID" ] && kill "$SRV2_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

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
CK="storyctl_session_$SRV_PORT"
HS=X-Storyctl-Session

# every answer's headers are kept in allheads too: none may set a cookie
code() {
	local c
	c=$(curl -s --max-time 20 -o "$T_TMP/body" -D "$T_TMP/head" -w '%{http_code}' "$@")
	cat "$T_TMP/head" >>"$T_TMP/allheads" 2>/dev/null
	printf '%s' "$c"
}
header() { tr -d '\r' <"$T_TMP/head" | sed -n "s/^$1: //Ip" | head -n 1; }
# sid_of FILE: the session id a sign-in's page hands to its script
sid_of() { sed -n 's/.*<p id="session" data-id="\([0-9a-f]*\)".*/\1/p' "$1" | head -n 1; }
# signin KEY [CURL-ARGS...]: POST the form; the status in $S_CODE, the
# session id of the answer's page in $SID
signin() {
	local k=$1
	shift
	S_CODE=$(code -X POST --data-urlencode "key=$k" "$@" "$U/session")
	SID=$(sid_of "$T_TMP/body")
}

check "/ without a session: 200, the sign-in's shell" [ "$(code "$U/")" = 200 ]
expect_match "as HTML" "$(header Content-Type)" '^text/html'
expect_match "the sign-in form: POST to /session, one password field" "$(cat "$T_TMP/body")" \
	'<form method="post" action="/session"><label>Key <input type="password" name="key"'
expect_match "... in the report's frame, with its script" "$(tr -d '\n' <"$T_TMP/body")" \
	'<main id="report"><h1>storyctl: sign in</h1>.*</main><script>'
expect_match "... it says the dashboard needs script" "$(cat "$T_TMP/body")" '<noscript><p>The dashboard needs script'
check "... and shows nothing of the batch" bash -c '! grep -q "data-story=" "$1"' _ "$T_TMP/body"
expect_match "the CSP lets the form post here only" "$(header Content-Security-Policy)" "form-action 'self'"
check "/?part=main without a session: 401" [ "$(code "$U/?part=main")" = 401 ]
check "the stream without a session: 401" [ "$(code "$U/v1/events/stream")" = 401 ]

# /?key= (issue 33): never read, never a cookie, never echoed
for k in "$KEY" "$WKEY" sc_nope; do
	check "/?key= is 400 (${k:0:5}…)" [ "$(code "$U/?key=$k")" = 400 ]
	check "... and does not echo the key" bash -c '! grep -qF -- "$1" "$2"' _ "$k" "$T_TMP/body"
done
expect_match "... it says why, with the form" "$(cat "$T_TMP/body")" 'keys never go in addresses.*<form method="post" action="/session">'
check "the old cookie (the raw key) is not read: ?part=main 401" [ "$(code -b "storyctl_key=$KEY" "$U/?part=main")" = 401 ]

signin sc_nope
check "a sign-in with a wrong key: 401" [ "$S_CODE" = 401 ]
check "... and no session id" [ -z "$SID" ]
expect_match "... the form again" "$(cat "$T_TMP/body")" '<form method="post" action="/session">'
check "GET /session: 405" [ "$(code "$U/session")" = 405 ]
# its body comes before any key is checked: one key's worth, no more
check "a sign-in body over 4 KiB: 413" \
	[ "$(code -X POST --data-binary "key=$(head -c 5000 /dev/zero | tr '\0' a)" "$U/session")" = 413 ]
check "... chunked too" \
	[ "$(code -X POST -H 'Transfer-Encoding: chunked' --data-binary "key=$(head -c 5000 /dev/zero | tr '\0' a)" "$U/session")" = 413 ]

signin "$KEY"
check "a sign-in with a key: 200, a page, not a redirect" [ "$S_CODE:$(header Location)" = 200: ]
check "... that sets no cookie" [ -z "$(header Set-Cookie)" ]
check "... is never stored (no-store)" [ "$(header Cache-Control)" = no-store ]
expect_match "... holds a session id of 64 hex digits for its script" "$SID" '^[0-9a-f]{64}$'
SPAGE=$(cat "$T_TMP/body")
expect_match "... whose script keeps it in sessionStorage and replaces the page with /" "$SPAGE" \
	"<script>.*sessionStorage.*location\.replace\('/'\)"
SHASH=$(printf '%s' "$SPAGE" | sed -n 's/.*<script>\(.*\)<\/script>.*/\1/p' | tr -d '\n' |
	openssl dgst -sha256 -binary | base64)
check "... a script the CSP allows by its hash" bash -c '[[ "$1" == *"sha256-$2"* ]]' _ "$(header Content-Security-Policy)" "$SHASH"
SID1=$SID
KEYHASH=$(printf '%s' "$KEY" | sha256sum | cut -d' ' -f1)
check "the session id is not the key, holds no part of it, is not its hash" \
	bash -c '[ -n "$1" ] && [[ "$1" != *"$2"* ]] && [[ "$1" != *"${2#sc_}"* ]] && [ "$1" != "$3" ]' _ "$SID1" "$KEY" "$KEYHASH"
signin "$KEY"
check "a second sign-in with the same key: another id" \
	bash -c '[ ${#1} = 64 ] && [ "$1" != "$2" ]' _ "$SID" "$SID1"
signin "$KEY" -H 'Sec-Fetch-Site: cross-site'
check "a sign-in from another site's page: 403" [ "$S_CODE${SID}" = 403 ]
signin "$KEY" -H 'Sec-Fetch-Site: same-site'
check "... from another port of this host (same-site): 403" [ "$S_CODE${SID}" = 403 ]
signin "$KEY" -H 'Origin: http://127.0.0.1:1'
check "... with an Origin that is not this server: 403" [ "$S_CODE${SID}" = 403 ]
signin "$KEY" -H 'Sec-Fetch-Site: same-origin' -H 'Origin: null'
check "... the page's own form (same-origin; Origin null under no-referrer): 200" [ "$S_CODE:${#SID}" = 200:64 ]
signin "$KEY" -H "Origin: $U"
check "... an Origin that is this server: 200" [ "$S_CODE:${#SID}" = 200:64 ]

check "with the session in $HS: 200" [ "$(code -H "$HS: $SID1" "$U/")" = 200 ]
PAGE=$(cat "$T_TMP/body")
expect_match "the report's page" "$PAGE" '^<!doctype html>'
expect_match "with the live script, which reads the stream with its header" "$PAGE" \
	"'X-Storyctl-Session'.*get\('/v1/events/stream'\)"
check "... and no EventSource (it cannot send a header)" bash -c '[[ "$1" != *EventSource* ]]' _ "$PAGE"
CSP=$(header Content-Security-Policy)
expect_match "a CSP: nothing from elsewhere, the one script by its hash" "$CSP" \
	"^default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/]+=*'; connect-src 'self'"
HASH=$(printf '%s' "$PAGE" | sed -n 's/.*<script>\(.*\)<\/script>.*/\1/p' | tr -d '\n' |
	openssl dgst -sha256 -binary | base64)
check "the CSP hash is the script's ($HASH)" bash -c '[[ "$1" == *"sha256-$2"* ]]' _ "$CSP" "$HASH"
check "no-store and no referrer" \
	[ "$(header Cache-Control)$(header Referrer-Policy)" = no-storeno-referrer ]
check "X-API-Key works for / too" [ "$(code -H "X-API-Key: $KEY" "$U/")" = 200 ]
check "?part=main with the session is the <main> alone" \
	bash -c '[ "$(curl -s -H "$1" "$2/?part=main" | head -c 18)" = "<main id=\"report\">" ]' _ "$HS: $SID1" "$U"
MAIN=$(curl -s -H "$HS: $SID1" "$U/?part=main")
expect_match "it lists the escalated story under Needs you" "$MAIN" \
	'<li class="story st-escalated" data-story="d2"'
check "the session reads the event stream" \
	[ "$(curl -s -o /dev/null --max-time 2 -H "$HS: $SID1" -w '%{http_code}' "$U/v1/events/stream")" = 200 ]
check "but not the JSON views: 401 (X-API-Key for those)" \
	[ "$(code -H "$HS: $SID1" "$U/v1/status")" = 401 ]
check "a session sent by another origin's page (same-site) is not read: 401" \
	[ "$(code -H "$HS: $SID1" -H 'Sec-Fetch-Site: same-site' "$U/?part=main")" = 401 ]
# issue 33: a cookie goes to every port of the host, so none is read
check "the session in a cookie is ignored: ?part=main 401" \
	[ "$(code -b "$CK=$SID1" "$U/?part=main")" = 401 ]
check "... the stream 401" [ "$(code -b "$CK=$SID1" "$U/v1/events/stream")" = 401 ]
C=$(code -b "$CK=$SID1" "$U/")
check "... / is the shell, nothing of the batch" \
	bash -c '[ "$1" = 200 ] && grep -q "<h1>storyctl: sign in" "$2" && ! grep -q "data-story=" "$2"' _ "$C" "$T_TMP/body"
check "... in a query parameter too: 401" [ "$(code "$U/?part=main&session=$SID1")" = 401 ]

# a session of a write key reads only
signin "$WKEY"
check "signed in with a write key: 200" [ "$S_CODE" = 200 ]
WSID=$SID
check "... the session reads the page" [ "$(code -H "$HS: $WSID" "$U/?part=main")" = 200 ]
check "... but cannot requeue: 401" \
	[ "$(code -X POST -H "$HS: $WSID" "$U/v1/stories/d2/requeue")" = 401 ]
check "... nor PUT a retry policy: 401" \
	[ "$(code -X PUT -H "$HS: $WSID" -d '{"max_retries": 0}' "$U/v1/retry-policy")" = 401 ]
check "... nor DELETE one: 401" \
	[ "$(code -X DELETE -H "$HS: $WSID" "$U/v1/stories/d2/retry-policy")" = 401 ]
check "... nor report a failure: 401" \
	[ "$(code -X POST -H "$HS: $WSID" -d '{"error_code": "TIMEOUT"}' "$U/v1/stories/d2/failures")" = 401 ]
check "... nor with the session's id as X-API-Key: 401" \
	[ "$(code -X POST -H "X-API-Key: $WSID" "$U/v1/stories/d2/requeue")" = 401 ]
# issue 33: even the session id of a dashboard signed in with a write
# key, were it stolen from the tab, cannot write, however it is sent
hw=0
for h in "X-API-Key: $WSID" "$HS: $WSID" "Cookie: $CK=$WSID"; do
	[ "$(code -X POST -H "$h" "$U/v1/stories/d2/requeue")" = 401 ] || hw=$((hw + 1))
done
check "a write key's session id cannot requeue ($hw accepted)" [ "$hw" = 0 ]
check "the same with X-API-Key: 200" \
	[ "$(code -X POST -H "X-API-Key: $WKEY" "$U/v1/stories/d2/requeue")" = 200 ]
check "POST /: 405" [ "$(code -X POST -H "X-API-Key: $WKEY" "$U/")" = 405 ]

# revocation ends the key's sessions at once
RKEY=$("$STORYCTL" -C "$P" key add soon-gone 2>/dev/null)
signin "$RKEY"
RSID=$SID
check "a session of a key about to be revoked reads: 200" [ "$(code -H "$HS: $RSID" "$U/?part=main")" = 200 ]
(curl -sN --max-time 15 -H "$HS: $RSID" "$U/v1/events/stream" >"$T_TMP/rstream" 2>/dev/null
	touch "$T_TMP/rstream.end") &
sleep 0.5
run_sc -C "$P" key revoke soon-gone
check "revoked, its session's next request: 401" [ "$(code -H "$HS: $RSID" "$U/?part=main")" = 401 ]
for _ in $(seq 1 30); do [ -e "$T_TMP/rstream.end" ] && break; sleep 0.1; done
check "... and its open event stream has ended within 3 s" \
	bash -c '[ -e "$1.end" ] && grep -q "^data:" "$1"' _ "$T_TMP/rstream"
expect_match "... the sign-in form" "$(cat "$T_TMP/body")" '<form method="post" action="/session">'
RKEY2=$("$STORYCTL" -C "$P" key add soon-gone 2>/dev/null)
check "a new key under the same name does not bring it back: 401" \
	[ "${#RKEY2}:$(code -H "$HS: $RSID" "$U/?part=main")" = 46:401 ]
check "other keys' sessions go on: 200" [ "$(code -H "$HS: $SID1" "$U/?part=main")" = 200 ]

# a second dashboard on another port: a session is its server's only
"$STORYCTL" -C "$P" serve --listen 127.0.0.1:0 >"$T_TMP/srv2.out" 2>"$T_TMP/srv2.err" &
SRV2_PID=$!
PORT2=$(wait_port "$T_TMP/srv2.out")
U2="http://127.0.0.1:$PORT2"
check "a second server on another port ($PORT2)" [ "${PORT2:-$SRV_PORT}" != "$SRV_PORT" ]
check "the first's session at the second: 401" \
	[ "$(code -H "$HS: $SID1" "$U2/?part=main")" = 401 ]
code -X POST --data-urlencode "key=$KEY" "$U2/session" >/dev/null
SID2=$(sid_of "$T_TMP/body")
check "the second signs in with its own session id" bash -c '[ ${#1} = 64 ] && [ "$1" != "$2" ]' _ "$SID2" "$SID1"
check "both sessions held at once, each good at its server" \
	[ "$(code -H "$HS: $SID1" "$U/?part=main")$(code -H "$HS: $SID2" "$U2/?part=main")" = 200200 ]
check "the second's session at the first: 401" \
	[ "$(code -H "$HS: $SID2" "$U/?part=main")" = 401 ]
kill "$SRV2_PID" 2>/dev/null
wait "$SRV2_PID" 2>/dev/null
SRV2_PID=

# under TLS the same, and still no cookie
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$T_TMP/tkey.pem" \
	-out "$T_TMP/tcert.pem" >/dev/null 2>&1
"$STORYCTL" -C "$P" serve --listen 127.0.0.1:0 --tls-cert "$T_TMP/tcert.pem" \
	--tls-key "$T_TMP/tkey.pem" >"$T_TMP/srv3.out" 2>"$T_TMP/srv3.err" &
SRV2_PID=$!
PORT3=$(wait_port "$T_TMP/srv3.out")
C=$(code --cacert "$T_TMP/tcert.pem" -X POST --data-urlencode "key=$KEY" "https://127.0.0.1:$PORT3/session")
SID3=$(sid_of "$T_TMP/body")
check "under TLS a sign-in is a page with the session id, no cookie" \
	[ "$C:${#SID3}:$(header Set-Cookie)" = 200:64: ]
check "... and the session reads the page over https" \
	[ "$(code --cacert "$T_TMP/tcert.pem" -H "$HS: $SID3" "https://127.0.0.1:$PORT3/?part=main")" = 200 ]
kill "$SRV2_PID" 2>/dev/null
wait "$SRV2_PID" 2>/dev/null
SRV2_PID=

kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
check "no key and no session id in any server output" \
	bash -c 'for s in "${@:2}"; do ! grep -qF -- "$s" "$1"/srv.out "$1"/srv.err "$1"/srv2.out "$1"/srv2.err "$1"/srv3.out "$1"/srv3.err || exit 1; done' _ "$T_TMP" "$KEY" "$WKEY" "$SID1" "$WSID" "$SID2" "$SID3"
SRV_PID=
check "no answer of any of the servers set a cookie ($(grep -c . "$T_TMP/allheads") header lines)" \
	bash -c '[ -s "$1" ] && ! grep -qi "^set-cookie:" "$1"' _ "$T_TMP/allheads"
finish
