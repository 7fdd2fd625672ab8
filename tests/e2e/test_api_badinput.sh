#!/bin/bash
# Bad requests to storyctl serve (docs/api.md#errors), one table: malformed
# JSON, wrong types, unknown keys (named in the 422), bodies over 1 MiB
# (413, with and without Content-Length), wrong methods (405 with Allow),
# unknown routes (404), bad ids (400), no key or a read key writing
# (401, 403).  Each gets its status and error code, and the database is
# byte-for-byte unchanged after it (sqlite3 .dump before and after, and
# the state branch's head).  127.0.0.1 only, every wait bounded.
#
# To test a new route, add lines to BAD.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SRV_PID=
SRV_PORT=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

new_project
new_story "$P" s1 2 '<!-- sim *: checkall -->'
new_story "$P" s2 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "a batch ran first, so that there is a record to keep" 0
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
serve_up || not_ok "serve started"

head -c 1100000 /dev/zero | tr '\0' 'x' >"$T_TMP/big"
printf '{"max_retries": 1, "x": "%s"}' "$(head -c 1048600 /dev/zero | tr '\0' 'y')" >"$T_TMP/bigjson"
printf '{"max_retries": 1\0}' >"$T_TMP/nul"
printf '{"max_retries": 1, "\xff\xfe": 2}' >"$T_TMP/latin"
LONG=$(printf 'a%.0s' $(seq 1 200))

