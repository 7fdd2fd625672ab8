#!/bin/bash
# Evidence (docs/evidence.md): what each attempt changed in its work
# tree besides the story file, recorded in the database, on the state
# branch and in show; boxes checked with no other change and boxes
# unchecked flagged; verify.require_diff turning unbacked ticks into an
# incomplete / NO_EVIDENCE attempt whose ticks are taken back.  Under
# -j 1 (the main tree) and -j 2 (worktrees), with the same figures.
. "$(dirname "$0")/lib.sh"
agent="$STORYCTL_SRC/tests/e2e/agents/evidence-agent"
AGENTS='{"primary": {"name": "ev", "command": ["'"$agent"'", "{attempt}", "{story_file}"], "timeout_s": 30},
  "fallback": {"name": "ev-f", "command": ["'"$agent"'", "{attempt}", "{story_file}"], "timeout_s": 30}}'

# ev_json ID: the story's JSON from show --json into T_OUT.
ev_show() { run_sc -C "$P" show "$1" --json; }

# branch_json ID: the story's JSON on the state branch into T_OUT.
branch_json() { T_OUT=$(git -C "$P" show "storyctl/state:stories/$1.json"); }

three_stories() { # JOBS
	new_project '{}' "$AGENTS"
	new_story "$P" e1 2 '<!-- evidence *: work -->'
	new_story "$P" e2 2 '<!-- evidence *: tick -->'
	new_story "$P" e3 2 '<!-- evidence a1: untick -->' '<!-- evidence *: work -->'
	sed -i 's/^- \[ \] Task 1 of e3/- [x] Task 1 of e3/' "$P/docs/stories/e3.md"
	commit_all
	run_sc -C "$P" run -j "$1"
	expect_rc "-j $1: the batch runs (exit 0)" 0
}

check_three() { # JOBS
	local j=$1 src
	for src in show branch; do
		if [ "$src" = show ]; then ev_show e1; else branch_json e1; fi
		expect_json "-j $j $src: real work: 2 files, +4 -1, listed by name" \
			'.attempts[0].evidence | .measured and .files_changed == 2 and .lines_added == 4 and .lines_removed == 1 and .flags == [] and .ticked == 2 and .unticked == 0
			and .files == [{"path": "README.md", "status": "M", "added": 1, "removed": 1, "binary": false}, {"path": "src/e1-a1.txt", "status": "A", "added": 3, "removed": 0, "binary": false}]'
		if [ "$src" = show ]; then ev_show e2; else branch_json e2; fi
		expect_json "-j $j $src: the ticker: 2 boxes, 0 files, flagged ticked_without_change" \
			'.attempts[0].evidence | .measured and .files_changed == 0 and .lines_added == 0 and .lines_removed == 0 and .files == [] and .ticked == 2 and .flags == ["ticked_without_change"]'
		expect_json "-j $j $src: without require_diff the ticker's attempt still counts (success, done)" \
			'.attempts[0].outcome == "success" and .status == "done"'
		if [ "$src" = show ]; then ev_show e3; else branch_json e3; fi
		expect_json "-j $j $src: the unticker: flagged unticked, the box named, nothing changed" \
			'.attempts[0].evidence | .files_changed == 0 and .ticked == 0 and .unticked == 1 and .first_unticked == "Task 1 of e3" and .flags == ["unticked"]'
		expect_json "-j $j $src: its next attempt's real work is measured from where it started" \
			'.attempts[1].evidence | .files_changed == 2 and .lines_added == 4 and .lines_removed == 1 and .ticked == 2 and .flags == []
			and ([.files[].path] == ["README.md", "src/e3-a2.txt"])'
	done
	check "-j $j: the database holds one evidence row per attempt" \
		test "$(sql "SELECT count(*) FROM attempt_evidence e JOIN attempts a ON a.id = e.attempt_id")" = 4
	check "-j $j: the database's figures (files, +, -, flag) per story" test \
		"$(sql "SELECT a.story_id || ':' || e.files_changed || ':' || e.lines_added || ':' || e.lines_removed || ':' || e.ticked || ':' || e.unticked || ':' || e.ticked_without_change FROM attempt_evidence e JOIN attempts a ON a.id = e.attempt_id ORDER BY a.story_id, a.seq" | tr '\n' ' ')" \
		= "e1:2:4:1:2:0:0 e2:0:0:0:2:0:1 e3:0:0:0:0:1:0 e3:2:4:1:2:0:0 "
	check "-j $j: the event log flags the ticker and the unticker, nobody else" test \
		"$(sql "SELECT story_id FROM events WHERE kind = 'evidence' ORDER BY story_id" | tr '\n' ' ')" = "e2 e3 "
	expect_match "-j $j: the ticker's event says what happened" \
		"$(sql "SELECT message FROM events WHERE kind = 'evidence' AND story_id = 'e2'")" \
		'^attempt 1: 2 boxes checked with no other change in the work tree \(ticked_without_change\)$'
	expect_match "-j $j: the unticker's event names the box" \
		"$(sql "SELECT message FROM events WHERE kind = 'evidence' AND story_id = 'e3'")" \
		'^attempt 1: 1 box checked before is unchecked now, first "Task 1 of e3" \(unticked\)$'
	run_sc -C "$P" show e2
	expect_match "-j $j: show prints the evidence line" "$T_OUT" 'evidence: 0 files changed, \+0 -0'
	expect_match "-j $j: show prints the flag" "$T_OUT" 'FLAG ticked_without_change: 2 boxes checked with no other change'
	run_sc -C "$P" show e1
	expect_match "-j $j: show lists the files" "$T_OUT" 'evidence: 2 files changed, \+4 -1 \(README.md \+1 -1, src/e1-a1.txt \+3 -0\)'
	run_sc -C "$P" show e3
	expect_match "-j $j: show flags the unticked box" "$T_OUT" 'FLAG unticked: 1 box checked before, unchecked now \(first: Task 1 of e3\)'
}

