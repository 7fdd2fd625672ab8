#!/bin/bash
# storyctl stats and GET /v1/stats (docs/stats.md): a batch of the
# simulated agent with known outcomes (a network failure then success, a
# rate limit with a hint then success, a plateau deferred at 2/4, a
# first-try success, costs), every figure asserted exactly but the run
# times; --batch, --all over a second batch; the service answers the
# same bytes.  Only 127.0.0.1, every wait bounded.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SRV_PID=
SRV_PORT=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

new_project
new_story "$P" s1 2 '<!-- sim a1: network -->' '<!-- sim a2: checkall; cost 0.25 -->'
new_story "$P" s2 4 '<!-- sim *: check 2; cost 0.125 -->'
new_story "$P" s3 1 '<!-- sim a1: ratelimit 1 -->' '<!-- sim a2: checkall -->'
new_story "$P" s4 1 '<!-- sim a1: checkall; cost 0.5 -->'
commit_all

run_sc -C "$P" stats --json
expect_rc "stats before any batch: exit 0" 0
expect_json "before any batch: no batch, no attempts" \
	'.format_version == 1 and .batch == null and .attempts.total == 0 and .plateaus == []'

run_sc -C "$P" run
expect_rc "the batch ends with a story not done (exit 3)" 3

run_sc -C "$P" stats --json
expect_rc "stats --json: exit 0" 0
J=$T_OUT
expect_json "format_version is the first key" '(keys_unsorted | .[0]) == "format_version" and .format_version == 1'
expect_json "scope: the latest batch" '.scope == "batch" and .batch == 1 and .batches == 1'
expect_json "attempts: 9 ended, all counted, 3 succeeded, none running" \
	'.attempts.total == 9 and .attempts.counted == 9 and .attempts.success == 3 and .attempts.running == 0'
expect_json "attempts per role: primary 5 (1 success), fallback 4 (2)" \
	'.attempts.by_role.primary.attempts == 5 and .attempts.by_role.primary.success == 1 and .attempts.by_role.fallback.attempts == 4 and .attempts.by_role.fallback.success == 2'
expect_json "attempts per agent: sim-p 5, sim-f 4" \
	'[.attempts.by_agent[] | [.agent, .attempts, .success]] == [["sim-p", 5, 1], ["sim-f", 4, 2]]'
expect_json "success by attempt number: 1/4, 2/3, 0/1, 0/1" \
	'[.success.by_attempt[] | [.attempt, .tries, .success]] == [[1, 4, 1], [2, 3, 2], [3, 1, 0], [4, 1, 0]] and .success.by_attempt[0].rate == 0.25 and .success.by_attempt[1].rate == 0.6667'
expect_json "stories: 4, 3 done, 1 first try, 2 after retries" \
	'.success.stories == 4 and .success.done == 3 and .success.first_try == 1 and .success.after_retries == 2 and .success.first_try_rate == 0.25 and .success.done_rate == 0.75'
expect_json "recovery: the network and the rate-limit failure both recovered" \
	'.recovery.failures == 2 and .recovery.recovered == 2 and .recovery.rate == 1 and .recovery.by_outcome.network.recovered == 1 and .recovery.by_outcome.rate_limit.recovered == 1 and .recovery.by_outcome.timeout.rate == null'
expect_json "delays: network_sleep_s 200 ms, the rate limit's Retry-After 1 s, backoff 3 x 10 ms" \
	'.delays.network == {"count": 1, "total_ms": 200, "mean_ms": 200, "p50_ms": 200, "p95_ms": 200, "max_ms": 200} and .delays.rate_limit.count == 1 and .delays.rate_limit.p95_ms == 1000 and .delays.backoff.count == 3 and .delays.backoff.total_ms == 30 and .delays.backoff.p50_ms == 10 and .delays.usage_limit.count == 0'
expect_json "error codes by count, with their class" \
	'[.error_codes[] | [.code, .count, .class]] == [["INCOMPLETE", 4, "other"], ["NETWORK_ERROR", 1, "transient"], ["RATE_LIMIT", 1, "transient"]]'
expect_json "time lost: 1230 ms of waits, 1000 ms for limits" \
	'.time_lost.waits_ms == 1230 and .time_lost.limit_waits_ms == 1000 and .time_lost.total_ms == .time_lost.waits_ms + .time_lost.limit_runs_ms and .time_lost.stops == 0'
expect_json "cost: 1.25 in all; per agent and per story" \
	'.cost.cost_usd == 1.25 and ([.cost.by_agent[] | [.agent, .cost_usd]] == [["sim-p", 0.75], ["sim-f", 0.5]]) and ([.cost.by_story[] | [.story, .attempts, .cost_usd]] == [["s2", 4, 0.5], ["s4", 1, 0.5], ["s1", 2, 0.25], ["s3", 2, 0]])'
