#!/bin/bash
# Dead ends stopped when the output shows them, not at timeout_s
# (issue 31; docs/classification.md#dead-ends): an agent that keeps
# reconnecting to an API it cannot reach ends as `network` after
# network_stall_s; one that announces a wait longer than max_wait_s ends
# at once, read as the limit it announced; an agent that was offline
# for a moment and got through is not ended.  Each measured from outside:
# how long the attempt lasted, with timeout_s 30.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
. "$STORYCTL_SRC/tests/e2e/lib_ps.sh"
sim="$STORYCTL_SRC/scripts/sim-agent"
one_agent=$(jq -cn --arg s "$sim" \
	'{primary: {name: "sim-p", command: [$s, "{role}", "{attempt}", "{story_file}", "{prompt}"], timeout_s: 30}}')

# ---- offline: codex's words, again and again ----
new_project '{"max_attempts": 1, "network_stall_s": 1}'
new_story "$P" s1 2 '<!-- sim *: say Reconnecting... waiting for network (Connection failed: error sending request); sleep 0.3; say Reconnecting... waiting for network (Connection failed: error sending request); hang -->'
commit_all
t0=$(now_ms)
run_sc -C "$P" run
el=$(($(now_ms) - t0))
said=$T_OUT
expect_rc "offline: the story ends escalated (exit 3)" 3
check "offline: the attempt ended within network_stall_s and a few polls, not at timeout_s 30 (took ${el} ms)" \
	[ "$el" -lt 10000 ]
T_OUT=$(sql "SELECT outcome || '|' || error_code || '|' || counted FROM attempts")
expect_match "offline: the attempt is network NETWORK_ERROR, counted" \
	"$T_OUT" '^network\|NETWORK_ERROR\|1$'
expect_match "offline: run says why it was ended" "$said" \
	'nothing but a network failure for 1s \(network_stall_s\): ended'

# ---- offline a moment, then at work: not ended ----
new_project '{"max_attempts": 1, "network_stall_s": 1}'
new_story "$P" s1 2 '<!-- sim *: say Reconnecting... waiting for network; sleep 0.3; say Connected; sleep 2; checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "back online: the story is done (exit 0)" 0
check "back online: one attempt, a success" \
	[ "$(sql "SELECT group_concat(outcome) FROM attempts")" = success ]

# ---- a wait announced over max_wait_s: gemini's words ----
# one agent: paused past max_wait_s, the batch stops at once (D3)
new_project '{"max_attempts": 3, "max_wait_s": 60}' "$one_agent"
new_story "$P" s1 2 '<!-- sim *: say Attempt 1 failed: You have exhausted your capacity on this model.; say Your quota will reset after 8h44m7s.. Retrying after 35606439ms...; hang -->'
commit_all
t0=$(now_ms)
run_sc -C "$P" run
el=$(($(now_ms) - t0))
said=$T_OUT
rc=$T_RC
check "announced: the attempt ended at once, not at timeout_s 30 (took ${el} ms)" \
	[ "$el" -lt 10000 ]
T_OUT=$(sql "SELECT outcome || '|' || error_code || '|' || counted FROM attempts ORDER BY seq LIMIT 1")
expect_match "announced: read as the usage limit it announced, not counted" \
	"$T_OUT" '^usage_limit\|USAGE_LIMIT\|0$'
T_RC=$rc
expect_rc "announced: the reset is past max_wait_s: the batch stops, resumable (exit 75)" 75
expect_match "announced: run says why it was ended" "$said" \
	'announced a wait of 31447s, longer than max_wait_s \(60s\): ended'

finish
