/* test_progress.c - progress_parse(): task counting (docs/stories.md);
 * progress_items(): what `storyctl tasks` lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/progress.h"

struct pcase {
	const char *name;
	const char *text;
	int total;
	int done;
	const char *stalled;
};

static const struct pcase cases[] = {
    {"empty", "", 0, 0, ""},
    {"no tasks", "# Story\n\nSome prose.\n- a list item\n", 0, 0, ""},
    {"basic", "- [ ] one\n- [x] two\n- [X] three\n", 3, 2, "one"},
    {"all done", "- [x] a\n- [X] b\n", 2, 2, ""},
    {"star and plus bullets", "* [x] a\n+ [ ] b\n* [ ] c\n", 3, 1, "b"},
    {"indented subtasks not counted",
	"- [x] a\n  - [ ] sub\n\t- [ ] tabsub\n    - [ ] deep\n- [ ] b\n", 2, 1,
	"b"},
    /* issue 13: what GitHub renders decides (cmark-gfm), not indentation
	 * counted by hand: up to three spaces is still a top-level item,
	 * and the tab makes b a subtask of a */
    {"indented up to three is a task", "  - [ ] a\n\t- [x] b\n", 1, 0, "a"},
    {"ordered lists are tasks too", "1. [ ] one\n2) [x] two\n- [ ] real\n", 3,
	1, "one"},
    {"no space after bullet", "-[ ] a\n*[x] b\n- [ ] c\n", 1, 0, "c"},
    {"no space after box", "- [ ]a\n- [x]b\n", 0, 0, ""},
    /* a box with nothing after it is no task on GitHub */
    {"a bare box is no task", "- [x] a\n- [ ]\n- [ ] c\n", 2, 1, "c"},
    {"empty task text with blanks", "- [ ]   \n", 1, 0, "task 1"},
    {"other box content", "- [-] a\n- [o] b\n- [] c\n- [ x] d\n", 0, 0, ""},
    {"several blanks after bullet", "-   [ ] wide\n-\t[x] tab\n", 2, 1, "wide"},
    {"stalled text trimmed", "- [x] a\n- [ ]   spaced out \t \n", 2, 1,
	"spaced out"},
    {"crlf", "- [x] a\r\n- [ ] b\r\n- [ ] c\r\n", 3, 1, "b"},
    /* issue 11: a UTF-8 byte-order mark hides nothing */
    {"bom before a task", "\xEF\xBB\xBF- [ ] a\n- [x] b", 2, 1, "a"},
    {"bom before the tasks heading",
	"\xEF\xBB\xBF## Tasks\n- [ ] a\n## Notes\n- [x] b\n", 1, 0, "a"},
    {"bom and crlf", "\xEF\xBB\xBF- [x] a\r\n- [ ] b\r\n", 2, 1, "b"},
    {"bom in the middle is text", "- [ ] a\n\xEF\xBB\xBF- [x] b\n", 1, 0, "a"},
    {"crlf bare box", "- [ ]\r\n", 0, 0, ""},
    {"no trailing newline", "- [x] a\n- [ ] last", 2, 1, "last"},
    {"no trailing newline, bare box", "- [ ] a\n- [X]", 1, 0, "a"},
    {"fenced code ignored",
	"- [ ] a\n```markdown\n- [ ] in code\n- [x] in code\n```\n- [x] "
	"b\n",
	2, 1, "a"},
    {"tilde fence ignored", "~~~\n- [ ] x\n~~~\n- [ ] y\n", 1, 0, "y"},
    {"fence closes only with same char",
	"```\n- [ ] x\n~~~\n- [ ] y\n```\n- [ ] z\n", 1, 0, "z"},
    {"longer fence needs longer close", "````\n```\n- [ ] x\n````\n- [ ] y\n",
	1, 0, "y"},
    {"unclosed fence hides the rest", "- [x] a\n```\n- [ ] b\n", 1, 1, ""},
    /* headings, none of them the tasks: no fallback to the whole file
	 * (a Definition of Done must not make a story done) */
    {"heading in fence is no scope",
	"```\n## Tasks\n```\n- [ ] a\n## Other\n- [ ] b\n", 0, 0, ""},
    {"tasks heading scopes",
	"- [ ] before\n## Tasks / Subtasks\n- [x] t1\n- [ ] t2\n"
	"## Dev Notes\n- [ ] after\n",
	2, 1, "t2"},
    {"tasks heading upper case h1",
	"- [ ] before\n# TASKS\n- [ ] t1\n# Notes\n- [ ] after\n", 1, 0, "t1"},
    {"tasks heading h3 lower case",
	"## Story\n- [ ] x\n### tasks\n- [x] t1\n#### Detail\n- [ ] t2\n"
	"### Notes\n- [ ] y\n",
	2, 1, "t2"},
    {"deeper headings stay in scope",
	"## Tasks\n### Task 1\n- [x] a\n### Task 2\n- [ ] b\n## End\n"
	"- [ ] c\n",
	2, 1, "b"},
    {"higher heading ends scope", "### Tasks\n- [x] a\n# Top\n- [ ] b\n", 1, 1,
	""},
    /* two task lists disagree: the open one counts (docs/stories.md) */
    {"an open task list wins over an all-checked one",
	"## Tasks\n- [x] a\n## Notes\n## More tasks\n- [ ] b\n", 1, 0, "b"},
    {"first tasks heading only while it is open",
	"## Tasks\n- [ ] a\n## Notes\n## More tasks\n- [ ] b\n", 1, 0, "a"},
    {"tasks heading with no tasks", "- [ ] a\n## Tasks\nnone yet\n", 0, 0, ""},
    {"tasks heading closing hashes", "## Tasks ##\n- [ ] a\n", 1, 0, "a"},
    {"hashtag is no heading", "#tasks\n- [ ] a\n- [ ] b\n", 2, 0, "a"},
    {"seven hashes is no heading", "####### Tasks\n- [ ] a\n- [x] b\n", 2, 1,
	"a"},
    {"heading indented up to three",
	"   ## Tasks\n- [ ] a\n## X\n- [ ] "
	"b\n",
	1, 0, "a"},
    {"subtasks heading counts as tasks heading",
	"- [ ] x\n## Subtasks\n- [ ] a\n", 1, 0, "a"},
    {"control chars in stalled",
	"- [ ] a\x01"
	"b\x7f"
	"c\n",
	1, 0, "a b c"},
    {"invalid utf8 replaced",
	"- [ ] a\xff\xfe"
	"b\xc3\n",
	1, 0, "a??b?"},
    {"overlong and surrogate rejected", "- [ ] \xc0\xaf\xed\xa0\x80x\n", 1, 0,
	"?????x"},
    {"valid utf8 kept", "- [ ] caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80\n", 1,
	0, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80"},
    {"blockquote task not counted", "> - [ ] quoted\n- [ ] real\n", 1, 0,
	"real"},
};

