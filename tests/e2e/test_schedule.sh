#!/bin/bash
# The batch scheduler (docs/scheduling.md): dependency order, the dependency's
# result in the prompt, cycles, blocked and requeued dependents, the batch
# breaker, usage-limit pauses and cost budgets.
. "$(dirname "$0")/lib.sh"

# --- order and the dependency's result ---------------------------------------
STORIES_JSON='"stories": [{"file": "docs/stories/api.md", "depends_on": ["schema"], "include_dependency_result": true}, "docs/stories/schema.md", "docs/stories/docs.md"]' \
	new_project
new_story "$P" api 2 '<!-- sim *: saveprompt; checkall -->'
new_story "$P" schema 2 '<!-- sim *: checkall; say Final: created the widgets table with columns id, name, price -->'
new_story "$P" docs 1 '<!-- sim *: saveprompt; checkall -->'
commit_all
run_sc -C "$P" check
expect_rc "check accepts dependencies" 0
expect_match "check prints the run order (dependency first)" "$T_OUT" '1 +schema'
run_sc -C "$P" run
expect_rc "batch with a dependency exits 0" 0
order=$(sql "SELECT group_concat(story_id, ' ') FROM (SELECT story_id FROM attempts ORDER BY id)")
check "the dependency runs first, otherwise config order" test "$order" = "schema api docs"
pr=$(cat "$P/.git/prompt.api.a1")
expect_match "the prompt carries the dependency's result" "$pr" 'Final: created the widgets table'
expect_match "the result is labelled [Previous step result]:" "$pr" '^\[Previous step result\]:'
expect_match "then [Current task]:" "$pr" '\[Current task\]:'
check "a story without include_dependency_result gets no such block" bash -c '! grep -q "Previous step result" "$1"' _ "$P/.git/prompt.docs.a1"

# --- cycles and unknown dependencies -------------------------------------------
STORIES_JSON='"stories": [{"file": "docs/stories/xx.md", "depends_on": ["yy"]}, {"file": "docs/stories/yy.md", "depends_on": ["xx"]}]' \
	new_project
new_story "$P" xx 1
new_story "$P" yy 1
run_sc -C "$P" check
expect_rc "a cycle is bad data (65)" 65
expect_match "the cycle is named" "$T_ERR" 'dependency cycle: xx -> yy -> xx'
run_sc -C "$P" run
expect_rc "run refuses a cycle before anything runs" 65
check "nothing ran" test ! -e "$P/.storyctl/state.db"
STORIES_JSON='"stories": [{"file": "docs/stories/xx.md", "depends_on": ["nope"]}]' new_project
new_story "$P" xx 1
run_sc -C "$P" check
expect_rc "an unknown dependency is bad data (65)" 65
expect_match "the unknown id is named" "$T_ERR" 'nope'

# --- blocked, then requeued with the dependency ---------------------------------
STORIES_JSON='"stories": ["docs/stories/base.md", {"file": "docs/stories/top.md", "depends_on": ["base"]}, {"file": "docs/stories/roof.md", "depends_on": ["top"]}, "docs/stories/free.md"]' \
	new_project
new_story "$P" base 9 '<!-- sim *: check 5 -->'
new_story "$P" top 1 '<!-- sim *: checkall -->'
new_story "$P" roof 1 '<!-- sim *: checkall -->'
new_story "$P" free 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "a blocked story makes the batch exit 3" 3
run_sc -C "$P" list --json
expect_json "dependency deferred" '.[] | select(.id=="base") | .status == "deferred"'
expect_json "dependent blocked, naming the dependency" '.[] | select(.id=="top") | .status == "blocked" and (.reason | test("base"))'
expect_json "blocked transitively" '.[] | select(.id=="roof") | .status == "blocked" and (.reason | test("top"))'
expect_json "an independent story still runs" '.[] | select(.id=="free") | .status == "done"'
check "a blocked story never ran" test "$(sql "SELECT count(*) FROM attempts WHERE story_id IN ('top','roof')")" = 0
sed -i 's/<!-- sim \*: check 5 -->/<!-- sim *: checkall -->/' "$P/docs/stories/base.md"
run_sc -C "$P" requeue base
expect_rc "requeue the dependency" 0
run_sc -C "$P" list --json
expect_json "its blocked dependents are pending again" '[.[] | select(.id=="top" or .id=="roof") | .status] == ["pending","pending"]'
run_sc -C "$P" resume
expect_rc "resume runs the chain" 0
run_sc -C "$P" list --json
expect_json "the whole chain is done" 'all(.[]; .status == "done")'

