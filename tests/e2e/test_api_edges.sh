#!/bin/bash
# The HTTP edge of storyctl serve against a client on the same machine
# (docs/api.md#limits, docs/api.md#errors; issue 33): one assertion per
# finding, each of which failed before the fix.
#
#   revoked:  revoking a key ends its open event stream within ~1 s
#   body:     GET with a body is 400 before it is read; 250 GETs that
#             each send a 1 MiB body keep the server's RSS under 64 MB
#   streams:  32 streams from one address that never read leave room
#             for a stream from another address
#   idle:     300 idle sockets do not hold up a request
#   nul:      a raw NUL in the target or a header is 400, not cut off
#   framing:  Content-Length twice, with chunked, an unknown
#             Transfer-Encoding, a GET's body never sent: a JSON 400 at
#             once
#   slash:    %2f in the path is 400, not another route
#   budget:   bodies held across connections stop at 8 MiB: the next
#             write is 503 with Retry-After
#
# During each attack a GET /v1/status must be answered within 1 s and
# the server's VmRSS (/proc/PID/status) stay under 64 MB.  Raw requests
# are python3 sockets to 127.0.0.1 (and 127.0.0.2, another client of the
# same loopback); every wait is bounded.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
trap '' PIPE

RSS_MAX_KB=$((64 * 1024))
LATENCY_MAX=1.0 # seconds, the issue's bound

SRV_PID=
SRV_PORT=
HOLD_PID=
trap '[ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null; [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

new_project
new_story "$P" x1 1 '<!-- sim *: checkall -->'
commit_all
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
GKEY=$("$STORYCTL" -C "$P" key add gone 2>/dev/null)
serve_up || not_ok "serve started"

cat >"$T_TMP/edge.py" <<'PY'
import json, socket, sys, time
cmd, port = sys.argv[1], int(sys.argv[2])

def raw(data, timeout):
    """Send data, read until close or timeout: status, status lines,
    the error code of a JSON body, the seconds taken."""
    s = socket.create_connection(('127.0.0.1', port))
    s.settimeout(timeout)
    t = time.time()
    out = b''
    try:
        s.sendall(data)
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    took = time.time() - t
    s.close()
    text = out.decode('latin1')
    status = text[9:12] if text.startswith('HTTP/1.') else '-'
    head, _, body = text.partition('\r\n\r\n')
    code = '-'
    if 'application/json' in head.lower():
        try:
            j = json.loads(body)
            code = j['error']['code'] if isinstance(j, dict) and 'error' in j else '-'
        except Exception:
            code = '?'
    print('%s %d %s %.2f' % (status, text.count('HTTP/1.'), code, took))

if cmd == 'raw':
    raw(sys.argv[3].encode('latin1').decode('unicode_escape').encode('latin1'),
        float(sys.argv[4]))
elif cmd == 'hold':
    # hold PORT KIND N KEY SECONDS READY: open N connections of KIND,
    # touch READY, hold them SECONDS, close them
    kind, n, key, secs, ready = sys.argv[3], int(sys.argv[4]), sys.argv[5], float(sys.argv[6]), sys.argv[7]
    socks = []
    body = b'x' * 1048575
    for _ in range(n):
        try:
            s = socket.create_connection(('127.0.0.1', port))
        except OSError:
            continue
        socks.append(s)
        s.settimeout(2)
        try:
            if kind == 'body':
                s.sendall(('GET /v1/status HTTP/1.1\r\nHost: a\r\nX-API-Key: %s\r\n'
                           'Content-Length: 1048575\r\n\r\n' % key).encode() + body)
            elif kind == 'put':
                # a write's 1 MiB body announced, never sent
                s.sendall(('PUT /v1/retry-policy HTTP/1.1\r\nHost: a\r\n'
                           'X-API-Key: %s\r\nContent-Length: 1048576\r\n\r\n' % key).encode())
            elif kind == 'stream':
                # a small receive buffer, never read
                s.sendall(('GET /v1/events/stream HTTP/1.1\r\nHost: a\r\n'
                           'X-API-Key: %s\r\n\r\n' % key).encode())
        except OSError:
            pass
    open(ready, 'w').close()
    time.sleep(secs)
    for s in socks:
        s.close()
