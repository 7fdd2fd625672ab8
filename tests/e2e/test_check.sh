#!/bin/bash
# `storyctl check` as a preflight (issue 13, docs/configuration.md): every
# problem run would hit, found in one run, with the exit status run would
# fail with; warnings for what run would do unexpectedly; --json.  And
# `storyctl tasks STORY`: the lines that were counted, and why
# (docs/stories.md).
. "$(dirname "$0")/lib.sh"

# --- a sound project: ok, with warnings --------------------------------------
new_project
new_story "$P" good 2
# items that look like tasks but are not counted, the first on line 7
cat >"$P/docs/stories/marks.md" <<'MD'
# Story marks

## Tasks / Subtasks

- [x] Task 1
  - [x] 1.1 done
- [-] Task 2 cancelled
- [ ]* 3 optional (Kiro)
- [ ] Task 4
MD
# no heading at all: the whole file is the Tasks section
printf -- '- [x] one\n- [ ] two\n' >"$P/docs/stories/whole.md"
commit_all
run_sc -C "$P" check
expect_rc "check passes with warnings only (exit 0)" 0
expect_match "the plan lists every story" "$T_OUT" 'good +docs/stories/good\.md +0/2 tasks, 0/2 subtasks'
expect_match "items not counted: a warning naming the story, file and line" "$T_OUT" \
	'marks \(docs/stories/marks\.md\): 2 items that look like tasks but are not counted, the first on line 7: \[-\] Task 2 cancelled'
expect_match "whole-file counting: a warning" "$T_OUT" \
	'whole \(docs/stories/whole\.md\): no headings: the whole file is counted'
expect_match "the summary says ok and counts the warnings" "$T_OUT" '^ok: 3 stories ready \(2 warnings\)$'

run_sc -C "$P" check --json
expect_rc "check --json: exit 0" 0
expect_json "--json: ok, no errors, two warnings" \
	'.ok == true and .errors == [] and (.warnings | length) == 2'
expect_json "--json: each warning names its story and file" \
	'[.warnings[] | .story + " " + .file] == ["marks docs/stories/marks.md", "whole docs/stories/whole.md"]'
expect_json "--json: a story's tasks, subtasks and heading" \
	'.stories[] | select(.id == "good") | .tasks_completed == 0 and .tasks_total == 2 and .subtasks_completed == 0 and .subtasks_total == 2 and .heading == "tasks / subtasks" and .whole_file == false and .draft == false and .skipped_items == 0 and .warnings == [] and .errors == [] and .file == "docs/stories/good.md" and has("status_line")'
expect_json "--json: the items not counted, with the first one's line" \
	'.stories[] | select(.id == "marks") | .skipped_items == 2 and .skipped_first_line == 7 and .tasks_total == 2 and .tasks_completed == 1 and (.warnings | length) == 1'
expect_json "--json: the whole-file story" \
	'.stories[] | select(.id == "whole") | .whole_file == true and .heading == null and (.warnings[0] | test("whole file"))'
expect_json "--json: every agent with its resolved program" \
	'[.agents[] | .role] == ["primary", "fallback"] and all(.agents[]; .resolved != null and (.program | test("sim-agent$")))'

# --- tasks STORY ----------------------------------------------------------------
cat >"$P/docs/stories/shape.md" <<'MD'
# Story shape

## Acceptance Criteria
- [x] criterion

## Tasks / Subtasks
- [x] Task 1
  - [ ] 1.1 sub
- [~] Task 2 half
- [ ] Task 3

## Dev Notes
MD
run_sc -C "$P" tasks shape
expect_rc "tasks: exit 0" 0
expect_match "tasks: the section used" "$T_OUT" '^section: ## Tasks / Subtasks \(line 6\)$'
expect_match "tasks: a checkbox outside the section" "$T_OUT" \
	'^ +4  \[x\]  outside  criterion  \(outside the Tasks section\)$'
expect_match "tasks: a task, its line and why" "$T_OUT" \
	'^ +7  \[x\]  task     Task 1  \(task under ## Tasks / Subtasks\)$'
expect_match "tasks: a subtask names its task's line" "$T_OUT" \
	'^ +8  \[ \]  subtask  1\.1 sub  \(subtask of line 7\)$'
expect_match "tasks: a skipped item says why" "$T_OUT" \
	'^ +9  \[ \]  skipped  \[~\] Task 2 half  \(not counted: \[~\] is not a checkbox\)$'
expect_match "tasks: the heading that ends the section" "$T_OUT" \
	'^ +12 +heading  ## Dev Notes  \(ends the Tasks section\)$'
expect_match "tasks: the totals" "$T_OUT" \
	'^1/2 tasks, 0/1 subtasks, 1 item not counted \(the first on line 9\)$'
run_sc -C "$P" tasks shape --json
expect_json "tasks --json: totals and the items" \
	'.story == "shape" and .tasks_total == 2 and .tasks_completed == 1 and .subtasks_total == 1 and .skipped_items == 1 and ([.items[] | "\(.line) \(.kind)"] == ["4 outside", "6 heading", "7 task", "8 subtask", "9 skipped", "10 task", "12 heading"])'
