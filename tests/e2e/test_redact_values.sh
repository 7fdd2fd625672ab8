#!/bin/bash
# Redaction by value (issue 33, docs/reliability.md#redaction): the
# values storyctl itself hands an agent (the agents' "env"), the
# controller's variables whose name says they are secrets
# (EXAMPLE_API_TOKEN), storyctl's own API keys (sc_...), cookies and
# authorization headers, whole or split by U+200B, U+FEFF and U+00AD,
# reach none of: the state branch (git log -p), `show --json`, the
# database file and its WAL, the prompts in the logs directory, the
# webhook body, `GET /v1/stories/ID` and `GET /v1/stories/ID/failures`;
# nor does a bare sc_ key POSTed in a failure's error_message.  Each is
# checked from outside storyctl, by grepping the bytes for both halves of
# every value (a split value is two halves around an invisible
# character), and the marks that stand for them are there.  The raw
# attempt log (mode 0600) keeps the output, as documented.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
AGENT="$STORYCTL_SRC/tests/e2e/agents/secret-agent"
RECV="$STORYCTL_SRC/tests/e2e/agents/notify-receiver"
R_PID=""
SRV_PID=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[ -n "$R_PID" ] && kill "$R_PID" 2>/dev/null
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
	rm -rf "$T_TMP"
}
trap cleanup EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy

# made-up secrets; none has the shape of a provider key, so only the new
# rules can catch them
A_SECRET='agent-S3cret-Value-93f1c7'    # agents.*.env MY_AGENT_SECRET
D_TARGET='fb-Deploy-Zeta-6620xq'        # agents.*.env DEPLOY_TARGET
C_TOKEN='ctl-T0ken-Example-77ab42'      # the controller's EXAMPLE_API_TOKEN
COOKIE='ck-Sess-4d8a9b2c1e5f'           # Cookie: session=...
BEARER='brr-Tok-0a1b2c3d4e5f6789'       # Authorization: Bearer ...

# the receiver of the webhook
mkdir -p "$T_TMP/in"
"$RECV" ok "$T_TMP/port" "$T_TMP/in" 120 &
R_PID=$!
R_PORT=
for _ in $(seq 1 100); do
	[ -s "$T_TMP/port" ] && R_PORT=$(cat "$T_TMP/port") && break
	sleep 0.1
done
[ -n "$R_PORT" ] || not_ok "the receiver started"

cmd=$(jq -cn --arg a "$AGENT" --arg k "$T_TMP/keys" '[$a, $k, "{attempt}", "{story_file}"]')
EXTRA_JSON="\"notify\": [{\"on\": [\"escalated\", \"deferred\", \"stopped\", \"batch_end\"], \"webhook\": \"http://127.0.0.1:$R_PORT/hook\"}]," \
	new_project '{"max_attempts": 2}' "$(jq -cn --argjson c "$cmd" --arg a "$A_SECRET" --arg d "$D_TARGET" \
	'{primary: {name: "sec-p", command: $c, env: {MY_AGENT_SECRET: $a, DEPLOY_TARGET: $d, FLAG: "true"}},
	  fallback: {name: "sec-f", command: $c, env: {MY_AGENT_SECRET: $a, DEPLOY_TARGET: $d}}}')"
new_story "$P" s1 2
commit_all
run_sc -C "$P" key add ci --write
expect_rc "a write key for the service" 0
SCKEY=$T_OUT
check "the key has storyctl's shape" bash -c '[[ $1 =~ ^sc_[A-Za-z0-9_-]{43}$ ]]' _ "$SCKEY"
printf '%s\n%s\n%s\n' "$SCKEY" "$COOKIE" "$BEARER" >"$T_TMP/keys"

EXAMPLE_API_TOKEN=$C_TOKEN run_sc -C "$P" run
expect_rc "both agents refuse their key: the story is escalated (3)" 3

