#!/bin/bash
# What the real agent CLIs print, read right (issue 12, docs/classification.md): every
# fixture captured from claude, codex and gemini by the conformance suite
# (tests/agents/run.sh; tests/fixtures/agents/real/INDEX.tsv says which
# scenario each is) is played back by tests/e2e/agents/replay-agent under
# the CLI's own preset, through the built storyctl, and attempt 1's
# outcome, error code and decision must be what the live run gave.
# The attempt's session id must be the one the CLI printed (issue 12:
# show --json, the text show and the state branch's stories/s1.json).
# Waits are asserted only where they do not depend on when the fixture
# was captured (a reset time in the output is an absolute time).  An
# exit "hang" is a CLI that was still retrying when stall_timeout_s ended
# it (gemini retries rate limits itself for minutes): the replay stays
# silent until storyctl kills it too.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
. "$STORYCTL_SRC/tests/e2e/lib_ps.sh"

dir="$STORYCTL_SRC/tests/fixtures/agents/real"
agent="$STORYCTL_SRC/tests/e2e/agents/replay-agent"
n=0
while IFS=$'\t' read -r fixture cli version scenario code effect outcome ecode decision wmin wmax; do
	case $fixture in fixture | '#'*) continue ;; esac
	[ "$ecode" = - ] && ecode= # "-": none (read collapses empty fields)
	n=$((n + 1))
	cmd=$(jq -cn --arg a "$agent" --arg f "$dir/$fixture" --arg c "$code" --arg e "$effect" \
		'[$a, $f, $c, $e, "{story_file}"]')
	new_project '{"max_attempts": 3, "network_sleep_s": 30}' "$(jq -cn --arg p "$cli" --argjson c "$cmd" \
		'{primary: {preset: $p, command: $c, timeout_s: 60, stall_timeout_s: 1}}')"
	new_story "$P" s1 2
	commit_all
	start_bg run
	# attempt 1 decided: then stop the night (its next wait may be long)
	decided() { [ -n "$(sql "SELECT outcome FROM attempts WHERE seq = 1 AND outcome != 'running'" 2>/dev/null)" ] || ! alive "$BG"; }
	wait_for 30 decided
	kill -TERM "$BG" 2>/dev/null
	wait_bg 10
	T_OUT=$("$STORYCTL" -C "$P" show s1 --json | jq -c '.attempts[0] // {}')
	expect_json "$fixture ($cli $version, $scenario): $outcome ${ecode:-} $decision" \
		"(.outcome == \"$outcome\") and ((.error_code // \"\") == \"${ecode:-}\") and ((.decision // \"\") == \"$decision\")"
	if [ "$wmin" != - ]; then
		expect_json "$fixture: wait $wmin..$wmax s" \
			".delay_ms >= $wmin * 1000 and .delay_ms <= $wmax * 1000"
	fi
	# the agent's session id (claude's and gemini's session_id, codex's
	# thread_id), the newest printed; null when the CLI printed none
	sid=$(grep -o '"\(session_id\|thread_id\)":"[^"]*"' "$dir/$fixture" | tail -n1 | sed 's/^.*":"//; s/"$//')
	expect_json "$fixture: session id ${sid:-null}" \
		"$(jq -cn --arg s "$sid" 'if $s == "" then "null" else ($s | tojson) end' -r) == .session_id"
	if [ "$fixture" = claude-success.txt ]; then
		run_sc -C "$P" show s1
		expect_match "$fixture: show names the session" "$T_OUT" "^ +session: $sid\$"
		check "$fixture: the state branch's story has the session id" bash -c \
			'git -C "$1" show storyctl/state:stories/s1.json | jq -e --arg s "$2" ".attempts[0].session_id == \$s" >/dev/null' _ "$P" "$sid"
	fi
done <"$dir/INDEX.tsv"
check "every fixture of INDEX.tsv was replayed ($n)" [ "$n" -ge 30 ]

# codex prints its thread id once, first: 100 KiB of output after it push
# it out of the 64 KiB tail, and the log's head still gives it.
cmd=$(jq -cn --arg a "$agent" --arg f "$dir/codex-success.txt" '[$a, $f, "0", "checkall", "{story_file}"]')
line=$(grep -n '"thread_id"' "$dir/codex-success.txt" | head -n1 | cut -d: -f1)
new_project '{"max_attempts": 3}' "$(jq -cn --argjson c "$cmd" --arg l "$line" \
	'{primary: {preset: "codex", command: $c, timeout_s: 60,
	  env: {REPLAY_FILLER_KB: "100", REPLAY_FILLER_AFTER: $l}}}')"
new_story "$P" s1 2
commit_all
run_sc -C "$P" run
sid=$(grep -o '"thread_id":"[^"]*"' "$dir/codex-success.txt" | head -n1 | sed 's/^.*":"//; s/"$//')
T_OUT=$("$STORYCTL" -C "$P" show s1 --json | jq -c '.attempts[0] // {}')
expect_json "codex's thread id survives 100 KiB of output after it ($sid)" \
	"(.outcome == \"success\") and .session_id == \"$sid\""
check "every fixture file is in INDEX.tsv" \
	[ "$(find "$dir" -maxdepth 1 -name '*.txt' | wc -l)" = "$(grep -c '\.txt' "$dir/INDEX.tsv")" ]

finish
