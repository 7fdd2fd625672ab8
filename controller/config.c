/*
 * config.c - see config.h.
 *
 * The loader walks the JSON tree section by section.  Every object is
 * first checked against its list of allowed keys (so a typo is an error
 * naming the full key path), then each key is read with a getter that
 * checks the type and the range and leaves the default in place when the
 * key is absent.  Messages are "FILE: KEY: what is wrong".
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/config.h"
#include "controller/presets.h"
#include "strategies/schedule.h"
#include "strategies/sprintstatus.h"
#include "strategies/suggest.h"

#define CONFIG_MAX_BYTES (4 * 1024 * 1024)
#define KEY_MAX 512
/* Upper bound of every duration: keeps conversions to ms in range. */
#define SECONDS_MAX 1e9
/* The shortest timeout_s of an agent or a gate: below a millisecond the
 * runner's limit rounded to 0, which means no limit at all, and nothing
 * can start, let alone finish, in less than this anyway
 * (docs/configuration.md). */
#define TIMEOUT_MIN_S 0.1
#define MS_MAX 1000000000000LL
#define USD_MAX 1e9
/* timeout_s x factor x 1000 must stay far inside int64 milliseconds. */
#define FACTOR_MAX 100

struct loader {
	const char *file; /* the config path as given: starts every message */
	struct sc_err *err;
};

static int fail(struct loader *ld, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int read_file(struct loader *ld, const char *key, const char *shown,
    const char *path, char **out, size_t *out_len);

/* "FILE: KEY: message" (or "FILE: message" when key is NULL). */
static int
fail(struct loader *ld, const char *key, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key == NULL)
		return err_set(ld->err, SC_EDATA, "%s: %s", ld->file, msg);
	return err_set(ld->err, SC_EDATA, "%s: %s: %s", ld->file, key, msg);
}

static int
fail_nomem(struct loader *ld)
{
	return err_set(ld->err, SC_EOS, "%s: out of memory", ld->file);
}

/* Key paths are for messages: one cut short by KEY_MAX is still fine. */
static void
key_join(char *buf, const char *parent, const char *key)
{
	int n;

	if (parent == NULL || parent[0] == '\0')
		n = snprintf(buf, KEY_MAX, "%s", key);
	else
		n = snprintf(buf, KEY_MAX, "%s.%s", parent, key);
	if (n < 0)
		buf[0] = '\0';
}

static void
key_index(char *buf, const char *parent, size_t i)
{
	if (snprintf(buf, KEY_MAX, "%s[%zu]", parent, i) < 0)
		buf[0] = '\0';
}

static const char *
type_word(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static int
wrong_type(
    struct loader *ld, const char *key, const char *want, const json_t *v)
{
	return fail(ld, key, "expected %s, got %s", want, type_word(v));
}

/* Copy s for a message, with control characters made harmless. */
static void
printable(char *dst, size_t cap, const char *s)
{
	size_t i;

	snprintf(dst, cap, "%s", s);
	for (i = 0; dst[i] != '\0'; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = '?';
}

/* Every key of obj must be in allowed (NULL-terminated). */
static int
check_keys(struct loader *ld, json_t *obj, const char *path,
    const char *const *allowed)
{
	const char *k, *hint = NULL;
	json_t *v;
	char full[KEY_MAX], shown[KEY_MAX];
	size_t i, d, best = 3;
	bool known;

	json_object_foreach(obj, k, v)
	{
		known = false;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(k, allowed[i]) == 0)
				known = true;
		if (known)
			continue;
		for (i = 0; allowed[i] != NULL; i++) {
			d = suggest_distance(k, allowed[i]);
			if (d < best) {
				best = d;
				hint = allowed[i];
			}
		}
		printable(shown, sizeof(shown), k);
		key_join(full, path, shown);
		if (hint != NULL)
			return fail(ld, NULL,
			    "unknown key %s (did you mean %s?)", full, hint);
		return fail(ld, NULL, "unknown key %s", full);
	}
	return 0;
}

/* The value of key in obj, or NULL when absent. */
static json_t *
member(json_t *obj, const char *key)
{
	return obj != NULL ? json_object_get(obj, key) : NULL;
}

/* A number (fractions allowed) in [min, max], or (min, max] when
 * min_open.  Absent: *out untouched. */
static int
get_number(struct loader *ld, json_t *obj, const char *path, const char *name,
    double *out, double min, double max, bool min_open)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];
	double d;

	if (v == NULL)
		return 0;
	key_join(key, path, name);
	if (!json_is_number(v))
		return wrong_type(ld, key, "a number", v);
	d = json_number_value(v);
	if (!isfinite(d) || (min_open ? !(d > min) : !(d >= min)) || d > max) {
		/* A small closed range (jitter) reads best as "between". */
		if (max < SECONDS_MAX && !min_open)
			return fail(ld, key,
			    "must be between %g and %g, got %g", min, max, d);
		if (d > max)
			return fail(ld, key, "must be <= %g, got %g", max, d);
		return fail(ld, key, "must be %s %g, got %g",
		    min_open ? ">" : ">=", min, d);
	}
	*out = d;
	return 0;
}

/* An integer in [min, max].  An integral real such as 1e3 is accepted;
 * 1.5 is not ("_ms values are integers"). */
static int
get_integer(struct loader *ld, json_t *obj, const char *path, const char *name,
    long long *out, long long min, long long max)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];
	long long n;
	double d;

	if (v == NULL)
		return 0;
	key_join(key, path, name);
	if (json_is_integer(v)) {
		n = (long long)json_integer_value(v);
	} else if (json_is_real(v)) {
		d = json_real_value(v);
		if (!isfinite(d) || d != floor(d))
			return fail(ld, key, "must be an integer, got %g", d);
		if (d < (double)min)
			return fail(ld, key, "must be >= %lld, got %g", min, d);
		if (d > (double)max)
			return fail(ld, key, "must be <= %lld, got %g", max, d);
		n = (long long)d;
	} else {
		return wrong_type(ld, key, "an integer", v);
	}
	if (n < min)
		return fail(ld, key, "must be >= %lld, got %lld", min, n);
	if (n > max)
		return fail(ld, key, "must be <= %lld, got %lld", max, n);
	*out = n;
	return 0;
}

static int
get_int(struct loader *ld, json_t *obj, const char *path, const char *name,
    int *out, int min, int max)
{
	long long n = *out;
	int rc;

	rc = get_integer(ld, obj, path, name, &n, min, max);
	if (rc == 0)
		*out = (int)n;
	return rc;
}

static int
get_bool(struct loader *ld, json_t *obj, const char *path, const char *name,
    bool *out)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];

	if (v == NULL)
		return 0;
	if (!json_is_boolean(v)) {
		key_join(key, path, name);
		return wrong_type(ld, key, "a boolean (true or false)", v);
	}
	*out = json_is_true(v);
	return 0;
}

/* A non-empty string, copied into *out (the old value freed). */
static int
get_string(struct loader *ld, json_t *obj, const char *path, const char *name,
    char **out)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];
	char *copy = NULL;

	if (v == NULL)
		return 0;
	key_join(key, path, name);
	if (!json_is_string(v))
		return wrong_type(ld, key, "a string", v);
	if (json_string_length(v) == 0)
		return fail(ld, key, "must not be empty");
	copy = strdup(json_string_value(v));
	if (copy == NULL)
		return fail_nomem(ld);
	free(*out);
	*out = copy;
	return 0;
}

