#!/bin/bash
# run -j N keeps each slot's worktree from story to story
# (docs/git-work.md#the-life-of-a-slots-worktree): worktree.setup runs
# once per slot, not once per story, and every agent finds what it made;
# worktree.copy brings ignored files that never reach a commit; nothing
# of one story is carried into the next; a failing setup is the
# attempt's crash and the batch goes on.
. "$(dirname "$0")/lib.sh"

# The agent: notes what it finds in its tree (outside the tree), then
# works: a file of its own, an untracked leftover, a change to a
# tracked file, the boxes.
cat >"$T_TMP/agent.sh" <<'EOF'
#!/bin/bash
id=$(basename "$1" .md)
# one write, so that two agents at once never interleave their lines
line=$(printf '%s nm=%s env=%s others=%s readme=%s' "$id" \
	"$([ -f node_modules/.installed ] && echo yes || echo no)" "$(cat .env 2>/dev/null)" \
	"$(ls leftover-* src 2>/dev/null | tr '\n' ,)" "$(wc -l <README.md)")
printf '%s\n' "$line" >>"$AGENT_LOG"
if [ "$id" = "${HANG_ID:-}" ] && [ -e "$SETUP_DIR/hang-once" ]; then
	rm -f "$SETUP_DIR/hang-once"
	echo "half of $id" >"half-$id.txt"
	touch "$SETUP_DIR/hanging"
	sleep 60
fi
mkdir -p src
echo "work of $id" >"src/$id.txt"
echo "leftover of $id" >"leftover-$id.txt"
echo "changed by $id" >>README.md
sed -i 's/^- \[ \]/- [x]/' "$1"
EOF
# the stand-in for `npm ci`: a dependency directory, and a count kept
# outside the tree; fails once when $T_TMP/fail-once exists
cat >"$T_TMP/setup.sh" <<'EOF'
#!/bin/bash
if [ -e "$SETUP_DIR/fail-once" ]; then
	rm -f "$SETUP_DIR/fail-once"
	echo "npm ERR! code E404 (setup stand-in)"
	exit 3
