#!/bin/bash
# storyctl serve and its keys (docs/api.md): key add|list|revoke; 401
# without, with a wrong and with a revoked key; a read key cannot write
# (403); the read views equal status, list and show --json before and
# after a batch; 400/404/405/413; a non-loopback address without a key
# is refused; SIGTERM stops it with exit 0; the key is in no file of the
# state dir and not on the state branch.  curl on 127.0.0.1 only, a port
# the kernel picks, every wait bounded.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SRV_PID=
SRV_PORT=
# serve_down: SIGTERM; sets SRV_RC to its exit status.
serve_down() {
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID"
	SRV_RC=$?
}
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

# same_as_cli NAME PATH KEY ARGS...: the view equals `storyctl ARGS`
# (jq -S) and byte for byte.
same_as_cli() {
	local name=$1 path=$2 key=$3
	shift 3
	req GET "$path" "$key"
	"$STORYCTL" -C "$P" "$@" >"$T_TMP/cli.json" 2>/dev/null
	if [ "$H_CODE" = 200 ] &&
		[ "$(jq -S . "$T_TMP/body")" = "$(jq -S . "$T_TMP/cli.json")" ] &&
		cmp -s "$T_TMP/body" "$T_TMP/cli.json"; then
		ok "$name"
	else
		not_ok "$name (status $H_CODE)"
		diff "$T_TMP/body" "$T_TMP/cli.json" | head -10 | sed 's/^/# /'
	fi
}

new_project
new_story "$P" s1 2 '<!-- sim *: checkall -->'
new_story "$P" s2 3 '<!-- sim *: checkall -->'
commit_all

# --- keys ----------------------------------------------------------------------
run_sc -C "$P" serve --listen 0.0.0.0:0
expect_rc "serve on 0.0.0.0 without a key: refused (exit 64)" 64
expect_match "the refusal says to add a key" "$T_ERR" "not a loopback address and no key exists.*key add"
run_sc -C "$P" key list
expect_rc "key list with no keys: exit 0" 0
expect_match "key list: no keys" "$T_OUT" "^no keys$"
run_sc -C "$P" key add dash
expect_rc "key add dash: exit 0" 0
RKEY=$T_OUT
expect_match "the key is printed alone, sc_ and 43 base64url characters" "$RKEY" '^sc_[A-Za-z0-9_-]{43}$'
run_sc -C "$P" key add ci --write
WKEY=$T_OUT
run_sc -C "$P" key add gone
GKEY=$T_OUT
run_sc -C "$P" key add dash
expect_rc "key add of a taken name: exit 64" 64
run_sc -C "$P" key add '../evil'
expect_rc "key add of a bad name: exit 64" 64
run_sc -C "$P" key list
expect_match "key list: names and scopes" "$T_OUT" "ci +write"
expect_match "key list: the read key" "$T_OUT" "dash +read"
check "key list shows no key" test "$(printf '%s' "$T_OUT" | grep -c 'sc_')" = 0
run_sc -C "$P" key revoke gone
expect_rc "key revoke gone: exit 0" 0
run_sc -C "$P" key revoke gone
expect_rc "key revoke of no such key: exit 64" 64
check "the database keeps a SHA-256 per key, in hex" \
	test "$(sql "SELECT count(*) FROM api_keys WHERE length(sha256) = 64")" = 2

