#!/bin/bash
# The retry-policy routes of storyctl serve (docs/api.md#retry-policy):
# GET, PUT and DELETE of the batch's and a story's override; 400, 403,
# 404, 405 and 422 (naming the key, with the config's message); a story
# override set while a batch runs decides that story's next decision
# (fewer attempts), as simulate with the same policy decides; the event
# log, show (text and --json) and stories/<id>.json say so; DELETE
# restores the old behaviour.  curl on 127.0.0.1
# only, every wait bounded; the agent waits for a file, not for time.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SRV_PID=
SRV_PORT=
RUN_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$RUN_PID" ] && kill "$RUN_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

# put PATH KEY JSON
put() { req PUT "$1" "$2" -H 'Content-Type: application/json' --data-binary "$3"; }

# An agent that fails without progress once $T_TMP/go exists (bounded).
cat >"$T_TMP/gated" <<'SH'
#!/bin/sh
i=0
while [ ! -e "$GO" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "$1 $2" >>"$MAXLOG"
echo "gated agent: failing attempt $1"
exit 1
SH
chmod +x "$T_TMP/gated"
export GO="$T_TMP/go" MAXLOG="$T_TMP/max.log"
new_project '{"max_attempts": 3}' '{"primary": {"name": "gp", "command": ["'"$T_TMP/gated"'", "{attempt}", "{max_attempts}"], "timeout_s": 60},
  "fallback": {"name": "gf", "command": ["'"$T_TMP/gated"'", "{attempt}", "{max_attempts}"], "timeout_s": 60}}'
new_story "$P" s1 2
commit_all
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
serve_up || not_ok "serve started"

# --- the batch's policy ---------------------------------------------------
req GET /v1/retry-policy "$RKEY"
expect_http "GET the batch's policy: the config's, in RFC fields and storyctl's" 200 \
	'.scope == "batch" and .max_retries == 2 and .policy.max_attempts == 3 and .strategy == "fixed" and .fallback_agent_id == "gf" and .override == null'
put /v1/retry-policy "$RKEY" '{"base_delay_ms": 20}'
expect_http "PUT with a read key: 403" 403 '.error.code == "forbidden"'
put /v1/retry-policy "$WKEY" '{"base_delay_ms": 20, "policy": {"backoff": {"jitter": 0.1}}}'
expect_http "PUT the batch's override: 200 with the new effective policy" 200 \
	'.base_delay_ms == 20 and .policy.backoff.jitter == 0.1 and .override.base_delay_ms == 20'
req GET /v1/retry-policy "$RKEY"
expect_http "GET shows the stored override" 200 '.base_delay_ms == 20 and .max_retries == 2'
put /v1/retry-policy "$WKEY" '{"max_retires": 1}'
expect_http "an unknown key: 422 naming it, with a did-you-mean" 422 \
	'.error.code == "invalid" and (.error.message | test("unknown key max_retires \\(did you mean max_retries\\?\\)"))'
put /v1/retry-policy "$WKEY" '{"policy": {"max_attempts": "3"}}'
expect_http "a wrong type: 422 with the config's message" 422 \
	'.error.message == "retry-policy: policy.max_attempts: expected an integer, got a string"'
put /v1/retry-policy "$WKEY" '{"policy": {"max_attempts": 0}}'
expect_http "out of range: 422 with the config's message" 422 \
	'.error.message == "retry-policy: policy.max_attempts: must be >= 1, got 0"'
put /v1/retry-policy "$WKEY" '{"fallback_agent_id": "other"}'
expect_http "another fallback agent: 422 (the config chooses agents)" 422 \
	'(.error.message | test("fallback_agent_id"))'
put /v1/retry-policy "$WKEY" '{"policy": {"stall_timeout_s": 3}}'
expect_http "a key a decision does not read: 422, not ignored" 422 \
	'(.error.message | test("policy.stall_timeout_s: is read when an attempt starts"))'
put /v1/retry-policy "$WKEY" '{"max_retries": '
expect_http "malformed JSON: 400" 400 '.error.code == "bad_json"'
req PATCH /v1/retry-policy "$WKEY"
expect_http "PATCH: 405" 405 '.error.code == "method_not_allowed"'
req GET /v1/retry-policy "$RKEY"
expect_http "refused bodies left the stored override alone" 200 '.base_delay_ms == 20 and .policy.backoff.jitter == 0.1'
req DELETE /v1/retry-policy "$WKEY"
expect_http "DELETE the batch's override: 200, the config's policy again" 200 \
	'.base_delay_ms == 10 and .override == null'
