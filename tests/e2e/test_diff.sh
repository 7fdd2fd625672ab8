#!/bin/bash
# storyctl diff STORY [--attempt N] (docs/evidence.md#the-attempts-diff,
# docs/commands.md#diff): what each attempt changed in its tree, kept
# when its agent ended, printed as git diff prints it.  A two-attempt
# story whose attempts change different files shows each attempt's own
# change; under git.commit_work (-j 1) and in worktrees (-j 3) the
# printed diffs are compared byte for byte with what git itself prints
# of the story's commit; secrets are redacted both when the diff is kept
# (the batch's) and when it is printed (the config's and the
# environment's); unknown stories and attempts are usage errors with a
# suggestion; an attempt with nothing to show says why.
. "$(dirname "$0")/lib.sh"
agent="$STORYCTL_SRC/tests/e2e/agents/diff-agent"
A_SECRET='dq-Agent-Value-5521kz' # agents.*.env DIFF_AGENT_SECRET
C_TOKEN='dq-Ctl-Token-8830mw'    # the environment's DIFF_E2E_TOKEN, at print
AGENTS=$(jq -nc --arg c "$agent" --arg a "$A_SECRET" \
	'{primary: {name: "df", command: [$c, "{attempt}", "{story_file}"], timeout_s: 30, env: {DIFF_AGENT_SECRET: $a}},
	  fallback: {name: "df-f", command: [$c, "{attempt}", "{story_file}"], timeout_s: 30, env: {DIFF_AGENT_SECRET: $a}}}')

# sdiff ARGS...: storyctl diff in $P into T_OUT (the bytes, through a file)
sdiff() {
	"$STORYCTL" -C "$P" diff "$@" >"$T_TMP/d.out" 2>"$T_TMP/d.err"
	T_RC=$?
	T_OUT=$(cat "$T_TMP/d.out")
	T_ERR=$(cat "$T_TMP/d.err")
}

# same NAME FILE-A FILE-B: the two files hold the same bytes
same() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1"
		diff "$2" "$3" | head -20 | sed 's/^/# /'
	fi
}

# --- -j 1 under git.commit_work: two attempts, two files ------------------------
EXTRA_JSON='"git": {"commit_work": true},' new_project '{}' "$AGENTS"
new_story "$P" d1 2 \
	'<!-- diff a1: src/a.txt alpha one -->' \
	'<!-- diff a1: src/a.txt alpha two -->' \
	'<!-- diff a2: README.md more about the project -->' \
	'<!-- diff a2: src/b.txt beta -->' \
	"<!-- diff a2: src/conf.txt password=Hunter2Hunter2x9 -->" \
	"<!-- diff a2: src/conf.txt agent_value $A_SECRET -->" \
	"<!-- diff a2: src/conf.txt ctl_value $C_TOKEN -->"
new_story "$P" t1 1
commit_all
before=$(git -C "$P" rev-parse HEAD)
run_sc -C "$P" run -j 1 d1
expect_rc "-j 1: the batch runs (exit 0)" 0
run_sc -C "$P" show d1 --json
expect_json "-j 1: two attempts, measured, done" \
	'(.attempts | length) == 2 and .status == "done" and .attempts[0].evidence.files_changed == 1 and .attempts[1].evidence.files_changed == 3'

sdiff d1 --attempt 1
expect_rc "--attempt 1: exit 0" 0
expect_match "--attempt 1: a unified diff of src/a.txt" "$T_OUT" \
	'^diff --git a/src/a.txt b/src/a.txt'
expect_match "--attempt 1: its hunk and lines" "$T_OUT" \
	'@@ -0,0 \+1,2 @@.*'
expect_match "--attempt 1: the added lines" "$T_OUT" '\+alpha one'
check "--attempt 1: only src/a.txt, not the second attempt's files nor the story" \
	test "$(grep -c '^diff --git' "$T_TMP/d.out")" = 1
git -C "$P" diff "$before" HEAD -- src/a.txt >"$T_TMP/git1"
same "--attempt 1: byte for byte what git diff prints of it" "$T_TMP/git1" "$T_TMP/d.out"

DIFF_E2E_TOKEN=$C_TOKEN sdiff d1
expect_rc "the last attempt: exit 0" 0
check "the last attempt: README.md, src/b.txt and src/conf.txt, nothing else" \
	test "$(grep '^diff --git' "$T_TMP/d.out" | tr '\n' ' ')" = \
	"diff --git a/README.md b/README.md diff --git a/src/b.txt b/src/b.txt diff --git a/src/conf.txt b/src/conf.txt "
expect_match "the last attempt: +beta" "$T_OUT" '^\+beta$'
check "no secret printed: not the password, the agent's env value nor the environment's token" \
	bash -c '! grep -qE -- "Hunter2Hunter2x9|$1|$2" "$3"' _ "$A_SECRET" "$C_TOKEN" "$T_TMP/d.out"
expect_match "the password redacted by pattern" "$T_OUT" '^\+password=\[REDACTED\]$'
expect_match "the agent's env value redacted by name" "$T_OUT" \
	'^\+agent_value \[REDACTED DIFF_AGENT_SECRET\]$'