fi
# the setup of the story named in $SLOW_ID waits for $SETUP_DIR/go
if [ "$(basename "$PWD")" = "${SLOW_ID:-}" ]; then
	i=0
	while [ ! -e "$SETUP_DIR/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
fi
mkdir -p node_modules/dep && touch node_modules/.installed
echo "$PWD" >>"$SETUP_DIR/setup.count"
EOF
chmod +x "$T_TMP/agent.sh" "$T_TMP/setup.sh"
export AGENT_LOG="$T_TMP/agents.log" SETUP_DIR="$T_TMP"

agent='{"name": "sh-agent", "command": ["'"$T_TMP/agent.sh"'", "{story_file}"], "timeout_s": 30}'
slots_project() {
	EXTRA_JSON='"worktree": {"setup": ["'"$T_TMP/setup.sh"'"], "copy": [".env*", "notes.local"]},' \
		new_project '{"max_attempts": 3}' '{"primary": '"$agent"'}'
	printf '.storyctl/\nnode_modules/\n.env*\n' >"$P/.gitignore"
	echo "SECRET=from-main" >"$P/.env"
	echo "LOCAL=1" >"$P/.env.local"
	echo "not ignored" >"$P/notes.local"
}

# --- six stories, two slots ------------------------------------------------------
slots_project
ids="s1 s2 s3 s4 s5 s6"
for s in $ids; do new_story "$P" "$s" 1; done
git -C "$P" add .gitignore README.md storyctl.json docs
git -C "$P" commit -q -m stories
rm -f "$AGENT_LOG" "$T_TMP/setup.count"
run_sc -C "$P" check
expect_match "check shows the setup" "$T_OUT" "setup  on create: .*setup.sh"
expect_match "check shows the copies" "$T_OUT" 'copy   \.env\*: 2 files now'
expect_match "check says a copy git does not ignore is not copied" "$T_OUT" 'notes.local \(not ignored by git: not copied\)'
run_sc -C "$P" run -j 2
expect_rc "-j 2 runs six stories (exit 0)" 0
check "every story ran once" test "$(wc -l <"$AGENT_LOG")" = 6
check "the setup ran once per slot, not once per story" test "$(wc -l <"$T_TMP/setup.count")" = 2
check "every agent found the dependency directory" bash -c '! grep -q "nm=no" "$1"' _ "$AGENT_LOG"
check "every agent found the copied .env" test "$(grep -c "env=SECRET=from-main" "$AGENT_LOG")" = 6
check "no agent found another story's files" bash -c '! grep -v " others= " "$1" | grep -q .' _ "$AGENT_LOG"
check "no agent found another story's change to a tracked file" test "$(grep -c " readme=1$" "$AGENT_LOG")" = 6
for s in $ids; do
	files=$(git -C "$P" ls-tree -r --name-only "storyctl/story/$s" | tr '\n' ' ')
	check "branch $s holds its own work" bash -c 'case " $1" in *" src/$2.txt "*) exit 0 ;; esac; exit 1' _ "$files" "$s"
	check "branch $s holds no other story's work" test "$(printf '%s\n' $files | grep -c -e '^src/' -e '^leftover-')" = 2
	check "branch $s has no .env, no copy, no node_modules" bash -c '! printf "%s\n" $1 | grep -q -e "^\.env" -e "^notes.local" -e "^node_modules"' _ "$files"
	check "no commit of $s ever held the copied secret" bash -c '! git -C "$1" log -p "storyctl/story/$2" | grep -q -e "from-main" -e "LOCAL=1"' _ "$P" "$s"
	check "branch $s's README has only its own change" test "$(git -C "$P" show "storyctl/story/$s:README.md" | grep -c 'changed by')" = 1
done
check "the slots' worktrees are gone at the end" bash -c '[ -z "$(ls -A "$1/.storyctl/worktrees" 2>/dev/null)" ]' _ "$P"
check "git knows no leftover worktree" test "$(git -C "$P" worktree list | wc -l)" = 1
check "the main tree's files are untouched" test "$(git -C "$P" status --porcelain | tr '\n' ' ')" = "?? notes.local "
run_sc -C "$P" show s1
expect_match "show gives the setup's time and exit" "$T_OUT" 'worktree setup \(create, slot [12]\): exit 0 in '
# slot 2's worktree was made ahead, beside slot 1's
# (docs/git-work.md#made-ahead): its first story's setup is a new one's
check "each slot's first story ran the setup of a new worktree" \
	test "$(sql "SELECT count(*) FROM events WHERE kind='setup' AND message LIKE '%(create, slot 1)%'") $(sql "SELECT count(*) FROM events WHERE kind='setup' AND message LIKE '%(create, slot 2)%'")" = "1 1"

# --- a failing setup: the attempt's crash, the batch goes on ---------------------
slots_project
for s in f1 f2 f3 f4; do new_story "$P" "$s" 1; done
git -C "$P" add .gitignore README.md storyctl.json docs
git -C "$P" commit -q -m stories
rm -f "$AGENT_LOG" "$T_TMP/setup.count"
touch "$T_TMP/fail-once"
run_sc -C "$P" run -j 2
expect_rc "the batch goes on to the end (exit 0)" 0
check "one attempt was the setup's crash" test "$(sql "SELECT count(*) FROM attempts WHERE outcome='crash' AND gate='setup'")" = 1
check "with the setup's exit and output" test "$(sql "SELECT gate_exit || ' ' || (gate_output LIKE '%npm ERR! code E404%') FROM attempts WHERE gate='setup'")" = "3 1"
check "every story is done" test "$(sql "SELECT count(*) FROM stories WHERE status='done'")" = 4
check "the story after the crash ran its next attempt with the setup redone" bash -c '! grep -q "nm=no" "$1"' _ "$AGENT_LOG"
crashed=$(sql "SELECT story_id FROM attempts WHERE gate='setup'")
run_sc -C "$P" show "$crashed"
expect_match "show gives the failed setup's exit and output" "$T_OUT" 'gate setup failed \(exit 3\)'
expect_match "and its record" "$T_OUT" 'worktree setup \(create, slot [12]\): exit 3 in '

# --- kill -9 while a story works in a switched slot worktree, then resume ------
slots_project
for s in k1 k2 k3 k4 k5; do new_story "$P" "$s" 1; done
git -C "$P" add .gitignore README.md storyctl.json docs
git -C "$P" commit -q -m stories
rm -f "$AGENT_LOG" "$T_TMP/setup.count" "$T_TMP/hanging"
touch "$T_TMP/hang-once"
HANG_ID=k4 "$STORYCTL" -C "$P" run -j 2 >"$T_TMP/k.out" 2>&1 &
bg=$!
for _ in $(seq 1 200); do
	[ -e "$T_TMP/hanging" ] && break
	sleep 0.05
done
check "k4 hangs in a switched worktree" test -e "$T_TMP/hanging" -a -e "$P/.storyctl/worktrees/k4/half-k4.txt"
kill -9 "$bg"
wait "$bg" 2>/dev/null
run_sc -C "$P" resume -j 2
expect_rc "resume after kill -9 finishes (exit 0)" 0
check "every story is done" test "$(sql "SELECT count(*) FROM stories WHERE status='done'")" = 5
check "k4's interrupted work is on its branch" bash -c 'git -C "$1" show storyctl/story/k4:half-k4.txt | grep -q "half of k4"' _ "$P"
for s in k1 k2 k3 k4 k5; do
	check "branch $s holds only its own work after the kill" test "$(git -C "$P" ls-tree -r --name-only "storyctl/story/$s" | grep -e '^src/' -e '^leftover-' -e '^half-' | grep -vc -e "$s")" = 0
done
# a story run again after the kill finds its own work, no one else's
foreign() {
	awk '{ id = $1; for (i = 2; i <= NF; i++) if ($i ~ /^others=/) { n = split(substr($i, 8), f, ",");
		for (j = 1; j <= n; j++) if (f[j] != "" && f[j] != "src:" && index(f[j], id) == 0) print id ": " f[j] } }' "$1"
}
check "no agent found another story's files ($(foreign "$AGENT_LOG" | tr '\n' ' '))" test -z "$(foreign "$AGENT_LOG")"
check "no worktree is left" bash -c '[ -z "$(ls -A "$1/.storyctl/worktrees" 2>/dev/null)" ] && [ "$(git -C "$1" worktree list | wc -l)" = 1 ]' _ "$P"

