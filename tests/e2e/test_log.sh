#!/bin/bash
# `storyctl log` (docs/commands.md#log): JSON lines in both modes, --follow
# that ends with the batch, a story id, -n N and --since; and check's
# story table sized to its ids (docs/configuration.md#check).
. "$(dirname "$0")/lib.sh"
. "$STORYCTL_SRC/tests/e2e/lib_proc.sh"

# each line of $1 is one JSON object (jq parses it alone)
json_lines() {
	local l
	[ -n "$1" ] || return 1
	while IFS= read -r l; do
		jq -e 'type == "object" and has("id") and has("batch") and has("time") and has("story") and has("kind") and has("message")' \
			>/dev/null <<<"$l" || return 1
	done <<<"$1"
}
lines() { [ -z "$1" ] && echo 0 || printf '%s\n' "$1" | wc -l; }
alive() { kill -0 "$1" 2>/dev/null; }
s2_running() {
	[ "$(sql "SELECT count(*) FROM attempts WHERE story_id = 's2' AND outcome = 'running'" 2>/dev/null)" = 1 ]
}
# follow ARGS...: storyctl log --follow ARGS, bounded: a follow that never
# ends shows as exit 124
follow() {
	T_OUT=$(timeout 10 "$STORYCTL" -C "$P" log --follow "$@" 2>"$T_TMP/err")
	T_RC=$?
	T_ERR=$(cat "$T_TMP/err")
}

# --- --follow ends with the batch ------------------------------------------
new_project
new_story "$P" s1 2 '<!-- sim *: checkall -->'
new_story "$P" s2 2 '<!-- sim *: sleep 3; checkall -->'
new_story "$P" s3 1 '<!-- sim *: checkall -->'
commit_all
start_bg run
run_pid=$BG
wait_for 20 s2_running || not_ok "the batch reached story s2"
"$STORYCTL" -C "$P" log --follow --json >"$T_TMP/follow.out" 2>"$T_TMP/follow.err" &
follow_pid=$!
BG_PIDS+=("$follow_pid")
sleep 0.7
# the run alive before and after the look: then --follow must be too
a=0 b=0 c=0
alive "$run_pid" && a=1
alive "$follow_pid" && b=1
alive "$run_pid" && c=1
if [ "$a$c" = 11 ]; then
	check "--follow keeps following while the controller runs" test "$b" = 1
else
	ok "--follow keeps following while the controller runs # SKIP the batch ended first"
fi
wait_bg 60
check "the batch ends (exit 0)" test "$BG_RC" = 0
BG=$follow_pid
wait_bg 10
check "--follow ends by itself after the batch, exit 0" test "$BG_RC" = 0
follow=$(cat "$T_TMP/follow.out")
last=$("$STORYCTL" -C "$P" log --json -n 1)
check "--follow printed the batch's last event" test "$(tail -n 1 <<<"$follow")" = "$last"
check "--follow --json prints JSON lines" json_lines "$follow"

# --- JSON lines in both modes ----------------------------------------------
run_sc -C "$P" log --json
expect_rc "log --json exits 0" 0
all=$T_OUT
check "log --json: one event object per line" json_lines "$all"
check "log --json: every event of the batch" \
	test "$(lines "$all")" = "$(sql 'SELECT count(*) FROM events WHERE batch_id = 1')"
check "log --json and log --follow --json print the same lines" test "$all" = "$follow"
follow
expect_rc "log --follow after the batch exits 0 at once" 0
check "log --follow (text) prints every event" test "$(lines "$T_OUT")" = "$(lines "$all")"

# --- a story, -n, --since ----------------------------------------------------
run_sc -C "$P" log s2 --json
expect_rc "log STORY exits 0" 0
check "log STORY --json: JSON lines" json_lines "$T_OUT"
check "log STORY: only that story's events" \
	bash -c 'jq -se "length > 0 and all(.[]; .story == \"s2\")" >/dev/null <<<"$1"' _ "$T_OUT"