# --- serve: before any batch ---------------------------------------------------
check "serve starts and prints its port" serve_up
check "on loopback it gives no plain-HTTP warning" bash -c '! grep -q "plain HTTP" "$1"' _ "$T_TMP/srv.err"
req GET /v1/status ""
expect_http "no key: 401" 401 '.error.code == "unauthorized" and (.error.message | type) == "string"'
req GET /v1/status "sc_wrong"
expect_http "a wrong key: 401" 401 '.error.code == "unauthorized" and (.error.message | type) == "string"'
req GET /v1/status "$GKEY"
expect_http "a revoked key: 401" 401 '.error.code == "unauthorized" and (.error.message | type) == "string"'
req GET /v1/status "${RKEY}x"
expect_http "the key and one more character: 401" 401 '.error.code == "unauthorized" and (.error.message | type) == "string"'
same_as_cli "GET /v1/status = status --json (no batch yet)" /v1/status "$RKEY" status --json
same_as_cli "GET /v1/stories = list --json (no batch yet)" /v1/stories "$RKEY" list --json
same_as_cli "GET /v1/stories/s1 = show s1 --json (no batch yet)" /v1/stories/s1 "$RKEY" show s1 --json
req PUT /v1/retry-policy "$RKEY" -d '{}'
expect_http "a read key PUT: 403" 403 '.error.code == "forbidden" and (.error.message | type) == "string"'
req POST /v1/stories/s1/requeue "$RKEY"
expect_http "a read key POST: 403" 403 '.error.code == "forbidden" and (.error.message | type) == "string"'
req DELETE /v1/stories/s1 "$RKEY"
expect_http "a read key DELETE: 403" 403 '.error.code == "forbidden" and (.error.message | type) == "string"'
req POST /v1/stories/s1/requeue "$WKEY" -d '{}'
expect_http "requeue before the first batch: 409" 409 '.error.code == "conflict" and (.error.message | type) == "string"'
req POST /v1/status "$WKEY" -d '{}'
expect_http "POST to a read view: 405" 405 '.error.code == "method_not_allowed" and (.error.message | type) == "string"'
req GET /v1/nothing "$RKEY"
expect_http "an unknown route: 404" 404 '.error.code == "not_found" and (.error.message | type) == "string"'
req GET /v1/stories/nope "$RKEY"
expect_http "no such story: 404" 404 '.error.code == "not_found" and (.error.message | type) == "string"'
req GET /v1/stories/.. "$RKEY" --path-as-is
expect_http "the id '..': 400" 400 '.error.code == "bad_id" and (.error.message | type) == "string"'
req GET /v1/stories/s1%2F..%2Fs2 "$RKEY"
expect_http "an encoded slash in an id: 400 (docs/api.md#ids)" 400 '.error.code == "bad_request" and (.error.message | type) == "string"'
req GET "/v1/stories/$(printf 'a%.0s' $(seq 1 200))" "$RKEY"
expect_http "an id of 200 characters: 400" 400 '.error.code == "bad_id" and (.error.message | type) == "string"'
head -c 1100000 /dev/zero | tr '\0' 'x' >"$T_TMP/big"
req POST /v1/status "$WKEY" --data-binary @"$T_TMP/big"
expect_http "a body over 1 MiB: 413" 413 '.error.code == "too_large" and (.error.message | type) == "string"'
req GET /v1/status "$RKEY"
expect_http "still serving after the refusals" 200

# --- serve beside a batch, and after it ----------------------------------------
run_sc -C "$P" run
expect_rc "the batch runs beside the server" 0
same_as_cli "GET /v1/status = status --json (after a batch)" /v1/status "$RKEY" status --json
same_as_cli "GET /v1/stories = list --json (after a batch)" /v1/stories "$RKEY" list --json
same_as_cli "GET /v1/stories/s2 = show s2 --json (after a batch)" /v1/stories/s2 "$RKEY" show s2 --json
req GET /v1/stories "$RKEY"
check "both stories are done in the view" \
	test "$(printf '%s' "$H_BODY" | jq -r '[.[].status] | join(",")')" = "done,done"
serve_down
check "SIGTERM stops serve with exit 0" test "$SRV_RC" = 0
SRV_PID=

# --- the keys are nowhere but where they were printed -------------------------
for k in "$RKEY" "$WKEY" "$GKEY"; do
	n=$(grep -rcF -- "$k" "$P/.storyctl" 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}')
	check "a key is in no file of the state dir" test "$n" = 0
	n=$(git -C "$P" log -p storyctl/state 2>/dev/null | grep -cF -- "$k")
	check "a key is not on the state branch" test "$n" = 0
	check "a key is not in the server's output" \
		test "$(cat "$T_TMP/srv.out" "$T_TMP/srv.err" | grep -cF -- "$k")" = 0
done
check "the state branch exists (the search above looked at something)" \
	git -C "$P" rev-parse -q --verify storyctl/state

# --- with a key, a non-loopback address is allowed ----------------------------
"$STORYCTL" -C "$P" serve --listen 0.0.0.0:0 >"$T_TMP/any.out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q '^serving on port' "$T_TMP/any.out" && break; sleep 0.1; done
check "serve on 0.0.0.0 with a key: it listens" grep -q '^serving on port' "$T_TMP/any.out"
# plain HTTP off loopback is allowed, never silent (issue 33)
check "... and warns that it is plain HTTP off loopback" \
	grep -q '^warning: serving plain HTTP on 0\.0\.0\.0:0, which is not loopback' "$T_TMP/any.out"
kill -INT "$pid"
wait "$pid"
check "SIGINT stops serve with exit 0" test $? = 0
run_sc -C "$P" serve --listen localhost:80
expect_rc "a host name is refused (exit 64)" 64
run_sc -C "$P" serve --listen 127.0.0.1
expect_rc "no port: exit 64" 64
finish