# name | method | path | key (r, w, none, bad) | body (- none, @file,
# @file! chunked, or the text) | status | error code | Allow header (-
# not checked) | a regex the message must match (- none)
BAD=(
	"malformed JSON|PUT|/v1/retry-policy|w|{\"max_retries\": |400|bad_json|-|not JSON"
	"trailing garbage|PUT|/v1/retry-policy|w|{\"max_retries\": 1} x|400|bad_json|-|end of file expected"
	"an empty body|PUT|/v1/retry-policy|w||400|bad_json|-|-"
	"a JSON string, not an object|PUT|/v1/retry-policy|w|\"s\"|400|bad_json|-|-"
	"null|PUT|/v1/retry-policy|w|null|400|bad_json|-|-"
	"a duplicate key|PUT|/v1/retry-policy|w|{\"max_retries\": 1, \"max_retries\": 2}|400|bad_json|-|duplicate"
	"an integer too big for JSON|PUT|/v1/retry-policy|w|{\"max_retries\": 99999999999999999999}|400|bad_json|-|too big"
	"a NUL byte in the body|PUT|/v1/retry-policy|w|@nul|400|bad_json|-|-"
	"a key that is not UTF-8|PUT|/v1/retry-policy|w|@latin|400|bad_json|-|-"
	"an array|PUT|/v1/retry-policy|w|[1, 2]|422|invalid|-|expected an object, got an array"
	"a wrong type (string for an integer)|PUT|/v1/retry-policy|w|{\"max_retries\": \"2\"}|422|invalid|-|max_retries"
	"a wrong type (array for policy)|PUT|/v1/retry-policy|w|{\"policy\": []}|422|invalid|-|policy: expected an object"
	"a fraction for an integer|PUT|/v1/retry-policy|w|{\"policy\": {\"max_attempts\": 1.5}}|422|invalid|-|policy.max_attempts"
	"a negative delay|PUT|/v1/retry-policy|w|{\"base_delay_ms\": -1}|422|invalid|-|base_delay_ms: must be >= 0"
	"base above max|PUT|/v1/retry-policy|w|{\"base_delay_ms\": 5000, \"max_delay_ms\": 10}|422|invalid|-|-"
	"an unknown strategy|PUT|/v1/retry-policy|w|{\"strategy\": \"bogus\"}|422|invalid|-|strategy"
	"a number for an agent|PUT|/v1/retry-policy|w|{\"fallback_agent_id\": 3}|422|invalid|-|fallback_agent_id"
	"an unknown key, named|PUT|/v1/retry-policy|w|{\"max_retires\": 1}|422|invalid|-|unknown key max_retires"
	"an unknown nested key, named|PUT|/v1/stories/s1/retry-policy|w|{\"policy\": {\"max_atempts\": 2}}|422|invalid|-|unknown key policy.max_atempts"
	"an unknown key among good ones|PUT|/v1/stories/s1/retry-policy|w|{\"max_retries\": 1, \"colour\": 2}|422|invalid|-|unknown key colour"
	"a body over 1 MiB (Content-Length)|PUT|/v1/retry-policy|w|@big|413|too_large|-|-"
	"a body over 1 MiB, chunked|PUT|/v1/retry-policy|w|@big!|413|too_large|-|-"
	"valid JSON over 1 MiB|PUT|/v1/stories/s1/retry-policy|w|@bigjson|413|too_large|-|-"
	"a body over 1 MiB to a read view|POST|/v1/status|w|@big|413|too_large|-|-"
	"POST to the status|POST|/v1/status|w|{}|405|method_not_allowed|GET|-"
	"PUT to the stories|PUT|/v1/stories|w|{}|405|method_not_allowed|GET|-"
	"DELETE of a story|DELETE|/v1/stories/s1|w|-|405|method_not_allowed|GET|-"
	"PATCH of the policy|PATCH|/v1/retry-policy|w|{}|405|method_not_allowed|GET, PUT, DELETE|-"
	"POST to a story's policy|POST|/v1/stories/s1/retry-policy|w|{}|405|method_not_allowed|GET, PUT, DELETE|-"
	"an unknown route|GET|/v1/nothing|r|-|404|not_found|-|-"
	"an unknown version|GET|/v2/status|r|-|404|not_found|-|-"
	"/v1 alone|GET|/v1|r|-|404|not_found|-|-"
	"an unknown story route|GET|/v1/stories/s1/nothing|r|-|404|not_found|-|-"
	"a trailing slash|GET|/v1/status/|r|-|404|not_found|-|-"
	"an unknown story|GET|/v1/stories/nope|r|-|404|not_found|-|-"
	"PUT on an unknown story's policy|PUT|/v1/stories/nope/retry-policy|w|{\"max_retries\": 0}|404|not_found|-|-"
	"DELETE of an override that is not there|DELETE|/v1/stories/s1/retry-policy|w|-|404|not_found|-|-"
	"the id ..|GET|/v1/stories/..|r|-|400|bad_id|-|-"
	"an id starting with -|GET|/v1/stories/-x|r|-|400|bad_id|-|-"
	"an id with a space|GET|/v1/stories/a%20b|r|-|400|bad_id|-|-"
	"an id with a NUL|GET|/v1/stories/a%00b|r|-|400|bad_id|-|-"
	"a NUL after a real id (not s1's view)|GET|/v1/stories/s1%00x|r|-|400|bad_id|-|-"
	"a NUL after a real id, PUT|PUT|/v1/stories/s1%00x/retry-policy|w|{\"max_retries\": 0}|400|bad_id|-|-"
	"a NUL in a route|GET|/v1/status%00|r|-|404|not_found|-|-"
	"an id of 200 characters|GET|/v1/stories/$LONG|r|-|400|bad_id|-|-"
	"a hidden id, PUT|PUT|/v1/stories/.hidden/retry-policy|w|{\"max_retries\": 0}|400|bad_id|-|-"
	"an empty id|GET|/v1/stories//retry-policy|r|-|400|bad_id|-|-"
	"no key|PUT|/v1/retry-policy|none|{\"max_retries\": 0}|401|unauthorized|-|-"
	"a wrong key|DELETE|/v1/retry-policy|bad|-|401|unauthorized|-|-"
	"a read key writing|PUT|/v1/retry-policy|r|{\"max_retries\": 0}|403|forbidden|-|-"
	"a read key deleting|DELETE|/v1/stories/s1/retry-policy|r|-|403|forbidden|-|-"
)

# dump: the database as SQL, and the state branch's head
dump() {
	sqlite3 "$P/.storyctl/state.db" .dump
	git -C "$P" rev-parse storyctl/state
}
dump >"$T_TMP/before"
check "the dump holds the batch (the comparison compares something)" \
	grep -q "INSERT INTO attempts" "$T_TMP/before"

