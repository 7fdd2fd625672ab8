#!/bin/bash
# Control characters from agent output (issue 11, docs/reliability.md):
# C1 controls in UTF-8 (U+0080..U+009F, e.g. C2 9B, the one-byte CSI,
# and C2 85, NEL), raw ESC sequences and DEL never reach `show`,
# `show --json`, the database or the state branch.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

C1_CSI=$'\xc2\x9b'
C1_NEL=$'\xc2\x85'
ESC=$'\x1b'
DEL=$'\x7f'
new_project '{"max_attempts": 3}'
new_story "$P" s1 2 \
	"<!-- sim a1: err connect ECONNREFUSED boom ${C1_CSI}31m red ${C1_NEL}next ${ESC}[2J${DEL}end; exit 1 -->" \
	'<!-- sim *: say {"type":"result","subtype":"success","is_error":false,"result":"done \u009b31m here \u0085 there \u001b[1m"}; checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "the story finishes" 0

has_controls() {
	# C1 as UTF-8, ESC, DEL: any of them is a failure
	LC_ALL=C grep -q -P '\xc2[\x80-\x9f]|\x1b|\x7f'
}
no_controls() {
	if printf '%s' "$2" | has_controls; then
		not_ok "$1"
		printf '%s' "$2" | LC_ALL=C grep -n -P '\xc2[\x80-\x9f]|\x1b|\x7f' | cat -v | head -3 | sed 's/^/# /'
	else
		ok "$1"
	fi
}
run_sc -C "$P" show s1 --json
T_JSON=$T_OUT
expect_json "attempt 1's message keeps the visible words" \
	'.attempts[0].error_message | test("boom") and test("red") and test("next") and test("end")'
no_controls "show --json has no control characters (decoded)" \
	"$(printf '%s' "$T_JSON" | jq -r '.. | strings')"
no_controls "show --json has no control characters (raw)" "$T_JSON"
run_sc -C "$P" show s1
no_controls "show has no control characters" "$T_OUT"
no_controls "the database has none" "$(sqlite3 "$P/.storyctl/state.db" .dump)"
no_controls "the state branch has none" \
	"$(git -C "$P" log -p storyctl/state | grep -v '^\(commit\|Author\|Date\)')"
T_OUT=$(sqlite3 "$P/.storyctl/state.db" "SELECT result_text FROM attempts WHERE result_text IS NOT NULL")
expect_match "the final message is kept, cleaned" "$T_OUT" 'done 31m here +there'

finish
