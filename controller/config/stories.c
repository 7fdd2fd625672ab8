/*
 * stories.c - see stories.h.
 *
 * The containment check works on resolved paths: realpath() follows
 * every symlink, so "docs/x.md -> /etc/passwd" and "../x.md" both land
 * outside the resolved root and are refused, while a symlink from one
 * story file to another inside the project is fine.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/config/stories.h"
#include "state/fsutil.h"
#include "strategies/schedule.h"
#include "strategies/storymeta.h"
#include "strategies/text.h"

/* Whether resolved path p lies strictly under resolved directory root. */
static bool path_inside(const char *p, const char *root);

/* Room for the target of a swapped-in symlink in a message: enough to
 * recognise it, short enough that the whole reason ("cannot read the
 * story: ...") fits the 200 bytes slot_prepare() keeps of it. */
#define STORY_TARGET_SHOWN 64

/*
 * The refusal of a story that leads out of its tree.  target (NULL when
 * not known) is named by whoever swapped the symlink in, so it is
 * cleaned (no escape sequence or control character reaches the record)
 * and cut at a character boundary.
 */
static int
swapped_err(struct sc_err *err, const char *shown, const char *target)
{
	char t[STORY_TARGET_SHOWN + 1];
	bool cut = false;

	if (target == NULL)
		return err_set(err, SC_EDATA,
		    "%s: a symlink was swapped in that leads out of the "
		    "repository while it was opened; it is not read",
		    shown);
	text_clean(
	    t, sizeof(t), target, strlen(target), TEXT_MARK_INVALID, &cut);
	return err_set(err, SC_EDATA,
	    "%s: a symlink was swapped in that leads out of the repository, "
	    "to %s%s; it is not read",
	    shown, t, cut ? "..." : "");
}

/*
 * Open the story at path for reading only if it lies inside root (NULL:
 * no check), checked at every read, not only at load
 * (docs/reliability.md): an agent may swap the story for a symlink to a
 * file elsewhere while the batch runs.  Three checks, each closing the
 * gap the one before leaves:
 *  1. realpath(): the file as it resolves now must lie under the
 *     resolved root, so nothing outside is even opened (a FIFO or a
 *     device planted there);
 *  2. the resolved path is opened with O_NOFOLLOW: a symlink swapped in
 *     as its last component since step 1 fails the open;
 *  3. the descriptor itself: the path the kernel holds for it
 *     (/proc/self/fd) must lie under root, which also catches a
 *     directory swapped for a symlink since step 1; without /proc, the
 *     file opened must be the one the path resolves to now (st_dev and
 *     st_ino).
 * *fd is -1 on error.
 */
static int
story_open(int *fd, const char *path, const char *root, const char *shown,
    struct sc_err *err)
{
	char link[64], got[PATH_MAX], *real_root = NULL, *real = NULL;
	struct stat a, b;
	ssize_t n;
	int rc = 0;