# --- -j 1: the main tree -------------------------------------------------------
three_stories 1
check_three 1
check "-j 1: storyctl's own files (.storyctl/) never counted" \
	test "$(sql "SELECT count(*) FROM attempt_evidence WHERE files LIKE '%.storyctl%'")" = 0

# --- -j 2: worktrees -------------------------------------------------------------
three_stories 2
check_three 2

# --- verify.require_diff: the ticker's attempt is incomplete / NO_EVIDENCE --------
require_diff() { # JOBS
	local j=$1
	EXTRA_JSON='"verify": {"require_diff": true},' new_project '{}' "$AGENTS"
	new_story "$P" r1 2 '<!-- evidence a1: tick -->' '<!-- evidence *: work -->'
	new_story "$P" w1 1 '<!-- evidence *: work -->'
	commit_all
	run_sc -C "$P" run -j "$j"
	expect_rc "-j $j require_diff: the batch runs (exit 0)" 0
	ev_show r1
	expect_json "-j $j require_diff: the ticker's attempt is incomplete / NO_EVIDENCE" \
		'.attempts[0].outcome == "incomplete" and .attempts[0].error_code == "NO_EVIDENCE" and (.attempts[0].error_message | test("2 boxes checked with no other change in the work tree; opened again \\(verify.require_diff\\)"))'
	expect_json "-j $j require_diff: no progress credited: its boxes were opened again (0/2)" \
		'.attempts[0].tasks_completed == 0 and .attempts[0].evidence.ticked == 2 and .attempts[0].evidence.flags == ["ticked_without_change"]'
	expect_json "-j $j require_diff: the next attempt does the work and the story is done" \
		'.attempts[1].outcome == "success" and .attempts[1].evidence.ticked == 2 and .attempts[1].evidence.files_changed == 2 and .status == "done" and (.attempts | length) == 2'
	check "-j $j require_diff: the database says NO_EVIDENCE" \
		test "$(sql "SELECT error_code FROM attempts WHERE story_id = 'r1' ORDER BY seq LIMIT 1")" = NO_EVIDENCE
	expect_match "-j $j require_diff: the event says the ticks were opened again" \
		"$(sql "SELECT message FROM events WHERE kind = 'evidence' AND story_id = 'r1'")" \
		'opened again: verify.require_diff'
	ev_show w1
	expect_json "-j $j require_diff: real work passes as before" \
		'.attempts[0].outcome == "success" and .attempts[0].error_code == null and .status == "done"'
	branch_json r1
	expect_json "-j $j require_diff: the state branch has the code and the flag" \
		'.attempts[0].error_code == "NO_EVIDENCE" and .attempts[0].evidence.flags == ["ticked_without_change"]'
}
require_diff 1
require_diff 2

# the snapshots' objects are storyctl's, not the repository's: no
# dangling tree or blob in .git, and git gc leaves nothing loose
check "the snapshots' objects are in the state dir's own store" \
	[ -n "$(find "$P/.storyctl/evidence-objects" -type f | head -n 1)" ]
check "no dangling object in the repository" \
	bash -c '! git -C "$1" fsck --no-progress --dangling 2>&1 | grep -q dangling' _ "$P"

# A snapshot reads what changed, not the whole tree (docs/evidence.md#cost):
# 300 files nobody touches beside 10 stories whose agent works; under
# strace (the controller alone) the untouched files are stat'ed by the
# first snapshot of the run, not by each of the 20.  Before the watch
# every snapshot stat'ed every one (20 x 300 and more).
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null &&
	[ "$(cat /proc/sys/fs/inotify/max_user_instances 2>/dev/null || echo 0)" -gt 0 ]; then
	new_project '{}' "$AGENTS"
	mkdir -p "$P/big"
	for i in $(seq 1 300); do echo "$i" >"$P/big/f$i.txt"; done
	for i in $(seq 1 10); do new_story "$P" "b$i" 1 '<!-- evidence *: work -->'; done
	commit_all
	(cd "$P" && strace -qq -e trace=newfstatat,statx,lstat,stat,openat -o "$T_TMP/ev-trace" "$STORYCTL" run >/dev/null 2>&1)
	looks=$(grep -cE '"([^"]*/)?f[0-9]+\.txt"' "$T_TMP/ev-trace")
	ev_show b10
	expect_json "a batch of 10 under strace: each attempt still measured" \
		'.status == "done" and .attempts[0].evidence.measured and .attempts[0].evidence.files_changed == 2'
	check "300 untouched files looked at by one snapshot, not by 20 ($looks looks)" \
		test "$looks" -le 600
	# one read of the story serves the count and the boxes: loaded, then
	# read before the attempt and after it (and by a progress poll while
	# the agent runs); the evidence read it twice more before
	opens=$(grep -cE 'openat\(.*/b10\.md"' "$T_TMP/ev-trace")
	check "the story file read once at each end of its attempt ($opens opens)" \
		test "$opens" -le 4
else
	ok "# skip a snapshot reads what changed (no strace, no ptrace, or no inotify)"
fi

finish