expect_match "the environment's token redacted by name when printed" "$T_OUT" \
	'^\+ctl_value \[REDACTED DIFF_E2E_TOKEN\]$'
kept=$(find "$P/.storyctl/logs" -name 'd1.a2.*.diff' | head -n 1)
check "the diff is kept beside the log, mode 0600" \
	test -n "$kept" -a "$(stat -c %a "$kept" 2>/dev/null)" = 600
check "the kept diff was redacted with the batch's secrets when written" \
	bash -c '! grep -qE -- "Hunter2Hunter2x9|$1" "$2"' _ "$A_SECRET" "$kept"
# git's own diff of the files the secrets are not in
sdiff d1
git -C "$P" diff "$before" HEAD -- README.md src/b.txt >"$T_TMP/git2"
sed -n '/^diff --git a\/src\/conf.txt/q; p' "$T_TMP/d.out" >"$T_TMP/d2"
same "the last attempt: README.md and src/b.txt byte for byte as git diff prints them" \
	"$T_TMP/git2" "$T_TMP/d2"
DIFF_E2E_TOKEN=$C_TOKEN sdiff d1 --attempt 2
check "--attempt 2 is the last one" cmp -s "$T_TMP/d.out" <(DIFF_E2E_TOKEN=$C_TOKEN "$STORYCTL" -C "$P" diff d1)

# --- errors and attempts without a diff ------------------------------------------
sdiff d9
expect_rc "an unknown story: exit 64" 64
expect_match "... with a suggestion" "$T_ERR" "no story 'd9'.*did you mean d1\?"
sdiff d1 --attempt 7
expect_rc "an attempt the story does not have: exit 64" 64
expect_match "... with a suggestion" "$T_ERR" "no attempt 7; did you mean --attempt 2\?"
sdiff d1 --attempt 0
expect_rc "--attempt 0: exit 64" 64
sdiff d1 --attempt x
expect_rc "--attempt x: exit 64" 64
sdiff
expect_rc "no story: exit 64" 64
rm -f "$P"/.storyctl/logs/d1.a1.*.diff
sdiff d1 --attempt 1
expect_rc "a diff that was not kept: exit 1" 1
expect_match "... says why" "$T_ERR" '^storyctl: diff: attempt 1 of d1: its diff was not kept'

# an attempt that was not measured says why (the evidence's not_measured;
# a project that is not a repository does not run at all, so the row
# is made so)
sql "UPDATE attempt_evidence SET measured = 0, files_changed = -1, not_measured = 'the work tree cannot be snapshotted: test' WHERE attempt_id = (SELECT id FROM attempts WHERE story_id = 'd1' AND attempt = 1)"
sdiff d1 --attempt 1
expect_rc "an attempt not measured: exit 1" 1
expect_match "... says why, from its evidence" "$T_ERR" \
	'^storyctl: diff: attempt 1 of d1: it was not measured: the work tree cannot be snapshotted: test$'

# a ticker changes nothing: an empty diff, exit 0
run_sc -C "$P" run -j 1 t1
sdiff t1
expect_rc "an attempt that changed nothing: exit 0" 0
check "... prints nothing" test ! -s "$T_TMP/d.out"

# --- -j 3: worktrees, each story's diff against its branch -------------------------
new_project '{}' "$AGENTS"
new_story "$P" w1 1 '<!-- diff a1: src/w1.txt from w1 -->' '<!-- diff a1: rm README.md -->'
new_story "$P" w2 1 '<!-- diff a1: src/w2.txt from w2 -->'
new_story "$P" w3 2 '<!-- diff a1: lib/w3a.txt first -->' '<!-- diff a2: lib/w3b.txt second -->'
commit_all
sdiff w1
expect_rc "a story with no attempt yet: exit 64" 64
expect_match "... says so" "$T_ERR" "story 'w1' has no attempt yet"
run_sc -C "$P" run -j 3
expect_rc "-j 3: the batch runs (exit 0)" 0
for s in w1 w2; do
	sdiff "$s"
	git -C "$P" diff main "storyctl/story/$s" -- . ":!docs/stories/$s.md" >"$T_TMP/git-$s"
	same "-j 3: $s's diff is what git diff prints of its branch" "$T_TMP/git-$s" "$T_TMP/d.out"
done
sdiff w1
expect_match "-j 3: a deleted file" "$T_OUT" 'deleted file mode 100644'
sdiff w3 --attempt 1
git -C "$P" diff main storyctl/story/w3 -- lib/w3a.txt >"$T_TMP/git-w3a"
same "-j 3: w3's first attempt, its own file" "$T_TMP/git-w3a" "$T_TMP/d.out"
sdiff w3
git -C "$P" diff main storyctl/story/w3 -- lib/w3b.txt >"$T_TMP/git-w3b"
same "-j 3: w3's second attempt, its own file" "$T_TMP/git-w3b" "$T_TMP/d.out"

# --- help ------------------------------------------------------------------------
run_sc diff --help
expect_match "diff --help names --attempt" "$T_OUT" '--attempt N'

finish
