#!/bin/bash
# Slow clients against storyctl serve (docs/api.md#limits): 100
# connections held open by bash's /dev/tcp (30 send nothing, 30 half a
# request and then nothing, 30 trickle a header line every 2 s, 10 send
# whole headers and trickle the body) do not stop a normal GET being
# answered while they are held, and every one of them is closed once its
# request has not arrived whole within the timeout (10 s), the
# tricklers too.  127.0.0.1 only, every wait bounded.
#
# To hold a new kind of slow client, add a line to KINDS and a case to
# slow_send.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
# a write to a connection the server closed is an error, not a signal
trap '' PIPE

# kind count
KINDS=(
	"silent 30"
	"half 30"
	"headers 30"
	"body 10"
)
TIMEOUT_S=10 # SERVE_TIMEOUT_S (controller/serve/serve.h)

SRV_PID=
SRV_PORT=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

new_project
new_story "$P" s1 1 '<!-- sim *: checkall -->'
commit_all
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
serve_up || not_ok "serve started"

FDS=()
FD_KIND=()
# slow_send FD KIND STEP: what a client of KIND sends at STEP (0 when it
# connects, then one step every 2 s); a failed write is ignored here,
# the reads below say whether the server closed it.
slow_send() {
	local fd=$1 kind=$2 step=$3
	case $kind:$step in
	silent:*) ;;
	half:0 | headers:0) printf 'GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&"$fd" ;;
	half:*) ;;
	headers:*) printf 'X-Slow-%d: %d\r\n' "$step" "$step" >&"$fd" ;;
	body:0)
		printf 'PUT /v1/retry-policy HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: %s\r\nContent-Length: 100\r\n\r\n{' "$WKEY" >&"$fd"
		;;
	body:*) printf ' ' >&"$fd" ;;
	esac 2>/dev/null
}
# closed FD: 0 when the server has closed the connection (end of file;
# anything it sent before is read and dropped), 1 while it is open
closed() {
	local line rc
	# read -t 0: readable now (data, or end of file), without reading
	while read -r -t 0 -u "$1"; do
		IFS= read -r -t 1 -u "$1" line
		rc=$?
		[ "$rc" -gt 128 ] && return 1
		[ "$rc" != 0 ] && [ -z "$line" ] && return 0
	done
	return 1
}
open_count() {
	local fd n=0
	for fd in "${FDS[@]}"; do closed "$fd" || n=$((n + 1)); done
	echo "$n"
}

T0=$(date +%s)
for spec in "${KINDS[@]}"; do
	read -r kind n <<<"$spec"
	for _ in $(seq 1 "$n"); do
		if exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"; then
			FDS+=("$fd")
			FD_KIND+=("$kind")
			slow_send "$fd" "$kind" 0
		fi
	done
done
check "100 slow connections are open" test "${#FDS[@]}" = 100
check "... and held: none is closed at once" test "$(open_count)" = 100

# a normal GET, three times, while they are held
for i in 1 2 3; do
	code=$(curl -s --max-time "$((TIMEOUT_S - 1))" -o "$T_TMP/body" -w '%{http_code}' \
		-H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT/v1/status")
	check "GET /v1/status answers 200 while they are held ($i)" test "$code" = 200
done
check "the answer is status --json" cmp -s "$T_TMP/body" <("$STORYCTL" -C "$P" status --json)
held=$(open_count)
check "the slow connections were still held while it answered ($held)" test "$held" -ge 90

# trickle until every one is closed, or the timeout and 8 s have passed
step=1
while [ "$(open_count)" != 0 ] && [ $(($(date +%s) - T0)) -lt $((TIMEOUT_S + 8)) ]; do
	sleep 2
	for i in "${!FDS[@]}"; do slow_send "${FDS[$i]}" "${FD_KIND[$i]}" "$step"; done
	step=$((step + 1))
done
took=$(($(date +%s) - T0))
for spec in "${KINDS[@]}"; do
	read -r kind n <<<"$spec"
	left=0
	for i in "${!FDS[@]}"; do
		[ "${FD_KIND[$i]}" = "$kind" ] && ! closed "${FDS[$i]}" && left=$((left + 1))
	done
	check "the $n '$kind' connections are closed after the timeout ($left still open after ${took} s)" test "$left" = 0
done
for fd in "${FDS[@]}"; do exec {fd}>&-; done
code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' \
	-H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT/v1/status")
check "the server answers after they are gone" test "$code" = 200
kill -TERM "$SRV_PID"
wait "$SRV_PID"
check "serve exits 0 on SIGTERM" test $? = 0
SRV_PID=
finish