# --- the batch breaker ------------------------------------------------------------
EXTRA_JSON='"breaker": {"after": 2, "cooldown_s": 0.3},' new_project '{"max_attempts": 1}'
for s in n1 n2 n3 n4; do new_story "$P" "$s" 2 '<!-- sim *: network -->'; done
commit_all
run_sc -C "$P" run
expect_rc "breaker open stops the batch (75)" 75
expect_match "the pause is announced" "$T_OUT" 'breaker: 2 stories in a row ended with zero progress'
expect_match "the stop says why" "$T_OUT" 'breaker open'
run_sc -C "$P" list --json
expect_json "the counted stories and the probe are pending again" '[.[] | select(.status == "pending") | .id] == ["n1","n2","n3","n4"]'
expect_json "their history is kept" '[.[] | .attempts] == [1,1,1,0]'
check "the fourth story never ran" test "$(sql "SELECT count(*) FROM attempts WHERE story_id = 'n4'")" = 0
run_sc -C "$P" log --json
T_OUT=$(jq -s . <<<"$T_OUT") # JSON lines, one event each
expect_json "the breaker is in the event log" 'any(.[]; .kind == "breaker")'
for s in n1 n2 n3 n4; do sed -i 's/<!-- sim \*: network -->/<!-- sim *: checkall -->/' "$P/docs/stories/$s.md"; done
run_sc -C "$P" resume
expect_rc "resume after the outage finishes the batch" 0
run_sc -C "$P" show n1 --json
expect_json "a requeued story starts its attempt budget again" '(.attempts | length) == 2 and .attempts[1].attempt == 2 and .status == "done"'

# --- usage limit: the wait is visible in status ------------------------------------
# (8 s: the status below must see the pause before it ends, on a loaded
# CI machine too)
new_project '{"max_wait_s": 8}'
new_story "$P" u1 1 "<!-- sim a1: once usage $(( $(date +%s) + 8 )); checkall -->"
commit_all
"$STORYCTL" -C "$P" run >"$T_TMP/u.out" 2>&1 &
bg=$!
seen=0
seen_text=0
seen_next=0
# both views while the pause lasts (a loaded machine may see the JSON one
# just before the wait ends: then look again)
for _ in $(seq 1 100); do
	if [ "$seen" = 0 ] && "$STORYCTL" -C "$P" status --json 2>/dev/null | jq -e '.paused.primary != null' >/dev/null 2>&1; then
		seen=1
	fi
	# the wait is the decision stored with attempt 1: the same number again
	if [ "$seen_next" = 0 ] && "$STORYCTL" -C "$P" status --json 2>/dev/null | jq -e '.next_wait.story == "u1" and .next_wait.attempt == 1' >/dev/null 2>&1; then
		seen_next=1
	fi
	if [ "$seen_text" = 0 ]; then
		"$STORYCTL" -C "$P" status >"$T_TMP/u.status" 2>&1
		grep -Eq 'primary agent paused by its usage limit until [0-9T:-]+Z' "$T_TMP/u.status" && seen_text=1
	fi
	[ "$seen" = 1 ] && [ "$seen_text" = 1 ] && [ "$seen_next" = 1 ] && break
	sleep 0.1