expect_json "the plateau: s2 deferred after attempt 4 at 2/4 by both agents" \
	'.plateaus == [{"batch": 1, "story": "s2", "attempt": 4, "tasks_completed": 2, "tasks_total": 4, "agents": ["sim-f", "sim-p"]}]'
expect_json "the figures agree with the database" \
	"$(printf '.attempts.total == %s and .cost.cost_usd == %s' "$(sql 'SELECT count(*) FROM attempts')" "$(sql 'SELECT sum(cost_usd) FROM attempts')")"

run_sc -C "$P" stats
expect_rc "stats (text): exit 0" 0
expect_match "text: the head line" "$T_OUT" '^batch 1'
expect_match "text: per agent" "$T_OUT" 'sim-p +5 +5 +1 '
expect_match "text: success by attempt number" "$T_OUT" $'\n''2 +3 +2 +66\.7%'
expect_match "text: recovery" "$T_OUT" 'transient failures: 2, recovered 2 \(100\.0%\): network 1/1, rate_limit 1/1'
expect_match "text: delays by cause" "$T_OUT" 'rate_limit +1 +1s +1s +1s'
expect_match "text: the plateau" "$T_OUT" 'plateau: s2 \(batch 1\) deferred after attempt 4 at 2/4 tasks \(sim-f, sim-p\)'
expect_match "text: cost" "$T_OUT" 'cost: \$1\.25; dearest stories: s2 \$0\.50, s4 \$0\.50'

run_sc -C "$P" stats --batch 1 --json
check "--batch 1 is the latest batch's figures" test "$T_OUT" = "$J"
run_sc -C "$P" stats --batch 7
expect_rc "--batch of no batch: exit 64" 64
expect_match "... naming it" "$T_ERR" 'no batch 7'
run_sc -C "$P" stats --batch x
expect_rc "--batch x: exit 64" 64
run_sc -C "$P" stats --batch 1 --all
expect_rc "--batch with --all: exit 64" 64
run_sc -C "$P" stats --bogus
expect_rc "an unknown option: exit 64" 64

# a second batch: s2 alone plateaus again
run_sc -C "$P" run s2
expect_rc "a second batch of s2 alone (exit 3)" 3
run_sc -C "$P" stats --json
expect_json "the latest batch is now 2, with s2's 4 attempts only" \
	'.batch == 2 and .attempts.total == 4 and .cost.cost_usd == 0.5 and (.plateaus | length) == 1 and .plateaus[0].batch == 2'
run_sc -C "$P" stats --all --json
ALL=$T_OUT
expect_json "--all: both batches, s2's cost summed over them" \
	'.scope == "all" and .batch == null and .batches == 2 and .attempts.total == 13 and .cost.by_story[0] == {"story": "s2", "attempts": 8, "cost_usd": 1.0} and ([.plateaus[].batch] == [1, 2])'

# the service answers the same bytes
KEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
serve_up || not_ok "serve started"
get() {
	H_CODE=$(curl -s --max-time 20 -o "$T_TMP/body" -w '%{http_code}' \
		-H "X-API-Key: $KEY" "http://127.0.0.1:$SRV_PORT$1")
}
"$STORYCTL" -C "$P" stats --json >"$T_TMP/cli.json"
get /v1/stats
check "GET /v1/stats: 200" test "$H_CODE" = 200
check "GET /v1/stats is stats --json, byte for byte" cmp -s "$T_TMP/body" "$T_TMP/cli.json"
"$STORYCTL" -C "$P" stats --batch 1 --json >"$T_TMP/cli1.json"
get '/v1/stats?batch=1'
check "GET /v1/stats?batch=1 is stats --batch 1 --json" cmp -s "$T_TMP/body" "$T_TMP/cli1.json"
printf '%s\n' "$ALL" >"$T_TMP/cliall.json"
get '/v1/stats?all=1'
check "GET /v1/stats?all=1 is stats --all --json" cmp -s "$T_TMP/body" "$T_TMP/cliall.json"
get '/v1/stats?batch=9'
check "no such batch: 404 not_found" test "$H_CODE" = 404 -a "$(jq -r .error.code "$T_TMP/body")" = not_found
get '/v1/stats?batch=x'
check "a bad batch: 400 bad_query" test "$H_CODE" = 400 -a "$(jq -r .error.code "$T_TMP/body")" = bad_query
get '/v1/stats?batch=1&all=1'
check "batch and all: 400 bad_query" test "$H_CODE" = 400
H_CODE=$(curl -s --max-time 20 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SRV_PORT/v1/stats")
check "no key: 401" test "$H_CODE" = 401
finish
