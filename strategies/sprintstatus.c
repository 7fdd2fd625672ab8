/*
 * sprintstatus.c - see sprintstatus.h.
 *
 * libyaml's event parser walks the document once: the top-level map's
 * story_location and development_status are read, every other value is
 * skipped whole (skip_node).  Nothing is built but the entry list, so a
 * hostile file costs at most its size.  libyaml checks the syntax; its
 * problem and position become the message.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "strategies/sprintstatus.h"

struct yp {
	yaml_parser_t parser;
	yaml_event_t ev; /* the current event (ev_ok: to be deleted) */
	bool ev_ok;
	struct sc_err *err;
};

/* The next event into p->ev. */
static int
next(struct yp *p)
{
	if (p->ev_ok)
		yaml_event_delete(&p->ev);
	p->ev_ok = false;
	if (!yaml_parser_parse(&p->parser, &p->ev)) {
		if (p->parser.error == YAML_MEMORY_ERROR)
			return err_set(p->err, SC_EOS, "out of memory");
		return err_set(p->err, SC_EDATA, "line %zu, column %zu: %s",
		    p->parser.problem_mark.line + 1,
		    p->parser.problem_mark.column + 1,
		    p->parser.problem != NULL ? p->parser.problem
					      : "not valid YAML");
	}
	p->ev_ok = true;
	return 0;
}

/* The node that starts with the current event, skipped whole. */
static int
skip_node(struct yp *p)
{
	int depth = 0, rc = 0;

	for (;;) {
		switch (p->ev.type) {
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			return err_set(
			    p->err, SC_EDATA, "the document ends early");
		default:
			break;
		}
		if (depth <= 0)
			return 0;
		if ((rc = next(p)) < 0)
			return rc;
	}
}

/* A copy of the current event's scalar; NULL when out of memory. */
static char *
scalar_dup(const struct yp *p)
{
	return strndup(
	    (const char *)p->ev.data.scalar.value, p->ev.data.scalar.length);
}

static bool
scalar_is(const struct yp *p, const char *s)
{
	return p->ev.type == YAML_SCALAR_EVENT &&
	    p->ev.data.scalar.length == strlen(s) &&
	    memcmp(p->ev.data.scalar.value, s, strlen(s)) == 0;
}

bool
sprint_status_is_story_key(const char *key)
{
	size_t n = strlen(key);
	static const char retro[] = "-retrospective";

	if (n == 0 || strncmp(key, "epic-", 5) == 0)
		return false;
	return !(n >= sizeof(retro) - 1 &&
	    strcmp(key + n - (sizeof(retro) - 1), retro) == 0);
}

/* --- story numbers and file names (docs/stories.md "BMAD v6") --- */

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The number s starts with into buf ("" when fewer than two parts or
 * too long); *end is where it stops.  A part is a run of digits that
 * ends the string or is followed by '.', '-' or '_' ("1-10-2fa" is
 * 1.10: "2fa" is a word); the separator before a part is '.' or '-', so
 * "1.1.story" stops before ".story" and "1-1-login" before "-login".
 * A part's leading zeros are dropped ("01" is 1, "0" stays 0).
 */
static void
number_prefix(char *buf, const char *s, const char **end)
{
	const char *p = s, *d;
	size_t o = 0, parts = 0, len;

	*end = s;
	while (is_digit(*p)) {
		d = p;
		while (*d == '0' && is_digit(d[1]))
			d++;
		while (is_digit(*p))
			p++;
		if (*p != '\0' && strchr(".-_", *p) == NULL)
			break; /* "2fa": not a part */
		len = (size_t)(p - d);
		if (o + len + 2 > STORY_NUMBER_MAX) {
			parts = 0;
			break;
		}
		if (parts++ > 0)
			buf[o++] = '.';
		memcpy(buf + o, d, len);
		o += len;
		*end = p;
		if ((*p != '.' && *p != '-') || !is_digit(p[1]))
			break;
		p++;
	}
	buf[o] = '\0';
	if (parts < 2) {
		buf[0] = '\0';
		*end = s;
	}
}

bool
sprint_key_number(char *buf, const char *key)
{
	const char *end;

	number_prefix(buf, key, &end);
	return buf[0] != '\0';
}

enum story_name
story_name_number(char *buf, const char *name)
{
	const char *rest;
	size_t n;

	number_prefix(buf, name, &rest);
	n = strlen(rest);
	if (buf[0] == '\0' || n < 3 || strcmp(rest + n - 3, ".md") != 0) {
		buf[0] = '\0';
		return STORY_NAME_OTHER;
	}
	n -= 3; /* rest[0..n): what lies between the number and ".md" */
	if (n == 0 ||
	    (n == 6 && strchr(".-_", rest[0]) != NULL &&
		strncasecmp(rest + 1, "story", 5) == 0))
		return STORY_NAME_V4;
	if (n >= 2 && strchr(".-_", rest[0]) != NULL)
		return STORY_NAME_NUMBERED;
	buf[0] = '\0';
	return STORY_NAME_OTHER;
}

enum sprint_match
sprint_name_match(const char *key, const char *name)
{
	char want[STORY_NUMBER_MAX], got[STORY_NUMBER_MAX];
	size_t n = strlen(key);
	enum story_name kind;

	if (strncmp(name, key, n) == 0 && strcmp(name + n, ".md") == 0)
		return SPRINT_MATCH_EXACT;
	if (!sprint_key_number(want, key))
		return SPRINT_MATCH_NONE;
	kind = story_name_number(got, name);
	if (kind == STORY_NAME_OTHER || strcmp(want, got) != 0)
		return SPRINT_MATCH_NONE;
	return kind == STORY_NAME_V4 ? SPRINT_MATCH_V4 : SPRINT_MATCH_NUMBER;
}

