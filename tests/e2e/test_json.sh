#!/bin/bash
# Every --json output (docs/json.md): it parses, it carries
# format_version (the object, or each element of an array); status lists
# every running story; list has the file and the cost; init --json; the
# list table sized to its ids (docs/commands.md#list).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
. "$(dirname "$0")/lib_ps.sh"

# versioned NAME: the last stdout parses and carries format_version 1 at
# its top (an object) or in every element (an array).
versioned() {
	expect_json "$1: parses, format_version 1" \
		'if type == "array" then (length > 0 and all(.[]; .format_version == 1)) else .format_version == 1 end'
}

# --- init --json: what it found and wrote -------------------------------------
P=$(new_repo)
mkdir -p "$P/docs/stories"
printf '# A\n\n## Tasks\n\n- [ ] one\n' >"$P/docs/stories/a.md"
printf '# B\n\n## Tasks\n\n- [ ] one\n' >"$P/docs/stories/b.md"
run_sc -C "$P" init --json
expect_rc "init --json exits 0" 0
versioned "init --json"
expect_json "init --json: the plain layout, its files, both agents, the config path" \
	'.layout == "plain" and .story_files == ["docs/stories/a.md", "docs/stories/b.md"] and .stories == 2 and .loads == true and .load_error == null and ([.agents[].role] == ["primary", "fallback"]) and (.config | endswith("/storyctl.json")) and .gitignore == ".storyctl/"'
check "init --json wrote storyctl.json" test -s "$P/storyctl.json"
run_sc -C "$P" init --json
expect_rc "init --json again: storyctl.json exists (exit 64)" 64
check "nothing on stdout then" test -z "$T_OUT"
run_sc -C "$P" init --bogus
expect_rc "init --bogus: usage (exit 64)" 64

# --- a finished batch: every reader's JSON -----------------------------------
new_project
new_story "$P" c1 1 '<!-- sim *: checkall; cost 0.25 -->'
new_story "$P" c2 2 '<!-- sim *: check 1 -->'
commit_all
run_sc -C "$P" run
for args in "status --json" "list --json" "log --json -n 1" "show c1 --json" "tasks c1 --json" \
	"check --json" "agents --json" "simulate --json incomplete:3 success"; do
	# shellcheck disable=SC2086
	run_sc -C "$P" $args
	versioned "$args"
done
run_sc -C "$P" status --json
expect_json "status --json: running is an empty array after the batch" '.running == []'
run_sc -C "$P" list --json
expect_json "list --json: each story's file" \
	'(.[] | select(.id == "c1") | .file) == "docs/stories/c1.md" and (.[] | select(.id == "c2") | .file) == "docs/stories/c2.md"'
expect_json "list --json: c1's cost, c2's null (none reported)" \
	'(.[] | select(.id == "c1") | .cost_usd) == 0.25 and (.[] | select(.id == "c2") | .cost_usd) == null'
run_sc -C "$P" show c1 --json
expect_json "show --json: format_version first, the record after it" \
	'(keys_unsorted[0] == "format_version") and .id == "c1" and .cost_usd == 0.25'
check "the state branch's stories/c1.json carries no format_version" bash -c \
	'git -C "$1" show storyctl/state:stories/c1.json | jq -e "has(\"format_version\") | not" >/dev/null' _ "$P"
# one builder (state/story_record.c): the same record but for the version
printf '%s\n' "$T_OUT" | jq -S 'del(.format_version)' >"$T_TMP/show-c1.json"
check "show --json is the state branch's stories/c1.json but for format_version" bash -c \
	'git -C "$1" show storyctl/state:stories/c1.json | jq -S . | cmp -s - "$2"' _ "$P" "$T_TMP/show-c1.json"
# show names each attempt's stalled task and final message, a line each
# (docs/commands.md#show)
run_sc -C "$P" show c1
expect_match "show: a done attempt stalled on nothing" "$T_OUT" '^ +stalled: \(none: every task checked\)$'
expect_match "show: the agent's final message" "$T_OUT" '^ +final: spent 0\.25$'
run_sc -C "$P" show c2
expect_match "show: the first task left unchecked" "$T_OUT" '^ +stalled: Task 2 of c2$'
# a plain-text agent's last words: the first line, marked as going on
expect_match "show: a text agent's final message, its first line" "$T_OUT" '^ +final: sim-agent: primary attempt 1 on docs/stories/c2\.md…$'

# --- list's table: the id column as wide as the longest id, capped --------------
long=$(printf 'x%.0s' $(seq 1 60))
new_project
new_story "$P" s1 1 '<!-- sim *: checkall -->'
new_story "$P" "$long" 1 '<!-- sim *: checkall -->'
new_story "$P" mid-sized-id-of-30-characters 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" list
expect_rc "list with a 60-character id" 0
# the column where the status starts, the ellipsis counted as one
cols=$(printf '%s\n' "$T_OUT" | sed 's/…/./' |
	awk 'NR == 1 { print index($0, "status") } NR > 1 { print index($0, "pending") }' | sort -u)
check "every row's status starts in the same column (got: $(echo $cols))" test "$(printf '%s\n' "$cols" | wc -l)" = 1
check "the story column is 40 wide (status at column 42)" test "$cols" = 42
expect_match "the long id is cut with an ellipsis" "$T_OUT" "^x{39}… +pending"
expect_match "a 30-character id is whole" "$T_OUT" "^mid-sized-id-of-30-characters +pending"
new_project
new_story "$P" a 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" list
expect_match "short ids: a narrow story column" "$T_OUT" "^story pending|^story status"
expect_match "short ids: one space after the widest cell" "$T_OUT" $'\na     pending'

# --- status with -j 2: both running stories ----------------------------------
new_project
new_story "$P" r1 1 '<!-- sim *: sleep 30; checkall -->'
new_story "$P" r2 1 '<!-- sim *: sleep 30; checkall -->'
commit_all
start_bg run -j 2
# the attempt rows are read as the controller writes them: keep the
# first answer that shows both
two_running() {
	"$STORYCTL" -C "$P" status --json >"$T_TMP/st.json" 2>/dev/null &&
		jq -e '.running | length == 2' "$T_TMP/st.json" >/dev/null
}
two_now_lines() {
	"$STORYCTL" -C "$P" status >"$T_TMP/st.txt" 2>/dev/null &&
		[ "$(grep -c '^now: ' "$T_TMP/st.txt")" = 2 ]
}
if wait_for 20 two_running; then
	ok "status --json with -j 2: two entries in running"
else
	not_ok "status --json with -j 2: two entries in running"
fi
T_OUT=$(cat "$T_TMP/st.json")
versioned "status --json during the batch"
expect_json "running: both stories, each with its attempt and agent" \
	'([.running[].story] | sort) == ["r1", "r2"] and all(.running[]; .attempt == 1 and .controller_alive == true and (.agent | type) == "string")'
check "status text: one 'now:' line per running story" wait_for 20 two_now_lines
T_OUT=$(cat "$T_TMP/st.txt")
expect_match "status text names r1" "$T_OUT" '^now: r1 attempt 1'
expect_match "status text names r2" "$T_OUT" '^now: r2 attempt 1'
kill -TERM "$BG" 2>/dev/null
wait_bg 20
check "the batch stops on SIGTERM (got $BG_RC)" test "$BG_RC" = 143
for p in $(project_procs | cut -d' ' -f1); do kill_ours "$p"; done

finish
