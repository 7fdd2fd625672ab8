#!/bin/bash
# A story swapped for a symlink to a file outside the repository while
# the batch runs (issue 11, docs/reliability.md): every read of the
# story checks where the file really is, so nothing of the outside file
# reaches the database, the state branch or the next prompt, and the
# story ends with a reason that says what happened.  Once with -j 1
# (the main tree), once with -j 2 (the story's worktree).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

agent="$T_TMP/swap-agent"
cat >"$agent" <<'SH'
#!/bin/sh
# swap-agent ROLE ATTEMPT STORY_FILE PROMPT: records the prompt; attempt
# 1 replaces the story with a symlink to $OUTSIDE and fails.
mkdir -p "$PROMPTS"
printf '%s\n' "$4" >"$PROMPTS/a$2"
if [ "$2" = 1 ]; then
	rm -f "$3"
	ln -s "$OUTSIDE" "$3"
	echo "swapped" >&2
	exit 1
fi
exit 1
SH
chmod +x "$agent"
printf -- '- [x] SECRET-MARKER-7731 outside text\n- [ ] SECRET-MARKER-7731 more\n' >"$T_TMP/outside.md"

# swap_case NAME JOBS [OUTSIDE]: a run whose agent swaps s1 for a
# symlink to OUTSIDE (default $T_TMP/outside.md).
swap_case() {
	local name=$1 jobs=$2 prompts="$T_TMP/prompts-$1"
	local outside=${3:-$T_TMP/outside.md} cmd
	cmd=$(jq -cn --arg a "$agent" '[$a, "{role}", "{attempt}", "{story_file}", "{prompt}"]')
	new_project '{"max_attempts": 3}' "$(jq -cn --argjson c "$cmd" \
		--arg o "$outside" --arg p "$prompts" \
		'{primary: {name: "swap", command: $c, timeout_s: 30,
		   env: {OUTSIDE: $o, PROMPTS: $p}}}')"
	new_story "$P" s1 2
	new_story "$P" s2 1 '<!-- sim *: checkall -->'
	commit_all
	run_sc -C "$P" run -j "$jobs"
	check "$name: the run ends (exit $T_RC)" [ "$T_RC" = 3 ]
	run_sc -C "$P" show s1 --json
	expect_json "$name: s1 ends with a reason naming the swapped symlink" \
		'.status == "invalid" and (.reason | test("symlink was swapped in"))'
	check "$name: the marker is not in show --json" \
		bash -c '! grep -q SECRET-MARKER <<<"$1"' _ "$T_OUT"
	check "$name: the marker is not in the database" \
		bash -c '! sqlite3 "$1/.storyctl/state.db" .dump | grep -q SECRET-MARKER' _ "$P"
	check "$name: the marker is not on the state branch" \
		bash -c '! git -C "$1" log -p storyctl/state | grep -q SECRET-MARKER' _ "$P"
	check "$name: the marker is in no prompt" \
		bash -c '! cat "$1"/a* 2>/dev/null | grep -q SECRET-MARKER' _ "$prompts"
	check "$name: the agent ran once (then the story was not run again)" \
		[ "$(ls "$prompts" | wc -l)" = 1 ]
}
swap_case j1 1
swap_case j2 2

# The symlink's target is named by the agent: a name with an escape
# sequence, C1 controls (C2 9B, the one-byte CSI; C2 85), DEL and 200
# bytes reaches the reason cleaned and cut short, so the reason stays
# whole ("...; it is not read") and holds nothing that drives a terminal.
evil="$T_TMP/"$'\x1b[31mevil\xc2\x9b31m\xc2\x85\x7f'"$(printf 'x%.0s' $(seq 1 200)).md"
cp "$T_TMP/outside.md" "$evil"
swap_case name 1 "$evil"
run_sc -C "$P" show s1 --json
expect_json "name: the reason is whole, names the story and the symlink" \
	'.reason | test("^cannot read the story: docs/stories/s1.md: a symlink was swapped in that leads out of the repository, to .*evil.*; it is not read$")'
controls() { LC_ALL=C grep -c -P '\xc2[\x80-\x9f]|\x1b|\x7f'; }
check "name: no control character in show --json" \
	[ "$(printf '%s' "$T_OUT" | jq -r '.. | strings' | controls)" = 0 ]
run_sc -C "$P" show s1
check "name: no control character in show" [ "$(printf '%s' "$T_OUT" | controls)" = 0 ]
check "name: no control character in the database" \
	[ "$(sqlite3 "$P/.storyctl/state.db" .dump | controls)" = 0 ]
check "name: no control character on the state branch" \
	[ "$(git -C "$P" log -p storyctl/state | controls)" = 0 ]

finish
