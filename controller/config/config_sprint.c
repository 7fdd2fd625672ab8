/* config_sprint.c - see config_int.h: stories read from a BMAD
 * sprint-status.yaml (docs/stories.md "BMAD v6").
 *
 * Each entry's file is looked for in an index of the folders the
 * sprint's files live in, read once per load: story_location and the
 * sprint status's own folder, each with two levels of subfolders.  Only
 * the .md files whose name could be a story's are kept (an entry's
 * "<key>.md", a name with a number), so a story_location at the root of
 * a large repository costs its readdir()s and little memory; the
 * lookups are binary searches.  Which name matches which key is
 * strategies/sprintstatus.c's sprint_name_match().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/config/config_int.h"
#include "state/fsutil.h"
#include "strategies/sprintstatus.h"

/* How far below a place files are looked for: "stories/" is one
 * level, "epic-15/stories/" two (docs/stories.md "BMAD v6"). */
#define SPRINT_DEPTH_MAX 2
/* Folders read at most for one sprint status, every place together. */
#define SPRINT_DIRS_MAX 4096

/* A .md file of the index. */
struct sfile {
	char *rel; /* relative to the root */
	const char *base; /* its name, inside rel */
	char num[STORY_NUMBER_MAX]; /* its number, "" when none */
	unsigned place; /* 0 story_location, 1 beside sprint-status.yaml */
	unsigned depth; /* folders below the place */
};

struct sindex {
	struct sfile *f;
	size_t n, alloc;
	struct sfile **by_base, **by_num; /* sorted: name or number, rank */
	size_t nnum;
	size_t ndirs;
	const char *place[2]; /* relative to the root, "" the root */
	const char **keys; /* the entries' keys, sorted: kept by name */
	size_t nkeys;
	const char *root;
};

/* loc relative to the root: "{project-root}" dropped, an absolute path
 * inside the root made relative, leading slashes dropped; NULL for an
 * absolute path outside it. */
static const char *
sprint_dir_relative(const char *loc, const char *root)
{
	const char *p = loc;
	size_t n = strlen(root);

	if (p != NULL && strncmp(p, "{project-root}", 14) == 0)
		p += 14;
	else if (p != NULL && p[0] == '/')
		p = strncmp(p, root, n) == 0 && (p[n] == '/' || !p[n]) ? p + n
								       : NULL;
	while (p != NULL && *p == '/')
		p++;
	return p;
}

/*
 * The folder story_location names, relative to the root ("" the root
 * itself): "{project-root}/" dropped, an absolute path inside the root
 * made relative.  *out is NULL when it names no folder inside the root;
 * -1 when out of memory.
 */
static int
sprint_dir_location(char **out, const struct config *c, const char *loc)
{
	const char *p = sprint_dir_relative(loc, c->root);
	char *norm = NULL, *full = NULL;
	struct stat st;

	*out = NULL;
	/* another placeholder ("{output_folder}") cannot be resolved */
	if (p == NULL || strchr(p, '{') != NULL)
		return 0;
	if (p[strspn(p, "./")] == '\0' && strstr(p, "..") == NULL)
		norm = strdup(""); /* "", ".", "./": the root */
	else if (config_path_normalize(&norm, p) == -2)
		return -1;
	if (norm != NULL && norm[0] != '\0' &&
	    (full = fsutil_path_join(c->root, norm)) == NULL) {
		free(norm);
		return -1;
	}
	if (norm != NULL &&
	    (norm[0] == '\0' ||
		(stat(full, &st) == 0 && S_ISDIR(st.st_mode)))) {
		*out = norm;
		norm = NULL;
	}
	free(full);
	free(norm);
	return 0;
}

/*
 * Where the sprint's story files are (docs/stories.md "BMAD v6"): its
 * story_location, "{project-root}/" dropped and relative to the root
 * (an absolute path inside the root made relative), when that is a
 * directory inside the root; otherwise the yaml's own directory, and
 * note says why (nothing when it names no story_location).  *out is ""
 * for the root itself.
 */
