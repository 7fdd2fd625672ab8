/*
 * test_progress_sections.c - which section of a story is its task list
 * when several could be (docs/stories.md#the-tasks-section): the words
 * of a Tasks heading in each language (strategies/heading_words.c), a
 * checklist passed over, two task lists that disagree, a section pasted
 * twice, a heading indented into code, and the reasons that name them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/heading_words.h"
#include "strategies/progress.h"

/* hwords_split() then the three readings, one row a heading. */
static const struct wcase {
	const char *text;
	const char *words;
	bool names, leads, mentions, checklist;
} wcases[] = {
    {"Tasks / Subtasks", "tasks subtasks", true, false, true, false},
    {"📝 Task 分解", "task 分解", true, false, true, false},
    {"任务列表", "任务列表", true, false, true, false},
    {"4. Tasks:", "4 tasks", true, false, true, false},
    {"Tasks 1-2", "tasks 1 2", false, false, true, false},
    {"Tarefas de Implementação", "tarefas de implementação", true, false, true,
	false},
    {"Tâches d'implémentation", "tâches d implémentation", true, false, true,
	false},
    {"TÂCHES / SOUS-TÂCHES", "tâches sous tâches", true, false, true, false},
    {"Задачи и критерии приёма", "задачи и критерии приёма", false, true, true,
	false},
    {"ЗАДАЧИ", "задачи", true, false, true, false},
    {"Tasks & Acceptance", "tasks & acceptance", false, true, true, false},
    {"Tasks+QA", "tasks & qa", false, true, true, false},
    {"Acceptance Criteria", "acceptance criteria", false, false, false, true},
    {"Phase 5: Acceptance testing", "phase 5 acceptance testing", false, false,
	false, false},
    {"📋 実装チェックリスト", "実装チェックリスト", false, false, false, true},
    {"Task Checklist", "task checklist", true, false, true, false},
    {"Critères de validation", "critères de validation", false, false, false,
	true},
    {"📋 Fases de Implementación", "fases de implementación", true, false, false,
	false},
    {"Implementation Phases", "implementation phases", true, false, false,
	false},
    {"功能验收 - Task 模块", "功能验收 task 模块", false, false, true, true},
    {"GoalTaskLinkIPCClient", "goaltasklinkipcclient", false, false, false,
	false},
    {"Task Page Object", "task page object", false, false, true, false},
    {"Implementation Plan", "implementation plan", true, false, false, false},
    {"Plan", "plan", false, false, false, false},
    {"Dev Notes", "dev notes", false, false, false, false},
    {"Definition of Done", "definition of done", false, false, false, true},
    {"Nhiệm vụ", "nhiệm vụ", true, false, true, false},
    {"NHIỆM VỤ", "nhiệm vụ", true, false, true, false},
    {"작업 목록", "작업 목록", true, false, true, false},
    {"タスク一覧", "タスク一覧", true, false, true, false},
    {"Attività", "attività", true, false, true, false},
    {"Aufgaben und Teilaufgaben", "aufgaben und teilaufgaben", true, true, true,
	false},
    {"Tareas / Subtareas", "tareas subtareas", true, false, true, false},
    {"", "", false, false, false, false},
};