req DELETE /v1/retry-policy "$WKEY"
expect_http "DELETE when there is none: 404" 404 '.error.code == "not_found"'

# --- a story's policy -----------------------------------------------------
req GET /v1/stories/nope/retry-policy "$RKEY"
expect_http "an unknown story: 404" 404 '.error.code == "not_found"'
put /v1/stories/nope/retry-policy "$WKEY" '{"max_retries": 0}'
expect_http "PUT on an unknown story: 404" 404 '.error.code == "not_found"'
req GET /v1/stories/s1/retry-policy "$RKEY"
expect_http "GET a story's policy" 200 '.scope == "story" and .story_id == "s1" and .max_retries == 2'

# A batch runs; its first attempt waits for $GO.  The override set
# meanwhile decides the decision after that attempt.
"$STORYCTL" -C "$P" run >"$T_TMP/run.out" 2>&1 &
RUN_PID=$!
for _ in $(seq 1 200); do
	[ "$(sql 'SELECT count(*) FROM attempts' 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
put /v1/stories/s1/retry-policy "$WKEY" '{"max_retries": 0}'
expect_http "PUT a story's override while its attempt runs" 200 \
	'.scope == "story" and .max_retries == 0 and .policy.max_attempts == 1'
touch "$GO"
for _ in $(seq 1 300); do kill -0 "$RUN_PID" 2>/dev/null || break; sleep 0.1; done
wait "$RUN_PID"
RUN_PID=
check "the running batch made one attempt only (max_retries 0)" \
	[ "$(sql "SELECT count(*) FROM attempts WHERE story_id = 's1'")" = 1 ]
DEC=$(sql "SELECT decision FROM attempts WHERE story_id = 's1'")
OUTC=$(sql "SELECT outcome FROM attempts WHERE story_id = 's1'")
jq '.policy.max_attempts = 1' "$P/storyctl.json" >"$T_TMP/one.json"
run_sc -C "$P" -c "$T_TMP/one.json" simulate --tasks 2 --json "$OUTC:0"
expect_json "simulate with the same policy decides the same ($DEC after $OUTC)" \
	".[0].decision == \"$DEC\""
run_sc -C "$P" log
expect_match "the event log says who set the override" "$T_OUT" \
	"retry-policy override of s1 set by key ci"
run_sc -C "$P" show s1 --json
expect_json "show --json carries the story's override" '.retry_policy_override == {"max_retries": 0}'
SHOW_JSON=$T_OUT
req GET /v1/stories/s1 "$RKEY"
check "GET /v1/stories/s1 is still show --json, override included" [ "$H_BODY" = "$SHOW_JSON" ]
run_sc -C "$P" show s1
expect_match "show prints the override" "$T_OUT" 'retry-policy override: \{"max_retries":0\}'
BRANCH=$(git -C "$P" show storyctl/state:stories/s1.json 2>/dev/null)
check "stories/s1.json on the state branch carries it" \
	jq -e '.retry_policy_override.max_retries == 0' <<<"$BRANCH"

req DELETE /v1/stories/s1/retry-policy "$WKEY"
expect_http "DELETE the story's override: 200, the batch's policy again" 200 '.max_retries == 2 and .override == null'
req DELETE /v1/stories/s1/retry-policy "$WKEY"
expect_http "DELETE it again: 404" 404 '.error.code == "not_found"'
run_sc -C "$P" log
expect_match "the event log says it was removed" "$T_OUT" "retry-policy override of s1 removed"
run_sc -C "$P" show s1 --json
expect_json "show --json has no override after DELETE" 'has("retry_policy_override") | not'
run_sc -C "$P" requeue s1
"$STORYCTL" -C "$P" run >"$T_TMP/run2.out" 2>&1
N=$(sql "SELECT count(*) FROM attempts WHERE story_id = 's1'")
check "without the override the story gets its attempts again ($N in all)" [ "$N" -gt 2 ]
check "and its agent is told {max_attempts} 3, the config's" \
	[ "$(tail -n 1 "$MAXLOG")" = "3 3" ]

# An override stored before a run is what {max_attempts} and the prompt
# say: the number the decisions use, not the config's.
put /v1/stories/s1/retry-policy "$WKEY" '{"max_retries": 1}'
expect_http "PUT a story override of 2 attempts" 200 '.policy.max_attempts == 2'
run_sc -C "$P" requeue s1
: >"$MAXLOG"
"$STORYCTL" -C "$P" run >"$T_TMP/run3.out" 2>&1
check "the agent is told {max_attempts} 2 on both of its attempts" \
	[ "$(cat "$MAXLOG")" = "$(printf '1 2\n2 2')" ]
finish