for row in "${BAD[@]}"; do
	IFS='|' read -r name m path key body want code allow msg <<<"$row"
	args=()
	case $key in
	r) args+=(-H "X-API-Key: $RKEY") ;;
	w) args+=(-H "X-API-Key: $WKEY") ;;
	bad) args+=(-H "X-API-Key: sc_not_a_key") ;;
	esac
	case $body in
	-) ;;
	@*!) args+=(-H 'Transfer-Encoding: chunked' --data-binary "@$T_TMP/${body:1:-1}") ;;
	@*) args+=(--data-binary "@$T_TMP/${body:1}") ;;
	*) args+=(--data-binary "$body") ;;
	esac
	got=$(curl -s --path-as-is --max-time 20 -D "$T_TMP/hdr" -o "$T_TMP/body" \
		-w '%{http_code}' -X "$m" "${args[@]}" "http://127.0.0.1:$SRV_PORT$path")
	why=""
	[ "$got" = "$want" ] || why="status $got, want $want"
	if [ -z "$why" ] && ! jq -e --arg c "$code" \
		'.error.code == $c and (.error.message | type) == "string" and (keys == ["error"])' \
		"$T_TMP/body" >/dev/null 2>&1; then
		why="body $(head -c 300 "$T_TMP/body")"
	fi
	if [ -z "$why" ] && [ "$msg" != - ] &&
		! jq -r .error.message "$T_TMP/body" | grep -Eq -- "$msg"; then
		why="message $(jq -r .error.message "$T_TMP/body") does not match /$msg/"
	fi
	if [ -z "$why" ] && [ "$allow" != - ]; then
		a=$(sed -n 's/^Allow: \(.*\)\r$/\1/Ip' "$T_TMP/hdr")
		[ "$a" = "$allow" ] || why="Allow '$a', want '$allow'"
	fi
	dump >"$T_TMP/after"
	if [ -z "$why" ] && ! cmp -s "$T_TMP/before" "$T_TMP/after"; then
		why="the database changed"
		diff "$T_TMP/before" "$T_TMP/after" | head -5 | sed 's/^/# /'
	fi
	if [ -z "$why" ]; then
		ok "$name: $m $want $code, nothing changed"
	else
		not_ok "$name: $m ${path:0:60} ($why)"
	fi
done

# the same requests done right do change it: the dump sees a change
code=$(curl -s --max-time 20 -o /dev/null -w '%{http_code}' -X PUT -H "X-API-Key: $WKEY" \
	--data-binary '{"max_retries": 1}' "http://127.0.0.1:$SRV_PORT/v1/stories/s1/retry-policy")
dump >"$T_TMP/after"
check "a good PUT answers 200 and the dump sees it" \
	bash -c '[ "$1" = 200 ] && ! cmp -s "$2" "$3"' _ "$code" "$T_TMP/before" "$T_TMP/after"
# a batch PUT replaces the batch's override: it is checked over the
# config (base 10 ms), not over the override it replaces (base 50 ms)
wput() {
	curl -s --max-time 20 -o "$T_TMP/body" -w '%{http_code}' -X PUT -H "X-API-Key: $WKEY" \
		--data-binary "$1" "http://127.0.0.1:$SRV_PORT/v1/retry-policy"
}
code=$(wput '{"base_delay_ms": 50, "max_delay_ms": 60}')
code=$code/$(wput '{"max_delay_ms": 40}')
check "a batch PUT is checked over the config, not the override it replaces ($code)" \
	bash -c '[ "$1" = 200/200 ] && jq -e ".base_delay_ms == 10 and .max_delay_ms == 40" "$2" >/dev/null' _ "$code" "$T_TMP/body"
check "the server is alive after the table (200)" \
	test "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H "X-API-Key: $RKEY" "http://127.0.0.1:$SRV_PORT/v1/status")" = 200
kill -TERM "$SRV_PID"
wait "$SRV_PID"
check "serve exits 0 on SIGTERM" test $? = 0
SRV_PID=
check "nothing the server said is a crash or a database error" \
	bash -c '! grep -Eqi "locked|panic|assert|sanitizer" "$1" "$2"' _ "$T_TMP/srv.out" "$T_TMP/srv.err"
finish
