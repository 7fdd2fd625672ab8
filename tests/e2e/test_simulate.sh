#!/bin/bash
# storyctl simulate and the command line basics (docs/commands.md).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP"

run_sc simulate --json incomplete:5 crash:4 incomplete:5 incomplete:5
expect_rc "simulate worked example exits 0" 0
expect_json "worked example roles alternate" \
	'[.[].role] == ["primary","fallback","primary","fallback"]'
expect_json "worked example decisions end in defer" \
	'[.[].decision] == ["retry","retry","retry","defer"]'
expect_json "simulate json has every field" \
	'all(.[]; has("attempt") and has("role") and has("outcome") and has("tasks_completed") and has("decision") and has("reason") and has("delay_ms") and has("timeout_factor") and has("poll_factor"))'
expect_json "defer reason names the plateau" \
	'.[3].reason | test("plateau confirmed at 5/9 by primary \\(a3\\) and fallback \\(a4\\)")'

run_sc simulate --json usage_limit success
expect_json "uncounted row keeps its attempt number" '[.[].attempt] == [1,1]'
expect_json "usage limit waits" '.[0].decision == "wait"'

run_sc simulate --json --tasks 4 incomplete:1 incomplete:3
expect_json "D10 doubles the poll interval" '.[1].poll_factor == 2 and .[1].timeout_factor == 1'
run_sc simulate --json incomplete:5 crash:4 incomplete:3 incomplete:6
expect_json "D9 extends the timeout" '.[3].timeout_factor == 2'
run_sc simulate --json network
expect_json "network sleeps 60 s" '.[0].delay_ms == 60000'
run_sc simulate --json crash crash
expect_json "backoff delays before jitter" '[.[].delay_ms] == [1000,2000]'

run_sc simulate incomplete:5 crash:4 incomplete:5 incomplete:5
expect_rc "simulate table exits 0" 0
expect_match "table shows the defer" "$T_OUT" 'defer +- +D8'

run_sc simulate bogus:3
expect_rc "bad outcome exits 64" 64
expect_match "bad token is named" "$T_ERR" "^storyctl: .*'bogus:3'"
run_sc simulate incomplete:12
expect_rc "tasks above the total exit 64" 64
run_sc simulate --tasks 0 crash
expect_rc "--tasks 0 exits 64" 64
run_sc simulate
expect_rc "no token exits 64" 64

run_sc --version
expect_match "--version prints the version" "$T_OUT" '^storyctl [0-9]+\.[0-9]+'
run_sc --help
expect_rc "--help exits 0" 0
expect_match "--help lists commands" "$T_OUT" 'simulate'
run_sc simulate --help
expect_match "command --help" "$T_OUT" 'usage: storyctl .*simulate'
run_sc frobnicate
expect_rc "unknown command exits 64" 64

# The configured policy is used: one agent, max_attempts 3.
mkdir -p cfg && cat >cfg/storyctl.json <<'JSON'
{"agents": {"primary": {"command": ["true"]}},
 "policy": {"max_attempts": 3}}
JSON
run_sc -C cfg simulate --json crash:1 crash:1 crash:1
expect_json "config policy used (single agent, 3 attempts)" \
	'[.[].role] == ["primary","primary","primary"] and .[2].decision == "defer"'
finish
