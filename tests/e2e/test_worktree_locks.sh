#!/bin/bash
# A lock file left in a story's worktree does not stop the night
# (docs/git-work.md#recovery): an agent killed inside `git add` (or a
# controller killed while it wrote the worktree's index) leaves
# index.lock in the worktree's git dir, and the work commit at the
# story's end would fail with exit 74 at every start after.  The
# controller removes it when it settles the story (no agent runs there
# then) and says so; the main checkout's index is never touched.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

# the agent leaves an index lock in its own worktree, then does the work
cat >"$T_TMP/locker" <<'SH'
#!/bin/sh
gd=$(git rev-parse --git-dir) || exit 1
: >"$gd/index.lock"
sed -i 's/^- \[ \]/- [x]/' "$1"
echo "work of $1" >"work-$(basename "$1" .md).txt"
echo "left $gd/index.lock behind"
SH
chmod +x "$T_TMP/locker"
new_project '{"max_attempts": 2}' '{"primary": {"name": "locker", "command": ["'"$T_TMP/locker"'", "{story_file}"], "timeout_s": 60}}'
new_story "$P" k1 2
new_story "$P" k2 2
commit_all
: >"$P/.git/index.lock.user"
run_sc -C "$P" run -j 2
expect_rc "the night ends with every story done" 0
expect_match "the console says which lock it removed" "$T_OUT$T_ERR" \
	'k1: removed a stale index lock in .*/worktrees/k1'
check "the work of k1 is committed on its branch" \
	git -C "$P" cat-file -e storyctl/story/k1:work-k1.txt
check "and the work of k2" git -C "$P" cat-file -e storyctl/story/k2:work-k2.txt
check "no index lock is left in any worktree's git dir" \
	[ -z "$(find "$P/.git/worktrees" -name index.lock 2>/dev/null)" ]
check "the main checkout's files in .git are left alone" [ -e "$P/.git/index.lock.user" ]
run_sc -C "$P" status --json
expect_json "status: 2 done" '.counts.done == 2'
finish
