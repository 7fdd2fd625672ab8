/* argv.c - see argv.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "controller/config/argv.h"

/* The value of placeholder name (len bytes), or NULL when unknown.  Ints
 * are formatted into num. */
static const char *
argv_lookup(const char *name, size_t len, const struct argv_vars *v, char *num,
    size_t numsz, int *known)
{
	static const char *const names[] = {
	    "prompt",
	    "story_file",
	    "story_id",
	    "attempt",
	    "max_attempts",
	    "role",
	    "stalled_task",
	    "repo",
	    "prompt_file",
	};
	const char *val = NULL;
	size_t i;

	*known = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			break;
	if (i == sizeof(names) / sizeof(names[0]))
		return NULL;
	*known = 1;
	if (v == NULL)
		return "";
	switch (i) {
	case 0:
		val = v->prompt;
		break;
	case 1:
		val = v->story_file;
		break;
	case 2:
		val = v->story_id;
		break;
	case 3:
		snprintf(num, numsz, "%d", v->attempt);
		val = num;
		break;
	case 4:
		snprintf(num, numsz, "%d", v->max_attempts);
		val = num;
		break;
	case 5:
		val = v->role;
		break;
	case 6:
		val = v->stalled_task;
		break;
	case 7:
		val = v->repo;
		break;
	case 8:
		val = v->prompt_file;
		break;
	}
	return val ? val : "";
}

/*
 * Expand one template argument.  With b == NULL only check it.  idx is
 * the argument's position, for messages.
 */
static int
argv_expand_one(struct strbuf *b, const char *arg, size_t idx,
    const struct argv_vars *v, struct sc_err *err)
{
	char num[32];
	const char *p = arg;
	const char *close = NULL;
	const char *val = NULL;
	int known = 0;
	int rc = 0;

	while (*p != '\0') {
		if ((p[0] == '{' && p[1] == '{') ||
		    (p[0] == '}' && p[1] == '}')) {
			if (b != NULL && strbuf_add(b, p, 1) < 0)
				goto oom;
			p += 2;
			continue;
		}
		if (*p == '}') {
			rc = err_set(err, SC_EDATA,
			    "lone '}' in agent "
			    "argument %zu \"%s\" (write \"}}\" for a brace)",
			    idx, arg);
			goto out;
		}
		if (*p != '{') {
			close = p + strcspn(p, "{}");
			if (b != NULL &&
			    strbuf_add(b, p, (size_t)(close - p)) < 0)
				goto oom;
			p = close;
			continue;
		}
		close = strchr(p + 1, '}');
		if (close == NULL) {
			rc = err_set(err, SC_EDATA,
			    "unterminated '{' in agent "
			    "argument %zu \"%s\" (write \"{{\" for a brace)",
			    idx, arg);
			goto out;
		}
		val = argv_lookup(p + 1, (size_t)(close - p - 1), v, num,
		    sizeof(num), &known);
		if (!known) {
			rc = err_set(err, SC_EDATA,
			    "unknown placeholder "
			    "{%.*s} in agent argument %zu \"%s\"",
			    (int)(close - p - 1), p + 1, idx, arg);
			goto out;
		}
		if (b != NULL && strbuf_addstr(b, val) < 0)
			goto oom;
		p = close + 1;
	}
	goto out;
oom:
	rc = err_set(err, SC_EOS,
	    "out of memory expanding agent argument "
	    "%zu",
	    idx);
out:
	return rc;
}

static int
argv_walk(struct strlist *out, const struct strlist *tmpl,
    const struct argv_vars *v, struct sc_err *err)
{
	struct strbuf b = STRBUF_INIT;
	size_t i;
	int rc = 0;

	if (tmpl == NULL || tmpl->n == 0) {
		rc = err_set(err, SC_EDATA, "agent command is empty");
		goto out;
	}
	for (i = 0; i < tmpl->n; i++) {
		strbuf_setlen(&b, 0);
		rc =
		    argv_expand_one(out ? &b : NULL, tmpl->items[i], i, v, err);
		if (rc < 0)
			goto out;
		if (out != NULL && strlist_pushn(out, b.buf, b.len) < 0) {
			rc = err_set(err, SC_EOS,
			    "out of memory expanding "
			    "agent argument %zu",
			    i);
			goto out;
		}
	}
out:
	strbuf_release(&b);
	if (rc < 0 && out != NULL)
		strlist_release(out);
	return rc;
}

int
argv_expand(struct strlist *out, const struct strlist *tmpl,
    const struct argv_vars *v, struct sc_err *err)
{
	static const struct argv_vars none;

	return argv_walk(out, tmpl, v ? v : &none, err);
}

int
argv_validate(const struct strlist *tmpl, struct sc_err *err)
{
	return argv_walk(NULL, tmpl, NULL, err);
}

/* 1 when path is a regular file we may execute, 0 when it exists but is
 * not, -1 when it does not exist. */
static int
argv_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return 0;
	return 1;
}