/* An array of strings into *out (replacing it); items must be non-empty
 * when nonempty_items, and the list itself when nonempty_list. */
static int
parse_strings(struct loader *ld, json_t *v, const char *key,
    struct strlist *out, bool nonempty_list, bool nonempty_items)
{
	struct strlist tmp = {0};
	char ikey[KEY_MAX];
	json_t *item;
	size_t i;
	int rc = 0;

	if (!json_is_array(v)) {
		rc = wrong_type(ld, key, "an array of strings", v);
		goto out;
	}
	if (nonempty_list && json_array_size(v) == 0) {
		rc = fail(ld, key, "must not be empty");
		goto out;
	}
	json_array_foreach(v, i, item)
	{
		key_index(ikey, key, i);
		if (!json_is_string(item)) {
			rc = wrong_type(ld, ikey, "a string", item);
			goto out;
		}
		if (nonempty_items && json_string_length(item) == 0) {
			rc = fail(ld, ikey, "must not be empty");
			goto out;
		}
		if (strlist_push(&tmp, json_string_value(item)) < 0) {
			rc = fail_nomem(ld);
			goto out;
		}
	}
	strlist_release(out);
	*out = tmp;
	memset(&tmp, 0, sizeof(tmp));
out:
	strlist_release(&tmp);
	return rc;
}

static int
get_strings(struct loader *ld, json_t *obj, const char *path, const char *name,
    struct strlist *out)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];

	if (v == NULL)
		return 0;
	key_join(key, path, name);
	return parse_strings(ld, v, key, out, false, true);
}

/* An argv template: a non-empty array of strings, the program non-empty. */
static int
parse_argv(struct loader *ld, json_t *v, const char *key, struct strlist *out)
{
	char ikey[KEY_MAX];
	int rc;

	rc = parse_strings(ld, v, key, out, true, false);
	if (rc == 0 && out->items[0][0] == '\0') {
		key_index(ikey, key, 0);
		rc = fail(ld, ikey, "the program name must not be empty");
	}
	return rc;
}

static int
want_object(struct loader *ld, json_t *v, const char *key)
{
	if (!json_is_object(v))
		return wrong_type(ld, key, "an object", v);
	return 0;
}

static char *
path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	bool slash = la > 0 && a[la - 1] == '/';
	char *s = NULL;

	if (asprintf(&s, "%s%s%s", a, slash ? "" : "/", b) < 0)
		return NULL;
	return s;
}

/*
 * Lexically normalise a path relative to the root: drop "." and empty
 * components, resolve ".." against earlier ones.  -1 when in is empty,
 * absolute, names the root itself or climbs out of it, -2 when out of
 * memory (*out NULL on failure).
 */
static int
path_normalize(char **out, const char *in)
{
	const char *p = in, *seg;
	char *buf = NULL, *slash;
	size_t o = 0, len;
	int rc = -1;

	*out = NULL;
	if (in[0] == '\0' || in[0] == '/')
		goto out;
	buf = malloc(strlen(in) + 1);
	if (buf == NULL) {
		rc = -2;
		goto out;
	}
	while (*p != '\0') {
		seg = p;
		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - seg);
		while (*p == '/')
			p++;
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			if (o == 0)
				goto out;
			buf[o] = '\0';
			slash = strrchr(buf, '/');
			o = slash != NULL ? (size_t)(slash - buf) : 0;
			continue;
		}
		if (o > 0)
			buf[o++] = '/';
		memcpy(buf + o, seg, len);
		o += len;
	}
	if (o == 0)
		goto out;
	buf[o] = '\0';
	*out = buf;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	return rc;
}

bool
config_id_valid(const char *s)
{
	size_t i;
	char c;

	if (s == NULL || s[0] == '\0' || strlen(s) >= 128)
		return false;
	for (i = 0; s[i] != '\0'; i++) {
		c = s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9'))
			continue;
		if (i > 0 && (c == '.' || c == '_' || c == '-'))
			continue;
		return false;
	}
	return true;
}

/* A simple subset of git-check-ref-format(1). */
static bool
ref_name_valid(const char *s)
{
	size_t len = strlen(s), i;
	const char *comp;

	if (len == 0 || s[0] == '-' || s[0] == '/' || s[len - 1] == '/' ||
	    s[len - 1] == '.' || strcmp(s, "@") == 0)
		return false;
	if (strstr(s, "..") != NULL || strstr(s, "//") != NULL ||
	    strstr(s, "@{") != NULL)
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f ||
		    strchr("~^:?*[\\", s[i]) != NULL)
			return false;
	for (comp = s; comp != NULL; comp = strchr(comp, '/')) {
		if (*comp == '/')
			comp++;
		if (*comp == '.')
			return false;
	}
	if (len >= 5 && strcmp(s + len - 5, ".lock") == 0)
		return false;
	if (strstr(s, ".lock/") != NULL)
		return false;
	return true;
}