# --- made ahead: as many worktrees as stories can use ----------------------------
# -j 3 with two stories: two worktrees, not three; both agents wait for a
# file, so that the trees can be looked at from outside while they run
printf '%s\n' '#!/bin/bash' \
	'echo "$(basename "$1" .md) $PWD" >>"$SETUP_DIR/waiting"' \
	'i=0' \
	'while [ ! -e "$SETUP_DIR/release" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' \
	"sed -i 's/^- \\[ \\]/- [x]/' \"\$1\"" >"$T_TMP/wait-agent.sh"
chmod +x "$T_TMP/wait-agent.sh"
EXTRA_JSON='"worktree": {"setup": ["'"$T_TMP/setup.sh"'"]},' new_project '{"max_attempts": 1}' \
	'{"primary": {"name": "waiter", "command": ["'"$T_TMP/wait-agent.sh"'", "{story_file}"], "timeout_s": 60}}'
printf '.storyctl/\nnode_modules/\n' >"$P/.gitignore"
for s in m1 m2; do new_story "$P" "$s" 1; done
git -C "$P" add -A && git -C "$P" commit -q -m stories
rm -f "$T_TMP/waiting" "$T_TMP/release" "$T_TMP/setup.count"
"$STORYCTL" -C "$P" run -j 3 >"$T_TMP/m.out" 2>&1 &
bg=$!
for _ in $(seq 1 200); do
	[ "$(wc -l <"$T_TMP/waiting" 2>/dev/null)" = 2 ] && break
	sleep 0.05
