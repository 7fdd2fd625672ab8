/* test_stories.c - stories_load(), story_read_progress(): reading story
 * files inside the project root (docs/stories.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/config/stories.h"

struct tmp {
	char base[1024]; /* mkdtemp dir, resolved */
	char root[1100]; /* <base>/proj: the project root */
	char cfg[1200]; /* <root>/storyctl.json */
};

/* snprintf that fails the test instead of cutting a path short. */
static void fmt_into(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fmt_into(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < cap);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	fmt_into(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void
make_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	fmt_into(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

static int
tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	char templ[] = "/tmp/test_stories.XXXXXX";
	char *made, *real;

	if (t == NULL || (made = mkdtemp(templ)) == NULL) {
		free(t);
		return -1;
	}
	real = realpath(made, NULL);
	fmt_into(t->base, sizeof(t->base), "%s", real != NULL ? real : made);
	free(real);
	fmt_into(t->root, sizeof(t->root), "%s/proj", t->base);
	fmt_into(t->cfg, sizeof(t->cfg), "%s/storyctl.json", t->root);
	if (mkdir(t->root, 0755) != 0)
		return -1;
	*state = t;
	return 0;
}

static int
tmp_teardown(void **state)
{
	struct tmp *t = *state;

	if (t != NULL) {
		nftw(t->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(t);
	}
	return 0;
}

static void
load_config(struct config *c, struct tmp *t, const char *json)
{
	struct sc_err err;

	write_file(t->root, "storyctl.json", json);
	memset(c, 0, sizeof(*c));
	if (config_load(c, t->cfg, &err) != 0)
		fail_msg("config: %s", err.msg);
}

static void
test_load(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct progress pr;
	struct sc_err err;
	size_t n = 0;
	char want[PATH_MAX], *path;

	make_dir(t->root, "docs");
	write_file(t->root, "docs/1-1.md",
	    "# Story\n## Tasks\n- [x] one\n- [ ] two\n  - [ ] sub\n- [ ] "
	    "three\n");
	write_file(t->root, "docs/1-2.md", "# Story\nNo checklist here.\n");
	write_file(t->root, "docs/1-3.md", "- [x] done\n");
	load_config(&c, t,
	    "{\"stories\": [\"docs/1-1.md\","
	    " {\"file\": \"docs/1-2.md\", \"id\": \"second\"}],"
	    " \"stories_glob\": \"docs/*.md\"}");
	if (stories_load(&s, &n, &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 3);

	assert_string_equal(s[0].id, "1-1");
	assert_string_equal(s[0].file, "docs/1-1.md");
	fmt_into(want, sizeof(want), "%s/docs/1-1.md", t->root);
	/* root/file is where it resolves: not kept, joined when needed */
	assert_null(s[0].resolved);
	path = story_abspath(&s[0], c.root);
	assert_string_equal(path, want);
	assert_int_equal(s[0].counts.tasks_total, 3);
	assert_int_equal(s[0].counts.tasks_completed, 1);
	assert_int_equal(s[0].load_status, STATUS_PENDING);
	assert_null(s[0].reason);
	/* the stalled task is not kept per story: read when needed */
	assert_int_equal(story_read_progress(&pr, path, NULL, NULL, &err), 0);
	free(path);
	assert_string_equal(pr.stalled_task, "two");
	assert_int_equal(pr.counts.tasks_completed, 1);

	/* the id given replaces the file's name, and the file stays: both
	 * live in one block (config_story_set_id()) */
	assert_string_equal(s[1].id, "second");
	assert_string_equal(s[1].file, "docs/1-2.md");
	assert_int_equal(s[1].counts.tasks_total, 0);
	assert_int_equal(s[1].load_status, STATUS_INVALID);
	assert_string_equal(s[1].reason,
	    "no tasks: no task-list item (\"- [ ] ...\") in the file, which "
	    "has no headings");

	assert_string_equal(s[2].id, "1-3");
	assert_int_equal(s[2].counts.tasks_completed, 1);
	assert_int_equal(s[2].load_status, STATUS_PENDING);

	stories_free(s, n);
	config_release(&c);
}

/* stories.tasks_heading names the section the tasks are in: a story
 * whose tasks are under "## Work Items" counts only with it, at load
 * and when re-read. */
static void
test_tasks_heading(void **state)
{
	static const char story[] =
	    "# Story 1.1\n\n## Acceptance Criteria\n\n1. works\n\n"
	    "## Work Items\n\n- [x] one\n- [ ] two\n  - [x] sub\n\n"
	    "## Definition of Done\n\n- [x] reviewed\n";
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct progress pr;
	struct sc_err err;
	size_t n = 0;
	char *path;

	write_file(t->root, "a.md", story);
	load_config(&c, t, "{\"stories\": [\"a.md\"]}");
	if (stories_load(&s, &n, &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s[0].counts.tasks_total, 0);
	assert_int_equal(s[0].load_status, STATUS_INVALID);
	stories_free(s, n);
	config_release(&c);

	load_config(&c, t,
	    "{\"stories\": {\"files\": [\"a.md\"], \"tasks_heading\": "
	    "\"Work Items\"}}");
	if (stories_load(&s, &n, &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s[0].counts.tasks_total, 2);
	assert_int_equal(s[0].counts.tasks_completed, 1);
	assert_int_equal(s[0].load_status, STATUS_PENDING);
	path = story_abspath(&s[0], c.root);
	assert_non_null(path);
	assert_int_equal(
	    story_read_progress(&pr, path, c.root, c.tasks_heading, &err), 0);
	assert_int_equal(pr.counts.tasks_total, 2);
	assert_int_equal(pr.counts.subtasks_completed, 1);
	assert_string_equal(pr.stalled_task, "two");
	assert_int_equal(story_read_progress(&pr, path, c.root, NULL, &err), 0);
	free(path);
	assert_int_equal(pr.counts.tasks_total, 0);
	stories_free(s, n);
	config_release(&c);
}

/* The Status line as BMAD v4 and v6 write it; a draft is skipped by
 * the one rule, story_skipped(), unless drafts are included. */
static void
test_status_and_drafts(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;

	make_dir(t->root, "docs");
	write_file(t->root, "docs/1.1.story.md",
	    "# Story 1.1: Setup\n\n## Status\n\nDraft\n\n## Tasks / "
	    "Subtasks\n\n- [ ] a\n");
	write_file(t->root, "docs/1.2.story.md",
	    "# Story 1.2: Login\n\n## Status\n\nApproved\n\n## Tasks / "
	    "Subtasks\n\n- [ ] a\n");
	write_file(t->root, "docs/1-3-reset.md",
	    "# Story 1.3: Reset\n\nStatus: drafted\n\n## Tasks / "
	    "Subtasks\n\n- [ ] a\n");
	write_file(t->root, "docs/1-4-none.md", "# Story 1.4\n\n- [ ] a\n");
	load_config(&c, t, "{\"stories_glob\": \"docs/*.md\"}");
	if (stories_load(&s, &n, &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 4);
	assert_string_equal(s[0].id, "1-3-reset");
	assert_string_equal(s[0].status_line, "drafted");
	assert_true(s[0].draft);
	assert_string_equal(s[1].id, "1-4-none");
	assert_string_equal(s[1].status_line, "");
	assert_false(s[1].draft);
	assert_string_equal(s[2].id, "1.1");
	assert_string_equal(s[2].status_line, "Draft");
	assert_true(s[2].draft);
	assert_string_equal(s[3].id, "1.2");
	assert_string_equal(s[3].status_line, "Approved");
	assert_false(s[3].draft);
	/* a draft is still a story: valid, its tasks counted */
	assert_int_equal(s[2].load_status, STATUS_PENDING);
	assert_int_equal(s[2].counts.tasks_total, 1);
	assert_true(story_skipped(&s[0], &c));
	assert_false(story_skipped(&s[1], &c));
	assert_true(story_skipped(&s[2], &c));
	c.include_drafts = true;
	assert_false(story_skipped(&s[0], &c));
	assert_false(story_skipped(&s[2], &c));
	stories_free(s, n);
	config_release(&c);
}

/* A v6 story's status comes from sprint-status.yaml when the file has
 * no Status line of its own; the file's own line wins. */
static void
test_sprint_status_drafts(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;

	write_file(t->root, "sprint-status.yaml",
	    "development_status:\n  1-1-a: drafted\n  1-2-b: drafted\n"
	    "  1-3-c: ready-for-dev\n");
	write_file(t->root, "1-1-a.md", "# Story 1.1\n\n- [ ] a\n");
	write_file(t->root, "1-2-b.md",
	    "# Story 1.2\n\nStatus: ready-for-dev\n\n"
	    "- [ ] a\n");
	write_file(t->root, "1-3-c.md", "# Story 1.3\n\n- [ ] a\n");
	load_config(&c, t,
	    "{\"stories\": {\"sprint_status\": \"sprint-status.yaml\"}}");
	if (stories_load(&s, &n, &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 3);
	assert_string_equal(s[0].status_line, "drafted");
	assert_true(s[0].draft);
	assert_string_equal(s[1].status_line, "ready-for-dev");
	assert_false(s[1].draft);
	assert_string_equal(s[2].status_line, "ready-for-dev");
	assert_false(s[2].draft);
	stories_free(s, n);
	config_release(&c);
}

static void
test_no_stories(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = (struct story *)&c;
	struct sc_err err;
	size_t n = 7;

	load_config(&c, t, "{}");
	assert_int_equal(stories_load(&s, &n, &c, &err), 0);
	assert_null(s);
	assert_int_equal(n, 0);
	stories_free(NULL, 0);
	config_release(&c);
}

static void
test_missing_file(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;

	write_file(t->root, "a.md", "- [ ] a\n");
	load_config(&c, t, "{\"stories\": [\"a.md\", \"docs/missing.md\"]}");
	assert_int_equal(stories_load(&s, &n, &c, &err), SC_EDATA);
	assert_null(s);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err.msg,
	    "docs/missing.md: cannot read story "
	    "file: No such file or directory"));
	config_release(&c);
}

/* A dangling symlink is a missing file (and works when run as root,
 * where a chmod 0 file would still be readable). */
static void
test_dangling_symlink(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;
	char link[PATH_MAX];

	fmt_into(link, sizeof(link), "%s/gone.md", t->root);
	assert_int_equal(symlink("nowhere.md", link), 0);
	load_config(&c, t, "{\"stories\": [\"gone.md\"]}");
	assert_int_equal(stories_load(&s, &n, &c, &err), SC_EDATA);
	assert_string_equal(err.msg,
	    "gone.md: cannot read story file: No such file or directory");
	config_release(&c);
}

static void
test_directory(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;

	make_dir(t->root, "d.md");
	load_config(&c, t, "{\"stories\": [\"d.md\"]}");
	assert_int_equal(stories_load(&s, &n, &c, &err), SC_EDATA);
	assert_string_equal(err.msg, "d.md: story file is not a regular file");
	config_release(&c);
}

/* config_load refuses "../x.md"; stories_load checks again on its own
 * for a config built in code. */
static void
test_escape_dotdot(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story_conf sc;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;
	char file[] = "../outside.md", id[] = "outside";

	write_file(t->base, "outside.md", "- [ ] secret\n");
	write_file(t->root, "storyctl.json",
	    "{\"stories\": "
	    "[\"../outside.md\"]}");
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_load(&c, t->cfg, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "outside the project root"));

	memset(&sc, 0, sizeof(sc));
	sc.file = file;
	sc.id = id;
	c.root = t->root;
	c.stories = &sc;
	c.nstories = 1;
	assert_int_equal(stories_load(&s, &n, &c, &err), SC_EDATA);
	assert_non_null(strstr(err.msg,
	    "../outside.md: story file resolves "
	    "to"));
	assert_non_null(strstr(err.msg, "outside the project root"));
	assert_null(s);
}

static void
test_escape_symlink(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;
	char target[PATH_MAX], link[PATH_MAX];

	write_file(t->base, "outside.md", "- [ ] secret\n");
	make_dir(t->root, "docs");
	fmt_into(target, sizeof(target), "%s/outside.md", t->base);
	fmt_into(link, sizeof(link), "%s/docs/evil.md", t->root);
	assert_int_equal(symlink(target, link), 0);
	load_config(&c, t, "{\"stories_glob\": \"docs/*.md\"}");
	assert_int_equal(c.nstories, 1);
	assert_int_equal(stories_load(&s, &n, &c, &err), SC_EDATA);
	assert_non_null(strstr(err.msg,
	    "docs/evil.md: story file resolves "
	    "to"));
	assert_non_null(strstr(err.msg, "outside the project root"));
	config_release(&c);
}

/* A symlinked directory leading out of the root is caught as well. */
static void
test_escape_symlinked_dir(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;
	char link[PATH_MAX];

	make_dir(t->base, "elsewhere");
	write_file(t->base, "elsewhere/x.md", "- [ ] x\n");
	fmt_into(link, sizeof(link), "%s/docs", t->root);
	assert_int_equal(symlink("../elsewhere", link), 0);
	load_config(&c, t, "{\"stories\": [\"docs/x.md\"]}");
	assert_int_equal(stories_load(&s, &n, &c, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "outside the project root"));
	config_release(&c);
}

static void
test_symlink_inside_ok(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct sc_err err;
	size_t n = 0;
	char link[PATH_MAX], want[PATH_MAX], *path;

	write_file(t->root, "real.md", "- [x] a\n- [ ] b\n");
	fmt_into(link, sizeof(link), "%s/current.md", t->root);
	assert_int_equal(symlink("real.md", link), 0);
	load_config(&c, t, "{\"stories\": [\"current.md\"]}");
	if (stories_load(&s, &n, &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 1);
	assert_string_equal(s[0].id, "current");
	assert_string_equal(s[0].file, "current.md");
	fmt_into(want, sizeof(want), "%s/real.md", t->root);
	/* a symbolic link: where it resolves is kept, and is the path */
	assert_string_equal(s[0].resolved, want);
	path = story_abspath(&s[0], c.root);
	assert_string_equal(path, want);
	free(path);
	assert_int_equal(s[0].counts.tasks_total, 2);
	stories_free(s, n);
	config_release(&c);
}

static void
test_too_large(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct story *s = NULL;
	struct progress p;
	struct sc_err err;
	size_t n = 0;
	char path[PATH_MAX];
	int fd;

	fmt_into(path, sizeof(path), "%s/big.md", t->root);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	/* sparse: costs no disk */
	assert_int_equal(ftruncate(fd, STORY_MAX_BYTES + 1), 0);
	close(fd);
	load_config(&c, t, "{\"stories\": [\"big.md\"]}");
	assert_int_equal(stories_load(&s, &n, &c, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "big.md: story file is larger than"));
	assert_int_equal(
	    story_read_progress(&p, path, NULL, NULL, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "larger than"));
	config_release(&c);
}

static void
test_read_progress(void **state)
{
	struct tmp *t = *state;
	struct progress p;
	struct sc_err err;
	char path[PATH_MAX];

	write_file(t->root, "s.md", "- [ ] a\n- [ ] b\n");
	fmt_into(path, sizeof(path), "%s/s.md", t->root);
	assert_int_equal(story_read_progress(&p, path, NULL, NULL, &err), 0);
	assert_int_equal(p.counts.tasks_total, 2);
	assert_int_equal(p.counts.tasks_completed, 0);
	assert_string_equal(p.stalled_task, "a");

	/* the agent checks a box: the next read sees it */
	write_file(t->root, "s.md", "- [x] a\n- [ ] b\n");
	assert_int_equal(story_read_progress(&p, path, NULL, NULL, &err), 0);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_string_equal(p.stalled_task, "b");

	/* the agent deleted it: an error naming the file, progress zeroed */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(
	    story_read_progress(&p, path, NULL, NULL, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(p.counts.tasks_total, 0);
	assert_string_equal(p.stalled_task, "");
}

/* Issue 11: a story swapped for a symlink to a file outside the root
 * while the batch runs is refused at every read, and nothing of the
 * outside file is read; a symlink to another file inside stays fine. */
static void
test_swapped_symlink(void **state)
{
	struct tmp *t = *state;
	struct progress p;
	struct sc_err err;
	char path[PATH_MAX], outside[PATH_MAX], inside[PATH_MAX];

	write_file(t->root, "s.md", "- [ ] a\n- [ ] b\n");
	write_file(t->root, "other.md", "- [x] a\n- [ ] b\n");
	fmt_into(path, sizeof(path), "%s/s.md", t->root);
	fmt_into(outside, sizeof(outside), "%s/secret.md", t->base);
	fmt_into(inside, sizeof(inside), "%s/other.md", t->root);
	write_file(t->base, "secret.md", "- [x] SECRET-MARKER\n- [ ] x\n");
	assert_int_equal(story_read_progress(&p, path, t->root, NULL, &err), 0);
	assert_int_equal(p.counts.tasks_total, 2);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(
	    story_read_progress(&p, path, t->root, NULL, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "a symlink was swapped in"));
	assert_non_null(strstr(err.msg, "secret.md"));
	assert_int_equal(p.counts.tasks_total, 0);
	assert_string_equal(p.stalled_task, "");

	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(inside, path), 0);
	assert_int_equal(story_read_progress(&p, path, t->root, NULL, &err), 0);
	assert_int_equal(p.counts.tasks_completed, 1);
}

/* The refusal names the story relative to its root and where the
 * symlink leads, cleaned and cut short: the target's name is the
 * agent's choice, and escape sequences or C1 controls in it must not
 * reach the story's reason (show, the database, the branch). */
static void
test_swapped_symlink_named_safely(void **state)
{
	struct tmp *t = *state;
	struct progress p;
	struct sc_err err;
	char path[PATH_MAX], outside[PATH_MAX], name[300];
	size_t i;

	write_file(t->root, "s.md", "- [ ] a\n");
	fmt_into(path, sizeof(path), "%s/s.md", t->root);
	memset(name, 'x', sizeof(name));
	memcpy(name, "\x1b[31mevil\xc2\x9b\x7f", 11);
	name[200] = '\0';
	write_file(t->base, name, "- [x] SECRET-MARKER\n- [ ] x\n");
	fmt_into(outside, sizeof(outside), "%s/%s", t->base, name);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(
	    story_read_progress(&p, path, t->root, NULL, &err), SC_EDATA);
	assert_non_null(strstr(err.msg,
	    "s.md: a symlink was swapped in that leads out of the repository, "
	    "to "));
	assert_non_null(strstr(err.msg, "evil"));
	assert_non_null(strstr(err.msg, "...; it is not read"));
	assert_null(strstr(err.msg, t->root));
	for (i = 0; err.msg[i] != '\0'; i++) {
		unsigned char c = (unsigned char)err.msg[i];
		assert_true(c >= 0x20 && c != 0x7f && c < 0x80);
	}
	/* with "cannot read the story: " in front it fits the 200 bytes
	 * slot_prepare() keeps */
	assert_true(strlen(err.msg) + 23 <= 200);
	assert_string_equal(p.stalled_task, "");
}

/* A directory on the way to the story swapped for a symlink out of the
 * root is caught at the read as well. */
static void
test_swapped_directory(void **state)
{
	struct tmp *t = *state;
	struct progress p;
	struct sc_err err;
	char dir[PATH_MAX], path[PATH_MAX], out[PATH_MAX];

	fmt_into(dir, sizeof(dir), "%s/d", t->root);
	fmt_into(out, sizeof(out), "%s/elsewhere", t->base);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkdir(out, 0700), 0);
	write_file(dir, "s.md", "- [ ] a\n");
	write_file(out, "s.md", "- [x] SECRET-MARKER\n- [ ] x\n");
	fmt_into(path, sizeof(path), "%s/s.md", dir);
	assert_int_equal(story_read_progress(&p, path, t->root, NULL, &err), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(symlink(out, dir), 0);
	assert_int_equal(
	    story_read_progress(&p, path, t->root, NULL, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "d/s.md: a symlink was swapped in"));
	assert_int_equal(p.counts.tasks_total, 0);
}

/* The slot's cache of the story (story_read_seen()): the same bytes are
 * parsed once, and a change of one byte (a box ticked, the size the
 * same) or of the path is always read afresh. */
static void
test_seen(void **state)
{
	struct tmp *t = *state;
	struct story_seen seen = {0};
	struct story_look look;
	struct progress p;
	struct sc_err err;
	char path[PATH_MAX], other[PATH_MAX];
	const char *kept;

	fmt_into(path, sizeof(path), "%s/s.md", t->root);
	fmt_into(other, sizeof(other), "%s/o.md", t->root);
	write_file(t->root, "s.md", "- [x] a\n- [ ] b\n");
	write_file(t->root, "o.md", "- [x] a\n- [ ] b\n- [ ] c\n");
	assert_int_equal(
	    story_read_seen(&look, &seen, path, t->root, NULL, &err), 0);
	assert_int_equal(look.pr.counts.tasks_completed, 1);
	assert_int_equal(look.pr.counts.tasks_total, 2);
	assert_int_equal(look.nitems, 2);
	story_look_release(&look);
	kept = seen.text;
	assert_int_equal(
	    story_read_seen_progress(&p, &seen, path, t->root, NULL, &err), 0);
	assert_int_equal(p.counts.tasks_completed, 1);
	assert_ptr_equal(seen.text, kept); /* not parsed again */
	write_file(t->root, "s.md", "- [x] a\n- [x] b\n");
	assert_int_equal(
	    story_read_seen(&look, &seen, path, t->root, NULL, &err), 0);
	assert_int_equal(look.pr.counts.tasks_completed, 2);
	assert_true(look.items[1].checked);
	story_look_release(&look);
	/* another story in the same slot */
	assert_int_equal(
	    story_read_seen_progress(&p, &seen, other, t->root, NULL, &err), 0);
	assert_int_equal(p.counts.tasks_total, 3);
	/* gone: an error, and nothing kept */
	assert_int_equal(unlink(other), 0);
	assert_true(story_read_seen_progress(
			&p, &seen, other, t->root, NULL, &err) < 0);
	assert_null(seen.text);
	assert_int_equal(p.counts.tasks_total, 0);
	story_seen_release(&seen);
	story_seen_release(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_load, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_swapped_symlink, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_swapped_symlink_named_safely, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_swapped_directory, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_tasks_heading, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_status_and_drafts, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_sprint_status_drafts, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_no_stories, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_missing_file, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_dangling_symlink, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_directory, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_escape_dotdot, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_escape_symlink, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_escape_symlinked_dir, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_symlink_inside_ok, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_too_large, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_read_progress, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(test_seen, tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