	*fd = -1;
	/* O_NONBLOCK: a FIFO planted as a story must not hang the open */
	if (root == NULL) {
		*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (*fd < 0)
			rc = err_set(err, SC_EDATA,
			    "%s: cannot read story file: %s", shown,
			    strerror(errno));
		goto out;
	}
	real_root = realpath(root, NULL);
	if (real_root == NULL) {
		rc = err_set(err, SC_EDATA, "%s: cannot resolve %s: %s", shown,
		    root, strerror(errno));
		goto out;
	}
	real = realpath(path, NULL);
	if (real == NULL) {
		rc = err_set(err, SC_EDATA, "%s: cannot read story file: %s",
		    shown, strerror(errno));
		goto out;
	}
	if (!path_inside(real, real_root)) {
		rc = swapped_err(err, shown, real);
		goto out;
	}
	*fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (*fd < 0) {
		rc = errno == ELOOP
		    ? swapped_err(err, shown, NULL)
		    : err_set(err, SC_EDATA, "%s: cannot read story file: %s",
			  shown, strerror(errno));
		goto out;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", *fd);
	n = readlink(link, got, sizeof(got) - 1);
	if (n >= 0 && (size_t)n < sizeof(got) - 1) {
		got[n] = '\0';
		if (!path_inside(got, real_root))
			rc = swapped_err(err, shown, got);
	} else if (fstat(*fd, &a) < 0 || stat(real, &b) < 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		rc = swapped_err(err, shown, NULL);
	}
out:
	if (rc < 0 && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	free(real);
	free(real_root);
	return rc;
}

/*
 * Read the whole file at path into a malloc'd buffer, opened by
 * story_open() (root: see there).  Reads to EOF rather than trusting
 * st_size: an agent may be appending while a poll reads.  shown names
 * the file in messages.
 */
static int
read_story(char **out, size_t *out_len, const char *path, const char *root,
    const char *shown, struct sc_err *err)
{
	struct stat st;
	char *buf = NULL, *grown;
	size_t len = 0, cap;
	ssize_t n;
	int fd = -1, rc = 0;

	*out = NULL;
	*out_len = 0;
	if ((rc = story_open(&fd, path, root, shown, err)) < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		rc = err_set(err, SC_EDATA, "%s: cannot read story file: %s",
		    shown, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = err_set(err, SC_EDATA,
		    "%s: story file is not a regular "
		    "file",
		    shown);
		goto out;
	}
	if (st.st_size > STORY_MAX_BYTES)
		goto too_large;
	cap = (size_t)st.st_size + 4096;
	buf = malloc(cap);
	if (buf == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", shown);
		goto out;
	}
	for (;;) {
		if (len == cap) {
			if (cap > STORY_MAX_BYTES)
				goto too_large;
			grown = realloc(buf, cap * 2);
			if (grown == NULL) {
				rc = err_set(
				    err, SC_EOS, "%s: out of memory", shown);
				goto out;
			}
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = err_set(err, SC_EDATA,
			    "%s: cannot read story "
			    "file: %s",
			    shown, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > STORY_MAX_BYTES)
		goto too_large;
	*out = buf;
	*out_len = len;
	buf = NULL;
	goto out;
too_large:
	rc = err_set(err, SC_EDATA, "%s: story file is larger than %d bytes",
	    shown, STORY_MAX_BYTES);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* abspath as messages name it: relative to root when it lies there
 * (the reason a story is settled with is kept short). */
static const char *
story_shown(const char *abspath, const char *root)
{
	size_t n = root != NULL ? strlen(root) : 0;

	if (n > 0 && strncmp(abspath, root, n) == 0 && abspath[n] == '/' &&
	    abspath[n + 1] != '\0')
		return abspath + n + 1;
	return abspath;
}

int
story_read_text(char **out, size_t *out_len, const char *abspath,
    const char *root, struct sc_err *err)
{
	return read_story(
	    out, out_len, abspath, root, story_shown(abspath, root), err);
}

/* Story file abspath read once and parsed: its progress into *pr and,
 * when items is not NULL, every item into *items, *n. */
static int
story_parse(struct progress *pr, struct progress_item **items, size_t *n,
    const char *abspath, const char *root, const char *tasks_heading,
    struct sc_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if ((rc = story_read_text(&text, &len, abspath, root, err)) == 0) {
		if (items != NULL)
			rc = progress_items(
			    items, n, pr, text, len, tasks_heading, err);
		else
			progress_parse_heading(pr, text, len, tasks_heading);
	}
	free(text);
	return rc;
}

int
story_read_progress(struct progress *out, const char *abspath, const char *root,
    const char *tasks_heading, struct sc_err *err)
{
	memset(out, 0, sizeof(*out));
	return story_parse(out, NULL, NULL, abspath, root, tasks_heading, err);
}

int
story_read_look(struct story_look *out, const char *abspath, const char *root,
    const char *tasks_heading, struct sc_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = story_parse(&out->pr, &out->items, &out->nitems, abspath, root,
	    tasks_heading, err);
	if (rc < 0)
		story_look_release(out);
	return rc;
}

void
story_look_release(struct story_look *l)
{
	if (l == NULL)
		return;
	free(l->items);
	memset(l, 0, sizeof(*l));
}

void
story_seen_release(struct story_seen *seen)
{
	if (seen == NULL)
		return;
	free(seen->path);
	free(seen->text);
	story_look_release(&seen->look);
	memset(seen, 0, sizeof(*seen));
}

/* *out = a copy of l; SC_EOS on OOM. */
static int
look_copy(
    struct story_look *out, const struct story_look *l, struct sc_err *err)
{
	memset(out, 0, sizeof(*out));
	out->pr = l->pr;
	if (l->nitems == 0)
		return 0;
	out->items = malloc(l->nitems * sizeof(*l->items));
	if (out->items == NULL)
		return err_set(err, SC_EOS, "out of memory");
	memcpy(out->items, l->items, l->nitems * sizeof(*l->items));
	out->nitems = l->nitems;
	return 0;
}

/* seen made to hold the file's bytes now and what they parse to: the
 * parse only when they differ from the bytes seen holds.  On error seen
 * is empty (the next read parses). */
static int
seen_refresh(struct story_seen *seen, const char *abspath, const char *root,
    const char *tasks_heading, struct sc_err *err)
{
	struct story_look look = {0};
	char *text = NULL, *path = NULL;
	size_t len = 0;
	int rc;

	rc = story_read_text(&text, &len, abspath, root, err);
	if (rc < 0)
		goto out;
	if (seen->path != NULL && strcmp(seen->path, abspath) == 0 &&
	    seen->len == len && memcmp(seen->text, text, len) == 0)
		goto out;
	rc = progress_items(
	    &look.items, &look.nitems, &look.pr, text, len, tasks_heading, err);
	if (rc == 0 && (path = strdup(abspath)) == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
	if (rc < 0)
		goto out;
	story_seen_release(seen);
	seen->path = path;
	seen->text = text;
	seen->len = len;
	seen->look = look;
	return 0;
out:
	if (rc < 0)
		story_seen_release(seen);
	story_look_release(&look);
	free(text);
	return rc;
}

int
story_read_seen(struct story_look *out, struct story_seen *seen,
    const char *abspath, const char *root, const char *tasks_heading,
    struct sc_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = seen_refresh(seen, abspath, root, tasks_heading, err);
	if (rc == 0)
		rc = look_copy(out, &seen->look, err);
	return rc;
}

int
story_read_seen_progress(struct progress *out, struct story_seen *seen,
    const char *abspath, const char *root, const char *tasks_heading,
    struct sc_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = seen_refresh(seen, abspath, root, tasks_heading, err);
	if (rc == 0)
		*out = seen->look.pr;
	return rc;
}

static bool
path_inside(const char *p, const char *root)
{
	size_t len = strlen(root);

	if (strcmp(root, "/") == 0)
		return p[0] == '/' && p[1] != '\0';
	return strncmp(p, root, len) == 0 && p[len] == '/' &&
	    p[len + 1] != '\0';
}

static int
story_load_one(struct story *s, const struct story_conf *sc, const char *root,
    const char *tasks_heading, struct sc_err *err)
{
	struct progress pr;
	struct storymeta meta;
	char *joined = NULL, *text = NULL, why[400];
	size_t len = 0;
	int rc = 0;

	s->id = sc->id;
	s->file = sc->file;
	if ((joined = fsutil_path_join(root, sc->file)) == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", sc->file);
		goto out;
	}
	s->resolved = realpath(joined, NULL);
	if (s->resolved == NULL) {
		rc = err_set(err, SC_EDATA, "%s: cannot read story file: %s",
		    sc->file, strerror(errno));
		goto out;
	}
	if (!path_inside(s->resolved, root)) {
		rc = err_set(err, SC_EDATA,
		    "%s: story file resolves to %s, "
		    "outside the project root %s",
		    sc->file, s->resolved, root);
		goto out;
	}
	if ((rc = read_story(&text, &len, s->resolved, root, sc->file, err)) !=
	    0)
		goto out;
	if (strcmp(s->resolved, joined) == 0) {
		free(s->resolved);
		s->resolved = NULL;
	}
	progress_parse_heading(&pr, text, len, tasks_heading);
	/* the story's own Status line; the sprint status's when it has
	 * none (docs/stories.md "Drafts") */
	storymeta_parse(&meta, text, len);
	snprintf(s->status_line, sizeof(s->status_line), "%s",
	    meta.status[0] != '\0' ? meta.status : sc->sprint_status);
	s->draft = storymeta_is_draft(s->status_line);
	s->counts = pr.counts;
	if (s->counts.tasks_total == 0) {
		s->load_status = STATUS_INVALID;
		s->reason =
		    strdup(progress_no_tasks_reason(why, sizeof(why), &pr));
		if (s->reason == NULL) {
			rc =
			    err_set(err, SC_EOS, "%s: out of memory", sc->file);
			goto out;
		}
	} else {
		s->load_status = STATUS_PENDING;
	}
out:
	free(joined);
	free(text);
	return rc;
}

int
stories_load(struct story **out, size_t *out_n, const struct config *cfg,
    struct sc_err *err)
{
	struct story *list = NULL;
	char *root = NULL;
	size_t i, n = 0;
	int rc = 0;

	*out = NULL;
	*out_n = 0;
	if (cfg->nstories == 0)
		goto out;
	root = realpath(cfg->root, NULL);
	if (root == NULL) {
		rc = err_set(err, SC_EDATA,
		    "%s: cannot resolve the project "
		    "root: %s",
		    cfg->root, strerror(errno));
		goto out;
	}
	list = calloc(cfg->nstories, sizeof(*list));
	if (list == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (i = 0; i < cfg->nstories; i++) {
		n = i + 1;
		rc = story_load_one(
		    &list[i], &cfg->stories[i], root, cfg->tasks_heading, err);
		if (rc != 0)
			goto out;
	}
	*out = list;
	*out_n = n;
	list = NULL;
out:
	stories_free(list, n);
	free(root);
	return rc;
}

bool
story_skipped(const struct story *s, const struct config *cfg)
{
	return s->draft && !cfg->include_drafts;
}

void
stories_free(struct story *s, size_t n)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(s[i].resolved);
		free(s[i].reason);
	}
	free(s);
}

char *
story_abspath(const struct story *s, const char *root)
{
	return s->resolved != NULL ? strdup(s->resolved)
				   : fsutil_path_join(root, s->file);
}

/* The config's dependency graph: deps[] holds indexes into
 * cfg->stories; statuses all pending. */
static int
sched_build(struct sched_story **out, int **out_deps, const struct config *cfg,
    struct sc_err *err)
{
	struct sched_story *s = NULL;
	int *deps = NULL;
	size_t i, k, total = 0, used = 0;
	int j;

	*out = NULL;
	*out_deps = NULL;
	for (i = 0; i < cfg->nstories; i++)
		total += cfg->stories[i].depends_on.n;
	s = calloc(cfg->nstories + 1, sizeof(*s));
	deps = calloc(total + 1, sizeof(*deps));
	if (s == NULL || deps == NULL) {
		free(s);
		free(deps);
		return err_set(err, SC_EOS, "out of memory");
	}
	for (i = 0; i < cfg->nstories; i++) {
		const struct story_conf *c = &cfg->stories[i];
		s[i].id = c->id;
		s[i].deps = deps + used;
		for (k = 0; k < c->depends_on.n; k++) {
			j = config_story_index(cfg, c->depends_on.items[k]);
			if (j >= 0)
				deps[used + s[i].ndeps++] = j;
		}
		used += s[i].ndeps;
		s[i].status = STATUS_PENDING;
	}
	*out = s;
	*out_deps = deps;
	return 0;
}

int
stories_order(size_t **out, const struct config *cfg, struct sc_err *err)
{
	struct sched_story *s = NULL;
	int *deps = NULL;
	size_t *order = NULL;
	int rc;

	*out = NULL;
	rc = sched_build(&s, &deps, cfg, err);
	if (rc < 0)
		return rc;
	order = calloc(cfg->nstories + 1, sizeof(*order));
	if (order == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
	else
		rc = schedule_order(order, s, cfg->nstories, err);
	if (rc < 0) {
		free(order);
		order = NULL;
	}
	*out = order;
	free(s);
	free(deps);
	return rc;
}
