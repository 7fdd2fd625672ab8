#!/bin/bash
# What the agent is given (prompt, environment), what is kept of what it
# prints (redaction), the terminal view, -c, and make install.
. "$(dirname "$0")/lib.sh"
agent="$STORYCTL_SRC/tests/e2e/agents/prompt-agent"

# --- prompts, environment and redaction ----------------------------------
new_project '{"max_attempts": 3}' '{"primary": {"command": ["'"$agent"'", "{prompt}", "{story_file}", "{attempt}"], "env": {"STORY_MARK": "x{y}"}}}'
new_story "$P" s1 3
printf '  $(touch /tmp/storyctl-pwned) `id` ; rm -rf / {prompt}\n' >>"$P/docs/stories/s1.md"
sed -i 's/^- \[ \] Task 1 of s1/- [ ] Task 1 of s1 $(touch \/tmp\/storyctl-pwned2)/' "$P/docs/stories/s1.md"
commit_all
export CLAUDECODE=1 CLAUDE_CODE_ENTRYPOINT=cli
run_sc -C "$P" run
unset CLAUDECODE CLAUDE_CODE_ENTRYPOINT
expect_rc "three crashes escalate (exit 3)" 3
g="$P/.git"
p1=$(cat "$g/prompt.a1")
p2=$(cat "$g/prompt.a2")
expect_match "the prompt names the story file" "$p1" 'docs/stories/s1\.md'
expect_match "the prompt asks to check each box" "$p1" 'check its box'
check "the first prompt has no retry note" bash -c '! grep -q "This is attempt" "$1"' _ "$g/prompt.a1"
expect_match "the retry prompt says which attempt this is" "$p2" 'This is attempt 2 of 3'
expect_match "the retry prompt says where the last one stopped" "$p2" 'stopped at 1/3 tasks'
expect_match "the retry prompt names the stalled task" "$p2" 'first unchecked task is: "Task 2 of s1"'
check "story text is never run by a shell" test ! -e /tmp/storyctl-pwned -a ! -e /tmp/storyctl-pwned2
check "CLAUDECODE is removed from the agent's environment" bash -c '! grep -q "^CLAUDECODE=" "$1"' _ "$g/env.a1"
check "CLAUDE_CODE_ENTRYPOINT is removed" bash -c '! grep -q "^CLAUDE_CODE_ENTRYPOINT=" "$1"' _ "$g/env.a1"
check "the agent's env is added verbatim" grep -qx 'STORY_MARK=x{y}' "$g/env.a1"
check "the agent runs in the repo root" bash -c 'grep -qx "PWD=$1" "$2"' _ "$P" "$g/env.a1"
run_sc -C "$P" show s1 --json
check "no secret in show --json" bash -c '! printf "%s" "$1" | grep -Eq "sk-ant-api03-AbCd|ghp_0123456789"' _ "$T_OUT"
dbdump=$(sqlite3 "$P/.storyctl/state.db" .dump)
check "no secret in the database" bash -c '! printf "%s" "$1" | grep -Eq "sk-ant-api03-AbCd|ghp_0123456789"' _ "$dbdump"
branch=$(git -C "$P" log -p storyctl/state)
check "no secret on the state branch" bash -c '! printf "%s" "$1" | grep -Eq "sk-ant-api03-AbCd|ghp_0123456789"' _ "$branch"
check "the attempt log keeps the raw output for the user (0600)" grep -q 'ghp_0123456789' "$(sqlite3 "$P/.storyctl/state.db" "SELECT log_path FROM attempts LIMIT 1")"

# --- a terminal: live status line, colour, NO_COLOR ------------------------
if command -v script >/dev/null 2>&1; then
	new_project
	new_story "$P" t1 2 '<!-- sim *: sleep 1.5; checkall -->'
	commit_all
	script -qec "$STORYCTL -C $P run" /dev/null >"$T_TMP/tty.out" 2>&1
	check "on a terminal the status line is redrawn in place" grep -q $'\r\033\\[K' "$T_TMP/tty.out"
	check "on a terminal the status line shows the attempt" grep -aq 'attempt 1/5' "$T_TMP/tty.out"
	check "colour on a terminal" grep -q $'\033\\[1m' "$T_TMP/tty.out"
	new_project
	new_story "$P" t2 2 '<!-- sim *: sleep 1.5; checkall -->'
	commit_all
	NO_COLOR=1 script -qec "$STORYCTL -C $P run" /dev/null >"$T_TMP/tty2.out" 2>&1
	check "NO_COLOR: no colour" bash -c '! grep -q $'"'"'\033\\[1m'"'"' "$1"' _ "$T_TMP/tty2.out"
else
	ok "# SKIP no script(1)"
fi

# --- -c CONFIG ----------------------------------------------------------------
new_project
new_story "$P" c1 1 '<!-- sim *: checkall -->'
commit_all
mv "$P/storyctl.json" "$P/other.json"
run_sc -C "$P" check
expect_rc "no storyctl.json: usage error" 64
run_sc -C "$P" -c other.json check
expect_rc "-c names the config" 0
expect_match "check prints the plan" "$T_OUT" 'c1 +docs/stories/c1\.md +0/1 tasks'

# --- make install / uninstall honour PREFIX and DESTDIR ----------------------
build=$(dirname "$STORYCTL")
dest="$T_TMP/dest"
make -s -C "$STORYCTL_SRC" BUILD="$build" install PREFIX=/opt/sc DESTDIR="$dest" >/dev/null 2>&1
check "make install puts the binary under DESTDIR/PREFIX/bin" test -x "$dest/opt/sc/bin/storyctl"
"$dest/opt/sc/bin/storyctl" --version >"$T_TMP/v" 2>&1
expect_match "the installed binary runs" "$(cat "$T_TMP/v")" '^storyctl '
make -s -C "$STORYCTL_SRC" BUILD="$build" uninstall PREFIX=/opt/sc DESTDIR="$dest" >/dev/null 2>&1
check "make uninstall removes it" test ! -e "$dest/opt/sc/bin/storyctl"
finish
