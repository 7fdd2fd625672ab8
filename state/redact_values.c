/*
 * redact_values.c - see redact.h: the secrets redacted by value
 * (docs/reliability.md#redaction): the set, which names and values are
 * worth it, and one Aho-Corasick automaton over all the values, so the
 * text is walked once however many there are.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "state/redact.h"
#include "state/redact_int.h"
#include "strategies/text.h"

/* One node of the automaton over the values: a trie of their bytes
 * with Aho-Corasick failure links. */
struct rv_node {
	int child; /* first child, -1 none */
	int sibling; /* next child of the same parent, -1 none */
	int fail; /* the longest proper suffix that is in the trie */
	int out; /* the longest value ending here, -1 none */
	unsigned char c;
};

struct redact_values {
	char **names; /* cleaned, for the marker */
	char **values;
	size_t *lens;
	size_t n, alloc;
	struct rv_node *nodes; /* [0] is the root */
	size_t nn;
};

#define RV_NAME_MAX 64

struct redact_values *
redact_values_new(void)
{
	return calloc(1, sizeof(struct redact_values));
}

void
redact_values_free(struct redact_values *rv)
{
	size_t i;

	if (rv == NULL)
		return;
	for (i = 0; i < rv->n; i++) {
		/* the value is a secret: do not leave it in freed memory */
		explicit_bzero(rv->values[i], rv->lens[i]);
		free(rv->values[i]);
		free(rv->names[i]);
	}
	free(rv->names);
	free(rv->values);
	free(rv->lens);
	free(rv->nodes);
	free(rv);
}

size_t
redact_values_count(const struct redact_values *rv)
{
	return rv != NULL ? rv->n : 0;
}

/* name contains word (lowercase), any case */
static bool
contains_ci(const char *name, const char *word, size_t *at)
{
	size_t n = strlen(name), w = strlen(word), i;

	for (i = 0; i + w <= n; i++)
		if (redact_has_suffix_ci(name + i, w, word)) {
			*at = i;
			return true;
		}
	return false;
}