static int
entry_add(
    struct sprint_status *out, char *key, char *status, struct sc_err *err)
{
	struct sprint_entry *grown;

	grown = realloc(out->entries, (out->n + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(key);
		free(status);
		return err_set(err, SC_EOS, "out of memory");
	}
	out->entries = grown;
	out->entries[out->n].key = key;
	out->entries[out->n].status = status;
	out->n++;
	return 0;
}

/* development_status: the current event starts its value. */
static int
read_entries(struct sprint_status *out, struct yp *p)
{
	char *key = NULL, *status = NULL;
	bool keep;
	int rc;

	/* "development_status:" with nothing under it: no stories yet */
	if (p->ev.type == YAML_SCALAR_EVENT &&
	    (p->ev.data.scalar.length == 0 || scalar_is(p, "~") ||
		scalar_is(p, "null")))
		return 0;
	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return err_set(p->err, SC_EDATA,
		    "line %zu: development_status is not a map",
		    p->ev.start_mark.line + 1);
	for (;;) {
		if ((rc = next(p)) < 0)
			return rc;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		keep = p->ev.type == YAML_SCALAR_EVENT;
		if (keep && (key = scalar_dup(p)) == NULL)
			return err_set(p->err, SC_EOS, "out of memory");
		if (!keep && (rc = skip_node(p)) < 0)
			return rc;
		if ((rc = next(p)) < 0) {
			free(key);
			return rc;
		}
		keep = keep && p->ev.type == YAML_SCALAR_EVENT &&
		    sprint_status_is_story_key(key);
		if (!keep) {
			free(key);
			key = NULL;
			if ((rc = skip_node(p)) < 0)
				return rc;
			continue;
		}
		if ((status = scalar_dup(p)) == NULL) {
			free(key);
			return err_set(p->err, SC_EOS, "out of memory");
		}
		if ((rc = entry_add(out, key, status, p->err)) < 0)
			return rc;
		key = status = NULL;
	}
}

/* The top-level map: the current event is its MAPPING_START. */
static int
read_top(struct sprint_status *out, struct yp *p, bool *have_dev)
{
	bool loc, dev;
	int rc;

	for (;;) {
		if ((rc = next(p)) < 0)
			return rc;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		loc = scalar_is(p, "story_location");
		dev = scalar_is(p, "development_status");
		if ((rc = skip_node(p)) < 0 || (rc = next(p)) < 0)
			return rc;
		if (dev) {
			*have_dev = true;
			rc = read_entries(out, p);
		} else if (loc && p->ev.type == YAML_SCALAR_EVENT &&
		    out->story_location == NULL) {
			out->story_location = scalar_dup(p);
			if (out->story_location == NULL)
				rc = err_set(p->err, SC_EOS, "out of memory");
		} else {
			rc = skip_node(p);
		}
		if (rc < 0)
			return rc;
	}
}

/* Start parsing text; on success the current event is the first
 * document's top-level MAPPING_START.  yp_close() in every case. */
static int
yp_open(struct yp *p, const char *text, size_t len, struct sc_err *err)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->err = err;
	if (!yaml_parser_initialize(&p->parser))
		return err_set(err, SC_EOS, "out of memory");
	yaml_parser_set_input_string(&p->parser,
	    (const unsigned char *)(text != NULL ? text : ""),
	    text != NULL ? len : 0);
	/* stream start, then the first document's start (or the end) */
	if ((rc = next(p)) < 0 || (rc = next(p)) < 0)
		return rc;
	if (p->ev.type == YAML_DOCUMENT_START_EVENT && (rc = next(p)) < 0)
		return rc;
	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return err_set(err, SC_EDATA, "not a YAML map of keys");
	return 0;
}

static void
yp_close(struct yp *p)
{
	if (p->ev_ok)
		yaml_event_delete(&p->ev);
	p->ev_ok = false;
	yaml_parser_delete(&p->parser);
}

int
sprint_status_parse(
    struct sprint_status *out, const char *text, size_t len, struct sc_err *err)
{
	struct yp p;
	bool have_dev = false;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = yp_open(&p, text, len, err)) < 0 ||
	    (rc = read_top(out, &p, &have_dev)) < 0)
		goto out;
	if (!have_dev)
		rc = err_set(err, SC_EDATA, "no development_status map");
out:
	yp_close(&p);
	if (rc < 0)
		sprint_status_release(out);
	return rc;
}

int
yaml_top_scalar(char **out, const char *text, size_t len, const char *key,
    struct sc_err *err)
{
	struct yp p;
	bool want;
	int rc;

	*out = NULL;
	if ((rc = yp_open(&p, text, len, err)) < 0)
		goto out;
	for (;;) {
		if ((rc = next(&p)) < 0 || p.ev.type == YAML_MAPPING_END_EVENT)
			break;
		want = scalar_is(&p, key);
		if ((rc = skip_node(&p)) < 0 || (rc = next(&p)) < 0)
			break;
		if (want && p.ev.type == YAML_SCALAR_EVENT && *out == NULL &&
		    (*out = scalar_dup(&p)) == NULL) {
			rc = err_set(err, SC_EOS, "out of memory");
			break;
		}
		if ((rc = skip_node(&p)) < 0)
			break;
	}
out:
	yp_close(&p);
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

void
sprint_status_release(struct sprint_status *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->entries[i].key);
		free(s->entries[i].status);
	}
	free(s->entries);
	free(s->story_location);
	memset(s, 0, sizeof(*s));
}
