#!/bin/bash
# run -j N (docs/scheduling.md#parallel-stories-run--j-n): stories at once from one process, each in its own
# git worktree on storyctl/story/<id>, work committed there.
. "$(dirname "$0")/lib.sh"

# --- three 3-second stories together -----------------------------------------
new_project
for s in p1 p2 p3; do
	new_story "$P" "$s" 2 "<!-- sim *: sleep 3; checkall; say built $s -->"
done
echo "untracked note" >"$P/NOTES.txt"
commit_all
head_before=$(git -C "$P" rev-parse HEAD)
start=$(date +%s%N)
run_sc -C "$P" run -j 3
took=$(( ($(date +%s%N) - start) / 1000000 ))
expect_rc "-j 3 runs the batch (exit 0)" 0
# that they ran together is read from the record, not from a stopwatch
# that load can break (issue 34): each pair of the three overlapped
echo "# three 3-second stories took $took ms (9000 one after another)"
overlap=$(sql "SELECT count(*) FROM attempts a JOIN attempts b ON a.id < b.id WHERE a.started_ms < b.ended_ms AND b.started_ms < a.ended_ms")
check "their attempts overlapped in time, each pair" test "$overlap" -ge 3
for s in p1 p2 p3; do
	check "story $s has its own branch" git -C "$P" rev-parse -q --verify "refs/heads/storyctl/story/$s"
	check "its work is committed there (boxes checked)" bash -c 'git -C "$1" show "storyctl/story/$2:docs/stories/$2.md" | grep -q "^- \[x\] Task 2"' _ "$P" "$s"
	check "the branch starts from HEAD" bash -c '[ "$(git -C "$1" merge-base HEAD "storyctl/story/$2")" = "$3" ]' _ "$P" "$s" "$head_before"
done
check "the main working tree is untouched" bash -c '! grep -q "^- \[x\]" "$1"/docs/stories/p1.md' _ "$P"
check "HEAD untouched" test "$(git -C "$P" rev-parse HEAD)" = "$head_before"
check "finished worktrees are removed" bash -c '[ -z "$(ls -A "$1/.storyctl/worktrees" 2>/dev/null)" ]' _ "$P"
check "git knows no leftover worktree" bash -c '[ "$(git -C "$1" worktree list | wc -l)" = 1 ]' _ "$P"
run_sc -C "$P" show p2 --json
expect_json "show names the branch" '.branch == "storyctl/story/p2" and .status == "done"'
run_sc -C "$P" show p2
expect_match "show prints the branch" "$T_OUT" 'branch: storyctl/story/p2'

# --- a dependency chain under -j: the dependent starts from its dependency's branch ----
STORIES_JSON='"stories": ["docs/stories/lib.md", {"file": "docs/stories/app.md", "depends_on": ["lib"]}, "docs/stories/other.md"]' \
	new_project
new_story "$P" lib 1 '<!-- sim *: checkall; say lib done -->'
new_story "$P" app 1 '<!-- sim *: checkall -->'
new_story "$P" other 1 '<!-- sim *: sleep 1; checkall -->'
commit_all
run_sc -C "$P" run -j 2
expect_rc "chain under -j 2" 0
lib_tip=$(git -C "$P" rev-parse storyctl/story/lib)
check "the dependent's branch contains its dependency's work" git -C "$P" merge-base --is-ancestor "$lib_tip" storyctl/story/app
order=$(sql "SELECT group_concat(story_id, ' ') FROM (SELECT story_id FROM attempts ORDER BY started_ms, id)")
check "the dependent never starts before its dependency ends" test "$(sql "SELECT count(*) FROM attempts a, attempts l WHERE a.story_id='app' AND l.story_id='lib' AND a.started_ms < l.ended_ms")" = 0

# --- a failing story in one slot does not stop the others; deferred work is committed too ---
new_project '{"max_attempts": 2}'
new_story "$P" good 1 '<!-- sim *: sleep 1; checkall -->'
new_story "$P" bad 4 '<!-- sim *: check 1 -->'
commit_all
run_sc -C "$P" run -j 2
expect_rc "one deferred story: exit 3" 3
run_sc -C "$P" list --json
expect_json "the good one is done, the bad one deferred" '(.[] | select(.id=="good") | .status) == "done" and (.[] | select(.id=="bad") | .status) == "deferred"'
check "the deferred story's partial work is on its branch" bash -c 'git -C "$1" show storyctl/story/bad:docs/stories/bad.md | grep -q "^- \[x\] Task 1"' _ "$P"

# --- kill -9 during a parallel run, then resume --------------------------------
new_project
new_story "$P" k1 1 '<!-- sim a1: sleep 30 -->' '<!-- sim *: checkall -->'
new_story "$P" k2 1 '<!-- sim a1: sleep 30 -->' '<!-- sim *: checkall -->'
commit_all
"$STORYCTL" -C "$P" run -j 2 >"$T_TMP/k.out" 2>&1 &
bg=$!
for _ in $(seq 1 600); do
	[ "$(sql "SELECT count(*) FROM attempts WHERE outcome='running' AND pid IS NOT NULL" 2>/dev/null)" = 2 ] && break
	sleep 0.1