PY
edge() { python3 "$T_TMP/edge.py" "$@"; }

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$SRV_PID/status"; }
# latency NAME: a GET /v1/status now, answered 200 within LATENCY_MAX
latency() {
	local out code t
	out=$(curl -s --max-time 5 -o /dev/null -w '%{http_code} %{time_total}' \
		-H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT/v1/status")
	read -r code t <<<"$out"
	check "$1: GET /v1/status is answered within ${LATENCY_MAX} s ($code in ${t} s)" \
		awk -v c="$code" -v t="$t" -v m="$LATENCY_MAX" 'BEGIN { exit !(c == 200 && t <= m) }'
}
rss_under() {
	local kb
	kb=$(rss_kb)
	check "$1: the server's RSS stays under 64 MB (${kb} kB)" test "${kb:-999999}" -lt "$RSS_MAX_KB"
}
# attack NAME KIND N KEY: hold N connections of KIND for 3 s, and
# meanwhile check the latency and the RSS
attack() {
	rm -f "$T_TMP/ready"
	edge hold "$SRV_PORT" "$2" "$3" "$4" 3 "$T_TMP/ready" &
	HOLD_PID=$!
	for _ in $(seq 1 100); do [ -e "$T_TMP/ready" ] && break; sleep 0.1; done
	check "$1: the $3 connections are open" test -e "$T_TMP/ready"
	latency "$1"
	rss_under "$1"
}
attack_end() {
	wait "$HOLD_PID"
	HOLD_PID=
	sleep 0.3
	rss_under "$1, after they closed"
}
# expect_raw NAME WANT-STATUS WANT-CODE DATA: one raw request, answered
# once, with that status and JSON error code, within 2 s
expect_raw() {
	local got
	got=$(edge raw "$SRV_PORT" "$4" 3)
	read -r st n code t <<<"$got"
	check "$1 ($got)" awk -v s="$st" -v n="$n" -v c="$code" -v t="$t" \
		-v ws="$2" -v wc="$3" 'BEGIN { exit !(s == ws && n == 1 && c == wc && t < 2) }'
}
H="Host: a\r\nConnection: close\r\n"

echo "# revoked: the stream of a key ends when it is revoked"
curl -s -N --max-time 20 -H "X-API-Key: $GKEY" \
	"http://127.0.0.1:$SRV_PORT/v1/events/stream" >"$T_TMP/gone.out" &
CURL_PID=$!
for _ in $(seq 1 50); do grep -q '^retry:' "$T_TMP/gone.out" 2>/dev/null && break; sleep 0.1; done
check "revoked: the stream is open" grep -q '^retry:' "$T_TMP/gone.out"
"$STORYCTL" -C "$P" key revoke gone >/dev/null 2>&1
T0=$(date +%s%N)
for _ in $(seq 1 30); do kill -0 "$CURL_PID" 2>/dev/null || break; sleep 0.1; done
took=$((($(date +%s%N) - T0) / 1000000))
check "revoked: the stream ended within 2 s of the revocation (${took} ms)" \
	test "$took" -lt 2000
kill "$CURL_PID" 2>/dev/null
wait "$CURL_PID" 2>/dev/null

echo "# body: a GET with a body is refused before it is read"
expect_raw "body: GET with Content-Length 1048575 is 400 bad_request at once" 400 bad_request \
	"GET /v1/status HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\nContent-Length: 1048575\r\n\r\n"
expect_raw "body: DELETE with a chunked body is 400 bad_request at once" 400 bad_request \
	"DELETE /v1/retry-policy HTTP/1.1\r\n${H}X-API-Key: $WKEY\r\nTransfer-Encoding: chunked\r\n\r\n"
attack "body: 250 GETs sending 1 MiB bodies" body 250 "$RKEY"
attack_end "body"

echo "# streams: one address cannot hold every stream"
attack "streams: 32 streams that never read" stream 32 "$RKEY"
code=$(curl -s -N --interface 127.0.0.2 --max-time 1 -o /dev/null -w '%{http_code}' \
	-H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT/v1/events/stream")
check "streams: a stream from another address (127.0.0.2) is 200 meanwhile ($code)" test "$code" = 200
code=$(curl -s -N --max-time 1 -o /dev/null -w '%{http_code}' \
	-H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT/v1/events/stream")
check "streams: one more from 127.0.0.1 is 503 busy ($code)" test "$code" = 503
attack_end "streams"

echo "# idle: idle sockets do not hold a request up"
attack "idle: 300 idle sockets" idle 300 ""
attack_end "idle"

echo "# nul: a raw NUL is refused, not cut off"
expect_raw "nul: GET /v1/stories/x1 NUL /../../junk is 400 bad_request, not story x1" 400 bad_request \
	"GET /v1/stories/x1\\x00/../../junk HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\n\r\n"
expect_raw "nul: DELETE .../retry-policy NUL /zzz is 400 bad_request, not routed" 400 bad_request \
	"DELETE /v1/stories/x1/retry-policy\\x00/zzz HTTP/1.1\r\n${H}X-API-Key: $WKEY\r\n\r\n"
expect_raw "nul: X-API-Key: KEY NUL junk is 400 bad_request, not KEY" 400 bad_request \
	"GET /v1/status HTTP/1.1\r\n${H}X-API-Key: $RKEY\\x00junk\r\n\r\n"
expect_raw "nul: ... as the last header too" 400 bad_request \
	"GET /v1/status HTTP/1.1\r\n${H}X-API-Key: $RKEY\\x00\\x00junk\r\n\r\n"
expect_raw "nul: the same request without the NUL is 200" 200 - \
	"GET /v1/status HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\n\r\n"

echo "# framing: conflicting or unknown framing is a JSON 400 at once"
expect_raw "framing: two different Content-Length headers are 400 bad_request" 400 bad_request \
	"PUT /v1/retry-policy HTTP/1.1\r\n${H}X-API-Key: $WKEY\r\nContent-Length: 2\r\nContent-Length: 15\r\n\r\n{}"
expect_raw "framing: Content-Length with chunked is 400 bad_request" 400 bad_request \
	"PUT /v1/retry-policy HTTP/1.1\r\n${H}X-API-Key: $WKEY\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
expect_raw "framing: Transfer-Encoding gzip is 400 bad_request at once (it hung)" 400 bad_request \
	"GET /v1/status HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\nTransfer-Encoding: gzip\r\n\r\n"
expect_raw "framing: a GET whose Content-Length body never comes is 400 at once (it hung)" 400 bad_request \
	"GET /v1/status HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\nContent-Length: 5\r\n\r\n"
expect_raw "framing: a space in the target is 400 bad_request" 400 bad_request \
	"GET /v1/status x HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\n\r\n"

echo "# slash: an encoded slash does not change the route"
expect_raw "slash: /v1/stories/x1%2fretry-policy is 400 bad_request, not the policy" 400 bad_request \
	"GET /v1/stories/x1%2fretry-policy HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\n\r\n"
expect_raw "slash: ... nor with %2F" 400 bad_request \
	"GET /v1/stories/x1%2Fretry-policy HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\n\r\n"

echo "# budget: 8 writes announcing 1 MiB each hold the 8 MiB"
attack "budget: 8 PUTs announcing 1 MiB" put 8 "$WKEY"
req PUT /v1/retry-policy "$WKEY" -d '{"max_retries": 3}'
expect_http "budget: a ninth write is 503 busy" 503 '.error.code == "busy"'
expect_match "budget: ... with Retry-After" "$H_HEAD" '^Retry-After: 1'
attack_end "budget"
req PUT /v1/retry-policy "$WKEY" -d '{"max_retries": 3}'
expect_http "budget: once they are gone a write is 200 again" 200 '.override.max_retries == 3'

echo "# the library's own answer to a Content-Length it cannot read"
got=$(edge raw "$SRV_PORT" "GET /v1/status HTTP/1.1\r\n${H}X-API-Key: $RKEY\r\nContent-Length: -1\r\n\r\n" 3)
read -r st n code t <<<"$got"
check "Content-Length -1: 400 and closed at once (libmicrohttpd's HTML, docs/api.md#the-librarys-own-answers) ($got)" \
	awk -v s="$st" -v t="$t" 'BEGIN { exit !(s == 400 && t < 2) }'

echo "# a write's body is still read"
req PUT /v1/retry-policy "$WKEY" -d '{"max_retries": 1}'
expect_http "a PUT with a body is 200" 200 '.override.max_retries == 1'
req PUT /v1/retry-policy "$WKEY" -H 'Transfer-Encoding: chunked' -d '{"max_retries": 2}'
expect_http "a chunked PUT is 200" 200 '.override.max_retries == 2'
rss_under "at the end"

kill -TERM "$SRV_PID"
wait "$SRV_PID"
check "serve exits 0 on SIGTERM" test $? = 0
SRV_PID=
finish