/* One cmocka test per table row, so a failure names its case. */
static void
test_case(void **state)
{
	const struct pcase *c = *state;
	struct progress p;

	progress_parse(&p, c->text, strlen(c->text));
	assert_int_equal(p.counts.tasks_total, c->total);
	assert_int_equal(p.counts.tasks_completed, c->done);
	assert_string_equal(p.stalled_task, c->stalled);
}

static void
test_null_and_zero_length(void **state)
{
	struct progress p;

	memset(&p, 0x55, sizeof(p));
	progress_parse(&p, NULL, 0);
	assert_int_equal(p.counts.tasks_total, 0);
	assert_int_equal(p.counts.tasks_completed, 0);
	assert_string_equal(p.stalled_task, "");

	/* len bounds the text even when more bytes follow */
	progress_parse(&p, "- [ ] a\n- [ ] b\n", 8);
	assert_int_equal(p.counts.tasks_total, 1);
	assert_string_equal(p.stalled_task, "a");
}

static void
test_nul_bytes(void **state)
{
	static const char text[] = "- [x] a\n- [ ] b\0c\n\0\0- [ ] d\n- [x] e";
	struct progress p;

	progress_parse(&p, text, sizeof(text) - 1);
	/* the line starting with NULs is no task (on GitHub the lazy
	 * continuation of b's); the stalled task is b's line, NUL dropped */
	assert_int_equal(p.counts.tasks_total, 3);
	assert_int_equal(p.counts.tasks_completed, 2);
	assert_string_equal(p.stalled_task, "b c");
}