done
check "two attempts running at once" test "$(sql "SELECT count(*) FROM attempts WHERE outcome='running'")" = 2
kill -9 "$bg"
wait "$bg" 2>/dev/null
gone=0
for _ in $(seq 1 100); do
	# this project's agents only (they work in its worktrees): other
	# scripts may run agents on stories of the same names at once
	[ -z "$(for p in $(pgrep -f "sim-agent .* docs/stories/k[12].md"); do
		case $(readlink "/proc/$p/cwd" 2>/dev/null) in "$P"/*) echo "$p" ;; esac
	done)" ] && { gone=1; break; }
	sleep 0.1
done
check "no agent survives the controller" test "$gone" = 1
# attempt 1 runs again (the controller's death is not counted): in the
# worktrees, where the agents work, it now checks its box at once
for s in k1 k2; do
	sed -i '/^<!-- sim a1:/d' "$P/.storyctl/worktrees/$s/docs/stories/$s.md"
done
run_sc -C "$P" resume -j 2
expect_rc "resume after kill -9 finishes" 0
check "both attempts closed as interrupted and run again under the same number, no duplicate" test "$(sql "SELECT group_concat(story_id || ':' || attempt || ':' || outcome, ' ') FROM (SELECT * FROM attempts ORDER BY story_id, seq)")" = "k1:1:interrupted k1:1:success k2:1:interrupted k2:1:success"
check "integrity" test "$(sql 'PRAGMA integrity_check')" = ok
check "work on both branches" bash -c 'for s in k1 k2; do git -C "$1" show "storyctl/story/$s:docs/stories/$s.md" | grep -q "^- \[x\]" || exit 1; done' _ "$P"

# --- a half-made worktree of a story already final (a kill inside git's add
# or remove left a checkout with no .git): the next start removes it instead
# of failing every start-up with "not a git repository" (chaos -j 3) ---------
new_project
new_story "$P" hf 1 '<!-- sim *: checkall -->'
new_story "$P" hg 1 '<!-- sim *: checkall -->'
new_story "$P" hs 1 '<!-- sim a1: sleep 30 -->' '<!-- sim *: checkall -->'
commit_all
"$STORYCTL" -C "$P" run -j 2 >"$T_TMP/h.out" 2>&1 &
bg=$!
# bounded generously: two CI runs side by side took over 10 s to get here
reached=0
for _ in $(seq 1 600); do
	# done, and settled: their worktrees removed (a kill during the
	# settle itself is another case, and fails the hg check below)
	[ "$(sql "SELECT count(*) FROM stories WHERE id IN ('hf', 'hg') AND status='done'" 2>/dev/null)" = 2 ] &&
		[ ! -e "$P/.storyctl/worktrees/hf" ] && [ ! -e "$P/.storyctl/worktrees/hg" ] &&
		[ "$(sql "SELECT count(*) FROM attempts WHERE story_id='hs' AND outcome='running' AND pid IS NOT NULL" 2>/dev/null)" = 1 ] && { reached=1; break; }
	sleep 0.1
done
check "hf and hg done while hs runs, before the kill" test "$reached" = 1
kill -9 "$bg"
wait "$bg" 2>/dev/null
mkdir -p "$P/.storyctl/worktrees/hf/docs" "$P/.storyctl/worktrees/hg"
echo "half" >"$P/.storyctl/worktrees/hf/docs/x.md"
# hg: its .git file names admin data git already removed
echo "gitdir: $P/.git/worktrees/hg" >"$P/.storyctl/worktrees/hg/.git"
echo "uncommitted in the main tree" >"$P/MAIN-NOTE.txt"
head_before=$(git -C "$P" rev-parse HEAD)
run_sc -C "$P" resume -j 2
expect_rc "resume past a half-made worktree of a final story (exit 0)" 0
expect_match "it says it removed it" "$T_OUT" 'hf: removing the half-made worktree'
expect_match "and the one whose admin data is gone" "$T_OUT" 'hg: removing the half-made worktree'
check "the half-made worktrees are gone" test ! -e "$P/.storyctl/worktrees/hf" -a ! -e "$P/.storyctl/worktrees/hg"
check "nothing was committed in the main tree above them" test "$(git -C "$P" rev-parse HEAD)" = "$head_before"
check "the main tree's own change is left alone" test -f "$P/MAIN-NOTE.txt"
check "the other story finished" test "$(sql "SELECT status FROM stories WHERE id='hs'")" = done

# --- usage limit pauses the agent for every story ---------------------------------
new_project '{"max_wait_s": 3}' '{"primary": {"name": "sim-p", "command": ["'"$STORYCTL_SRC/scripts/sim-agent"'", "{role}", "{attempt}", "{story_file}", "{prompt}"]}}'
new_story "$P" w1 1 "<!-- sim a1: once usage $(( $(date +%s) + 3 )); checkall -->"
new_story "$P" w2 1 '<!-- sim *: sleep 0.5; checkall -->'
new_story "$P" w3 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run -j 2
expect_rc "usage limit under -j 2 then done" 0
limit_end=$(sql "SELECT ended_ms + delay_ms FROM attempts WHERE story_id='w1' AND outcome='usage_limit'")
w3_start=$(sql "SELECT started_ms FROM attempts WHERE story_id='w3'")
check "a story that starts during the pause waits for the reset" test "$w3_start" -ge "$limit_end"
late=$(sql "SELECT count(*) FROM attempts WHERE outcome != 'usage_limit' AND started_ms >= (SELECT ended_ms FROM attempts WHERE outcome='usage_limit') AND started_ms < $limit_end")
check "no attempt of the paused agent starts before the reset, in any story" test "$late" = 0
finish