static int
sprint_dir(
    char **out, const struct config *c, const char *loc, char *note, size_t cap)
{
	const char *slash;
	char shown[96];

	if (sprint_dir_location(out, c, loc) < 0)
		return -1;
	if (*out != NULL)
		return 0;
	if (loc != NULL) {
		config_shown(shown, sizeof(shown), loc);
		snprintf(note, cap,
		    "story_location %s (%s: looked beside sprint-status.yaml)",
		    shown,
		    strchr(loc, '{') != NULL &&
			    strncmp(loc, "{project-root}", 14) != 0
			? "a placeholder storyctl cannot resolve"
			: "not a folder of the project");
	}
	slash = strrchr(c->sprint_status, '/');
	*out = slash != NULL
	    ? strndup(c->sprint_status, (size_t)(slash - c->sprint_status))
	    : strdup("");
	return *out != NULL ? 0 : -1;
}

/* --- the index ------------------------------------------------------ */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether name minus its ".md" (len bytes) is one of the keys. */
static bool
is_key(const struct sindex *ix, const char *name, size_t len)
{
	size_t lo = 0, hi = ix->nkeys, mid;
	int d;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		d = strncmp(ix->keys[mid], name, len);
		if (d == 0 && ix->keys[mid][len] != '\0')
			d = 1;
		if (d == 0)
			return true;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* A file of the index, when its name could be a story's. */
static int
index_add(struct sindex *ix, const char *rel, const char *name, unsigned place,
    unsigned depth)
{
	char num[STORY_NUMBER_MAX];
	size_t len = strlen(name);
	struct sfile *grown, *f;
	enum story_name kind;

	if (len < 4 || strcmp(name + len - 3, ".md") != 0)
		return 0;
	kind = story_name_number(num, name);
	if (kind == STORY_NAME_OTHER && !is_key(ix, name, len - 3))
		return 0;
	if (ix->n == ix->alloc) {
		grown = realloc(
		    ix->f, (ix->alloc ? ix->alloc * 2 : 64) * sizeof(*grown));
		if (grown == NULL)
			return -1;
		ix->f = grown;
		ix->alloc = ix->alloc ? ix->alloc * 2 : 64;
	}
	f = &ix->f[ix->n];
	memset(f, 0, sizeof(*f));
	if ((f->rel = strdup(rel)) == NULL)
		return -1;
	f->base = f->rel + strlen(rel) - len;
	memcpy(f->num, num, sizeof(num));
	f->place = place;
	f->depth = depth;
	ix->n++;
	return 0;
}

/*
 * The folder rel (relative to the root) of a place, depth levels below
 * it: its .md files and, while depth allows, its subfolders.  Hidden
 * folders, node_modules, symbolic links to folders and the other
 * place's folder (walked on its own) are not entered; a folder that
 * cannot be read is passed over.
 */
static int
index_walk(struct sindex *ix, const char *rel, unsigned place, unsigned depth)
{
	char *full = NULL, *child = NULL;
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int rc = 0;

	if (ix->ndirs >= SPRINT_DIRS_MAX)
		return 0;
	ix->ndirs++;
	full =
	    rel[0] != '\0' ? fsutil_path_join(ix->root, rel) : strdup(ix->root);
	if (full == NULL)
		return -1;
	if ((d = opendir(full)) == NULL)
		goto out;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) !=
		    0)
			continue;
		free(child);
		child = rel[0] != '\0' ? fsutil_path_join(rel, de->d_name)
				       : strdup(de->d_name);
		if (child == NULL) {
			rc = -1;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth < SPRINT_DEPTH_MAX &&
			    strcmp(de->d_name, "node_modules") != 0 &&
			    (place == 0 || strcmp(child, ix->place[0]) != 0))
				rc = index_walk(ix, child, place, depth + 1);
			continue;
		}
		if (S_ISLNK(st.st_mode) &&
		    fstatat(dirfd(d), de->d_name, &st, 0) != 0)
			continue;
		if (S_ISREG(st.st_mode))
			rc = index_add(ix, child, de->d_name, place, depth);
	}
out:
	if (d != NULL)
		closedir(d);
	free(child);
	free(full);
	return rc;
}

static int
rank(const struct sfile *f)
{
	return (int)(f->place * (SPRINT_DEPTH_MAX + 1) + f->depth);
}