static bool
env_name_valid(const char *s)
{
	size_t i;

	if (s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* ---- agents ---- */

static void
agent_init(struct agent_conf *a)
{
	memset(a, 0, sizeof(*a));
	a->timeout_s = 3600;
	a->stall_timeout_s = -1;
}

static void
agent_release(struct agent_conf *a)
{
	strlist_release(&a->command);
	strlist_release(&a->env);
	agent_init(a);
}

static int
agent_use_preset(struct agent_conf *a, const struct preset *p)
{
	size_t i;

	strlist_release(&a->command);
	for (i = 0; p->argv[i] != NULL; i++)
		if (strlist_push(&a->command, p->argv[i]) < 0)
			return -1;
	snprintf(a->preset, sizeof(a->preset), "%s", p->name);
	snprintf(a->name, sizeof(a->name), "%s", p->name);
	a->configured = true;
	return 0;
}

static void
preset_names(char *buf, size_t cap)
{
	const struct preset *all;
	size_t n, i, o = 0;

	all = presets_all(&n);
	buf[0] = '\0';
	for (i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(
		    buf + o, cap - o, "%s%s", i ? ", " : "", all[i].name);
}

static int
parse_env(struct loader *ld, json_t *v, const char *key, struct strlist *out)
{
	struct strlist tmp = {0};
	char ikey[KEY_MAX], shown[KEY_MAX], *entry = NULL;
	const char *name;
	json_t *val;
	int rc = 0;

	if (!json_is_object(v)) {
		rc = wrong_type(ld, key, "an object of strings", v);
		goto out;
	}
	json_object_foreach(v, name, val)
	{
		printable(shown, sizeof(shown), name);
		key_join(ikey, key, shown);
		if (!env_name_valid(name)) {
			rc = fail(ld, ikey,
			    "not a valid environment variable "
			    "name (letters, digits and _)");
			goto out;
		}
		if (!json_is_string(val)) {
			rc = wrong_type(ld, ikey, "a string", val);
			goto out;
		}
		if (asprintf(&entry, "%s=%s", name, json_string_value(val)) <
		    0) {
			entry = NULL;
			rc = fail_nomem(ld);
			goto out;
		}
		if (strlist_push(&tmp, entry) < 0) {
			rc = fail_nomem(ld);
			goto out;
		}
		free(entry);
		entry = NULL;
	}
	strlist_release(out);
	*out = tmp;
	memset(&tmp, 0, sizeof(tmp));
out:
	free(entry);
	strlist_release(&tmp);
	return rc;
}

static const char *const agent_keys[] = {
    "preset", "command", "timeout_s", "stall_timeout_s", "env", "name", NULL};

static int
parse_agent(
    struct loader *ld, json_t *v, const char *path, struct agent_conf *a)
{
	const struct preset *p = NULL;
	json_t *pv, *cv, *ev, *nv;
	char key[KEY_MAX], known[256];
	const char *base;
	int rc;

	if ((rc = want_object(ld, v, path)) != 0)
		return rc;
	if ((rc = check_keys(ld, v, path, agent_keys)) != 0)
		return rc;
	pv = json_object_get(v, "preset");
	cv = json_object_get(v, "command");
	if (pv != NULL) {
		key_join(key, path, "preset");
		if (!json_is_string(pv))
			return wrong_type(ld, key, "a string", pv);
		p = presets_find(json_string_value(pv));
		if (p == NULL) {
			preset_names(known, sizeof(known));
			return fail(ld, key,
			    "unknown preset \"%s\" (known: %s)",
			    json_string_value(pv), known);
		}
		if (agent_use_preset(a, p) < 0)
			return fail_nomem(ld);
	}
	if (cv != NULL) {
		key_join(key, path, "command");
		if ((rc = parse_argv(ld, cv, key, &a->command)) != 0)
			return rc;
		if (p == NULL) {
			base = strrchr(a->command.items[0], '/');
			base = base != NULL && base[1] != '\0'
			    ? base + 1
			    : a->command.items[0];
			snprintf(a->name, sizeof(a->name), "%s", base);
		}
	}
	if (p == NULL && cv == NULL)
		return fail(ld, path, "needs a preset or a command");
	nv = json_object_get(v, "name");
	if (nv != NULL) {
		key_join(key, path, "name");
		if (!json_is_string(nv))
			return wrong_type(ld, key, "a string", nv);
		if (json_string_length(nv) == 0 ||
		    json_string_length(nv) >= sizeof(a->name))
			return fail(ld, key, "must be 1 to %zu bytes long",
			    sizeof(a->name) - 1);
		printable(a->name, sizeof(a->name), json_string_value(nv));
	}
	if ((rc = get_number(ld, v, path, "timeout_s", &a->timeout_s,
		 TIMEOUT_MIN_S, SECONDS_MAX, false)) != 0)
		return rc;
	if ((rc = get_number(ld, v, path, "stall_timeout_s",
		 &a->stall_timeout_s, 0, SECONDS_MAX, false)) != 0)
		return rc;
	ev = json_object_get(v, "env");
	if (ev != NULL) {
		key_join(key, path, "env");
		if ((rc = parse_env(ld, ev, key, &a->env)) != 0)
			return rc;
	}
	a->configured = true;
	return 0;
}

static int
agents_default(struct config *c)
{
	if (agent_use_preset(&c->agents[ROLE_PRIMARY], presets_find("claude")) <
	    0)
		return -1;
	if (agent_use_preset(&c->agents[ROLE_FALLBACK], presets_find("codex")) <
	    0)
		return -1;
	return 0;
}

static const char *const agents_keys[] = {"primary", "fallback", NULL};

static int
parse_agents(struct loader *ld, json_t *v, struct config *c)
{
	json_t *pv, *fv;
	int rc;

	if (v == NULL) {
		/* No "agents" at all: the same pair as config_defaults(). */
		if (agents_default(c) < 0)
			return fail_nomem(ld);
		return 0;
	}
	if ((rc = want_object(ld, v, "agents")) != 0)
		return rc;
	if ((rc = check_keys(ld, v, "agents", agents_keys)) != 0)
		return rc;
	pv = json_object_get(v, "primary");
	fv = json_object_get(v, "fallback");
	if (pv == NULL)
		return fail(ld, "agents.primary",
		    "missing (give a preset or a command)");
	if ((rc = parse_agent(
		 ld, pv, "agents.primary", &c->agents[ROLE_PRIMARY])) != 0)
		return rc;
	if (fv != NULL &&
	    (rc = parse_agent(
		 ld, fv, "agents.fallback", &c->agents[ROLE_FALLBACK])) != 0)
		return rc;
	return 0;
}

/* ---- policy ---- */

static const char *const backoff_keys[] = {
    "strategy", "base_delay_ms", "max_delay_ms", "jitter", NULL};

static int
parse_backoff(struct loader *ld, json_t *v, struct backoff *b)
{
	const char *path = "policy.backoff";
	json_t *sv;
	long long n;
	int rc;

	if ((rc = want_object(ld, v, path)) != 0)
		return rc;
	if ((rc = check_keys(ld, v, path, backoff_keys)) != 0)
		return rc;
	sv = json_object_get(v, "strategy");
	if (sv != NULL) {
		if (!json_is_string(sv))
			return wrong_type(
			    ld, "policy.backoff.strategy", "a string", sv);
		if (backoff_kind_parse(&b->kind, json_string_value(sv)) < 0)
			return fail(ld, "policy.backoff.strategy",
			    "must be none, fixed, linear or exponential, "
			    "got \"%s\"",
			    json_string_value(sv));
	}
	n = b->base_delay_ms;
	if ((rc = get_integer(ld, v, path, "base_delay_ms", &n, 0, MS_MAX)) !=
	    0)
		return rc;
	b->base_delay_ms = n;
	n = b->max_delay_ms;
	if ((rc = get_integer(ld, v, path, "max_delay_ms", &n, 0, MS_MAX)) != 0)
		return rc;
	b->max_delay_ms = n;
	if ((rc = get_number(ld, v, path, "jitter", &b->jitter, 0, 1, false)) !=
	    0)
		return rc;
	/* A base above the cap would make every delay the cap: a mistake. */
	if (b->base_delay_ms > b->max_delay_ms)
		return fail(ld, "policy.backoff.base_delay_ms",
		    "must be <= max_delay_ms (%lld), got %lld",
		    (long long)b->max_delay_ms, (long long)b->base_delay_ms);
	return 0;
}

static const char *const policy_keys[] = {"strategy", "max_attempts",
    "max_time_s", "network_sleep_s", "max_wait_s", "poll_interval_s",
    "stall_timeout_s", "kill_grace_s", "extended_timeout_factor", "retry_count",
    "retry_max_time_ms", "retry_on", "network_on", "permanent_on", "backoff",
    "on_usage_limit", "max_limit_waits", NULL};

static int
parse_policy(struct loader *ld, json_t *v, struct policy *p)
{
	const char *path = "policy";
	json_t *sv, *bv;
	long long n;
	int rc;

	if (v == NULL)
		return 0;
	if ((rc = want_object(ld, v, path)) != 0)
		return rc;
	if ((rc = check_keys(ld, v, path, policy_keys)) != 0)
		return rc;
	sv = json_object_get(v, "strategy");
	if (sv != NULL) {
		if (!json_is_string(sv))
			return wrong_type(
			    ld, "policy.strategy", "a string", sv);
		if (strategy_parse(&p->strategy, json_string_value(sv)) < 0)
			return fail(ld, "policy.strategy",
			    "must be adaptive, retry or none, got \"%s\"",
			    json_string_value(sv));
	}
	sv = json_object_get(v, "on_usage_limit");
	if (sv != NULL) {
		if (!json_is_string(sv))
			return wrong_type(
			    ld, "policy.on_usage_limit", "a string", sv);
		if (on_usage_limit_parse(
			&p->on_usage_limit, json_string_value(sv)) < 0)
			return fail(ld, "policy.on_usage_limit",
			    "must be wait or switch, got \"%s\"",
			    json_string_value(sv));
	}
	if ((rc = get_int(ld, v, path, "max_limit_waits", &p->max_limit_waits,
		 0, INT_MAX)) != 0)
		return rc;
	if ((rc = get_int(ld, v, path, "max_attempts", &p->max_attempts, 1,
		 INT_MAX)) != 0 ||
	    (rc = get_number(ld, v, path, "max_time_s", &p->max_time_s, 0,
		 SECONDS_MAX, false)) != 0 ||
	    (rc = get_number(ld, v, path, "network_sleep_s",
		 &p->network_sleep_s, 0, SECONDS_MAX, false)) != 0 ||
	    (rc = get_number(ld, v, path, "max_wait_s", &p->max_wait_s, 0,
		 SECONDS_MAX, false)) != 0 ||
	    (rc = get_number(ld, v, path, "poll_interval_s",
		 &p->poll_interval_s, 0, SECONDS_MAX, true)) != 0 ||
	    (rc = get_number(ld, v, path, "stall_timeout_s",
		 &p->stall_timeout_s, 0, SECONDS_MAX, false)) != 0 ||
	    (rc = get_number(ld, v, path, "kill_grace_s", &p->kill_grace_s, 0,
		 SECONDS_MAX, false)) != 0 ||
	    (rc = get_number(ld, v, path, "extended_timeout_factor",
		 &p->extended_timeout_factor, 1, FACTOR_MAX, false)) != 0 ||
	    (rc = get_int(
		 ld, v, path, "retry_count", &p->retry_count, 0, INT_MAX)) != 0)
		return rc;
	n = p->retry_max_time_ms;
	if ((rc = get_integer(
		 ld, v, path, "retry_max_time_ms", &n, 0, MS_MAX)) != 0)
		return rc;
	p->retry_max_time_ms = n;
	if ((rc = get_strings(ld, v, path, "retry_on", &p->retry_on)) != 0 ||
	    (rc = get_strings(ld, v, path, "network_on", &p->network_on)) !=
		0 ||
	    (rc = get_strings(ld, v, path, "permanent_on", &p->permanent_on)) !=
		0)
		return rc;
	bv = json_object_get(v, "backoff");
	if (bv != NULL && (rc = parse_backoff(ld, bv, &p->backoff)) != 0)
		return rc;
	return 0;
}

/* ---- gates, review, breaker, budget, git, state ---- */

static const char *const gate_keys[] = {"name", "command", "timeout_s", NULL};

static int
parse_gates(struct loader *ld, json_t *v, struct config *c)
{
	struct gate_conf *g;
	char key[KEY_MAX], ckey[KEY_MAX];
	const char *base;
	json_t *item, *cv;
	size_t i;
	int rc;

	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return wrong_type(ld, "gates", "an array", v);
	if (json_array_size(v) == 0)
		return 0;
	c->gates = calloc(json_array_size(v), sizeof(*c->gates));
	if (c->gates == NULL)
		return fail_nomem(ld);
	json_array_foreach(v, i, item)
	{
		key_index(key, "gates", i);
		g = &c->gates[i];
		c->ngates = i + 1;
		g->timeout_s = 1800;
		if ((rc = want_object(ld, item, key)) != 0 ||
		    (rc = check_keys(ld, item, key, gate_keys)) != 0)
			return rc;
		cv = json_object_get(item, "command");
		if (cv == NULL)
			return fail(ld, key, "needs a command");
		key_join(ckey, key, "command");
		if ((rc = parse_argv(ld, cv, ckey, &g->command)) != 0 ||
		    (rc = get_string(ld, item, key, "name", &g->name)) != 0 ||
		    (rc = get_number(ld, item, key, "timeout_s", &g->timeout_s,
			 TIMEOUT_MIN_S, SECONDS_MAX, false)) != 0)
			return rc;
		if (g->name == NULL) {
			base = strrchr(g->command.items[0], '/');
			base = base != NULL && base[1] != '\0'
			    ? base + 1
			    : g->command.items[0];
			g->name = strdup(base);
			if (g->name == NULL)
				return fail_nomem(ld);
		}
	}
	return 0;
}

static const char *const review_keys[] = {
    "agents", "quorum", "retries", "prompt", NULL};

static int
parse_review(struct loader *ld, json_t *v, struct review_conf *r)
{
	const struct preset *p;
	char key[KEY_MAX], known[256];
	json_t *av, *item;
	long long quorum = 0;
	size_t i, k;
	int rc;

	r->retries = 2;
	if (v == NULL)
		return 0;
	if ((rc = want_object(ld, v, "review")) != 0 ||
	    (rc = check_keys(ld, v, "review", review_keys)) != 0)
		return rc;
	av = json_object_get(v, "agents");
	if (av != NULL && !json_is_array(av))
		return wrong_type(ld, "review.agents",
		    "an array of commands or preset names", av);
	if (av != NULL && json_array_size(av) > 0) {
		r->agents = calloc(json_array_size(av), sizeof(*r->agents));
		if (r->agents == NULL)
			return fail_nomem(ld);
		json_array_foreach(av, i, item)
		{
			key_index(key, "review.agents", i);
			r->nagents = i + 1;
			if (json_is_string(item)) {
				p = presets_find(json_string_value(item));
				if (p == NULL) {
					preset_names(known, sizeof(known));
					return fail(ld, key,
					    "unknown preset "
					    "\"%s\" (known: %s)",
					    json_string_value(item), known);
				}
				for (k = 0; p->argv[k] != NULL; k++)
					if (strlist_push(
						&r->agents[i], p->argv[k]) < 0)
						return fail_nomem(ld);
				continue;
			}
			rc = parse_argv(ld, item, key, &r->agents[i]);
			if (rc != 0)
				return rc;
		}
	}
	if ((rc = get_int(
		 ld, v, "review", "retries", &r->retries, 0, INT_MAX)) != 0 ||
	    (rc = get_string(ld, v, "review", "prompt", &r->prompt)) != 0)
		return rc;
	/* Default: a majority of the panel. */
	r->quorum = r->nagents > 0 ? (int)(r->nagents / 2 + 1) : 0;
	if (json_object_get(v, "quorum") != NULL) {
		quorum = r->quorum;
		if ((rc = get_integer(ld, v, "review", "quorum", &quorum,
			 LLONG_MIN, LLONG_MAX)) != 0)
			return rc;
		if (r->nagents == 0)
			return fail(ld, "review.quorum",
			    "there are no reviewers (review.agents is empty)");
		if (quorum < 1 || quorum > (long long)r->nagents)
			return fail(ld, "review.quorum",
			    "must be between 1 "
			    "and %zu (the number of reviewers), got %lld",
			    r->nagents, quorum);
		r->quorum = (int)quorum;
	}
	return 0;
}

static const char *const breaker_keys[] = {"after", "cooldown_s", NULL};
static const char *const budget_keys[] = {
    "max_cost_usd", "story_max_cost_usd", NULL};
static const char *const git_keys[] = {"state_branch", "commit_work", NULL};
static const char *const state_keys[] = {"dir", NULL};

static int
parse_small_sections(struct loader *ld, json_t *root, struct config *c)
{
	json_t *v;
	char *dir = NULL, *clean = NULL;
	size_t len;
	int rc = 0;

	if ((v = json_object_get(root, "breaker")) != NULL) {
		if ((rc = want_object(ld, v, "breaker")) != 0 ||
		    (rc = check_keys(ld, v, "breaker", breaker_keys)) != 0 ||
		    (rc = get_int(ld, v, "breaker", "after", &c->breaker.after,
			 0, INT_MAX)) != 0 ||
		    (rc = get_number(ld, v, "breaker", "cooldown_s",
			 &c->breaker.cooldown_s, 0, SECONDS_MAX, false)) != 0)
			goto out;
	}
	if ((v = json_object_get(root, "budget")) != NULL) {
		if ((rc = want_object(ld, v, "budget")) != 0 ||
		    (rc = check_keys(ld, v, "budget", budget_keys)) != 0 ||
		    (rc = get_number(ld, v, "budget", "max_cost_usd",
			 &c->budget.max_cost_usd, 0, USD_MAX, false)) != 0 ||
		    (rc = get_number(ld, v, "budget", "story_max_cost_usd",
			 &c->budget.story_max_cost_usd, 0, USD_MAX, false)) !=
			0)
			goto out;
	}
	if ((v = json_object_get(root, "git")) != NULL) {
		if ((rc = want_object(ld, v, "git")) != 0 ||
		    (rc = check_keys(ld, v, "git", git_keys)) != 0 ||
		    (rc = get_string(ld, v, "git", "state_branch",
			 &c->git.state_branch)) != 0 ||
		    (rc = get_bool(ld, v, "git", "commit_work",
			 &c->git.commit_work)) != 0)
			goto out;
		if (!ref_name_valid(c->git.state_branch)) {
			rc = fail(ld, "git.state_branch",
			    "not a valid branch name: \"%s\"",
			    c->git.state_branch);
			goto out;
		}
	}
	if ((v = json_object_get(root, "state")) != NULL) {
		if ((rc = want_object(ld, v, "state")) != 0 ||
		    (rc = check_keys(ld, v, "state", state_keys)) != 0 ||
		    (rc = get_string(ld, v, "state", "dir", &dir)) != 0)
			goto out;
	}
	if (dir == NULL)
		clean = path_join(c->root, ".storyctl");
	else if (dir[0] == '/')
		clean = strdup(dir);
	else
		clean = path_join(c->root, dir);
	if (clean == NULL) {
		rc = fail_nomem(ld);
		goto out;
	}
	len = strlen(clean);
	while (len > 1 && clean[len - 1] == '/')
		clean[--len] = '\0';
	c->state_dir = clean;
	clean = NULL;
out:
	free(dir);
	free(clean);
	return rc;
}

/* ---- stories ---- */

/* The id a file gets when the config gives none: its name without .md,
 * and without a ".story" before it: BMAD v4's 1.1.story.md is 1.1
 * (docs/stories.md "Ids"). */
static void
id_from_file(char *id, size_t cap, const char *file)
{
	const char *base = strrchr(file, '/');
	size_t len;

	base = base != NULL ? base + 1 : file;
	len = strlen(base);
	if (len >= 3 && strcmp(base + len - 3, ".md") == 0) {
		len -= 3;
		if (len > 6 && strncmp(base + len - 6, ".story", 6) == 0)
			len -= 6;
	}
	if (len >= cap)
		len = cap - 1;
	memcpy(id, base, len);
	id[len] = '\0';
}

static struct story_conf *
story_add(struct config *c, size_t *alloc)
{
	struct story_conf *grown;
	size_t want;

	if (c->nstories == *alloc) {
		want = *alloc ? *alloc * 2 : 16;
		grown = realloc(c->stories, want * sizeof(*grown));
		if (grown == NULL)
			return NULL;
		c->stories = grown;
		*alloc = want;
	}
	memset(&c->stories[c->nstories], 0, sizeof(*c->stories));
	return &c->stories[c->nstories++];
}

static int
story_find_file(const struct config *c, const char *file)
{
	size_t i;

	for (i = 0; i < c->nstories; i++)
		if (strcmp(c->stories[i].file, file) == 0)
			return (int)i;
	return -1;
}

static int
story_set_file(
    struct loader *ld, const char *key, struct story_conf *s, const char *file)
{
	char shown[KEY_MAX];
	int rc;

	printable(shown, sizeof(shown), file);
	if (file[0] == '/')
		return fail(ld, key,
		    "story file \"%s\" must be relative to "
		    "the project root",
		    shown);
	rc = path_normalize(&s->file, file);
	if (rc == -2)
		return fail_nomem(ld);
	if (rc < 0) {
		return fail(ld, key,
		    "story file \"%s\" is outside the project "
		    "root",
		    shown);
	}
	return 0;
}

static const char *const story_keys[] = {
    "file", "id", "depends_on", "include_dependency_result", NULL};

static int
parse_story(struct loader *ld, json_t *item, const char *key, struct config *c,
    size_t *alloc)
{
	struct story_conf *s;
	char fkey[KEY_MAX], shown[KEY_MAX];
	json_t *fv, *iv, *dv;
	int rc;

	if (!json_is_string(item) && !json_is_object(item))
		return wrong_type(ld, key, "a file name or an object", item);
	if (json_is_object(item) &&
	    (rc = check_keys(ld, item, key, story_keys)) != 0)
		return rc;
	fv = json_is_string(item) ? item : json_object_get(item, "file");
	key_join(fkey, key, "file");
	if (fv == NULL)
		return fail(ld, key, "needs a file");
	if (!json_is_string(fv))
		return wrong_type(ld, fkey, "a string", fv);
	if (json_string_length(fv) == 0)
		return fail(
		    ld, json_is_string(item) ? key : fkey, "must not be empty");
	s = story_add(c, alloc);
	if (s == NULL)
		return fail_nomem(ld);
	if ((rc = story_set_file(ld, key, s, json_string_value(fv))) != 0)
		return rc;
	if (story_find_file(c, s->file) != (int)c->nstories - 1)
		return fail(ld, key, "story file %s is listed twice", s->file);
	id_from_file(s->id, sizeof(s->id), s->file);
	if (json_is_string(item))
		return 0;
	iv = json_object_get(item, "id");
	if (iv != NULL) {
		key_join(fkey, key, "id");
		if (!json_is_string(iv))
			return wrong_type(ld, fkey, "a string", iv);
		if (!config_id_valid(json_string_value(iv))) {
			printable(shown, sizeof(shown), json_string_value(iv));
			return fail(ld, fkey,
			    "invalid story id \"%s\" for %s: "
			    "ids match [A-Za-z0-9][A-Za-z0-9._-]* (at most "
			    "127 bytes)",
			    shown, s->file);
		}
		snprintf(s->id, sizeof(s->id), "%s", json_string_value(iv));
	}
	dv = json_object_get(item, "depends_on");
	if (dv != NULL) {
		key_join(fkey, key, "depends_on");
		if ((rc = parse_strings(
			 ld, dv, fkey, &s->depends_on, false, true)) != 0)
			return rc;
	}
	return get_bool(ld, item, key, "include_dependency_result",
	    &s->include_dependency_result);
}

/* Escape glob metacharacters of a literal path (the root). */
static char *
glob_escape(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1);
	size_t o = 0;

	if (out == NULL)
		return NULL;
	for (; *s != '\0'; s++) {
		if (strchr("*?[]\\", *s) != NULL)
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = '\0';
	return out;
}

static bool
has_dotdot(const char *s)
{
	const char *p = s;
	size_t len;

	while (*p != '\0') {
		len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += len;
		while (*p == '/')
			p++;
	}
	return false;
}

static int
path_version_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static int
expand_glob(
    struct loader *ld, struct config *c, size_t *alloc, const char *gkey)
{
	struct story_conf *s;
	glob_t g;
	char *root = NULL, *pattern = NULL, *rel = NULL;
	const char *m;
	size_t i, skip, len;
	bool have_glob = false;
	int rc = 0, grc;

	memset(&g, 0, sizeof(g));
	if (c->stories_glob == NULL)
		goto out;
	if (c->stories_glob[0] == '/' || has_dotdot(c->stories_glob)) {
		rc = fail(ld, gkey,
		    "must be relative to the project "
		    "root and stay inside it, got \"%s\"",
		    c->stories_glob);
		goto out;
	}
	root = glob_escape(c->root);
	if (root != NULL)
		pattern = path_join(root, c->stories_glob);
	if (pattern == NULL) {
		rc = fail_nomem(ld);
		goto out;
	}
	/* GLOB_MARK marks directories with a trailing '/': skipped below. */
	grc = glob(pattern, GLOB_MARK, NULL, &g);
	have_glob = true;
	if (grc == GLOB_NOMATCH)
		goto out;
	if (grc != 0) {
		rc = fail(ld, gkey, "cannot expand \"%s\"%s", c->stories_glob,
		    grc == GLOB_NOSPACE ? ": out of memory"
					: ": a directory cannot be read");
		goto out;
	}
	/* in version order: BMAD's 1.2 before 1.10, story-9 before story-10
	 * (docs/configuration.md) */
	qsort(g.gl_pathv, g.gl_pathc, sizeof(*g.gl_pathv), path_version_cmp);
	len = strlen(c->root);
	skip = len + (len > 0 && c->root[len - 1] == '/' ? 0 : 1);
	for (i = 0; i < g.gl_pathc; i++) {
		m = g.gl_pathv[i];
		len = strlen(m);
		if (len <= skip || m[len - 1] == '/')
			continue;
		free(rel);
		rel = NULL;
		if (path_normalize(&rel, m + skip) == -2) {
			rc = fail_nomem(ld);
			goto out;
		}
		if (rel == NULL)
			continue;
		if (story_find_file(c, rel) >= 0)
			continue;
		s = story_add(c, alloc);
		if (s == NULL) {
			rc = fail_nomem(ld);
			goto out;
		}
		s->file = rel;
		rel = NULL;
		id_from_file(s->id, sizeof(s->id), s->file);
	}
out:
	if (have_glob)
		globfree(&g);
	free(rel);
	free(root);
	free(pattern);
	return rc;
}

/* Where the stories came from: c->stories[0..nfiles) are the explicit
 * entries, [nfiles..nsprint) the sprint status's, the rest the glob's. */
struct story_src {
	const char *files_key; /* "stories" or "stories.files" */
	size_t nfiles, nsprint;
	const char *glob_key; /* "stories_glob" or "stories.glob" */
};

/* Where story i came from, for messages. */
static void
story_key(char *key, size_t i, const struct story_src *src)
{
	if (i < src->nfiles)
		key_index(key, src->files_key, i);
	else if (i < src->nsprint)
		snprintf(key, KEY_MAX, "stories.sprint_status");
	else
		snprintf(key, KEY_MAX, "%s", src->glob_key);
}

/* " (did you mean ID?)" for an unknown id, or "". */
static void
id_hint(char *buf, size_t cap, const struct config *c, const char *id)
{
	struct suggest sg;
	size_t i;
	int best;

	suggest_init(&sg, id);
	for (i = 0; i < c->nstories && i < INT_MAX; i++)
		suggest_add(&sg, c->stories[i].id, (int)i);
	best = suggest_best(&sg);
	if (best >= 0)
		snprintf(buf, cap, " (did you mean %s?)", c->stories[best].id);
	else
		buf[0] = '\0';
}

static int
check_stories(
    struct loader *ld, const struct config *c, const struct story_src *src)
{
	const struct story_conf *s;
	char key[KEY_MAX], shown[KEY_MAX], hint[160];
	int j;
	size_t i, k;

	for (i = 0; i < c->nstories; i++) {
		s = &c->stories[i];
		story_key(key, i, src);
		if (!config_id_valid(s->id)) {
			char file[256];
			printable(shown, sizeof(shown), s->id);
			printable(file, sizeof(file), s->file);
			return fail(ld, key,
			    "invalid story id \"%s\" for %s: "
			    "ids match [A-Za-z0-9][A-Za-z0-9._-]* (give an "
			    "\"id\" or rename the file)",
			    shown, file);
		}
		j = config_story_index(c, s->id);
		if (j >= 0 && (size_t)j < i)
			return fail(ld, key,
			    "duplicate story id \"%s\" (%s and %s)", s->id,
			    c->stories[j].file, s->file);
	}
	for (i = 0; i < c->nstories; i++) {
		s = &c->stories[i];
		story_key(key, i, src);
		for (k = 0; k < s->depends_on.n; k++) {
			if (config_story_index(c, s->depends_on.items[k]) >= 0)
				continue;
			printable(shown, sizeof(shown), s->depends_on.items[k]);
			id_hint(hint, sizeof(hint), c, s->depends_on.items[k]);
			return fail(ld, key,
			    "story %s depends on unknown story id \"%s\"%s",
			    s->id, shown, hint);
		}
	}
	return 0;
}

/* The dependency graph of c's stories for schedule_check_cycles() (an
 * unknown id has no edge: load_stories() reports it), then the check,
 * its message prefixed with file when there is one. */
static int
check_cycles(const struct config *c, const char *file, struct sc_err *err)
{
	struct sched_story *s = NULL;
	int *deps = NULL;
	size_t i, k, total = 0, used = 0;
	int j, rc = 0;

	if (c->nstories == 0)
		goto out;
	for (i = 0; i < c->nstories; i++)
		total += c->stories[i].depends_on.n;
	s = calloc(c->nstories, sizeof(*s));
	deps = calloc(total + 1, sizeof(*deps));
	if (s == NULL || deps == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (i = 0; i < c->nstories; i++) {
		const struct story_conf *sc = &c->stories[i];
		s[i].id = sc->id;
		s[i].deps = deps + used;
		for (k = 0; k < sc->depends_on.n; k++) {
			j = config_story_index(c, sc->depends_on.items[k]);
			if (j >= 0)
				deps[used + s[i].ndeps++] = j;
		}
		used += s[i].ndeps;
	}
	rc = schedule_check_cycles(s, c->nstories, err);
	if (rc == SC_EDATA && file != NULL)
		err_prefix(err, "%s", file);
out:
	free(s);
	free(deps);
	return rc;
}

int
config_check_cycles(const struct config *c, struct sc_err *err)
{
	return check_cycles(c, c->path, err);
}

int
config_story_index(const struct config *c, const char *id)
{
	size_t i;

	for (i = 0; i < c->nstories; i++)
		if (strcmp(c->stories[i].id, id) == 0)
			return (int)i;
	return -1;
}

/*
 * Where the sprint's story files are (docs/stories.md "BMAD v6"): its
 * story_location, "{project-root}/" dropped and relative to the root
 * (an absolute path inside the root made relative), when that is a
 * directory inside the root; otherwise the yaml's own directory.  *out
 * is "" for the root itself.
 */
static int
sprint_dir(char **out, const struct config *c, const char *loc)
{
	const char *p = loc, *slash;
	char *norm = NULL, *full = NULL;
	struct stat st;
	size_t n = strlen(c->root);

	*out = NULL;
	if (p != NULL && strncmp(p, "{project-root}", 14) == 0)
		p += 14;
	else if (p != NULL && p[0] == '/')
		p = strncmp(p, c->root, n) == 0 && (p[n] == '/' || !p[n])
		    ? p + n
		    : NULL;
	while (p != NULL && *p == '/')
		p++;
	/* another placeholder ("{output_folder}") cannot be resolved */
	if (p != NULL && strchr(p, '{') == NULL) {
		if (p[strspn(p, "./")] == '\0' && strstr(p, "..") == NULL)
			norm = strdup(""); /* "", ".", "./": the root */
		else if (path_normalize(&norm, p) == -2)
			return -1;
		if (norm != NULL && norm[0] != '\0' &&
		    (full = path_join(c->root, norm)) == NULL) {
			free(norm);
			return -1;
		}
		if (norm != NULL &&
		    (norm[0] == '\0' ||
			(stat(full, &st) == 0 && S_ISDIR(st.st_mode)))) {
			free(full);
			*out = norm;
			return 0;
		}
		free(full);
		free(norm);
	}
	slash = strrchr(c->sprint_status, '/');
	*out = slash != NULL
	    ? strndup(c->sprint_status, (size_t)(slash - c->sprint_status))
	    : strdup("");
	return *out != NULL ? 0 : -1;
}

/* One entry of the sprint status: listed when its file exists, else
 * skipped with the reason (docs/stories.md). */
static int
sprint_entry_add(struct loader *ld, struct config *c, size_t *alloc,
    const char *dir, const struct sprint_entry *e)
{
	static const char key[] = "stories.sprint_status";
	struct story_conf *s;
	struct stat st;
	char *file = NULL, *full = NULL, *why = NULL, shown[KEY_MAX];
	int rc = 0;

	if (!config_id_valid(e->key)) {
		printable(shown, sizeof(shown), e->key);
		return fail(ld, key,
		    "%s: story key \"%s\" is not a valid story id: ids "
		    "match [A-Za-z0-9][A-Za-z0-9._-]*",
		    c->sprint_status, shown);
	}
	if (asprintf(&file, "%s%s%s.md", dir, dir[0] ? "/" : "", e->key) < 0)
		return fail_nomem(ld);
	full = path_join(c->root, file);
	if (full == NULL) {
		rc = fail_nomem(ld);
		goto out;
	}
	if (story_find_file(c, file) >= 0)
		goto out; /* listed explicitly: its entry wins */
	if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
		printable(shown, sizeof(shown), e->status);
		if (strcmp(e->status, "backlog") == 0)
			rc = asprintf(&why,
			    "%s: backlog, no story file yet (%s)", e->key,
			    file);
		else
			rc =
			    asprintf(&why, "%s: %s, but its file %s is missing",
				e->key, shown, file);
		if (rc < 0)
			why = NULL; /* asprintf leaves it undefined */
		if (rc < 0 || strlist_push(&c->stories_skipped, why) < 0)
			rc = fail_nomem(ld);
		else
			rc = 0;
		goto out;
	}
	s = story_add(c, alloc);
	if (s == NULL) {
		rc = fail_nomem(ld);
		goto out;
	}
	s->file = file;
	file = NULL;
	snprintf(s->id, sizeof(s->id), "%s", e->key);
	snprintf(s->sprint_status, sizeof(s->sprint_status), "%s", e->status);
out:
	free(why);
	free(full);
	free(file);
	return rc;
}

/* stories.sprint_status: BMAD v6's story entries, in the file's order
 * (docs/stories.md "BMAD v6"). */
static int
expand_sprint(struct loader *ld, struct config *c, size_t *alloc)
{
	static const char key[] = "stories.sprint_status";
	struct sprint_status ss;
	struct sc_err e;
	char *path = NULL, *text = NULL, *dir = NULL;
	size_t len = 0, i;
	int rc = 0;

	memset(&ss, 0, sizeof(ss));
	if (c->sprint_status == NULL)
		return 0;
	path = path_join(c->root, c->sprint_status);
	if (path == NULL)
		return fail_nomem(ld);
	if ((rc = read_file(ld, key, c->sprint_status, path, &text, &len)) != 0)
		goto out;
	err_clear(&e);
	rc = sprint_status_parse(&ss, text, len, &e);
	if (rc == SC_EOS) {
		rc = fail_nomem(ld);
		goto out;
	}
	if (rc < 0) {
		rc = fail(ld, key, "%s: %s", c->sprint_status, e.msg);
		goto out;
	}
	if (sprint_dir(&dir, c, ss.story_location) < 0) {
		rc = fail_nomem(ld);
		goto out;
	}
	for (i = 0; rc == 0 && i < ss.n; i++)
		rc = sprint_entry_add(ld, c, alloc, dir, &ss.entries[i]);
out:
	sprint_status_release(&ss);
	free(dir);
	free(text);
	free(path);
	return rc;
}

static const char *const stories_keys[] = {
    "files", "glob", "sprint_status", "tasks_heading", "include_drafts", NULL};

/* "stories" as an object (docs/configuration.md "Stories"); *files is
 * its "files" array (NULL when absent). */
static int
parse_stories_object(
    struct loader *ld, json_t *v, struct config *c, json_t **files)
{
	char *sprint = NULL, shown[KEY_MAX];
	int rc;

	*files = json_object_get(v, "files");
	if ((rc = check_keys(ld, v, "stories", stories_keys)) != 0)
		return rc;
	if (*files != NULL && !json_is_array(*files))
		return wrong_type(ld, "stories.files", "an array", *files);
	if ((rc = get_string(ld, v, "stories", "glob", &c->stories_glob)) !=
		0 ||
	    (rc = get_string(
		 ld, v, "stories", "tasks_heading", &c->tasks_heading)) != 0 ||
	    (rc = get_bool(ld, v, "stories", "include_drafts",
		 &c->include_drafts)) != 0 ||
	    (rc = get_string(ld, v, "stories", "sprint_status", &sprint)) != 0)
		return rc;
	if (sprint == NULL)
		return 0;
	printable(shown, sizeof(shown), sprint);
	if (sprint[0] == '/')
		rc = fail(ld, "stories.sprint_status",
		    "\"%s\" must be relative to the project root", shown);
	else if ((rc = path_normalize(&c->sprint_status, sprint)) == -2)
		rc = fail_nomem(ld);
	else if (rc < 0)
		rc = fail(ld, "stories.sprint_status",
		    "\"%s\" is outside the project root", shown);
	free(sprint);
	return rc;
}

/*
 * "stories": an array of entries, or an object with "files" (the same
 * entries), "glob", "sprint_status", "tasks_heading" and
 * "include_drafts"; the top-level "stories_glob" too.  Explicit entries
 * first, then the sprint status's, then the glob's.
 */
static int
parse_stories(struct loader *ld, json_t *root, struct config *c)
{
	struct story_src src = {"stories", 0, 0, "stories_glob"};
	json_t *v, *files, *item;
	char key[KEY_MAX];
	size_t alloc = 0, i;
	int rc;

	files = v = json_object_get(root, "stories");
	if (v != NULL && json_is_object(v)) {
		if ((rc = parse_stories_object(ld, v, c, &files)) != 0)
			return rc;
		src.files_key = "stories.files";
		if (c->stories_glob != NULL)
			src.glob_key = "stories.glob";
	} else if (v != NULL && !json_is_array(v)) {
		return wrong_type(ld, "stories", "an array or an object", v);
	}
	if (c->stories_glob != NULL &&
	    json_object_get(root, "stories_glob") != NULL)
		return fail(ld, "stories_glob",
		    "give the pattern once, as stories.glob or as "
		    "stories_glob");
	if (files != NULL) {
		json_array_foreach(files, i, item)
		{
			key_index(key, src.files_key, i);
			if ((rc = parse_story(ld, item, key, c, &alloc)) != 0)
				return rc;
		}
	}
	src.nfiles = c->nstories;
	if ((rc = get_string(
		 ld, root, NULL, "stories_glob", &c->stories_glob)) != 0 ||
	    (rc = expand_sprint(ld, c, &alloc)) != 0)
		return rc;
	src.nsprint = c->nstories;
	if ((rc = expand_glob(ld, c, &alloc, src.glob_key)) != 0 ||
	    (rc = check_stories(ld, c, &src)) != 0)
		return rc;
	return check_cycles(c, ld->file, ld->err);
}

/* ---- the whole file ---- */

static void
config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	policy_init_default(&c->policy);
	agent_init(&c->agents[ROLE_PRIMARY]);
	agent_init(&c->agents[ROLE_FALLBACK]);
	c->review.retries = 2;
	c->breaker.cooldown_s = 1800;
}

/*
 * The whole file at path (at most CONFIG_MAX_BYTES), NUL-terminated.
 * Messages name key and shown when given (a file the config names:
 * "FILE: stories.sprint_status: docs/x.yaml: cannot open: ..."), else
 * the config itself.
 */
static int
read_file(struct loader *ld, const char *key, const char *shown,
    const char *path, char **out, size_t *out_len)
{
	struct stat st;
	char *buf = NULL;
	const char *sep = shown != NULL ? ": " : "";
	size_t len = 0;
	ssize_t n;
	int fd = -1, rc = 0;

	if (shown == NULL)
		shown = "";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = fail(ld, key, "%s%scannot open: %s", shown, sep,
		    strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = fail(ld, key, "%s%snot a regular file", shown, sep);
		goto out;
	}
	if (st.st_size > CONFIG_MAX_BYTES) {
		rc = fail(ld, key, "%s%stoo large (more than %d bytes)", shown,
		    sep, CONFIG_MAX_BYTES);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		rc = fail_nomem(ld);
		goto out;
	}
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = fail(ld, key, "%s%scannot read: %s", shown, sep,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	buf = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* path and root, absolute; root resolved, the file name kept as given
 * so that a symlinked storyctl.json still names the directory it is in. */
static int
resolve_paths(struct loader *ld, struct config *c, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = NULL;
	int rc = 0;

	if (slash == NULL)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (dir == NULL) {
		rc = fail_nomem(ld);
		goto out;
	}
	c->root = realpath(dir, NULL);
	if (c->root == NULL) {
		rc = fail(ld, NULL, "cannot resolve its directory: %s",
		    strerror(errno));
		goto out;
	}
	c->path = path_join(c->root, slash != NULL ? slash + 1 : path);
	if (c->path == NULL)
		rc = fail_nomem(ld);
out:
	free(dir);
	return rc;
}

static const char *const top_keys[] = {"stories", "stories_glob", "prompt",
    "agents", "policy", "gates", "review", "breaker", "budget", "git", "state",
    NULL};

int
config_load(struct config *out, const char *path, struct sc_err *err)
{
	struct loader ld = {path, err};
	json_error_t jerr;
	json_t *root = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = 0;

	config_init(out);
	if ((rc = read_file(&ld, NULL, NULL, path, &text, &len)) != 0)
		goto out;
	/* Duplicate keys are rejected: the second would silently win. */
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		rc = err_set(err, SC_EDATA, "%s:%d:%d: %s", path, jerr.line,
		    jerr.column, jerr.text);
		goto out;
	}
	if (!json_is_object(root)) {
		rc = fail(&ld, NULL, "expected a JSON object, got %s",
		    type_word(root));
		goto out;
	}
	if ((rc = resolve_paths(&ld, out, path)) != 0)
		goto out;
	out->git.state_branch = strdup("storyctl/state");
	if (out->git.state_branch == NULL) {
		rc = fail_nomem(&ld);
		goto out;
	}
	if ((rc = check_keys(&ld, root, NULL, top_keys)) != 0 ||
	    (rc = get_string(&ld, root, NULL, "prompt", &out->prompt)) != 0 ||
	    (rc = parse_agents(&ld, json_object_get(root, "agents"), out)) !=
		0 ||
	    (rc = parse_policy(
		 &ld, json_object_get(root, "policy"), &out->policy)) != 0 ||
	    (rc = parse_gates(&ld, json_object_get(root, "gates"), out)) != 0 ||
	    (rc = parse_review(
		 &ld, json_object_get(root, "review"), &out->review)) != 0 ||
	    (rc = parse_small_sections(&ld, root, out)) != 0 ||
	    (rc = parse_stories(&ld, root, out)) != 0)
		goto out;
out:
	json_decref(root);
	free(text);
	if (rc != 0)
		config_release(out);
	return rc;
}

int
config_defaults(struct config *out, const char *root, struct sc_err *err)
{
	int rc = 0;

	config_init(out);
	out->root = realpath(root, NULL);
	if (out->root == NULL) {
		rc = err_set(err, SC_EOS, "%s: cannot resolve: %s", root,
		    strerror(errno));
		goto out;
	}
	out->git.state_branch = strdup("storyctl/state");
	out->state_dir = path_join(out->root, ".storyctl");
	if (out->git.state_branch == NULL || out->state_dir == NULL ||
	    agents_default(out) < 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
out:
	if (rc != 0)
		config_release(out);
	return rc;
}

int
config_find(char **out_path, const char *start_dir, struct sc_err *err)
{
	struct stat st;
	char *dir = NULL, *candidate = NULL, *slash;
	int rc = 0;

	*out_path = NULL;
	dir = realpath(start_dir, NULL);
	if (dir == NULL) {
		rc = err_set(err, SC_EOS, "%s: cannot resolve: %s", start_dir,
		    strerror(errno));
		goto out;
	}
	for (;;) {
		candidate = path_join(dir, CONFIG_FILE_NAME);
		if (candidate == NULL) {
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode)) {
			*out_path = candidate;
			candidate = NULL;
			goto out;
		}
		free(candidate);
		candidate = NULL;
		if (strcmp(dir, "/") == 0)
			break;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	dir = realpath(start_dir, NULL);
	rc = err_set(err, SC_EUSAGE,
	    "no %s in %s or any parent directory "
	    "(run 'storyctl init' to write one)",
	    CONFIG_FILE_NAME, dir != NULL ? dir : start_dir);
out:
	free(dir);
	free(candidate);
	return rc;
}

void
config_release(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->path);
	free(c->root);
	for (i = 0; i < c->nstories; i++) {
		free(c->stories[i].file);
		strlist_release(&c->stories[i].depends_on);
	}
	free(c->stories);
	free(c->stories_glob);
	free(c->sprint_status);
	free(c->tasks_heading);
	strlist_release(&c->stories_skipped);
	free(c->prompt);
	agent_release(&c->agents[ROLE_PRIMARY]);
	agent_release(&c->agents[ROLE_FALLBACK]);
	policy_release(&c->policy);
	for (i = 0; i < c->ngates; i++) {
		free(c->gates[i].name);
		strlist_release(&c->gates[i].command);
	}
	free(c->gates);
	for (i = 0; i < c->review.nagents; i++)
		strlist_release(&c->review.agents[i]);
	free(c->review.agents);
	free(c->review.prompt);
	free(c->git.state_branch);
	free(c->state_dir);
	memset(c, 0, sizeof(*c));
}
