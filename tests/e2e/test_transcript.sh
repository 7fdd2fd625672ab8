#!/bin/bash
# An attempt's transcript (docs/commands.md#show-attempt,
# docs/agents.md#transcript): what claude, codex and gemini really
# printed (tests/fixtures/agents/real/*-shell.txt, captured from the
# CLIs: a shell command that fails, the story edited) is played back
# through the built storyctl under each CLI's own preset, and
# `show STORY --attempt 1` names the command and its exit status, the
# file edited and the final message, as text and as JSON events; an
# attempt the story does not have is refused with a suggestion.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
SRV_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

dir="$STORYCTL_SRC/tests/fixtures/agents/real"
agent="$STORYCTL_SRC/tests/e2e/agents/replay-agent"
final='Ran the shell step; all tasks of the story are done and checked.'

for cli in claude codex gemini; do
	cmd=$(jq -cn --arg a "$agent" --arg f "$dir/$cli-shell.txt" '[$a, $f, "0", "checkall", "{story_file}"]')
	new_project '{"max_attempts": 2}' "$(jq -cn --arg p "$cli" --argjson c "$cmd" \
		'{primary: {preset: $p, command: $c, timeout_s: 60}}')"
	new_story "$P" s1 2
	commit_all
	run_sc -C "$P" run
	expect_rc "$cli: the replayed attempt is done" 0

	run_sc -C "$P" show s1 --attempt 1
	expect_rc "$cli: show --attempt 1" 0
	expect_match "$cli: the attempt's line first" "$T_OUT" "^s1 attempt 1 primary \\($cli\\): success 2/2 tasks"
	expect_match "$cli: the shell command the agent ran" "$T_OUT" "echo inside >ran-inside.txt"
	expect_match "$cli: the final message" "$T_OUT" "final: $final\$"
	expect_match "$cli: where to see the change" "$T_OUT" '^what it changed: storyctl diff s1 --attempt 1$'

	run_sc -C "$P" show s1 --attempt 1 --json
	expect_json "$cli: --json is an array of events, each with t and kind" \
		'type == "array" and all(.[]; (.t | type) == "number" and (.kind | IN("message", "tool_call", "tool_result", "error", "usage", "final")))'
	expect_json "$cli: a tool call with the shell command" \
		'any(.[]; .kind == "tool_call" and (.command // "" | contains("echo inside >ran-inside.txt")))'
	# the final message is the last event; its t is the line it came from
	expect_json "$cli: the final message last" \
		'(.[-1].kind == "final") and (.[-1].text == "'"$final"'") and ([.[] | select(.kind == "final")] | length == 1)'
	expect_json "$cli: the call before its result" \
		'([.[] | select(.kind == "tool_call" or .kind == "tool_result") | .kind] | .[0] == "tool_call")'
	expect_json "$cli: tokens reported" 'any(.[]; .kind == "usage" and .tokens_in > 0)'
done
# what only some CLIs report: claude and codex give the command's exit
# status (gemini says "success" whatever the command did); claude and
# gemini name the file they edited (codex edits through sed)
expect_json "gemini: the edit names its file" \
	'any(.[]; .kind == "tool_call" and .tool == "replace" and (.path | endswith("docs/stories/s1.md")))'
cmd=$(jq -cn --arg a "$agent" --arg f "$dir/claude-shell.txt" '[$a, $f, "0", "checkall", "{story_file}"]')
new_project '{"max_attempts": 2}' "$(jq -cn --argjson c "$cmd" '{primary: {preset: "claude", command: $c}}')"
new_story "$P" s1 2
commit_all
run_sc -C "$P" run
run_sc -C "$P" show s1 --attempt 1 --json
expect_json "claude: the failed shell step's exit status is 2" \
	'any(.[]; .kind == "tool_result" and .tool == "Bash" and .exit == 2)'
expect_json "claude: the Edit names the story file" \
	'any(.[]; .kind == "tool_call" and .tool == "Edit" and (.path | endswith("docs/stories/s1.md")))'
expect_json "claude: its cost" 'any(.[]; .kind == "usage" and .cost_usd > 0)'

run_sc -C "$P" show s1 --attempt 3
expect_rc "an attempt the story does not have: 64" 64
expect_match "with the attempts it has" "$T_ERR" "has no attempt 3; did you mean --attempt 1\\?"
run_sc -C "$P" show s1 --attempt x
expect_rc "--attempt takes a number" 64

# the same over HTTP (docs/api.md#attempts)
RKEY=$("$STORYCTL" -C "$P" key add reader 2>/dev/null)
serve_up || not_ok "serve started"
"$STORYCTL" -C "$P" show s1 --attempt 1 --json >"$T_TMP/cli.json"
req GET /v1/stories/s1/attempts/1/transcript "$RKEY"
check "GET .../attempts/1/transcript: 200 ($H_CODE)" [ "$H_CODE" = 200 ]
check "... its events are show --attempt 1 --json's" \
	bash -c 'jq -e --slurpfile c "$2" ".events == \$c[0] and .omitted == 0 and .attempt == 1 and .story == \"s1\"" "$1" >/dev/null' _ "$T_TMP/body" "$T_TMP/cli.json"
req GET '/v1/stories/s1/attempts/1/transcript?format=text' "$RKEY"
"$STORYCTL" -C "$P" show s1 --attempt 1 | sed -e '1,2d' -e '$d' -e 's/^  \[/[/' >"$T_TMP/cli.txt"
check "... ?format=text: show's lines, text/plain" \
	bash -c 'cmp -s "$1" "$2" && grep -qi "^content-type: text/plain" "$3"' _ "$T_TMP/body" "$T_TMP/cli.txt" "$T_TMP/head"
req GET /v1/stories/s1/attempts/1/diff "$RKEY"
check "GET .../attempts/1/diff: 200, what diff prints ($H_CODE)" \
	bash -c '[ "$1" = 200 ] && "$STORYCTL" -C "$3" diff s1 --attempt 1 | cmp -s - "$2"' _ "$H_CODE" "$T_TMP/body" "$P"
req GET /v1/stories/s1/attempts/7/transcript "$RKEY"
check "an attempt there is none of: 404 ($H_CODE)" [ "$H_CODE" = 404 ]
req GET /v1/stories/s1/attempts/0/diff "$RKEY"
check "attempt 0: 400 bad_attempt ($H_CODE)" \
	bash -c '[ "$1" = 400 ] && jq -e ".error.code == \"bad_attempt\"" "$2" >/dev/null' _ "$H_CODE" "$T_TMP/body"
req GET /v1/stories/s1/attempts/1/transcript ""
check "no key: 401 ($H_CODE)" [ "$H_CODE" = 401 ]
finish