static int
cmp_rel(const void *a, const void *b)
{
	const struct sfile *x = a, *y = b;
	int d = strcmp(x->rel, y->rel);

	return d != 0 ? d : rank(x) - rank(y);
}

static int
cmp_base(const void *a, const void *b)
{
	const struct sfile *x = *(struct sfile *const *)a;
	const struct sfile *y = *(struct sfile *const *)b;
	int d = strcmp(x->base, y->base);

	if (d == 0)
		d = rank(x) - rank(y);
	return d != 0 ? d : strcmp(x->rel, y->rel);
}

static int
cmp_num(const void *a, const void *b)
{
	const struct sfile *x = *(struct sfile *const *)a;
	const struct sfile *y = *(struct sfile *const *)b;
	int d = strcmp(x->num, y->num);

	if (d == 0)
		d = rank(x) - rank(y);
	return d != 0 ? d : strcmp(x->rel, y->rel);
}

static void
index_release(struct sindex *ix)
{
	size_t i;

	for (i = 0; i < ix->n; i++)
		free(ix->f[i].rel);
	free(ix->f);
	free(ix->by_base);
	free(ix->by_num);
	free(ix->keys);
	memset(ix, 0, sizeof(*ix));
}

/* The index of the places (place[1] NULL: one place) for ss's keys. */
static int
index_build(struct sindex *ix, const struct config *c,
    const struct sprint_status *ss, const char *place0, const char *place1)
{
	size_t i, o;

	memset(ix, 0, sizeof(*ix));
	ix->root = c->root;
	ix->place[0] = place0;
	ix->place[1] = place1;
	if ((ix->keys = calloc(ss->n + 1, sizeof(*ix->keys))) == NULL)
		return -1;
	for (i = 0; i < ss->n; i++)
		ix->keys[i] = ss->entries[i].key;
	ix->nkeys = ss->n;
	qsort(ix->keys, ix->nkeys, sizeof(*ix->keys), cmp_str);
	if (index_walk(ix, place0, 0, 0) < 0 ||
	    (place1 != NULL && index_walk(ix, place1, 1, 0) < 0))
		return -1;
	/* a file under both places (one inside the other) once, nearest */
	if (ix->n > 1)
		qsort(ix->f, ix->n, sizeof(*ix->f), cmp_rel);
	for (i = o = 0; i < ix->n; i++) {
		if (o > 0 && strcmp(ix->f[o - 1].rel, ix->f[i].rel) == 0) {
			free(ix->f[i].rel);
			continue;
		}
		ix->f[o++] = ix->f[i];
	}
	ix->n = o;
	ix->by_base = calloc(ix->n + 1, sizeof(*ix->by_base));
	ix->by_num = calloc(ix->n + 1, sizeof(*ix->by_num));
	if (ix->by_base == NULL || ix->by_num == NULL)
		return -1;
	for (i = 0; i < ix->n; i++) {
		ix->by_base[i] = &ix->f[i];
		if (ix->f[i].num[0] != '\0')
			ix->by_num[ix->nnum++] = &ix->f[i];
	}
	qsort(ix->by_base, ix->n, sizeof(*ix->by_base), cmp_base);
	qsort(ix->by_num, ix->nnum, sizeof(*ix->by_num), cmp_num);
	return 0;
}

/* The first of the n sorted files whose name (by_num false) or number
 * (true) is s. */