static void
test_words(void **state)
{
	char w[128];
	size_t i;
	int bad = 0;

	(void)state;
	for (i = 0; i < sizeof(wcases) / sizeof(*wcases); i++) {
		const struct wcase *c = &wcases[i];

		hwords_split(w, sizeof(w), c->text, strlen(c->text));
		if (strcmp(w, c->words) != 0 ||
		    hwords_name_tasks(w) != c->names ||
		    hwords_lead_tasks(w) != c->leads ||
		    hwords_has(w, HW_TASK) != c->mentions ||
		    hwords_checklist(w) != c->checklist) {
			print_error("%s: words \"%s\" names %d leads %d "
				    "mentions %d checklist %d\n",
			    c->text, w, hwords_name_tasks(w),
			    hwords_lead_tasks(w), hwords_has(w, HW_TASK),
			    hwords_checklist(w));
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* Bytes that are no UTF-8, and a heading longer than the buffer: the
 * words are cut at a word, never mid-sequence. */
static void
test_words_hostile(void **state)
{
	char w[16];
	static const char junk[] = "\xff\xfe Tasks \xc3 \xe4\xbb";

	(void)state;
	hwords_split(w, sizeof(w), junk, sizeof(junk) - 1);
	assert_string_equal(w, "tasks");
	hwords_split(w, sizeof(w), "tasks subtasks implementation", 29);
	assert_string_equal(w, "tasks subtasks");
	hwords_split(w, 1, "tasks", 5);
	assert_string_equal(w, "");
}

/* Shapes of issue 32's real stories, written here in a few lines: the
 * counts GitHub shows in the section the author means. */
static const struct scase {
	const char *name, *text;
	int total, done, sub_total, sub_done;
} scases[] = {
    {"a title's whole file leaves its acceptance checklist out",
	"# Tâches - Restauration\n## Vue d'ensemble\nx\n## Tâches "
	"d'implémentation\n- [x] a\n- [ ] b\n## Critères de validation\n- [ "
	"] c\n- [ ] d\n",
	2, 1, 0, 0},
    {"acceptance criteria nested in the plan are not tasks",
	"# Tech-Spec\n## Implementation Plan\n### Phase 1\n- [ ] a\n### "
	"Acceptance Criteria\n#### API AC\n- [ ] ac1\n- [ ] ac2\n## "
	"Additional Context\n",
	1, 0, 0, 0},
    {"a task group about acceptance testing is still tasks",
	"## Tasks\n### Phase 1\n- [ ] a\n### Phase 5: Acceptance testing\n- "
	"[ ] b\n",
	2, 0, 0, 0},
    {"a Kiro title leaves its checklist section out",
	"# Implementation Plan\n## 🚀 実装順序\n- [x] 1. a\n  - [x] 1.1\n## "
	"📋 実装チェックリスト\n### ✅ 受け入れ基準の確認項目\n- [x] c\n### 🎨 "
	"デザイン品質チェック\n- [x] d\n",
	1, 1, 1, 1},
    {"Spanish implementation phases",
	"## Resumen\n## 📋 Fases de Implementación\n### Fase 1\n- [ ] a\n", 1, 0,
	0, 0},
    {"Korean: a bold heading", "## 설명\n## 📝 **구현 작업 목록**\n- [ ] a\n", 1,
	0, 0, 0},
    {"Japanese: a process with subtasks in parentheses",
	"## 完了の定義\n- [x] d\n## 工程（サブタスク）\n- [x] a\n- [ ] b\n", 2,
	1, 0, 0},
};

static void
test_shapes(void **state)
{
	struct progress p;
	size_t i;
	int bad = 0;

	(void)state;
	for (i = 0; i < sizeof(scases) / sizeof(*scases); i++) {
		const struct scase *c = &scases[i];

		progress_parse(&p, c->text, strlen(c->text));
		if (p.counts.tasks_total != c->total ||
		    p.counts.tasks_completed != c->done ||
		    p.counts.subtasks_total != c->sub_total ||
		    p.counts.subtasks_completed != c->sub_done) {
			print_error("%s: got %d/%d sub %d/%d under \"%s\"\n",
			    c->name, p.counts.tasks_completed,
			    p.counts.tasks_total, p.counts.subtasks_completed,
			    p.counts.subtasks_total, p.heading_written);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void
parse(struct progress *p, const char *text)
{
	progress_parse(p, text, strlen(text));
}

static void
test_checklist_passed_over(void **state)
{
	struct progress p;
	char why[400];

	(void)state;
	parse(&p,
	    "# 用户故事\n\n## 📝 Task 分解\n- [ ] a\n\n## ✅ 验收标准\n"
	    "### 功能验收 - Task 模块\n- [x] c1\n");
	assert_int_equal(p.counts.tasks_total, 1);
	assert_int_equal(p.counts.tasks_completed, 0);
	assert_string_equal(p.heading_written, "## 📝 Task 分解");
	assert_int_equal(p.heading_line, 3);
	assert_string_equal(p.rejected, "### 功能验收 - Task 模块");
	assert_int_equal(p.rejected_line, 7);
	/* alone, it is no task list: the story is invalid, and says why */
	parse(&p, "## 背景\n## 功能验收 - Task 模块\n- [x] a\n");
	assert_int_equal(p.counts.tasks_total, 0);
	progress_no_tasks_reason(why, sizeof(why), &p);
	assert_non_null(strstr(why,
	    "## 功能验收 - Task 模块 (line 2) is a "
	    "checklist of acceptance criteria"));
}

static void
test_disagreeing_lists(void **state)
{
	static const char numbered[] = "## Tasks\n- [ ] t\n## 4. Work Items:\n"
				       "- [x] a\n- [ ] b\n";
	struct progress p;

	(void)state;
	parse(&p,
	    "## Tasks\n- [x] a\n- [x] b\n## Notes\n## More tasks\n- [ ] "
	    "c\n- [x] d\n");
	assert_int_equal(p.counts.tasks_total, 2);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_string_equal(p.stalled_task, "c");
	assert_string_equal(p.heading_written, "## More tasks");
	assert_string_equal(p.passed_over, "## Tasks");
	assert_int_equal(p.passed_over_line, 1);
	assert_int_equal(p.passed_over_tasks, 2);
	/* both checked: the first one, nothing passed over */
	parse(&p, "## Tasks\n- [x] a\n## More tasks\n- [x] c\n");
	assert_int_equal(p.counts.tasks_total, 1);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_int_equal(p.passed_over_line, 0);
	/* a subsection of the chosen one is part of it, not a rival */
	parse(&p, "## Tasks\n- [x] a\n### Backend tasks\n- [x] b\n");
	assert_int_equal(p.counts.tasks_total, 2);
	assert_int_equal(p.passed_over_line, 0);
	/* the configured heading, numbered and with a colon */
	progress_parse_heading(&p, numbered, strlen(numbered), "work items");
	assert_int_equal(p.counts.tasks_total, 2);
	assert_string_equal(p.stalled_task, "b");
	/* the configured heading is the one, whatever else is open */
	progress_parse_heading(
	    &p, "## Work\n- [x] a\n## Tasks\n- [ ] b\n", 36, "Work");
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_int_equal(p.passed_over_line, 0);
}

static void
test_pasted_twice(void **state)
{
	struct progress p;
	struct progress_item *it = NULL;
	struct sc_err err;
	size_t n, i, counted = 0;
	static const char text[] = "## Tasks / Subtasks:\n- [ ] a\n- [ ] b\n"
				   "## Dev Notes\nx\n"
				   "## Tasks / Subtasks:\n- [ ] a\n- [x] b\n";

	(void)state;
	parse(&p, text);
	assert_int_equal(p.counts.tasks_total, 2);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_int_equal(p.copies, 1);
	assert_int_equal(p.copy_line, 6);
	assert_string_equal(p.stalled_task, "a");
	assert_int_equal(
	    progress_items(&it, &n, NULL, text, strlen(text), NULL, &err), 0);
	for (i = 0; i < n; i++)
		if (it[i].kind == PROGRESS_ITEM_TASK)
			counted++;
	assert_int_equal(counted, 2);
	assert_int_equal(it[n - 1].kind, PROGRESS_ITEM_IGNORED);
	assert_non_null(strstr(it[n - 1].why, "copy"));
	free(it);
	/* a third copy, and an empty template heading above: still 2 */
	parse(&p,
	    "## Tasks\n\n## Notes\n## Tasks\n- [ ] a\n- [ ] b\n"
	    "## X\n## Tasks\n- [x] a\n- [ ] b\n## Y\n## Tasks\n- [ ] a\n"
	    "- [ ] b\n");
	assert_int_equal(p.counts.tasks_total, 2);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_int_equal(p.copies, 2);
}

static void
test_heading_in_code(void **state)
{
	struct progress p;
	char why[400];

	(void)state;
	parse(&p, "## Intro\n\n                  ## Tasks\n- [ ] a\n");
	assert_int_equal(p.counts.tasks_total, 0);
	assert_int_equal(p.code_heading_line, 3);
	progress_no_tasks_reason(why, sizeof(why), &p);
	assert_non_null(strstr(why, "line 3 looks like a heading"));
	/* the reason names the section it looked in */
	parse(&p, "## Intro\n## Tasks / Subtasks\nnone yet\n");
	progress_no_tasks_reason(why, sizeof(why), &p);
	assert_string_equal(why,
	    "no tasks: no task-list item (\"- [ ] ...\") under ## Tasks / "
	    "Subtasks (line 2), its Tasks section");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_words),
	    cmocka_unit_test(test_words_hostile),
	    cmocka_unit_test(test_shapes),
	    cmocka_unit_test(test_checklist_passed_over),
	    cmocka_unit_test(test_disagreeing_lists),
	    cmocka_unit_test(test_pasted_twice),
	    cmocka_unit_test(test_heading_in_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