int
argv_resolve_program(char **out_path, const char *argv0, struct sc_err *err)
{
	const char *path = NULL;
	const char *dir = NULL;
	const char *end = NULL;
	char *cand = NULL;
	size_t dlen, nlen;
	int seen_noexec = 0;
	int rc = 0;
	int x;

	*out_path = NULL;
	if (argv0 == NULL || *argv0 == '\0') {
		rc = err_set(err, SC_EUNAVAIL,
		    "agent program not found: "
		    "(empty name)");
		goto out;
	}
	if (strchr(argv0, '/') != NULL) {
		x = argv_executable(argv0);
		if (x <= 0) {
			rc = err_set(err, SC_EUNAVAIL, "agent program %s: %s",
			    x < 0 ? "not found" : "not executable", argv0);
			goto out;
		}
		cand = strdup(argv0);
		if (cand == NULL)
			goto oom;
		*out_path = cand;
		goto out;
	}
	path = getenv("PATH");
	if (path == NULL)
		path = "/bin:/usr/bin";
	nlen = strlen(argv0);
	for (dir = path;; dir = end + 1) {
		end = strchr(dir, ':');
		if (end == NULL)
			end = dir + strlen(dir);
		dlen = (size_t)(end - dir);
		cand = malloc(dlen + nlen + 3);
		if (cand == NULL)
			goto oom;
		if (dlen == 0)
			snprintf(cand, nlen + 3, "./%s", argv0);
		else
			snprintf(cand, dlen + nlen + 2, "%.*s/%s", (int)dlen,
			    dir, argv0);
		x = argv_executable(cand);
		if (x > 0) {
			*out_path = cand;
			goto out;
		}
		if (x == 0)
			seen_noexec = 1;
		free(cand);
		cand = NULL;
		if (*end == '\0')
			break;
	}
	rc = err_set(err, SC_EUNAVAIL, "agent program %s: %s",
	    seen_noexec ? "not executable" : "not found", argv0);
	goto out;
oom:
	rc = err_set(err, SC_EOS, "out of memory resolving %s", argv0);
out:
	return rc;
}

bool
argv_uses(const struct strlist *tmpl, const char *name)
{
	char want[64];
	size_t i;

	snprintf(want, sizeof(want), "{%s}", name);
	for (i = 0; tmpl != NULL && i < tmpl->n; i++)
		if (strstr(tmpl->items[i], want) != NULL)
			return true;
	return false;
}

/*
 * Linux's limits of execve(): one argument (or environment string) may
 * be at most MAX_ARG_STRLEN = 32 pages including its NUL, and all of
 * them, with their pointers, at most a quarter of the stack limit (what
 * sysconf(_SC_ARG_MAX) reports) but never more than 6 MiB (3/4 of the
 * kernel's _STK_LIM, whatever the limit).  Past either, execve fails with
 * E2BIG and the agent never starts.
 */
#define ARGV_TOTAL_CAP ((size_t)6 * 1024 * 1024)

int
argv_fits_vec(
    const char *const *argv, const char *const *envp, struct sc_err *err)
{
	long page = sysconf(_SC_PAGESIZE), max = sysconf(_SC_ARG_MAX);
	size_t one = (size_t)(page > 0 ? page : 4096) * 32, total = 0, len;
	size_t cap = ARGV_TOTAL_CAP, i, name;
	int rc = 0;

	if (max > 0 && (size_t)max < cap)
		cap = (size_t)max;
	for (i = 0; argv != NULL && argv[i] != NULL; i++) {
		len = strlen(argv[i]) + 1;
		if (len > one) {
			rc = err_set(err, SC_EDATA,
			    "argument %zu of the agent command is %zu bytes, "
			    "over the %zu-byte limit of one argument (its NUL "
			    "included); pass the prompt in a file with "
			    "{prompt_file} instead of {prompt}",
			    i, len - 1, one);
			goto out;
		}
		total += len + sizeof(char *);
	}
	for (i = 0; envp != NULL && envp[i] != NULL; i++) {
		len = strlen(envp[i]) + 1;
		if (len > one) {
			/* the name only: the value may be a secret */
			name = strcspn(envp[i], "=");
			rc = err_set(err, SC_EDATA,
			    "the environment variable %.*s is %zu bytes with "
			    "its name, over the %zu-byte limit of one "
			    "string (its NUL included); shorten it",
			    (int)(name < 64 ? name : 64), envp[i], len - 1,
			    one);
			goto out;
		}
		total += len + sizeof(char *);
	}
	if (total > cap)
		rc = err_set(err, SC_EDATA,
		    "the agent command and its environment are %zu bytes, "
		    "over the system's limit of %zu; pass the prompt in a "
		    "file with {prompt_file}",
		    total, cap);
out:
	return rc;
}

int
argv_fits(const struct strlist *argv, char *const *envp, struct sc_err *err)
{
	const char **v = NULL;
	size_t i;
	int rc = 0;

	v = calloc(argv->n + 1, sizeof(*v));
	if (v == NULL) {
		rc = err_set(err, SC_EOS, "out of memory checking the argv");
		goto out;
	}
	for (i = 0; i < argv->n; i++)
		v[i] = argv->items[i];
	rc = argv_fits_vec(v, (const char *const *)envp, err);
out:
	free(v);
	return rc;
}