done
check "status --json shows the agent paused by its usage limit" test "$seen" = 1
check "status shows the wait and its end" test "$seen_text" = 1
check "status --json names the stored next attempt (the same number after a usage limit)" test "$seen_next" = 1
wait "$bg"
check "the story finishes after the reset" test "$(sql "SELECT status FROM stories WHERE id='u1'")" = done

# --- cost: recorded, shown, budgets enforced ---------------------------------------
EXTRA_JSON='"budget": {"max_cost_usd": 1.0},' new_project
new_story "$P" c1 1 '<!-- sim *: checkall; cost 0.6 -->'
new_story "$P" c2 1 '<!-- sim *: checkall; cost 0.6 -->'
new_story "$P" c3 1 '<!-- sim *: checkall; cost 0.6 -->'
commit_all
run_sc -C "$P" run
expect_rc "the batch budget stops the batch (75)" 75
expect_match "the summary shows the spend" "$T_OUT" '\$1\.2000 spent'
expect_match "the stop names the budget" "$T_OUT" 'budget.max_cost_usd reached'
run_sc -C "$P" status --json
expect_json "status --json cost_usd" '.cost_usd > 1.19 and .cost_usd < 1.21'
run_sc -C "$P" list --json
expect_json "no new attempt after the budget: the rest stay pending" '(.[] | select(.id=="c3") | .status) == "pending"'
run_sc -C "$P" show c1 --json
expect_json "cost recorded per attempt" '.attempts[0].cost_usd > 0.59 and .cost_usd > 0.59'
run_sc -C "$P" list
expect_match "list shows the cost" "$T_OUT" 'c1 +done +1 +1/1 +0/1 +\$0\.60'
run_sc -C "$P" resume
expect_rc "resume with the budget still spent stops again (75)" 75
jq '.budget.max_cost_usd = 5' "$P/storyctl.json" >"$P/cfg.tmp" && mv "$P/cfg.tmp" "$P/storyctl.json"
run_sc -C "$P" resume
expect_rc "resume after raising the budget finishes" 0
check "no attempt was lost or doubled" test "$(sql "SELECT group_concat(story_id || ':' || attempt, ' ') FROM (SELECT * FROM attempts ORDER BY id)")" = "c1:1 c2:1 c3:1"

EXTRA_JSON='"budget": {"story_max_cost_usd": 1.0},' new_project
new_story "$P" sc 4 '<!-- sim a1: check 1; cost 0.5 -->' '<!-- sim *: check 2; cost 0.5 -->'
commit_all
run_sc -C "$P" run
run_sc -C "$P" show sc --json
expect_json "the story budget ends the story like used-up attempts" '(.attempts | length) == 2 and .status == "escalated" and (.attempts[1].reason | test("cost budget"))'

# a story left pending shows its next attempt as the last decision stored it
EXTRA_JSON='"budget": {"max_cost_usd": 0.5},' new_project
new_story "$P" nx 2 '<!-- sim a1: check 1; cost 0.6 -->' '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "the budget stops the batch after the first attempt (75)" 75
run_sc -C "$P" show nx
expect_match "show names the stored next attempt and its agent" "$T_OUT" '^next: attempt 2 \(fallback\)( not before [0-9T:.-]+Z)?$'
check "show's next attempt is the one stored with the decision" test "$(sql "SELECT next_attempt || '/' || next_role FROM attempts WHERE story_id='nx'")" = "2/fallback"
jq '.budget.max_cost_usd = 5' "$P/storyctl.json" >"$P/cfg.tmp" && mv "$P/cfg.tmp" "$P/storyctl.json"
run_sc -C "$P" resume
expect_rc "resume after raising the budget finishes" 0
check "the next attempt ran as stored" test "$(sql "SELECT group_concat(attempt || role, ' ') FROM (SELECT * FROM attempts WHERE story_id='nx' ORDER BY id)")" = "1primary 2fallback"
run_sc -C "$P" show nx
check "a finished story shows no next attempt" bash -c '! printf "%s" "$1" | grep -q "^next:"' _ "$T_OUT"
finish