static size_t
lower_bound(struct sfile *const *v, size_t n, const char *s, bool by_num)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(by_num ? v[mid]->num : v[mid]->base, s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* --- one entry ------------------------------------------------------ */

/* What the index holds for one entry. */
struct efound {
	const struct sfile *best, *tie; /* tie: as near as best */
	enum sprint_match kind; /* best's */
	size_t farther; /* other matches, passed over */
	const struct sfile *farther_ex;
	const struct sfile *renamed; /* its number under another title */
	const struct sfile *shared; /* a v4 match not taken: see below */
};

/* The "<key>.md" files: the nearest best, one as near a tie, the
 * rest farther. */
static void
entry_find_exact(struct efound *o, const struct sindex *ix, const char *key)
{
	char name[CONFIG_ID_MAX + 8];
	const struct sfile *f;
	size_t i;

	snprintf(name, sizeof(name), "%s.md", key);
	for (i = lower_bound(ix->by_base, ix->n, name, false);
	     i < ix->n && strcmp(ix->by_base[i]->base, name) == 0; i++) {
		f = ix->by_base[i];
		if (o->best == NULL) {
			o->best = f;
			o->kind = SPRINT_MATCH_EXACT;
		} else if (o->tie == NULL && rank(f) == rank(o->best)) {
			o->tie = f;
		} else if (o->farther++ == 0) {
			o->farther_ex = f;
		}
	}
}

/* The files with the entry's number: v4 names of it after the exact
 * ones, and the first under another title (renamed). */
static void
entry_find_numbered(struct efound *o, const struct sindex *ix, const char *key,
    const char *num, bool shared)
{
	const struct sfile *f;
	enum sprint_match m;
	size_t i;

	for (i = num[0] != '\0' ? lower_bound(ix->by_num, ix->nnum, num, true)
				: ix->nnum;
	     i < ix->nnum && strcmp(ix->by_num[i]->num, num) == 0; i++) {
		f = ix->by_num[i];
		m = sprint_name_match(key, f->base);
		if (m == SPRINT_MATCH_NUMBER && o->renamed == NULL)
			o->renamed = f;
		if (m != SPRINT_MATCH_V4)
			continue;
		if (shared && o->best == NULL) {
			if (o->shared == NULL)
				o->shared = f;
		} else if (o->best == NULL) {
			o->best = f;
			o->kind = SPRINT_MATCH_V4;
		} else if (o->kind == SPRINT_MATCH_V4 && o->tie == NULL &&
		    rank(f) == rank(o->best)) {
			o->tie = f;
		} else if (o->farther++ == 0) {
			o->farther_ex = f;
		}
	}
}

/*
 * The entry's file (docs/stories.md "BMAD v6"): "<key>.md" before a
 * v4 name with its number; among those, story_location before the
 * sprint status's folder, and in each the fewest levels down.  Two
 * files alike are a tie (the entry is skipped); the others are counted
 * as passed over.  A v4 name is not taken when another entry has the
 * same number (shared): it would be either's.
 */
static void
entry_find(struct efound *o, const struct sindex *ix, const char *key,
    const char *num, bool shared)
{
	memset(o, 0, sizeof(*o));
	entry_find_exact(o, ix, key);
	entry_find_numbered(o, ix, key, num, shared);
}

/* The folder of f below its place, with a trailing '/'. */
static void
sub_of(char *buf, size_t cap, const struct sindex *ix, const struct sfile *f)
{
	const char *p = f->rel, *pl = ix->place[f->place];
	size_t n = strlen(pl);

	if (n > 0 && strncmp(p, pl, n) == 0 && p[n] == '/')
		p += n + 1;
	snprintf(buf, cap, "%.*s", (int)(f->base - p), p);
}

/* The subfolders the files were found in: the one most are in. */
struct subs {
	char name[8][96];
	size_t count[8], n, more; /* more: in folders past the 8th */
};

static void
subs_add(struct subs *s, struct sprint_found *sf, const char *sub)
{
	size_t i, best = 0;

	for (i = 0; i < s->n && strcmp(s->name[i], sub) != 0; i++)
		;
	if (i < s->n) {
		s->count[i]++;
	} else if (s->n < 8) {
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s", sub);
		s->count[s->n++] = 1;
	} else {
		s->more++; /* counted, not named */
	}
	for (i = 1; i < s->n; i++)
		if (s->count[i] > s->count[best])
			best = i;
	snprintf(sf->sub, sizeof(sf->sub), "%s", s->name[best]);
	sf->nsubs = s->n + s->more;
}

/* Why an entry has no file, into why ("ID: why"). */
static int
entry_why(char **why, const struct sprint_entry *e, const char *file,
    const struct efound *o, const char *num)
{
	char shown[KEY_MAX], hint[512] = "";
	int rc;

	config_shown(shown, sizeof(shown), e->status);
	if (o->tie != NULL)
		return asprintf(why,
		    "%s: %s and %s both match it alike (rename or move one)",
		    e->key, o->best->rel, o->tie->rel);
	if (o->shared != NULL)
		return asprintf(why,
		    "%s: %s, but %s has the number %s of more than one "
		    "entry, so it is not taken for either",
		    e->key, shown, o->shared->rel, num);
	if (o->renamed != NULL)
		snprintf(hint, sizeof(hint),
		    "; %s has its number under another title", o->renamed->rel);
	if (strcmp(e->status, "backlog") == 0)
		rc = asprintf(why, "%s: backlog, no story file yet (%s%s)",
		    e->key, file, hint);
	else if (hint[0] != '\0')
		rc = asprintf(why, "%s: %s, but its file %s is missing (%s)",
		    e->key, shown, file, hint + 2);
	else
		rc = asprintf(why, "%s: %s, but its file %s is missing", e->key,
		    shown, file);
	return rc;
}

/* An entry without a file to take: skipped, with why (taken: "ID:
 * why" already, or NULL to say it here). */
static int
entry_skip(struct loader *ld, struct config *c, const struct sindex *ix,
    const struct sprint_entry *e, const struct efound *o, const char *num,
    char *taken)
{
	struct sprint_found *sf = &c->sprint_found;
	char *file = NULL, *why = taken;
	int rc = 0;

	if (why == NULL &&
	    asprintf(&file, "%s%s%s.md", ix->place[0],
		ix->place[0][0] != '\0' ? "/" : "", e->key) < 0)
		file = NULL;
	if (why == NULL && file != NULL && entry_why(&why, e, file, o, num) < 0)
		why = NULL;
	if (o->tie != NULL)
		sf->ambiguous++;
	else
		sf->missing++;
	if (o->tie == NULL && strcmp(e->status, "backlog") == 0)
		sf->backlog++;
	if (o->best == NULL && o->renamed != NULL)
		sf->renamed++;
	if (why == NULL || strlist_push(&c->stories_skipped, why) < 0)
		rc = config_fail_nomem(ld);
	free(why);
	free(file);
	return rc;
}

/* One entry of the sprint status: listed when its file is found, else
 * skipped with the reason (docs/stories.md). */
static int
sprint_entry_add(struct loader *ld, struct config *c, size_t *alloc,
    const struct sindex *ix, const struct sprint_entry *e, bool shared,
    size_t nfiles, struct subs *subs)
{
	static const char key[] = "stories.sprint_status";
	struct sprint_found *sf = &c->sprint_found;
	char num[STORY_NUMBER_MAX], shown[KEY_MAX], sub[96];
	char *taken = NULL;
	struct story_conf *s;
	struct efound o;
	int rc = 0, j = -1;

	if (!config_id_valid(e->key)) {
		config_shown(shown, sizeof(shown), e->key);
		rc = config_fail(ld, key,
		    "%s: story key \"%s\" is not a valid story id: ids "
		    "match [A-Za-z0-9][A-Za-z0-9._-]*",
		    c->sprint_status, shown);
		goto out;
	}
	if (!sprint_key_number(num, e->key))
		num[0] = '\0';
	entry_find(&o, ix, e->key, num, shared);
	if (o.best != NULL && o.tie == NULL)
		j = config_story_find_file(c, o.best->rel);
	if (j >= 0 && (size_t)j < nfiles)
		goto out; /* listed explicitly: its entry wins */
	if (j >= 0 &&
	    asprintf(&taken, "%s: its file %s is already story %s", e->key,
		o.best->rel, c->stories[j].id) < 0) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	if (o.best == NULL || o.tie != NULL || taken != NULL) {
		rc = entry_skip(ld, c, ix, e, &o, num, taken);
		goto out;
	}
	if ((s = config_story_add(c, alloc)) == NULL ||
	    (s->file = strdup(o.best->rel)) == NULL ||
	    config_story_set_id(s, e->key, strlen(e->key)) < 0) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	snprintf(s->sprint_status, sizeof(s->sprint_status), "%s", e->status);
	sf->listed++;
	if (o.best->depth > 0) {
		sf->in_sub++;
		sub_of(sub, sizeof(sub), ix, o.best);
		subs_add(subs, sf, sub);
	}
	if (o.kind == SPRINT_MATCH_V4)
		sf->v4++;
	if (o.best->place == 1)
		sf->beside++;
	if (o.farther > 0 && sf->farther == 0)
		snprintf(sf->farther_ex, sizeof(sf->farther_ex), "%s",
		    o.farther_ex->rel);
	sf->farther += o.farther;
out:
	return rc;
}

struct numbered {
	const char *num;
	size_t i;
};

static int
cmp_numbered(const void *a, const void *b)
{
	const struct numbered *x = a, *y = b;
	int d = strcmp(x->num, y->num);

	return d != 0 ? d : (x->i > y->i) - (x->i < y->i);
}

/* Entries whose number is another entry's too (shared[i]): a v4 name
 * with it would be either's. */
static int
numbers_shared(bool *shared, char (*nums)[STORY_NUMBER_MAX], size_t n)
{
	struct numbered *v = calloc(n + 1, sizeof(*v));
	size_t i, k, j;

	if (v == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		v[i].num = nums[i];
		v[i].i = i;
	}
	qsort(v, n, sizeof(*v), cmp_numbered);
	for (i = 0; i < n; i = k) {
		for (k = i + 1; k < n && strcmp(v[k].num, v[i].num) == 0; k++)
			;
		for (j = i; k - i > 1 && v[i].num[0] != '\0' && j < k; j++)
			shared[v[j].i] = true;
	}
	free(v);
	return 0;
}

/* stories.sprint_status: BMAD v6's story entries, in the file's order
 * (docs/stories.md "BMAD v6"). */
int
config_expand_sprint(struct loader *ld, struct config *c, size_t *alloc)
{
	static const char key[] = "stories.sprint_status";
	struct sprint_status ss;
	struct sindex ix;
	struct subs subs;
	struct sc_err e;
	char *path = NULL, *text = NULL, *dir = NULL, *own = NULL, *slash;
	char(*nums)[STORY_NUMBER_MAX] = NULL;
	bool *shared = NULL;
	size_t len = 0, i, nfiles = c->nstories;
	int rc = 0;

	memset(&ss, 0, sizeof(ss));
	memset(&ix, 0, sizeof(ix));
	memset(&subs, 0, sizeof(subs));
	if (c->sprint_status == NULL)
		return 0;
	path = fsutil_path_join(c->root, c->sprint_status);
	if (path == NULL)
		return config_fail_nomem(ld);
	if ((rc = config_read_file(
		 ld, key, c->sprint_status, path, &text, &len)) != 0)
		goto out;
	err_clear(&e);
	rc = sprint_status_parse(&ss, text, len, &e);
	if (rc == SC_EOS) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	if (rc < 0) {
		rc = config_fail(ld, key, "%s: %s", c->sprint_status, e.msg);
		goto out;
	}
	slash = strrchr(c->sprint_status, '/');
	own = slash != NULL
	    ? strndup(c->sprint_status, (size_t)(slash - c->sprint_status))
	    : strdup("");
	nums = calloc(ss.n + 1, sizeof(*nums));
	shared = calloc(ss.n + 1, sizeof(*shared));
	if (own == NULL || nums == NULL || shared == NULL ||
	    sprint_dir(&dir, c, ss.story_location,
		c->sprint_found.location_note,
		sizeof(c->sprint_found.location_note)) < 0 ||
	    index_build(&ix, c, &ss, dir, strcmp(own, dir) != 0 ? own : NULL) <
		0) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	c->sprint_found.entries = ss.n;
	for (i = 0; i < ss.n; i++)
		if (!sprint_key_number(nums[i], ss.entries[i].key))
			nums[i][0] = '\0';
	if (numbers_shared(shared, nums, ss.n) < 0) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	for (i = 0; rc == 0 && i < ss.n; i++)
		rc = sprint_entry_add(ld, c, alloc, &ix, &ss.entries[i],
		    shared[i], nfiles, &subs);
out:
	index_release(&ix);
	sprint_status_release(&ss);
	free(shared);
	free(nums);
	free(own);
	free(dir);
	free(text);
	free(path);
	return rc;
}