static void
test_binary_garbage(void **state)
{
	unsigned char buf[4096];
	struct progress p;
	uint32_t x = 12345;
	size_t i;

	/* deterministic pseudo-random bytes with some newlines and boxes */
	for (i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	memcpy(buf + 100, "\n- [ ] \xff\xff\n", 11);
	progress_parse(&p, (const char *)buf, sizeof(buf));
	assert_true(p.counts.tasks_total >= 1);
	assert_true(p.counts.tasks_completed <= p.counts.tasks_total);
	assert_true(strlen(p.stalled_task) < PROGRESS_TASK_MAX);
}

static void
test_truncation_at_utf8_boundary(void **state)
{
	char text[2 * PROGRESS_TASK_MAX + 16];
	struct progress p;
	size_t i, n, len;

	/* "- [ ] " then many 3-byte characters: the cut must not split one */
	memcpy(text, "- [ ] x", 7);
	n = 7;
	for (i = 0; i < PROGRESS_TASK_MAX / 3 + 5; i++) {
		memcpy(text + n, "\xe2\x82\xac", 3);
		n += 3;
	}
	text[n] = '\0';
	progress_parse(&p, text, n);
	assert_int_equal(p.counts.tasks_total, 1);
	len = strlen(p.stalled_task);
	assert_true(len <= PROGRESS_TASK_MAX - 1);
	assert_true(len > PROGRESS_TASK_MAX - 5);
	/* 1 byte "x" then whole 3-byte characters */
	assert_int_equal((len - 1) % 3, 0);
	assert_memory_equal(p.stalled_task + len - 3, "\xe2\x82\xac", 3);
}

static void
test_long_ascii_truncated(void **state)
{
	char text[1024];
	struct progress p;

	memset(text, 'a', sizeof(text));
	memcpy(text, "- [ ] ", 6);
	progress_parse(&p, text, sizeof(text));
	assert_int_equal(p.counts.tasks_total, 1);
	assert_int_equal(strlen(p.stalled_task), PROGRESS_TASK_MAX - 1);
}

static void
test_big_counts(void **state)
{
	static const char item[] = "- [x] done\n";
	char text[sizeof(item) * 1000 + 16];
	struct progress p;
	size_t i, n = 0;

	for (i = 0; i < 1000; i++) {
		memcpy(text + n, item, sizeof(item) - 1);
		n += sizeof(item) - 1;
	}
	memcpy(text + n, "- [ ] open", 10);
	n += 10;
	progress_parse(&p, text, n);
	assert_int_equal(p.counts.tasks_total, 1001);
	assert_int_equal(p.counts.tasks_completed, 1000);
	assert_string_equal(p.stalled_task, "open");
}

static void
test_story_file_shape(void **state)
{
	/* the shape of a BMAD-style story file */
	static const char text[] = "# Story 1.2: Login\n\n"
				   "Status: ready-for-dev\n\n"
				   "## Story\n\nAs a user ...\n\n"
				   "## Acceptance Criteria\n\n"
				   "1. [ ] numbered criterion\n"
				   "- [ ] criterion that looks like a task\n\n"
				   "## Tasks / Subtasks\n\n"
				   "- [x] Task 1: Create the form (AC: 1)\n"
				   "  - [x] Subtask 1.1\n"
				   "  - [ ] Subtask 1.2\n"
				   "- [ ] Task 2: Validate input (AC: 2)\n"
				   "  - [ ] Subtask 2.1\n"
				   "- [ ] Task 3: Tests\n\n"
				   "## Dev Notes\n\n"
				   "```bash\n- [ ] not a task\n```\n"
				   "- [ ] note item\n";
	struct progress p;

	progress_parse(&p, text, sizeof(text) - 1);
	assert_int_equal(p.counts.tasks_total, 3);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_string_equal(p.stalled_task, "Task 2: Validate input (AC: 2)");
}

/* issue 13: story shapes from real repositories, each counted as GitHub
 * renders it (cmark-gfm is GitHub's renderer). */
struct gcase {
	const char *name;
	const char *text;
	const char *heading; /* configured; NULL: the default rule */
	int total, done, subtotal, subdone;
	const char *used; /* heading counted ("" none); "*" whole file */
	const char *stalled;
};

static const struct gcase gcases[] = {
    {"bmad tasks / subtasks with subtasks",
	"# Story 1.2: Tasks API\n\n## Status\nReady\n\n## Tasks / "
	"Subtasks\n\n- [x] Task 1 (AC: 1)\n  - [x] 1.1 schema\n  - [ ] 1.2 "
	"migration\n- [ ] Task 2\n  - [ ] 2.1 api\n\n## Dev Notes\n- [ ] "
	"not a task\n",
	NULL, 2, 1, 3, 1, "tasks / subtasks", "Task 2"},
    {"a title that mentions tasks is not the section",
	"# Tasks dashboard\n\n## Acceptance Criteria\n- [x] ac\n\n## Tasks\n- "
	"[ ] t1\n",
	NULL, 1, 0, 0, 0, "tasks", "t1"},
    {"Tasks / Subtasks wins over a QA heading that mentions tasks",
	"## Next Developer Tasks\n- [ ] qa follow-up\n\n## Tasks / Subtasks\n- "
	"[x] real one\n- [ ] real two\n",
	NULL, 2, 1, 0, 0, "tasks / subtasks", "real two"},
    {"a repeated heading continues its section",
	"## Tasks / Subtasks\n- [x] a\n\n## Dev Notes\nx\n\n## Tasks / "
	"Subtasks\n- [ ] b\n",
	NULL, 2, 1, 0, 0, "tasks / subtasks", "b"},
    {"an empty Tasks heading above the real one (issue 13)",
	"# Story 1.1\n## Tasks / Subtasks\n\n## Dev Notes\n- [x] not a task\n"
	"## Tasks / Subtasks\n- [x] a\n- [ ] b\n",
	NULL, 2, 1, 0, 0, "tasks / subtasks", "b"},
    {"the same heading twice in a row",
	"## Tasks / Subtasks\n- [x] a\n## Tasks / Subtasks\n- [ ] b\n", NULL, 2,
	1, 0, 0, "tasks / subtasks", "b"},
    {"an unclosed fence in an item ends with the item",
	"## Tasks\n- [x] a\n  ```sh\n  make\n- [ ] b\n- [ ] c\n", NULL, 3, 1, 0,
	0, "tasks", "b"},
    {"one-space slip is still a task", "## Tasks\n- [x] a\n - [ ] b\n", NULL, 2,
	1, 0, 0, "tasks", "b"},
    {"ordered task list", "## Tasks\n1. [x] a\n2. [ ] b\n   - [x] b.1\n", NULL,
	2, 1, 1, 1, "tasks", "b"},
    {"crlf and bom",
	"\xEF\xBB\xBF## Tasks\r\n- [x] a\r\n  - [ ] a.1\r\n- [ ] b\r\n", NULL,
	2, 1, 1, 0, "tasks", "b"},
    {"setext heading", "Tasks\n-----\n- [ ] a\n\nNotes\n=====\n- [ ] x\n", NULL,
	1, 0, 0, 0, "tasks", "a"},
    {"numbered heading with a colon", "## 4. Tasks:\n- [ ] a\n", NULL, 1, 0, 0,
	0, "tasks", "a"},
    {"a configured non-English heading",
	"## Aufgaben\n- [x] a\n- [ ] b\n## Notizen\n- [ ] c\n", "Aufgaben", 2,
	1, 0, 0, "aufgaben", "b"},
    {"no tasks heading but other headings: no tasks",
	"# Story\n## Definition of Done\n- [x] tests\n- [x] docs\n", NULL, 0, 0,
	0, 0, "", ""},
    {"no heading at all: the whole file", "- [x] a\n- [ ] b\n", NULL, 2, 1, 0,
	0, "*", "b"},
    {"boxes in a block quote and in html are not tasks",
	"## Tasks\n> - [ ] quoted\n\n<ul><li>[ ] html</li></ul>\n\n- [ ] "
	"real\n",
	NULL, 1, 0, 0, 0, "tasks", "real"},
    {"subtasks under a plain item",
	"## Tasks\n- Phase 1\n  - [x] a\n  - [ ] b\n- [ ] c\n", NULL, 1, 0, 2,
	1, "tasks", "c"},
    /* the stalled task as written: its first line, markup kept */
    {"stalled text as the author wrote it",
	"## Tasks\n- [ ] Add `GET /x` *fast*\n  and more\n", NULL, 1, 0, 0, 0,
	"tasks", "Add `GET /x` *fast*"},
    {"a title alone does not make sections",
	"# Story 1.2\n\n- [x] a\n- [ ] b\n", NULL, 2, 1, 0, 0, "*", "b"},
    /* Shapes that real public story files disagreed with GitHub on
     * (docs/stories.md, "The Tasks section").  BMAD writes its
     * templates in the project's language: */
    {"a Spanish BMAD heading",
	"# Historia 1.2\n\n## Tareas / Subtareas\n- [x] T1\n  - [x] 1.1\n- [ ] "
	"T2\n\n## Notas\n- [ ] no\n",
	NULL, 2, 1, 1, 1, "tareas / subtareas", "T2"},
    {"a French BMAD heading, sub-tasks in lower case",
	"## Critères\n- [x] c\n## Tâches / sous-tâches\n- [x] a\n- [ ] b\n",
	NULL, 2, 1, 0, 0, "tâches / sous-tâches", "b"},
    {"a Chinese BMAD heading",
	"## 任务 / 子任务\n- [ ] a\n  - [x] a.1\n## 开发备注\n- [ ] x\n", NULL,
	1, 0, 1, 1, "任务 / 子任务", "a"},
    {"upper-case Cyrillic letters fold", "## ЗАДАЧИ / ПОДЗАДАЧИ\n- [ ] a\n",
	NULL, 1, 0, 0, 0, "задачи / подзадачи", "a"},
    {"upper-case accented letters fold", "## TÂCHES\n- [x] a\n", NULL, 1, 1, 0,
	0, "tâches", ""},
    {"a Portuguese heading wins over an earlier mention",
	"# Resumo\n\n### Fase 1 (Tasks 1-2)\ntexto\n\n## Tarefas\n- [x] 1.0 "
	"a\n- "
	"[ ] 2.0 b\n",
	NULL, 2, 1, 0, 0, "tarefas", "2.0 b"},
    /* a translation or a note in parentheses */
    {"a bilingual heading wins over an earlier mention",
	"## Task context\nx\n\n## Задачи / Подзадачи (Tasks / Subtasks)\n- [ ] "
	"a\n",
	NULL, 1, 0, 0, 0, "задачи / подзадачи (tasks / subtasks)", "a"},
    {"full-width parentheses",
	"## Task notes\nx\n## Tasks / Subtasks（任务 / 子任务）\n- [x] a\n",
	NULL, 1, 1, 0, 0, "tasks / subtasks（任务 / 子任务）", ""},
    {"a note in parentheses",
	"## Next Developer Tasks\n- [ ] qa\n## Tasks / Subtasks (TDD order)\n"
	"- [ ] a\n",
	NULL, 1, 0, 0, 0, "tasks / subtasks (tdd order)", "a"},
    /* spec-kit's "# Tasks: <feature>", Kiro's "# Implementation Plan:
     * <x>": the title names the whole file a task list */
    {"a spec-kit title over phase headings",
	"# Tasks: Offline sync\n\n## Format\n- **[P]** parallel\n\n## Phase 1: "
	"Setup\n- [x] T001 a\n- [ ] T002 b\n\n## Phase 2: Core\n- [ ] T003 "
	"c\n",
	NULL, 3, 1, 0, 0, "tasks: offline sync", "T002 b"},
    {"a plan title with a colon",
	"# Implementation Plan: Spec 20\n\n## Summary\nx\n\n## Phase 1\n- [ ] "
	"T001 a\n",
	NULL, 1, 0, 0, 0, "implementation plan: spec 20", "T001 a"},
    {"a task-file title counts its prerequisites too",
	"# Tasks: Migration\n## Prerequisites\n- [ ] p\n## Implementation "
	"Tasks\n- [x] a\n",
	NULL, 2, 1, 0, 0, "tasks: migration", "p"},
    {"a story title with a colon is still only a title",
	"# Story 1.2: Tasks\n## Dev Notes\n- [ ] x\n", NULL, 0, 0, 0, 0, "",
	""},
    {"Tasks: Backend and Tasks: Frontend are one section",
	"## Tasks: Backend\n- [x] a\n## Notes\nx\n## Tasks: Frontend\n- [ ] "
	"b\n",
	NULL, 2, 1, 0, 0, "tasks: backend", "b"},
    {"an ordered Implementation steps list",
	"# Spike\n## Spike status\n- [x] s\n## Implementation steps\n1. [x] "
	"a\n2. [ ] b\n",
	NULL, 2, 1, 0, 0, "implementation steps", "b"},
    /* issue 32: the section as the author means it, in the words of
     * the table in strategies/heading_words.c */
    {"a work list with an emoji, not the acceptance checklist below it",
	"# 用户故事\n\n## 📝 Task 分解\n- [ ] a\n- [ ] b\n\n## ✅ 验收标准\n"
	"### 功能验收 - Task 模块\n- [x] c1\n- [x] c2\n",
	NULL, 2, 0, 0, 0, "📝 task 分解", "a"},
    {"an acceptance checklist that mentions Task is never the section",
	"## 背景\nx\n## 功能验收 - Task 模块\n- [x] a\n## Notes\n", NULL, 0, 0,
	0, 0, "", ""},
    {"Chinese: task list", "## 背景\n## 任务列表\n- [ ] a\n", NULL, 1, 0, 0, 0,
	"任务列表", "a"},
    {"Portuguese: implementation tasks",
	"### GoalTaskLinkIPCClient\n- [x] x\n## Tarefas de Implementação\n- "
	"[ ] a\n",
	NULL, 1, 0, 0, 0, "tarefas de implementação", "a"},
    {"French: implementation tasks, an apostrophe",
	"## Contexte\n## Tâches d'implémentation\n- [x] a\n", NULL, 1, 1, 0, 0,
	"tâches d'implémentation", ""},
    {"Russian: tasks and acceptance criteria",
	"## Описание\n## Задачи и критерии приёма\n- [ ] a\n", NULL, 1, 0, 0, 0,
	"задачи и критерии приёма", "a"},
    {"English: tasks and acceptance",
	"## Task context\nx\n## Tasks & Acceptance\n- [ ] a\n", NULL, 1, 0, 0,
	0, "tasks & acceptance", "a"},
    {"a word that holds Task is not a mention",
	"## GoalTaskLinkIPCClient\n- [ ] x\n## Notes\n", NULL, 0, 0, 0, 0, "",
	""},
    {"a named heading wins over a mention",
	"## Task Page Object\n- [x] p\n## Tasks / Subtasks\n- [ ] a\n", NULL, 1,
	0, 0, 0, "tasks / subtasks", "a"},
    {"Kiro: <feature> - Implementation Tasks",
	"# Cross-Installation File Persistence - Implementation Tasks\n\n## "
	"Overview\nx\n\n## Phase 1\n- [ ] 1. a\n  - [ ] 1.1 b\n- [x] 2. c\n",
	NULL, 2, 1, 1, 0,
	"cross-installation file persistence - implementation tasks", "1. a"},
    {"a story title with a dash is still only a title",
	"# Story 2.1 - Tasks\n## Dev Notes\n- [ ] x\n", NULL, 0, 0, 0, 0, "",
	""},
    {"Korean: task list", "## 설명\n## 작업 목록\n- [ ] a\n", NULL, 1, 0, 0, 0,
	"작업 목록", "a"},
    {"Vietnamese: tasks", "## Mô tả\n## Nhiệm vụ\n- [ ] a\n", NULL, 1, 0, 0, 0,
	"nhiệm vụ", "a"},
    {"Italian: activities", "## Contesto\n## ATTIVITÀ\n- [x] a\n", NULL, 1, 1,
	0, 0, "attività", ""},
    {"Japanese: task list", "## 概要\n## タスク一覧\n- [ ] a\n", NULL, 1, 0, 0,
	0, "タスク一覧", "a"},
    {"German: tasks and subtasks",
	"## Kontext\n## Aufgaben und Teilaufgaben\n- [ ] a\n", NULL, 1, 0, 0, 0,
	"aufgaben und teilaufgaben", "a"},
    {"a QA follow-up list is part of the QA section",
	"## Tasks / Subtasks\n- [x] a\n## QA Results\n### Next Developer "
	"Tasks\n- [ ] q\n",
	NULL, 1, 1, 0, 0, "tasks / subtasks", ""},
    /* a story pasted twice counts its tasks once; a box checked in
     * either copy is checked */
    {"the Tasks section pasted twice",
	"## Tasks / Subtasks:\n- [ ] a\n  - [ ] a.1\n- [ ] b\n## Dev Notes\n"
	"x\n## Tasks / Subtasks:\n- [x] a\n  - [x] a.1\n- [ ] b\n",
	NULL, 2, 1, 1, 0, "tasks / subtasks", "b"},
    {"the same heading with other tasks is not a copy",
	"## Tasks\n- [ ] a\n## Notes\n## Tasks\n- [ ] c\n", NULL, 2, 0, 0, 0,
	"tasks", "a"},
};

static void
test_github_shapes(void **state)
{
	struct progress p;
	size_t i;
	int bad = 0;

	(void)state;
	/* every row is checked, so that one run names every shape that
	 * disagrees */
	for (i = 0; i < sizeof(gcases) / sizeof(*gcases); i++) {
		const struct gcase *c = &gcases[i];
		const char *used;

		progress_parse_heading(
		    &p, c->text, strlen(c->text), c->heading);
		used = p.whole_file ? "*" : p.heading;
		if (p.counts.tasks_total != c->total ||
		    p.counts.tasks_completed != c->done ||
		    p.counts.subtasks_total != c->subtotal ||
		    p.counts.subtasks_completed != c->subdone ||
		    strcmp(used, c->used) != 0 ||
		    strcmp(p.stalled_task, c->stalled) != 0) {
			print_error("%s: got %d/%d sub %d/%d heading \"%s\" "
				    "stalled \"%s\"\n",
			    c->name, p.counts.tasks_completed,
			    p.counts.tasks_total, p.counts.subtasks_completed,
			    p.counts.subtasks_total, used, p.stalled_task);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* issue 13: items that look like tasks but are not counted; check
 * warns about them, naming the first one's line. */
struct scase {
	const char *name;
	const char *text;
	int total; /* tasks counted */
	int skipped;
	int first_line;
	const char *first;
};

static const struct scase scases[] = {
    {"other marks in the box",
	"## Tasks\n- [x] a\n- [-] cancelled\n- [~] partial\n- [/] half\n", 1, 3,
	3, "[-] cancelled"},
    {"emoji boxes",
	"## Tasks\n- \xE2\x9C\x85 done\n- \xE2\xAC\x9C todo\n- \xE2\x98\x90 "
	"box\n- \xE2\x98\x91 checked\n- \xE2\x9C\x94 tick\n- [ ] real\n",
	1, 5, 2, "\xE2\x9C\x85 done"},
    {"kiro optional tasks",
	"# Implementation Plan\n\n- [ ] 1. Set up\n  - Create dirs\n\n- [ ]* "
	"1.1 Write tests\n  - [ ]* nested optional\n- [x]* 2 done\n",
	1, 3, 6, "[ ]* 1.1 Write tests"},
    {"a skipped subtask", "## Tasks\n- [ ] a\n  - [-] sub dropped\n", 1, 1, 3,
	"[-] sub dropped"},
    {"outside the section is not reported",
	"## Notes\n- [-] x\n## Tasks\n- [ ] a\n", 1, 0, 0, ""},
    {"references and links are no boxes",
	"## Tasks\n- [1] see RFC 1\n- [a] note\n- [x](http://x) link\n- [ ] "
	"a\n",
	1, 0, 0, ""},
    {"a box with no text", "## Tasks\n- [ ]\n- [ ] a\n", 1, 1, 2, "[ ]"},
    {"no space after the box", "## Tasks\n- [x]done\n", 0, 1, 2, "[x]done"},
    {"an empty box", "## Tasks\n- [] nothing\n- [ ] a\n", 1, 1, 2,
	"[] nothing"},
    {"the whole file", "- [-] a\n- [ ] b\n", 1, 1, 1, "[-] a"},
    {"an o in the box", "## Tasks\n- [ ] a\n- [o] b\n", 1, 1, 3, "[o] b"},
    {"crlf", "## Tasks\r\n- [-] a\r\n- [ ] b\r\n", 1, 1, 2, "[-] a"},
    {"ordered", "## Tasks\n1. [-] a\n2. [ ] b\n", 1, 1, 2, "[-] a"},
    {"boxes in code are not reported", "## Tasks\n```\n- [-] a\n```\n- [ ] b\n",
	1, 0, 0, ""},
    {"plain items are not reported", "## Tasks\n- note\n- [ ] a\n", 1, 0, 0,
	""},
};

static void
test_skipped_items(void **state)
{
	struct progress p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(scases) / sizeof(*scases); i++) {
		const struct scase *c = &scases[i];

		progress_parse(&p, c->text, strlen(c->text));
		if (p.counts.tasks_total != c->total ||
		    p.skipped_items != c->skipped ||
		    p.skipped_first_line != c->first_line ||
		    strcmp(p.skipped_first, c->first) != 0)
			fail_msg("%s: got %d tasks, %d skipped, first line %d "
				 "\"%s\"",
			    c->name, p.counts.tasks_total, p.skipped_items,
			    p.skipped_first_line, p.skipped_first);
	}
}

/* progress_items(): every item with its line, kind and why */
struct icase {
	int line;
	enum progress_item_kind kind;
	bool checked;
	const char *text;
	const char *why;
};

static void
test_items_listing(void **state)
{
	static const char text[] = "# Story 1.2\n"
				   "\n"
				   "## Acceptance Criteria\n"
				   "- [x] ac one\n"
				   "\n"
				   "## Tasks / Subtasks\n"
				   "\n"
				   "- [x] Task 1 (AC: 1)\n"
				   "  - [x] 1.1 schema\n"
				   "  - [-] 1.2 dropped\n"
				   "- [ ] Task 2\n"
				   "  ```sh\n"
				   "  - [ ] in code\n"
				   "  ```\n"
				   "\n"
				   "> - [ ] quoted\n"
				   "\n"
				   "## Tasks / Subtasks\n"
				   "- [ ]* optional\n"
				   "\n"
				   "## Dev Notes\n"
				   "- [ ] note\n";
	static const struct icase want[] = {
	    {4, PROGRESS_ITEM_OUTSIDE, true, "ac one",
		"outside the Tasks section"},
	    {6, PROGRESS_ITEM_HEADING, false, "## Tasks / Subtasks",
		"the Tasks section starts here"},
	    {8, PROGRESS_ITEM_TASK, true, "Task 1 (AC: 1)",
		"task under ## Tasks / Subtasks"},
	    {9, PROGRESS_ITEM_SUBTASK, true, "1.1 schema", "subtask of line 8"},
	    {10, PROGRESS_ITEM_SKIPPED, false, "[-] 1.2 dropped",
		"not counted: [-] is not a checkbox"},
	    {11, PROGRESS_ITEM_TASK, false, "Task 2",
		"task under ## Tasks / Subtasks"},
	    {13, PROGRESS_ITEM_IGNORED, false, "in code",
		"in a code block: not counted"},
	    {16, PROGRESS_ITEM_IGNORED, false, "quoted",
		"in a block quote: not counted"},
	    {18, PROGRESS_ITEM_HEADING, false, "## Tasks / Subtasks",
		"the same heading again: the section goes on"},
	    {19, PROGRESS_ITEM_SKIPPED, false, "[ ]* optional",
		"not counted: an optional task ([ ]*) is not a checkbox"},
	    {21, PROGRESS_ITEM_HEADING, false, "## Dev Notes",
		"ends the Tasks section"},
	    {22, PROGRESS_ITEM_OUTSIDE, false, "note",
		"outside the Tasks section"},
	};
	struct progress_item *it = NULL;
	struct progress p;
	struct sc_err err;
	size_t n = 0, i;

	(void)state;
	assert_int_equal(
	    progress_items(&it, &n, &p, text, sizeof(text) - 1, NULL, &err), 0);
	for (i = 0; i < n && i < sizeof(want) / sizeof(*want); i++) {
		if (it[i].line != want[i].line || it[i].kind != want[i].kind ||
		    it[i].checked != want[i].checked ||
		    strcmp(it[i].text, want[i].text) != 0 ||
		    strcmp(it[i].why, want[i].why) != 0)
			fail_msg("item %zu: got line %d %s %s \"%s\" (%s)", i,
			    it[i].line, progress_item_kind_name(it[i].kind),
			    it[i].checked ? "[x]" : "[ ]", it[i].text,
			    it[i].why);
	}
	assert_int_equal(n, sizeof(want) / sizeof(*want));
	assert_int_equal(p.counts.tasks_total, 2);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_int_equal(p.counts.subtasks_total, 1);
	assert_int_equal(p.counts.subtasks_completed, 1);
	assert_int_equal(p.skipped_items, 2);
	assert_int_equal(p.skipped_first_line, 10);
	assert_string_equal(p.heading, "tasks / subtasks");
	free(it);
}

static void
test_items_whole_file_and_none(void **state)
{
	static const char whole[] = "- [x] a\n  - [ ] a.1\n- [ ] b\n";
	static const char none[] = "# S\n## Done\n- [x] t\n";
	struct progress_item *it = NULL;
	struct progress p;
	struct sc_err err;
	size_t n = 0;

	(void)state;
	assert_int_equal(
	    progress_items(&it, &n, &p, whole, sizeof(whole) - 1, NULL, &err),
	    0);
	assert_int_equal(n, 3);
	assert_true(p.whole_file);
	assert_string_equal(it[0].why, "task (whole file: no headings)");
	assert_string_equal(it[1].why, "subtask of line 1");
	assert_int_equal(it[2].line, 3);
	free(it);
	assert_int_equal(
	    progress_items(&it, &n, &p, none, sizeof(none) - 1, NULL, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(it[0].kind, PROGRESS_ITEM_OUTSIDE);
	assert_string_equal(
	    it[0].why, "outside any Tasks section: the story has none");
	assert_int_equal(p.counts.tasks_total, 0);
	free(it);
	/* nothing at all: no list, no error */
	assert_int_equal(progress_items(&it, &n, NULL, NULL, 0, NULL, &err), 0);
	assert_int_equal(n, 0);
	assert_null(it);
}

/* The listing and the counts come from one walk: they agree on every
 * table case. */
static void
agree(const char *name, const char *text, const char *heading)
{
	struct progress_item *it = NULL;
	struct progress a, b;
	struct sc_err err;
	size_t n = 0, i;
	int k[PROGRESS_ITEM_HEADING + 1] = {0}, done = 0, subdone = 0;

	progress_parse_heading(&a, text, strlen(text), heading);
	if (progress_items(&it, &n, &b, text, strlen(text), heading, &err) != 0)
		fail_msg("%s: progress_items failed", name);
	for (i = 0; i < n; i++) {
		k[it[i].kind]++;
		if (it[i].kind == PROGRESS_ITEM_TASK && it[i].checked)
			done++;
		if (it[i].kind == PROGRESS_ITEM_SUBTASK && it[i].checked)
			subdone++;
	}
	free(it);
	if (a.counts.tasks_total != b.counts.tasks_total ||
	    a.counts.tasks_completed != b.counts.tasks_completed ||
	    a.counts.subtasks_total != b.counts.subtasks_total ||
	    a.counts.subtasks_completed != b.counts.subtasks_completed ||
	    a.skipped_items != b.skipped_items ||
	    strcmp(a.stalled_task, b.stalled_task) != 0 ||
	    strcmp(a.heading, b.heading) != 0 ||
	    k[PROGRESS_ITEM_TASK] != a.counts.tasks_total ||
	    done != a.counts.tasks_completed ||
	    k[PROGRESS_ITEM_SUBTASK] != a.counts.subtasks_total ||
	    subdone != a.counts.subtasks_completed ||
	    k[PROGRESS_ITEM_SKIPPED] != a.skipped_items)
		fail_msg("%s: the listing disagrees with the counts", name);
}

/* Outside the Tasks section too, a box GitHub shows no checkbox for (in
 * a block quote, with no text) is listed as ignored, not as a task item
 * outside the section. */
static void
test_items_outside_no_checkbox(void **state)
{
	static const char text[] = "## Notes\n"
				   "> - [x] quoted\n"
				   "\n"
				   "- [ ]\n"
				   "- [x] real\n"
				   "## Tasks\n"
				   "- [ ] a\n";
	struct progress_item *it = NULL;
	struct progress p;
	struct sc_err err;
	size_t n = 0;

	(void)state;
	assert_int_equal(
	    progress_items(&it, &n, &p, text, sizeof(text) - 1, NULL, &err), 0);
	assert_int_equal(n, 5);
	assert_int_equal(it[0].line, 2);
	assert_int_equal(it[0].kind, PROGRESS_ITEM_IGNORED);
	assert_true(it[0].checked);
	assert_string_equal(it[0].text, "quoted");
	assert_string_equal(it[0].why, "in a block quote: not counted");
	assert_int_equal(it[1].line, 4);
	assert_int_equal(it[1].kind, PROGRESS_ITEM_IGNORED);
	assert_string_equal(it[1].why, "a box with no text: not counted");
	assert_int_equal(it[2].line, 5);
	assert_int_equal(it[2].kind, PROGRESS_ITEM_OUTSIDE);
	assert_int_equal(p.counts.tasks_total, 1);
	free(it);
}

static void
test_items_agree_with_counts(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		agree(cases[i].name, cases[i].text, NULL);
	for (i = 0; i < sizeof(gcases) / sizeof(*gcases); i++)
		agree(gcases[i].name, gcases[i].text, gcases[i].heading);
	for (i = 0; i < sizeof(scases) / sizeof(*scases); i++)
		agree(scases[i].name, scases[i].text, NULL);
}

static void
test_items_bounded(void **state)
{
	enum { N = PROGRESS_ITEMS_MAX + 5 };
	struct progress_item *it = NULL;
	struct progress p;
	struct sc_err err;
	char *text = malloc((size_t)N * 8 + 1), *t = text;
	size_t n = 0;
	int i;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < N; i++) {
		memcpy(t, "- [x] a\n", 8);
		t += 8;
	}
	assert_int_equal(
	    progress_items(&it, &n, &p, text, (size_t)(t - text), NULL, &err),
	    0);
	assert_int_equal(n, PROGRESS_ITEMS_MAX);
	assert_int_equal(p.counts.tasks_total, N);
	assert_int_equal(it[n - 1].line, PROGRESS_ITEMS_MAX);
	free(it);
	free(text);
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(test_null_and_zero_length),
	    cmocka_unit_test(test_nul_bytes),
	    cmocka_unit_test(test_github_shapes),
	    cmocka_unit_test(test_binary_garbage),
	    cmocka_unit_test(test_truncation_at_utf8_boundary),
	    cmocka_unit_test(test_long_ascii_truncated),
	    cmocka_unit_test(test_big_counts),
	    cmocka_unit_test(test_story_file_shape),
	    cmocka_unit_test(test_skipped_items),
	    cmocka_unit_test(test_items_listing),
	    cmocka_unit_test(test_items_whole_file_and_none),
	    cmocka_unit_test(test_items_outside_no_checkbox),
	    cmocka_unit_test(test_items_agree_with_counts),
	    cmocka_unit_test(test_items_bounded),
	};
	enum { NCASES = sizeof(cases) / sizeof(cases[0]) };
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
	struct CMUnitTest tests[NCASES + NFIXED];
	size_t i;

	memset(tests, 0, sizeof(tests));
	for (i = 0; i < NCASES; i++) {
		tests[i].name = cases[i].name;
		tests[i].test_func = test_case;
		tests[i].initial_state = (void *)&cases[i];
	}
	for (i = 0; i < NFIXED; i++)
		tests[NCASES + i] = fixed[i];
	return _cmocka_run_group_tests(
	    "progress", tests, NCASES + NFIXED, NULL, NULL);
}
