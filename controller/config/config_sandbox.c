/* config_sandbox.c - see config_int.h: the "sandbox" keys, at the top
 * level and under an agent, and their paths (docs/configuration.md#sandbox).
 *
 * An agent's setting is the top-level one with the keys of its own
 * "sandbox" put over it one by one, so the top level is read first
 * (config_load() reads "sandbox" before "agents"). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/config/config_int.h"

void
config_sandbox_init(struct sandbox_conf *s)
{
	memset(s, 0, sizeof(*s));
	s->enabled = SANDBOX_AUTO;
	s->network = true;
}

void
config_sandbox_release(struct sandbox_conf *s)
{
	strlist_release(&s->writable);
	strlist_release(&s->readable);
	config_sandbox_init(s);
}

int
config_sandbox_copy(struct sandbox_conf *dst, const struct sandbox_conf *src)
{
	config_sandbox_init(dst);
	dst->enabled = src->enabled;
	dst->network = src->network;
	if (strlist_copy(&dst->writable, &src->writable) < 0 ||
	    strlist_copy(&dst->readable, &src->readable) < 0) {
		config_sandbox_release(dst);
		return -1;
	}
	return 0;
}

/* The lexical form of the absolute path abs: config_path_normalize()
 * works on paths below a root, and "/" is that root here.  -1 when abs
 * is "/" itself or climbs above it, -2 when out of memory. */
static int
normalize_abs(char **out, const char *abs)
{
	char *rel = NULL;
	int rc;

	*out = NULL;
	rc = config_path_normalize(&rel, abs + strspn(abs, "/"));
	if (rc != 0)
		return rc;
	if (asprintf(out, "/%s", rel) < 0) {
		*out = NULL;
		rc = -2;
	}
	free(rel);
	return rc;
}

/* Why normalize_abs() refused abs, in words: "/" itself (making all of
 * it writable or readable would undo the sandbox) or a climb above it
 * (a typo: "/.." is "/" only by convention). */
static int
refused(const char *abs, const char *shown, struct sc_err *err)
{
	char *probe = NULL, *norm = NULL;
	int rc;

	/* abs/x normalises when abs is "/" and fails when abs climbs. */
	if (asprintf(&probe, "%s/x", abs) < 0)
		return err_set(err, SC_EOS, "out of memory");
	rc = normalize_abs(&norm, probe);
	free(probe);
	free(norm);
	if (rc == -2)
		return err_set(err, SC_EOS, "out of memory");
	if (rc == 0)
		return err_set(err, SC_EDATA,
		    "\"%s\" is the whole file system, not a path in it", shown);
	return err_set(err, SC_EDATA, "\"%s\" climbs above /", shown);
}

int
config_sandbox_path(char **out, const char *in, const char *root,
    const char *home, struct sc_err *err)
{
	char shown[KEY_MAX], hshown[KEY_MAX];
	const char *base = NULL, *rest = in;
	char *abs = NULL;
	int rc = 0, n;

	*out = NULL;
	config_shown(shown, sizeof(shown), in);
	if (in[0] == '\0') {
		rc = err_set(err, SC_EDATA, "must not be empty");
		goto out;
	}
	if (in[0] == '~') {
		/* ~user would need the password database, and a file
		 * literally called "~x" in the root is "./~x" */
		if (in[1] != '\0' && in[1] != '/') {
			rc = err_set(err, SC_EDATA,
			    "\"%s\": only ~ and ~/ are expanded", shown);
			goto out;
		}
		if (home == NULL || home[0] == '\0') {
			rc = err_set(err, SC_EDATA,
			    "\"%s\": ~ needs $HOME, which is not set", shown);
			goto out;
		}
		if (home[0] != '/') {
			config_shown(hshown, sizeof(hshown), home);
			rc = err_set(err, SC_EDATA,
			    "\"%s\": ~ needs an absolute $HOME, got \"%s\"",
			    shown, hshown);
			goto out;
		}
		base = home;
		rest = in + 1;
	} else if (in[0] != '/') {
		if (root == NULL || root[0] != '/') {
			rc = err_set(err, SC_EDATA,
			    "\"%s\": a relative path needs the project root",
			    shown);
			goto out;
		}
		base = root;
	}
	n = base != NULL ? asprintf(&abs, "%s/%s", base, rest)
			 : asprintf(&abs, "%s", in);
	if (n < 0) {
		abs = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = normalize_abs(out, abs);
	if (rc == -2)
		rc = err_set(err, SC_EOS, "out of memory");
	else if (rc == -1)
		rc = refused(abs, shown, err);
out:
	free(abs);
	return rc;
}

/* key: "auto", true or false. */
static int
parse_enabled(
    struct loader *ld, json_t *v, const char *key, enum sandbox_mode *out)
{
	char shown[KEY_MAX];

	if (json_is_boolean(v)) {
		*out = json_is_true(v) ? SANDBOX_ON : SANDBOX_OFF;
		return 0;
	}
	if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
		*out = SANDBOX_AUTO;
		return 0;
	}
	if (json_is_string(v)) {
		config_shown(shown, sizeof(shown), json_string_value(v));
		return config_fail(ld, key,
		    "must be \"auto\", true or false, got \"%s\"", shown);
	}
	return config_fail(ld, key, "must be \"auto\", true or false, got %s",
	    config_type_word(v));
}

