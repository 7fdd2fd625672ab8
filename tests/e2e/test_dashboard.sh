#!/bin/bash
# The live dashboard at / of storyctl serve (docs/report.md#live,
# docs/api.md#the-dashboard) with curl: without a session / is the
# sign-in form (401); the key is posted once to /session and exchanged
# for a random session id in a cookie named after the port (HttpOnly,
# SameSite=Strict), never the key; a session reads the page and its
# event stream only, never writes, ends when its key is revoked, and is
# good on its own server only; /?key= is refused (400) and never sets a
# cookie.  The page is the report's with its one script allowed by a
# CSP hash, ?part=main is the <main> alone.  The same in a real browser,
# following a running batch, is tests/browser/test_dashboard.sh (make
# check-browser); a session's expiry is tests/unit/test_serve_session.c.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
SRV_PID=
SRV2_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$SRV2_PID" ] && kill "$SRV2_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT
# wait_port FILE: the port a server printed there (empty after 30 s)
wait_port() {
	local port=
	for _ in $(seq 1 300); do
		port=$(sed -n 's/^serving on port \([0-9]*\) .*/\1/p' "$1")
		[ -n "$port" ] && break
		sleep 0.1
	done
	printf '%s' "$port"
}

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

code() { curl -s --max-time 20 -o "$T_TMP/body" -D "$T_TMP/head" -w '%{http_code}' "$@"; }
header() { tr -d '\r' <"$T_TMP/head" | sed -n "s/^$1: //Ip" | head -n 1; }
# signin KEY [CURL-ARGS...]: POST the form; the status in $S_CODE, the
# cookie's value (this server's name) in $SID
signin() {
	local k=$1
	shift
	S_CODE=$(code -X POST --data-urlencode "key=$k" "$@" "$U/session")
	SID=$(header Set-Cookie | sed -n "s/^$CK=\([^;]*\);.*/\1/p")
}

check "/ without a session: 401" [ "$(code "$U/")" = 401 ]
expect_match "as HTML" "$(header Content-Type)" '^text/html'
expect_match "the sign-in form: POST to /session, one password field" "$(cat "$T_TMP/body")" \
	'<form method="post" action="/session"><label>Key <input type="password" name="key"'
expect_match "the CSP lets the form post here only" "$(header Content-Security-Policy)" "form-action 'self'"

# /?key= (issue 33): never read, never a cookie, never echoed
for k in "$KEY" "$WKEY" sc_nope; do
	check "/?key= is 400 (${k:0:5}…)" [ "$(code "$U/?key=$k")" = 400 ]
	check "... and sets no cookie" [ -z "$(header Set-Cookie)" ]
	check "... and does not echo the key" bash -c '! grep -qF -- "$1" "$2"' _ "$k" "$T_TMP/body"
done
expect_match "... it says why, with the form" "$(cat "$T_TMP/body")" 'keys never go in addresses.*<form method="post" action="/session">'
check "the old cookie (the raw key) is not read: 401" [ "$(code -b "storyctl_key=$KEY" "$U/")" = 401 ]

signin sc_nope
check "a sign-in with a wrong key: 401" [ "$S_CODE" = 401 ]
check "... and no cookie" [ -z "$(header Set-Cookie)" ]
expect_match "... the form again" "$(cat "$T_TMP/body")" '<form method="post" action="/session">'
check "GET /session: 405" [ "$(code "$U/session")" = 405 ]
# its body comes before any key is checked: one key's worth, no more
check "a sign-in body over 4 KiB: 413" \
	[ "$(code -X POST --data-binary "key=$(head -c 5000 /dev/zero | tr '\0' a)" "$U/session")" = 413 ]
check "... chunked too" \
	[ "$(code -X POST -H 'Transfer-Encoding: chunked' --data-binary "key=$(head -c 5000 /dev/zero | tr '\0' a)" "$U/session")" = 413 ]

signin "$KEY"
check "a sign-in with a key: 303" [ "$S_CODE" = 303 ]
check "on to /" [ "$(header Location)" = / ]
COOKIE=$(header Set-Cookie)
expect_match "a cookie named after the port, HttpOnly, SameSite=Strict, for /, 12 h" "$COOKIE" \
	"^$CK=[0-9a-f]{64}; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict$"
