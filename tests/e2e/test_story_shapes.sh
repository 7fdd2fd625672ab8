#!/bin/bash
# Story files in the shapes found in real public repositories (BMAD v4
# and v6, spec-kit, Kiro; issue 13), written here in a few lines each:
# `storyctl check --json` and `storyctl tasks --json` must count what
# GitHub renders in the Tasks section (docs/stories.md).  When the
# cmark-gfm command is installed, every file is also rendered with it and
# storyctl must have seen exactly the checkboxes GitHub shows.
. "$(dirname "$0")/lib.sh"

new_project
S="$P/docs/stories"
mkdir -p "$S"

# BMAD v6: a title that mentions tasks, numbered acceptance criteria, the
# AI review follow-ups inside the section, boxes in Dev Notes' code
cat >"$S/v6.md" <<'MD'
# Story 2.1: Tasks API

Status: ready-for-dev

## Acceptance Criteria

1. the list is paged
2. [x] a criterion written as a box

## Tasks / Subtasks

- [x] Task 1: endpoint (AC: 1)
  - [x] 1.1 route
  - [ ] 1.2 paging
- [ ] Task 2: tests (AC: 2)
  - [ ] 2.1 unit

### Review Follow-ups (AI)

- [ ] [AI-Review][High] handle an empty page

## Dev Notes

```md
- [ ] not a task: an example in a code block
```
MD

# BMAD v4: "## Status" over Draft, tasks as an ordered list
cat >"$S/v4.md" <<'MD'
# Story 3.2: Export

## Status

Draft

## Tasks / Subtasks

1. [x] Task 1: write the exporter
   - [x] 1.1 csv
2. [ ] Task 2: wire the button

## Dev Notes

Nothing yet.
MD

# a code fence left open inside an item: GitHub ends it with the item
cat >"$S/fence.md" <<'MD'
## Tasks / Subtasks