check "log STORY: its events, all of them" test "$(lines "$T_OUT")" = "$(sql "SELECT count(*) FROM events WHERE story_id = 's2'")"
run_sc -C "$P" log s2
expect_match "log STORY (text) names the story" "$T_OUT" ' s2 '
check "log STORY (text): no other story" bash -c '! grep -Eq " (s1|s3) " <<<"$1"' _ "$T_OUT"
run_sc -C "$P" log s22
expect_rc "log with an unknown story exits 64" 64
expect_match "... with a suggestion" "$T_ERR" "no story 's22'.*did you mean s2\?"

run_sc -C "$P" log -n 2 --json
expect_rc "log -n 2 exits 0" 0
check "log -n 2: two lines" test "$(lines "$T_OUT")" = 2
check "log -n 2: the last two events" test "$T_OUT" = "$(tail -n 2 <<<"$all")"
run_sc -C "$P" log -n 0
check "log -n 0: none" test -z "$T_OUT"
run_sc -C "$P" log s2 -n 1 --json
expect_json "log STORY -n 1: the story's last event" 'select(.story == "s2")'
check "log STORY -n 1: one line" test "$(lines "$T_OUT")" = 1

run_sc -C "$P" log --since 2099-01-01T00:00:00Z --json
expect_rc "log --since a future time exits 0" 0
check "log --since a future time: no event" test -z "$T_OUT"
run_sc -C "$P" log --since 1h --json
check "log --since 1h: every event" test "$T_OUT" = "$all"
run_sc -C "$P" log --since=2000-01-01T00:00:00Z
check "log --since=TIME: every event" test "$(lines "$T_OUT")" = "$(lines "$all")"
follow --since 1h -n 1 --json
expect_rc "--since, -n and --follow together exit 0" 0
check "... the last event" test "$T_OUT" = "$last"

for bad in "-n -1" "-n two" "-n" "-n 1.5"; do
	# shellcheck disable=SC2086
	run_sc -C "$P" log $bad
	expect_rc "log $bad exits 64" 64
	expect_match "... naming -n" "$T_ERR" '-n'
done
for bad in "yesterday" "2026-13-01T00:00:00Z" "2026-11-24 21:00" "-5m" "30"; do
	run_sc -C "$P" log --since "$bad"
	expect_rc "log --since '$bad' exits 64" 64
	expect_match "... naming --since" "$T_ERR" '--since'
done
run_sc -C "$P" log s1 s2
expect_rc "log with two stories exits 64" 64

# --- before any batch: nothing, in both modes --------------------------------
new_project
new_story "$P" only 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" log --json
expect_rc "log --json before any batch exits 0" 0
check "... and prints no line" test -z "$T_OUT"
follow
expect_rc "log --follow with no batch exits 0" 0

# --- check's table: columns sized to the ids ---------------------------------
long=$(printf 'story-%054d' 7) # 60 characters
huge=$(printf 'x%.0s' $(seq 1 90))
new_project
new_story "$P" a 1
new_story "$P" "$long" 2
new_story "$P" "$huge" 1
commit_all
run_sc -C "$P" check
expect_rc "check with long ids exits 0" 0
table=$(grep -E '^ +[0-9]+  ' <<<"$T_OUT")
check "the table has the three stories" test "$(lines "$table")" = 3
expect_match "a 60-character id is shown whole" "$table" " $long "
expect_match "a longer id is cut with an ellipsis" "$table" " x{63}… "
# the tasks column starts at the same character on every line (the
# ellipsis counted as one)
table=$(sed 's/…/./g' <<<"$table")
cols=$(while IFS= read -r l; do
	pre=${l%%[0-9]/[0-9]* tasks*}
	printf '%s\n' "${#pre}"
done <<<"$table" | sort -u)
check "the columns stay aligned" test "$(lines "$cols")" = 1

finish