SID1=$SID
KEYHASH=$(printf '%s' "$KEY" | sha256sum | cut -d' ' -f1)
check "the cookie is not the key, holds no part of it, is not its hash" \
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
check "... the page's own form (same-origin; Origin null under no-referrer): 303" [ "$S_CODE:${#SID}" = 303:64 ]
signin "$KEY" -H "Origin: $U"
check "... an Origin that is this server: 303" [ "$S_CODE:${#SID}" = 303:64 ]

check "with the session: 200" [ "$(code -b "$CK=$SID1" "$U/")" = 200 ]
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
	bash -c '[ "$(curl -s -b "$1" "$2/?part=main" | head -c 18)" = "<main id=\"report\">" ]' _ "$CK=$SID1" "$U"
MAIN=$(curl -s -b "$CK=$SID1" "$U/?part=main")
expect_match "it lists the escalated story under Needs you" "$MAIN" \
	'<li class="story st-escalated" data-story="d2"'
check "the session reads the event stream" \
	[ "$(curl -s -o /dev/null --max-time 2 -b "$CK=$SID1" -w '%{http_code}' "$U/v1/events/stream")" = 200 ]
check "but not the JSON views: 401 (X-API-Key for those)" \
	[ "$(code -b "$CK=$SID1" "$U/v1/status")" = 401 ]
check "a session used by another port's page (same-site) is not: 401" \
	[ "$(code -b "$CK=$SID1" -H 'Sec-Fetch-Site: same-site' "$U/")" = 401 ]

# a session of a write key reads only
signin "$WKEY"
check "signed in with a write key: 303" [ "$S_CODE" = 303 ]
WSID=$SID
check "... the session reads the page" [ "$(code -b "$CK=$WSID" "$U/")" = 200 ]
check "... but cannot requeue: 401" \
	[ "$(code -X POST -b "$CK=$WSID" "$U/v1/stories/d2/requeue")" = 401 ]
check "... nor PUT a retry policy: 401" \
	[ "$(code -X PUT -b "$CK=$WSID" -d '{"max_retries": 0}' "$U/v1/retry-policy")" = 401 ]
check "... nor DELETE one: 401" \
	[ "$(code -X DELETE -b "$CK=$WSID" "$U/v1/stories/d2/retry-policy")" = 401 ]
check "... nor report a failure: 401" \
	[ "$(code -X POST -b "$CK=$WSID" -d '{"error_code": "TIMEOUT"}' "$U/v1/stories/d2/failures")" = 401 ]
check "... nor with the session's id as X-API-Key: 401" \
	[ "$(code -X POST -H "X-API-Key: $WSID" "$U/v1/stories/d2/requeue")" = 401 ]
# issue 33: whatever cookie a dashboard signed in with a write key holds
# (the old one's came from /?key=), another app that harvests it cannot
# write with it
code -X POST --data-urlencode "key=$WKEY" "$U/session" >/dev/null
HARVEST=$(header Set-Cookie | sed -n 's/^[^=]*=\([^;]*\);.*/\1/p')
code "$U/?key=$WKEY" >/dev/null
HARVEST="$HARVEST $(header Set-Cookie | sed -n 's/^[^=]*=\([^;]*\);.*/\1/p')"
hw=0
for v in $HARVEST; do
	[ "$(code -X POST -H "X-API-Key: $v" "$U/v1/stories/d2/requeue")" = 401 ] || hw=$((hw + 1))
	[ "$(code -X POST -b "$CK=$v" "$U/v1/stories/d2/requeue")" = 401 ] || hw=$((hw + 1))
done
check "a harvested dashboard cookie cannot requeue ($hw accepted)" [ "$hw" = 0 ]
check "the same with X-API-Key: 200" \
	[ "$(code -X POST -H "X-API-Key: $WKEY" "$U/v1/stories/d2/requeue")" = 200 ]
check "POST /: 405" [ "$(code -X POST -H "X-API-Key: $WKEY" "$U/")" = 405 ]

# revocation ends the key's sessions at once
RKEY=$("$STORYCTL" -C "$P" key add soon-gone 2>/dev/null)
signin "$RKEY"
RSID=$SID
check "a session of a key about to be revoked reads: 200" [ "$(code -b "$CK=$RSID" "$U/")" = 200 ]
(curl -sN --max-time 15 -b "$CK=$RSID" "$U/v1/events/stream" >"$T_TMP/rstream" 2>/dev/null
	touch "$T_TMP/rstream.end") &