/* key: a list of paths, each made absolute (config_sandbox_path());
 * one named twice is kept once.  Replaces *out. */
static int
parse_paths(struct loader *ld, json_t *v, const char *key, const char *root,
    struct strlist *out)
{
	struct strlist raw = {0}, tmp = {0};
	struct sc_err e = {0};
	char ikey[KEY_MAX], *abs = NULL;
	const char *home = getenv("HOME");
	size_t i;
	int rc;

	if ((rc = config_parse_strings(ld, v, key, &raw, false, true)) != 0)
		goto out;
	for (i = 0; i < raw.n; i++) {
		rc = config_sandbox_path(&abs, raw.items[i], root, home, &e);
		if (rc == SC_EOS) {
			rc = config_fail_nomem(ld);
			goto out;
		}
		if (rc != 0) {
			config_key_index(ikey, key, i);
			rc = config_fail(ld, ikey, "%s", e.msg);
			goto out;
		}
		if (strlist_find(&tmp, abs) < 0 &&
		    strlist_push(&tmp, abs) < 0) {
			rc = config_fail_nomem(ld);
			goto out;
		}
		free(abs);
		abs = NULL;
	}
	strlist_release(out);
	*out = tmp;
	memset(&tmp, 0, sizeof(tmp));
out:
	free(abs);
	strlist_release(&raw);
	strlist_release(&tmp);
	return rc;
}

static const char *const sandbox_keys[] = {
    "enabled", "network", "writable", "readable", NULL};

/* The keys of the object v at path put over *s; a key left out keeps
 * what *s has. */
static int
apply_sandbox(struct loader *ld, json_t *v, const char *path, const char *root,
    struct sandbox_conf *s)
{
	json_t *ev, *wv, *rv;
	char key[KEY_MAX];
	int rc;

	if ((rc = config_want_object(ld, v, path)) != 0 ||
	    (rc = config_check_keys(ld, v, path, sandbox_keys)) != 0)
		return rc;
	ev = json_object_get(v, "enabled");
	if (ev != NULL) {
		config_key_join(key, path, "enabled");
		if ((rc = parse_enabled(ld, ev, key, &s->enabled)) != 0)
			return rc;
	}
	if ((rc = config_get_bool(ld, v, path, "network", &s->network)) != 0)
		return rc;
	wv = json_object_get(v, "writable");
	if (wv != NULL) {
		config_key_join(key, path, "writable");
		if ((rc = parse_paths(ld, wv, key, root, &s->writable)) != 0)
			return rc;
	}
	rv = json_object_get(v, "readable");
	if (rv != NULL) {
		config_key_join(key, path, "readable");
		if ((rc = parse_paths(ld, rv, key, root, &s->readable)) != 0)
			return rc;
	}
	return 0;
}

int
config_parse_sandbox(struct loader *ld, json_t *v, struct config *c)
{
	if (v == NULL)
		return 0;
	return apply_sandbox(ld, v, "sandbox", c->root, &c->sandbox);
}

int
config_agent_sandbox(struct loader *ld, json_t *v, const char *path,
    const struct config *c, struct sandbox_conf *out)
{
	char key[KEY_MAX];

	config_sandbox_release(out);
	if (config_sandbox_copy(out, &c->sandbox) < 0)
		return config_fail_nomem(ld);
	if (v == NULL)
		return 0;
	config_key_join(key, path, "sandbox");
	return apply_sandbox(ld, v, key, c->root, out);
}
