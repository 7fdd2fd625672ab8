/*
 * heading_words.h - the words a story's headings are read by: a
 * heading's text as lower-case words, and the table of the words that
 * name a task list, in the languages story authors write
 * (docs/stories.md#the-words-of-a-tasks-heading).  Pure.
 *
 * A heading's words are its letters in lower case with one space
 * between words; punctuation, emoji and symbols separate words ("📝
 * Task 分解" is "task 分解"), "&" and "+" are a word of their own (a
 * conjunction), and a change between a spaced script (Latin, Cyrillic)
 * and an unspaced one (Chinese, Japanese, Korean) is a word break.
 * Words of unspaced scripts are matched inside runs ("任务列表" is
 * 任务 + 列表); the others only whole ("GoalTaskLink" holds no "task").
 */
#ifndef STORYCTL_HEADING_WORDS_H
#define STORYCTL_HEADING_WORDS_H

#include <stdbool.h>
#include <stddef.h>

/* What a word of the table says (a word may be several). */
enum hword_class {
	HW_TASK = 1, /* tasks, subtasks, tareas, задачи, 任务, タスク */
	HW_IMPL = 2, /* implementation, development, реализация, 开发 */
	HW_PLAN = 4, /* plan, steps: a task list only with HW_IMPL */
	HW_LIST = 8, /* list, breakdown, 列表, 分解 */
	HW_AND = 16, /* and, &, и, et, y, 和 */
	HW_FILL = 32, /* of, de, d', sub-, numbers */
	/* criteria, QA, definition of done, 验收: a checklist that is not
	 * the task list (docs/stories.md) */
	HW_CHECK = 64,
	/* checklist, チェックリスト: a checklist when no task word comes
	 * with it ("Task Checklist" names a task list) */
	HW_CHECKLIST = 128,
};

/* s[0..n) (UTF-8, never trusted) as words, into out (len bytes,
 * NUL-ended; cut at a word when it does not fit). */
void hwords_split(char *out, size_t len, const char *s, size_t n);

/* Do the words consist of table words only, and name a task list (a
 * task word, or implementation and plan)?  "tasks subtasks", "task 分解",
 * "tarefas de implementação", "implementation plan"; not "tasks api". */
bool hwords_name_tasks(const char *words);

/* Do the words begin with a task word and a conjunction ("tasks &
 * acceptance", "задачи и критерии приёма")? */
bool hwords_lead_tasks(const char *words);

/* Do the words hold a word of one of the classes in mask (a whole word;
 * in an unspaced script anywhere in a run)? */
bool hwords_has(const char *words, unsigned mask);

/* The words after the numbers they begin with ("4 work items" is
 * "work items"): numbering before a name. */
const char *hwords_after_numbers(const char *words);

/* Do the words head a checklist of acceptance criteria, QA or done
 * rather than a task list: a HW_CHECK word before any task word ("功能验收
 * task 模块", "acceptance criteria"; not "tasks & acceptance criteria"),
 * or a HW_CHECKLIST word and no task word ("📋 実装チェックリスト")? */
bool hwords_checklist(const char *words);

/* How many words. */
size_t hwords_count(const char *words);

#endif