sleep 0.5
run_sc -C "$P" key revoke soon-gone
check "revoked, its session's next request: 401" [ "$(code -b "$CK=$RSID" "$U/")" = 401 ]
for _ in $(seq 1 30); do [ -e "$T_TMP/rstream.end" ] && break; sleep 0.1; done
check "... and its open event stream has ended within 3 s" \
	bash -c '[ -e "$1.end" ] && grep -q "^data:" "$1"' _ "$T_TMP/rstream"
expect_match "... the sign-in form" "$(cat "$T_TMP/body")" '<form method="post" action="/session">'
RKEY2=$("$STORYCTL" -C "$P" key add soon-gone 2>/dev/null)
check "a new key under the same name does not bring it back: 401" \
	[ "${#RKEY2}:$(code -b "$CK=$RSID" "$U/")" = 46:401 ]
check "other keys' sessions go on: 200" [ "$(code -b "$CK=$SID1" "$U/")" = 200 ]

# a second dashboard on another port: a session is its server's only
"$STORYCTL" -C "$P" serve --listen 127.0.0.1:0 >"$T_TMP/srv2.out" 2>"$T_TMP/srv2.err" &
SRV2_PID=$!
PORT2=$(wait_port "$T_TMP/srv2.out")
U2="http://127.0.0.1:$PORT2"
check "a second server on another port ($PORT2)" [ "${PORT2:-$SRV_PORT}" != "$SRV_PORT" ]
check "the first's session, as the first's cookie, at the second: 401" \
	[ "$(code -b "$CK=$SID1" "$U2/")" = 401 ]
check "... as the second's cookie: 401" \
	[ "$(code -b "storyctl_session_$PORT2=$SID1" "$U2/")" = 401 ]
code -X POST --data-urlencode "key=$KEY" "$U2/session" >/dev/null
expect_match "the second names its cookie after its own port" "$(header Set-Cookie)" "^storyctl_session_$PORT2=[0-9a-f]{64};"
SID2=$(header Set-Cookie | sed -n "s/^storyctl_session_$PORT2=\([^;]*\);.*/\1/p")
check "both sessions held at once, each good at its server" \
	[ "$(code -b "$CK=$SID1; storyctl_session_$PORT2=$SID2" "$U/")$(code -b "$CK=$SID1; storyctl_session_$PORT2=$SID2" "$U2/")" = 200200 ]
check "the second's session at the first: 401" \
	[ "$(code -b "$CK=$SID2" "$U/")" = 401 ]
kill "$SRV2_PID" 2>/dev/null
wait "$SRV2_PID" 2>/dev/null
SRV2_PID=

# under TLS the cookie is Secure too
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$T_TMP/tkey.pem" \
	-out "$T_TMP/tcert.pem" >/dev/null 2>&1
"$STORYCTL" -C "$P" serve --listen 127.0.0.1:0 --tls-cert "$T_TMP/tcert.pem" \
	--tls-key "$T_TMP/tkey.pem" >"$T_TMP/srv3.out" 2>"$T_TMP/srv3.err" &
SRV2_PID=$!
PORT3=$(wait_port "$T_TMP/srv3.out")
code --cacert "$T_TMP/tcert.pem" -X POST --data-urlencode "key=$KEY" "https://127.0.0.1:$PORT3/session" >/dev/null
expect_match "under TLS the session cookie is Secure" "$(header Set-Cookie)" \
	"^storyctl_session_$PORT3=[0-9a-f]{64}; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$"
SID3=$(header Set-Cookie | sed -n "s/^storyctl_session_$PORT3=\([^;]*\);.*/\1/p")
check "... and reads the page over https" \
	[ "$(code --cacert "$T_TMP/tcert.pem" -b "storyctl_session_$PORT3=$SID3" "https://127.0.0.1:$PORT3/")" = 200 ]
kill "$SRV2_PID" 2>/dev/null
wait "$SRV2_PID" 2>/dev/null
SRV2_PID=

kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
check "no key and no session id in any server output" \
	bash -c 'for s in "${@:2}"; do ! grep -qF -- "$s" "$1"/srv.out "$1"/srv.err "$1"/srv2.out "$1"/srv2.err "$1"/srv3.out "$1"/srv3.err || exit 1; done' _ "$T_TMP" "$KEY" "$WKEY" "$SID1" "$WSID" "$SID2" "$SID3"
SRV_PID=
finish
