/*
 * opts.c - a command line parsed by its help table (opts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "controller/cli/opts.h"

/* The name of term's option that is flag (len bytes), and whether that
 * name takes a value (a word follows it before the next ','); -1 when
 * term has no such name. */
static int
term_match(const char *term, const char *flag, size_t len)
{
	const char *t = term;
	size_t n;

	while (*t != '\0') {
		n = strcspn(t, " ,");
		if (t[0] == '-' && n == len && strncmp(t, flag, len) == 0)
			return t[n] == ' ';
		t += n;
		t += strcspn(t, ",");
		t += strspn(t, " ,");
	}
	return -1;
}

bool
opts_term_has(const char *term, const char *flag)
{
	return term_match(term, flag, strlen(flag)) >= 0;
}

/* The index of the option named by the len bytes of a, or -1; *value
 * whether it takes one. */
static int
opts_find(const struct help_item *table, const char *a, size_t len, int *value)
{
	int i, v;

	for (i = 0; table[i].term != NULL; i++) {
		v = term_match(table[i].term, a, len);
		if (v >= 0) {
			*value = v;
			return i;
		}
	}
	return -1;
}

/* One option word argv[*i]: its value from "=VALUE", the glued-on rest
 * of a one-letter name, or the next word. */
static int
opts_take(struct opts *o, const char *cmd, int argc, char **argv, int *i,
    struct sc_err *err)
{
	const char *a = argv[*i], *val = NULL;
	size_t len = strcspn(a, "=");
	int k, value = 0;

	k = opts_find(o->table, a, len, &value);
	if (k < 0 && a[1] != '-' && a[1] != '\0' && a[2] != '\0') {
		/* -j4: a one-letter name with its value glued on */
		len = 2;
		k = opts_find(o->table, a, len, &value);
		if (k >= 0 && !value)
			k = -1;
		if (k >= 0)
			val = a + 2;
	}
	if (k < 0)
		return err_set(
		    err, SC_EUSAGE, "%s: unknown option '%s'", cmd, a);
	if (val == NULL && a[len] == '=')
		val = a + len + 1;
	if (val != NULL && !value)
		return err_set(
		    err, SC_EUSAGE, "option %.*s takes no value", (int)len, a);
	if (val == NULL && value) {
		if (*i + 1 >= argc)
			return err_set(err, SC_EUSAGE,
			    "option %.*s needs a value", (int)len, a);
		val = argv[++*i];
	}
	o->seen[k] = true;
	o->value[k] = val;
	return 0;
}

int
opts_parse(struct opts *out, const char *cmd, const struct help_item *table,
    int argc, char **argv, struct sc_err *err)
{
	int i, rc = 0;

	memset(out, 0, sizeof(*out));
	out->table = table;
	for (i = 0; table[i].term != NULL; i++)
		if (i >= OPTS_MAX)
			return err_set(err, SC_ESOFTWARE,
			    "%s: more than %d options", cmd, OPTS_MAX);
	out->args = calloc((size_t)argc + 1, sizeof(*out->args));
	if (out->args == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (i = 1; i < argc && rc == 0; i++) {
		if (!out->dashdash && strcmp(argv[i], "--") == 0) {
			out->dashdash = true;
			out->nbefore = out->nargs;
		} else if (!out->dashdash && argv[i][0] == '-' &&
		    argv[i][1] != '\0')
			rc = opts_take(out, cmd, argc, argv, &i, err);
		else
			out->args[out->nargs++] = argv[i];
	}
	if (!out->dashdash)
		out->nbefore = out->nargs;
	return rc;
}

void
opts_release(struct opts *o)
{
	if (o == NULL)
		return;
	free(o->args);
	memset(o, 0, sizeof(*o));
}

/* The index of the option called name in o's table, or -1. */
static int
opts_index(const struct opts *o, const char *name)
{
	int value;

	return opts_find(o->table, name, strlen(name), &value);
}

bool
opts_has(const struct opts *o, const char *name)
{
	int k = opts_index(o, name);

	return k >= 0 && o->seen[k];
}

const char *
opts_value(const struct opts *o, const char *name)
{
	int k = opts_index(o, name);

	return k >= 0 ? o->value[k] : NULL;
}