bool
redact_name_secret(const char *name)
{
	static const char *const words[] = {
	    "key", "token", "secret", "password", "passwd", "credential"};
	size_t k, at, n = strlen(name);

	for (k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (contains_ci(name, words[k], &at))
			return true;
	/* AUTH, but not as in GIT_AUTHOR_NAME: a name, not a secret;
	 * AUTHORIZATION and AUTHORISATION are secrets */
	for (at = 0; at + 4 <= n; at++)
		if (redact_has_suffix_ci(name + at, 4, "auth") &&
		    !(at + 6 <= n &&
			redact_has_suffix_ci(name + at + 4, 2, "or") &&
			!(at + 8 <= n &&
			    (redact_has_suffix_ci(name + at + 6, 2, "iz") ||
				redact_has_suffix_ci(name + at + 6, 2, "is")))))
			return true;
	return false;
}

bool
redact_value_worth(const char *value)
{
	static const char *const common[] = {"disabled", "enabled", "undefined",
	    "production", "development", "localhost", "true", "false"};
	size_t n = strlen(value), k, digits = 0, i;

	if (n < REDACT_VALUE_MIN)
		return false;
	for (i = 0; i < n; i++)
		digits += text_is_digit((unsigned char)value[i]) ? 1 : 0;
	if (digits == n)
		return false;
	for (k = 0; k < sizeof(common) / sizeof(common[0]); k++)
		if (redact_equals_ci(value, n, common[k]))
			return false;
	return true;
}

static int
rv_child(const struct redact_values *rv, int u, unsigned char c)
{
	int v;

	for (v = rv->nodes[u].child; v >= 0; v = rv->nodes[v].sibling)
		if (rv->nodes[v].c == c)
			return v;
	return -1;
}

/* The automaton over rv's values, built again from the start: a few
 * dozen values at start-up, each a few dozen bytes. */
static int
rv_build(struct redact_values *rv)
{
	size_t total = 1, k, j, head = 0, tail = 0;
	int *queue = NULL, u, v, f, c;
	int rc = SC_EOS;

	for (k = 0; k < rv->n; k++)
		total += rv->lens[k];
	free(rv->nodes);
	rv->nn = 1;
	rv->nodes = malloc(total * sizeof(*rv->nodes));
	queue = malloc(total * sizeof(*queue));
	if (rv->nodes == NULL || queue == NULL)
		goto out;
	rv->nodes[0] = (struct rv_node){-1, -1, 0, -1, 0};
	for (k = 0; k < rv->n; k++) {
		for (u = 0, j = 0; j < rv->lens[k]; j++) {
			unsigned char b = (unsigned char)rv->values[k][j];

			if ((v = rv_child(rv, u, b)) < 0) {
				v = (int)rv->nn++;
				rv->nodes[v] = (struct rv_node){
				    -1, rv->nodes[u].child, 0, -1, b};
				rv->nodes[u].child = v;
			}
			u = v;
		}
		if (rv->nodes[u].out < 0)
			rv->nodes[u].out = (int)k;
	}
	/* breadth first: a node's failure link is found from its parent's */
	for (v = rv->nodes[0].child; v >= 0; v = rv->nodes[v].sibling)
		queue[tail++] = v;
	while (head < tail) {
		u = queue[head++];
		for (v = rv->nodes[u].child; v >= 0; v = rv->nodes[v].sibling) {
			c = rv->nodes[v].c;
			f = rv->nodes[u].fail;
			while (f != 0 && rv_child(rv, f, (unsigned char)c) < 0)
				f = rv->nodes[f].fail;
			f = rv_child(rv, f, (unsigned char)c);
			rv->nodes[v].fail = f >= 0 && f != v ? f : 0;
			if (rv->nodes[v].out < 0)
				rv->nodes[v].out =
				    rv->nodes[rv->nodes[v].fail].out;
			queue[tail++] = v;
		}
	}
	rc = 0;
out:
	free(queue);
	return rc;
}

int
redact_values_add(struct redact_values *rv, const char *name, const char *value,
    struct sc_err *err)
{
	char *v = NULL, *nm = NULL;
	size_t n, i, k = 0;
	int rc = 0;

	if (!redact_value_worth(value))
		goto out;
	/* matched against the text as it is stored: cleaned the same way */
	n = strlen(value);
	if ((v = malloc(n + 1)) == NULL || (nm = malloc(RV_NAME_MAX)) == NULL)
		goto oom;
	n = text_clean(
	    v, n + 1, value, n, TEXT_KEEP_NL | TEXT_MARK_INVALID, NULL);
	if (n < REDACT_VALUE_MIN)
		goto out;
	for (i = 0; i < rv->n; i++)
		if (rv->lens[i] == n && memcmp(rv->values[i], v, n) == 0)
			goto out; /* the first name it was found under */
	for (i = 0; name[i] != '\0' && k + 1 < RV_NAME_MAX; i++)
		if (redact_is_word((unsigned char)name[i]) || name[i] == '.')
			nm[k++] = name[i];
	nm[k] = '\0';
	if (rv->n == rv->alloc) {
		size_t na = rv->alloc ? rv->alloc * 2 : 8;
		char **nn = realloc(rv->names, na * sizeof(*nn));
		char **nv;
		size_t *nl;

		if (nn == NULL)
			goto oom;
		rv->names = nn;
		if ((nv = realloc(rv->values, na * sizeof(*nv))) == NULL)
			goto oom;
		rv->values = nv;
		if ((nl = realloc(rv->lens, na * sizeof(*nl))) == NULL)
			goto oom;
		rv->lens = nl;
		rv->alloc = na;
	}
	rv->names[rv->n] = nm;
	rv->values[rv->n] = v;
	rv->lens[rv->n] = n;
	rv->n++;
	nm = v = NULL;
	if (rv_build(rv) < 0)
		goto oom;
	goto out;
oom:
	rc =
	    err_set(err, SC_EOS, "out of memory keeping the secrets to redact");
out:
	if (v != NULL)
		explicit_bzero(v, strlen(v));
	free(v);
	free(nm);
	return rc;
}

static void
put_value_mark(struct strbuf *b, const struct redact_values *rv, int k)
{
	strbuf_addf(b, "[REDACTED %s]", rv->names[k]);
}

/*
 * Every value of rv in s[0..len) replaced by its mark, into b.  One
 * walk of the automaton: each byte is one move forward and pays for at
 * most one failure move later, so *steps <= 2 * len.  Overlapping
 * matches are redacted as their union (one mark a disjoint run).
 */
void
redact_values_pass(struct strbuf *b, const struct redact_values *rv,
    const char *s, size_t len, size_t *steps)
{
	size_t i, copied = 0, ps = 0, pe = 0, st;
	int u = 0, v, pk = -1, k;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		while (u != 0 && (v = rv_child(rv, u, c)) < 0) {
			u = rv->nodes[u].fail;
			(*steps)++;
		}
		v = rv_child(rv, u, c);
		u = v >= 0 ? v : 0;
		(*steps)++;
		if ((k = rv->nodes[u].out) < 0)
			continue;
		st = i + 1 - rv->lens[k];
		if (pk >= 0 && st < pe) { /* overlaps the pending match */
			ps = st < ps ? st : ps;
			pe = i + 1;
			continue;
		}
		if (pk >= 0) {
			strbuf_add(b, s + copied, ps - copied);
			put_value_mark(b, rv, pk);
			copied = pe;
		}
		pk = k;
		ps = st < copied ? copied : st;
		pe = i + 1;
	}
	if (pk >= 0) {
		ps = ps < copied ? copied : ps;
		strbuf_add(b, s + copied, ps - copied);
		put_value_mark(b, rv, pk);
		copied = pe;
	}
	strbuf_add(b, s + copied, len - copied);
}