done
check "both agents run, each in its own story's worktree" \
	test "$(sort "$T_TMP/waiting" | awk '{ n = split($2, p, "/"); print $1 "=" p[n] }' | tr '\n' ' ')" = "m1=m1 m2=m2 "
check "-j 3 with two stories made two worktrees ($(ls -A "$P/.storyctl/worktrees" | tr '\n' ' '))" \
	test "$(ls -A "$P/.storyctl/worktrees" | tr '\n' ' ')" = "m1 m2 "
check "git knows three work trees: the main one and two" test "$(git -C "$P" worktree list | wc -l)" = 3
check "no branch of a slot is left" test -z "$(git -C "$P" branch --list 'storyctl/slot/*')"
touch "$T_TMP/release"
wait "$bg"
check "both stories are done (exit $?)" test "$(sql "SELECT count(*) FROM stories WHERE status='done'")" = 2
check "the setup ran once per worktree" test "$(wc -l <"$T_TMP/setup.count")" = 2
check "no worktree is left after the batch" bash -c '[ -z "$(ls -A "$1/.storyctl/worktrees" 2>/dev/null)" ] && [ "$(git -C "$1" worktree list | wc -l)" = 1 ]' _ "$P"

# --- a long setup holds no other slot -----------------------------------------
# w1's setup waits for a file the test makes only once w2, in the other
# slot, is done: the loop waits on the setup beside the agents
slots_project
for s in w1 w2; do new_story "$P" "$s" 1; done
git -C "$P" add .gitignore README.md storyctl.json docs
git -C "$P" commit -q -m stories
rm -f "$AGENT_LOG" "$T_TMP/setup.count" "$T_TMP/go"
SLOW_ID=w1 "$STORYCTL" -C "$P" run -j 2 >"$T_TMP/w.out" 2>&1 &
bg=$!
w2_done() { [ "$(sql "SELECT status FROM stories WHERE id='w2'" 2>/dev/null)" = done ]; }
for _ in $(seq 1 300); do
	w2_done && break
	sleep 0.1
done
check "w2 is done while w1's setup still runs" bash -c 'w2=$1; [ "$w2" = done ] && ! grep -q "^w1 " "$2"' _ \
	"$(sql "SELECT status FROM stories WHERE id='w2'")" "$AGENT_LOG"
touch "$T_TMP/go"
wait "$bg"
check "then w1's setup ends and w1 is done too (exit $?)" test "$(sql "SELECT count(*) FROM stories WHERE status='done'")" = 2

# --- git's record of a worktree whose directory a kill took --------------------
# (docs/git-work.md#what-survives-a-crash): the next start prunes it;
# one outside .storyctl/worktrees is not ours and stays
git -C "$P" worktree add -q "$P/.storyctl/worktrees/_slot9-1" -b storyctl/story/ghost
git -C "$P" worktree add -q "$T_TMP/mine" -b mine
rm -rf "$P/.storyctl/worktrees/_slot9-1" "$T_TMP/mine"
new_story "$P" g1 1
git -C "$P" add -A && git -C "$P" commit -q -m g1
run_sc -C "$P" run -j 2
expect_rc "a run after the kill (exit 0)" 0
expect_match "it says it pruned one record" "$T_OUT" "pruned git's record of 1 worktree whose directory is gone"
check "git no longer knows the gone worktree" bash -c '! git -C "$1" worktree list --porcelain | grep -q _slot9-1' _ "$P"
check "a worktree that is not storyctl's stays known" bash -c 'git -C "$1" worktree list --porcelain | grep -q "$2/mine"' _ "$P" "$T_TMP"
finish