# halves: both halves of every secret, one a line (a grep -F pattern
# file); a value split by an invisible character is two halves
: >"$T_TMP/halves"
for v in "$A_SECRET" "$D_TARGET" "$C_TOKEN" "$COOKIE" "$BEARER" "$SCKEY"; do
	h=$((${#v} / 2))
	printf '%s\n%s\n' "${v:0:h}" "${v:h}" >>"$T_TMP/halves"
done
# none NAME FILE...: no half of any secret in the files' bytes
none() {
	local name=$1 hits
	shift
	hits=$(grep -aoFf "$T_TMP/halves" "$@" 2>/dev/null | sort -u | head -5)
	if [ -z "$hits" ]; then
		ok "$name"
	else
		not_ok "$name"
		printf '%s\n' "$hits" | sed 's/^/# found: /'
	fi
}
# marks NAME FILE: the marks that stand for them are there
marks() {
	local f=$2 m missing=""
	for m in '[REDACTED MY_AGENT_SECRET]' '[REDACTED EXAMPLE_API_TOKEN]' \
		'[REDACTED DEPLOY_TARGET]' 'Cookie: [REDACTED]' 'Bearer [REDACTED]'; do
		grep -qF -- "$m" "$f" || missing="$missing $m"
	done
	if [ -z "$missing" ]; then ok "$1"; else not_ok "$1 (missing:$missing)"; fi
}

check "the agent did print them (its log keeps the output, 0600)" \
	bash -c 'grep -qaF -- "$1" "$2"/.storyctl/logs/s1.a1.*.log && [ "$(stat -c %a "$2"/.storyctl/logs/s1.a1.*.log)" = 600 ]' _ "$A_SECRET" "$P"

"$STORYCTL" -C "$P" show s1 --json >"$T_TMP/show.json" 2>/dev/null
none "show --json: no secret" "$T_TMP/show.json"
marks "show --json: the marks name the variables" "$T_TMP/show.json"
check "show --json: the sc_ key is [REDACTED]" grep -qF 'DEPLOY_TARGET], [REDACTED], Authorization' "$T_TMP/show.json"

# the transcript is read from the raw log each time it is shown, and
# redacted as it is printed: the agents' env from the config, the
# controller's secrets from the environment show runs in
# (docs/agents.md#transcript)
EXAMPLE_API_TOKEN=$C_TOKEN "$STORYCTL" -C "$P" show s1 --attempt 1 >"$T_TMP/transcript.txt" 2>&1
check "show --attempt 1 prints the transcript" grep -q '^  \[' "$T_TMP/transcript.txt"
none "show --attempt 1: no secret" "$T_TMP/transcript.txt"
marks "show --attempt 1: the marks name the variables" "$T_TMP/transcript.txt"
EXAMPLE_API_TOKEN=$C_TOKEN "$STORYCTL" -C "$P" show s1 --attempt 2 --json >"$T_TMP/transcript.json" 2>&1
check "show --attempt 2 --json is an array of events" jq -e 'type == "array" and length > 0 and all(.[]; has("t") and has("kind"))' "$T_TMP/transcript.json"
none "show --attempt 2 --json: no secret" "$T_TMP/transcript.json"

git -C "$P" log -p storyctl/state >"$T_TMP/branch.txt" 2>&1
check "the state branch has commits" test -s "$T_TMP/branch.txt"
none "git log -p storyctl/state: no secret" "$T_TMP/branch.txt"
marks "the state branch: the marks" "$T_TMP/branch.txt"

sync
none "the database file and its WAL: no secret" "$P"/.storyctl/state.db*

prompts=$(find "$P/.storyctl/logs" -type f ! -name '*.log')
if [ -n "$prompts" ]; then
	# shellcheck disable=SC2086 # one file a word
	none "the logs directory but the raw attempt logs: no secret" $prompts
else
	ok "the logs directory holds nothing but the raw attempt logs"
fi

for _ in $(seq 1 50); do
	ls "$T_TMP/in"/*.json >/dev/null 2>&1 && break
	sleep 0.1
done
cat "$T_TMP/in"/*.json >"$T_TMP/hook.json" 2>/dev/null
check "the webhook got events" test -s "$T_TMP/hook.json"
none "the webhook body: no secret" "$T_TMP/hook.json"
marks "the webhook body: the marks" "$T_TMP/hook.json"

# the service
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
EXAMPLE_API_TOKEN=$C_TOKEN serve_up || not_ok "serve started"
req GET /v1/stories/s1 "$RKEY"
expect_http "GET /v1/stories/s1: 200" 200
printf '%s' "$H_BODY" >"$T_TMP/api-show.json"
none "GET /v1/stories/s1: no secret" "$T_TMP/api-show.json"
marks "GET /v1/stories/s1: the marks" "$T_TMP/api-show.json"
req GET /v1/stories/s1/failures "$RKEY"
expect_http "GET /v1/stories/s1/failures: 200" 200
printf '%s' "$H_BODY" >"$T_TMP/api-fail.json"
none "GET /v1/stories/s1/failures: no secret" "$T_TMP/api-fail.json"

# a failure found outside storyctl whose excerpt holds the key itself
body=$(jq -cn --arg m "deploy failed with $A_SECRET and $C_TOKEN: curl -H 'X-API-Key: x' used $SCKEY then sent Cookie: session=$COOKIE; theme=dark" \
	'{error_code: "CRASH", error_message: $m}')
req POST /v1/stories/s1/failures "$SCKEY" -H 'Content-Type: application/json' --data-binary "$body"
expect_http "POST a failure naming the key: 201" 201
printf '%s' "$H_BODY" >"$T_TMP/api-post.json"
none "the POST's answer: no secret" "$T_TMP/api-post.json"
check "the POST's answer: the key [REDACTED]" grep -qF 'used [REDACTED] then' "$T_TMP/api-post.json"
# by value too: the agents' env of the config, the server's own env
check "the POST's answer: an agent's env value marked by name" \
	grep -qF 'with [REDACTED MY_AGENT_SECRET] and [REDACTED EXAMPLE_API_TOKEN]:' "$T_TMP/api-post.json"
req GET /v1/stories/s1/failures "$RKEY"
printf '%s' "$H_BODY" >"$T_TMP/api-fail2.json"
none "GET /v1/stories/s1/failures after the POST: no secret" "$T_TMP/api-fail2.json"
"$STORYCTL" -C "$P" show s1 --json >"$T_TMP/show2.json" 2>/dev/null
none "show --json after the POST: no secret" "$T_TMP/show2.json"
"$STORYCTL" -C "$P" log --json >"$T_TMP/events.json" 2>/dev/null
none "the event log: no secret" "$T_TMP/events.json"
sync
none "the database file and its WAL after the POST: no secret" "$P"/.storyctl/state.db*
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
SRV_PID=""

[ "$T_FAILED" -eq 0 ] || exit 1
finish
