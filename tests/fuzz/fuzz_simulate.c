/*
 * fuzz_simulate.c - libFuzzer target for simulate_run(): the tokens of
 * `storyctl simulate` through decide() with the default policy.
 *
 * Input: 1 header byte, then the tokens separated by whitespace (or NUL).
 *   byte 0: bit 0 has_fallback, bits 1-2 the strategy (adaptive, retry,
 *           none, adaptive), bits 3-7 tasks_total - 1 (1..32)
 * Checks simulate.h's promises: at most one row per token, attempt
 * numbers >= 1, a row's role is one of the two, and only the last row
 * may hold a terminal decision.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/simulate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
terminal(enum decision d)
{
	return d == DECISION_DONE || d == DECISION_DEFER ||
	    d == DECISION_ESCALATE;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum strategy_kind strategies[] = {STRATEGY_ADAPTIVE,
	    STRATEGY_RETRY, STRATEGY_NONE, STRATEGY_ADAPTIVE};
	struct policy pol;
	struct sim_opts o;
	struct sim_row *rows = NULL;
	struct sc_err err;
	const char **toks = NULL;
	char *buf = NULL;
	size_t i, n = 0, ntok = 0, len;
	int rc;

	if (size < 1)
		return 0;
	len = size - 1;
	buf = malloc(len + 1);
	/* at most one token per two bytes, plus one */
	toks = malloc((len / 2 + 1) * sizeof(*toks));
	if (buf == NULL || toks == NULL)
		goto out;
	memcpy(buf, data + 1, len);
	buf[len] = '\0';
	for (i = 0; i < len; i++) {
		if (buf[i] == '\0' || isspace((unsigned char)buf[i])) {
			buf[i] = '\0';
			continue;
		}
		if (i == 0 || buf[i - 1] == '\0')
			toks[ntok++] = buf + i;
	}

	policy_init_default(&pol);
	pol.strategy = strategies[(data[0] >> 1) & 3];
	memset(&o, 0, sizeof(o));
	o.policy = &pol;
	o.has_fallback = (data[0] & 1) != 0;
	o.tasks_total = 1 + (data[0] >> 3);
	memset(&err, 0, sizeof(err));
	rc = simulate_run(&rows, &n, &o, toks, ntok, &err);
	policy_release(&pol);
	if (rc < 0) {
		if (rows != NULL || n != 0 || err.msg[0] == '\0')
			abort();
		goto out;
	}
	if (n > ntok || (ntok > 0 && n == 0))
		abort();
	for (i = 0; i < n; i++) {
		if (rows[i].attempt < 1 ||
		    (rows[i].role != ROLE_PRIMARY &&
			rows[i].role != ROLE_FALLBACK))
			abort();
		if (!o.has_fallback && rows[i].role != ROLE_PRIMARY)
			abort();
		if (terminal(rows[i].d.decision) && i + 1 != n)
			abort();
		if (memchr(rows[i].d.reason, '\0', sizeof(rows[i].d.reason)) ==
		    NULL)
			abort();
	}
	if (n < ntok && !terminal(rows[n - 1].d.decision))
		abort();
out:
	free(rows);
	free(toks);
	free(buf);
	return 0;
}