run_sc -C "$P" tasks docs/stories/shape.md
expect_rc "tasks: a story named by its file" 0
run_sc -C "$P" tasks whole
expect_match "tasks: the whole file" "$T_OUT" '^section: whole file: no headings$'
run_sc -C "$P" tasks nosuch
expect_rc "tasks: an unknown story is a usage error (64)" 64
expect_match "tasks: the unknown story is named" "$T_ERR" "no story 'nosuch'"
run_sc -C "$P" tasks
expect_rc "tasks: no story named (64)" 64
rm "$P/docs/stories/shape.md"
# a story that leads out of the repository is refused, as run refuses it
printf -- '- [ ] outside\n' >"$T_TMP/outside.md"
ln -s "$T_TMP/outside.md" "$P/docs/stories/out.md"
run_sc -C "$P" tasks out
expect_rc "tasks: a story that leads out of the root (65)" 65
expect_match "... named with where it leads" "$T_ERR" 'docs/stories/out\.md: story file resolves to .*outside\.md, outside the project root'
run_sc -C "$P" check --json
expect_json "check: the same story is an error, the others still read" \
	'(.errors | length) == 1 and .errors[0].story == "out" and (.errors[0].message | test("outside the project root")) and ([.stories[] | select(.tasks_total > 0)] | length) == 3'
rm "$P/docs/stories/out.md"

# --- every error in one run --------------------------------------------------------
printf '# no tasks\n\n## Notes\n\n- [ ] a note\n' >"$P/docs/stories/notes.md"
jq '.agents.primary.command[0] = "no-such-agent-xyz"' "$P/storyctl.json" >"$P/c.json" &&
	mv "$P/c.json" "$P/storyctl.json"
run_sc -C "$P" check
expect_rc "a missing agent program: exit 69, as run would" 69
expect_match "... named as run names it" "$T_OUT" 'agent primary \(sim-p\): agent program not found: no-such-agent-xyz'
expect_match "... and the story without tasks is reported too" "$T_OUT" \
	'notes \(docs/stories/notes\.md\): no tasks: the story has headings but no Tasks section'
expect_match "... every story is still in the plan" "$T_OUT" 'whole +docs/stories/whole\.md +1/2 tasks'
expect_match "... the warnings are still given" "$T_OUT" 'marks \(docs/stories/marks\.md\): 2 items'
expect_match "stderr: how many problems, and the first" "$T_ERR" '^storyctl: 2 problems; the first: agent primary'
run_sc -C "$P" check --json
expect_rc "check --json: the same exit status" 69
expect_json "--json: not ok, both errors, all four stories" \
	'.ok == false and (.errors | length) == 2 and (.stories | length) == 4'
expect_json "--json: the agent is not resolved" \
	'.agents[] | select(.role == "primary") | .resolved == null and .program == "no-such-agent-xyz"'
expect_json "--json: the story's own error" \
	'.stories[] | select(.id == "notes") | (.errors | length) == 1 and .tasks_total == 0'
run_sc -C "$P" run
expect_rc "run fails as check said (69)" 69

# a story file that cannot be read stops run first: 65, and still every
# other problem is listed
STORIES_JSON='"stories": ["docs/stories/good.md", "docs/stories/gone.md", "docs/stories/alsogone.md"]' \
	new_project '{}' '{"primary": {"command": ["no-such-agent-xyz", "{prompt}"]}}'
new_story "$P" good 1
commit_all
run_sc -C "$P" check --json
expect_rc "an unreadable story: 65" 65
expect_json "--json: both unreadable stories and the agent are errors" \
	'[.errors[] | .story // .message] == ["gone", "alsogone", "agent primary (no-such-agent-xyz): agent program not found: no-such-agent-xyz"]'
expect_json "--json: no fallback agent is a warning" \
	'.warnings | any(.message | test("^no fallback agent"))'

# --- zero stories ---------------------------------------------------------------------
new_project
run_sc -C "$P" check
expect_rc "zero stories: an error (65)" 65
expect_match "... saying the glob matched nothing" "$T_OUT" 'no stories: stories_glob matches no file'

# --- outside a git repository ----------------------------------------------------------
new_project
new_story "$P" s1 1
rm -rf "$P/.git"
run_sc -C "$P" check
expect_rc "outside a git repository: an error (65)" 65
expect_match "... naming it" "$T_OUT" 'not a git repository'
run_sc -C "$P" check --json
expect_json "--json: the repository error, the story still counted" \
	'.ok == false and (.errors | length) == 1 and .stories[0].tasks_total == 1'

# --- a config that does not load: JSON too -----------------------------------------
new_project '{"max_atempts": 3}'
new_story "$P" s1 1
run_sc -C "$P" check --json
expect_rc "a bad config: 65" 65
expect_json "--json: the config error" \
	'.ok == false and (.errors[0].message | test("policy\\.max_atempts"))'
expect_match "... and on stderr" "$T_ERR" 'policy\.max_atempts'
run_sc -C "$P" check extra
expect_rc "check: an unexpected argument (64)" 64

# --- long ids keep the columns ---------------------------------------------------------
new_project
new_story "$P" a-very-long-story-identifier-that-goes-on 1
new_story "$P" b 1
commit_all
run_sc -C "$P" check
expect_match "the file column starts after the longest id" "$T_OUT" \
	'  2  b {41}docs/stories/b\.md'
finish