- [x] Task 1: build
  ```sh
  make all
- [ ] Task 2: test
- [ ] Task 3: ship
MD

# a task indented by one space, and a subtask under it; a numbered
# heading with a colon
cat >"$S/slip.md" <<'MD'
## 3. Tasks:

- [x] Task 1
 - [ ] Task 2 (one space in)
   - [ ] 2.1 sub
MD

# the template's empty heading above the real one
cat >"$S/repeated.md" <<'MD'
# Story 5.1

## Tasks / Subtasks

## Dev Notes

- [x] a note, not a task

## Tasks / Subtasks

- [x] Task 1
- [ ] Task 2
MD

# CRLF line ends and a byte-order mark, as a Windows checkout gives them
printf '\xEF\xBB\xBF# Story 6.1\r\n\r\n## Tasks / Subtasks\r\n\r\n- [x] Task 1\r\n  - [ ] 1.1 sub\r\n- [ ] Task 2\r\n\r\n## Dev Notes\r\n- [ ] no\r\n' \
	>"$S/crlf.md"

# BMAD in Spanish, and in Chinese with the English name in parentheses
cat >"$S/es.md" <<'MD'
# Historia 7.1

## Criterios de Aceptación
- [x] criterio

## Tareas / Subtareas
- [x] **T1: configurar**
  - [x] instalar
- [ ] **T2: probar**
MD
cat >"$S/zh.md" <<'MD'
# 故事 7.2

## 任务上下文
说明

## 任务 / 子任务 (Tasks / Subtasks)

- [ ] Task 1: 后端
  - [x] 1.1 接口
MD

# spec-kit: "# Tasks: <feature>" over phase headings
cat >"$S/speckit.md" <<'MD'
# Tasks: Offline sync

**Input**: design documents

## Format: `[ID] [P?] [Story] Description`

- **[P]**: can run in parallel

## Phase 1: Setup

- [x] T001 create the project
- [x] T002 [P] add the linter

## Phase 2: User Story 1 (Priority: P1)

- [ ] T003 [US1] queue actions offline

## Notes

- [P] tasks touch different files
MD

# Kiro: the title alone, optional "[ ]*" and "[-]" marks (not boxes on
# GitHub, reported by check)
cat >"$S/kiro.md" <<'MD'
# Implementation Plan

- [x] 1. Set up the project
  - [x] 1.1 Create the layout
  - [ ]* 1.2 Write a property test
- [-] 2. Build the parser
  - [ ] 2.1 Tokens
- [ ] 3. Checkpoint
MD

# a QA heading that mentions tasks before the real section
cat >"$S/qa.md" <<'MD'
# Story 8.1

## QA Results

### Next Developer Tasks

- [ ] follow up on the flaky test

## Tasks / Subtasks

- [x] Task 1
- [x] Task 2
MD

# a setext heading; boxes in a block quote and in HTML are no checkboxes
# on GitHub, nor is a box with no text
cat >"$S/setext.md" <<'MD'
Story 9.1
=========

Tasks
-----

- [ ] Task 1
- [ ]

> - [x] quoted, not a task

<ul><li>[x] html, not a task</li></ul>

Notes
-----
- [ ] after the section
> - [x] quoted after the section
MD
commit_all

# --- what GitHub renders in the Tasks section ----------------------------------
# id tasks_completed tasks_total subtasks_completed subtasks_total heading
expect_counts() {
	local id=$1 tc=$2 tt=$3 sc=$4 st=$5 head=$6
	run_sc -C "$P" tasks "$id" --json
	if [ "$T_RC" -ne 0 ]; then
		not_ok "$id: tasks --json exits 0 (exit $T_RC)"
		return
	fi
	expect_json "$id: $tc/$tt tasks, $sc/$st subtasks under \"$head\"" \
		".tasks_completed == $tc and .tasks_total == $tt and .subtasks_completed == $sc and .subtasks_total == $st and .heading == \"$head\""
}
expect_counts v6 1 3 1 3 "tasks / subtasks"
expect_counts v4 1 2 1 1 "tasks / subtasks"
expect_counts fence 1 3 0 0 "tasks / subtasks"
expect_counts slip 1 2 0 1 "tasks"
expect_counts repeated 1 2 0 0 "tasks / subtasks"
expect_counts crlf 1 2 0 1 "tasks / subtasks"
expect_counts es 1 2 1 1 "tareas / subtareas"
expect_counts zh 0 1 1 1 "任务 / 子任务 (tasks / subtasks)"
expect_counts speckit 2 3 0 0 "tasks: offline sync"
expect_counts kiro 1 2 1 2 "implementation plan"
expect_counts qa 2 2 0 0 "tasks / subtasks"
expect_counts setext 0 1 0 0 "tasks"

run_sc -C "$P" tasks fence --json
expect_json "fence: the task after the open fence is the stalled one" \
	'[.items[] | select(.kind == "task" and .checked == false)][0].text == "Task 2: test"'
run_sc -C "$P" tasks kiro --json
expect_json "kiro: the optional and [-] items are listed as not counted" \
	'.skipped_items == 2 and ([.items[] | select(.kind == "skipped") | .text] | length) == 2'
run_sc -C "$P" tasks setext --json
expect_json "setext: boxes in block quotes are listed as ignored, in and out of the section" \
	'[.items[] | select(.kind == "ignored") | .line] == [10, 17]'
expect_json "setext: the box with no text is not counted, and says so" \
	'.skipped_items == 1 and ([.items[] | select(.kind == "skipped") | .line] == [8])'

# --- check --json: the same counts, every story ready --------------------------
run_sc -C "$P" check --json
expect_rc "check: every shape is a story with tasks (exit 0)" 0
expect_json "check: no story is invalid" '.errors == [] and (.stories | length) == 12'
expect_json "check: the counts agree with tasks --json" \
	'[.stories[] | select(.id == "v6" or .id == "speckit" or .id == "zh") | [.id, .tasks_completed, .tasks_total, .subtasks_completed, .subtasks_total]] | sort == [["speckit", 2, 3, 0, 0], ["v6", 1, 3, 1, 3], ["zh", 0, 1, 1, 1]]'
expect_json "check: no whole-file warning for a file with a Tasks section" \
	'all(.stories[]; .whole_file == false)'
expect_json "check: items not counted are reported on their stories only" \
	'[.stories[] | select(.skipped_items > 0) | .id] | sort == ["kiro", "setext"]'

# --- the same boxes GitHub shows (when the cmark-gfm command is installed) -----
if command -v cmark-gfm >/dev/null 2>&1; then
	for f in "$S"/*.md; do
		id=$(basename "$f" .md)
		html=$(cmark-gfm -e tasklist -e table -e strikethrough -e autolink --to html "$f")
		gh_all=$(printf '%s' "$html" | grep -o '<input type="checkbox"' | wc -l)
		gh_checked=$(printf '%s' "$html" | grep -o '<input type="checkbox" checked=""' | wc -l)
		run_sc -C "$P" tasks "$id" --json
		sc=$(printf '%s' "$T_OUT" | jq -r '[.items[] | select(.kind == "task" or .kind == "subtask" or .kind == "outside")] | "\(length) \([.[] | select(.checked)] | length)"')
		if [ "$sc" = "$gh_all $gh_checked" ]; then
			ok "$id: storyctl saw the $gh_all checkboxes cmark-gfm renders ($gh_checked checked)"
		else
			not_ok "$id: cmark-gfm renders $gh_all checkboxes ($gh_checked checked), storyctl saw $sc"
		fi
	done
else
	ok "cmark-gfm command not installed: rendering cross-check skipped"
fi

# --- a story whose only checklist is a Definition of Done ----------------------
cat >"$S/dod.md" <<'MD'
# Story 10.1

## Story

As a user I want a thing.

## Definition of Done

- [x] tests pass
- [x] docs updated
MD
commit_all
run_sc -C "$P" check --json
expect_json "a Definition of Done never makes a story done: it has no tasks, an error" \
	'.ok == false and ([.errors[] | .story] == ["dod"]) and ([.stories[] | select(.id == "dod") | .tasks_total] == [0])'
run_sc -C "$P" tasks dod --json
expect_json "dod: the boxes are listed outside any Tasks section" \
	'.heading == null and .whole_file == false and ([.items[] | select(.kind == "outside")] | length) == 2'

finish
