/*
 * serve_policy.h - the retry-policy routes of the service
 * (docs/api.md#retry-policy): GET, PUT and DELETE of the batch's override
 * (/v1/retry-policy) and of one story's (/v1/stories/ID/retry-policy).
 */
#ifndef STORYCTL_SERVE_POLICY_H
#define STORYCTL_SERVE_POLICY_H

#include <stddef.h>

#include <jansson.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"

/* Answer method (GET, HEAD, PUT or DELETE) on the batch's policy (id
 * NULL) or story id's, with the request body (PUT) and the name of the
 * key that sent it.  *out: the JSON to send (an error object when
 * *status is not 200), the caller's.  Returns 0, or SC_EOS when no
 * answer could be built. */
int serve_policy_answer(json_t **out, int *status, const struct cli *cli,
    const char *method, const char *id, const char *body, size_t len,
    const char *key_name);

/* The body of a PUT (len bytes, NUL bytes refused) checked onto the
 * policy it overrides: c's with batch_body (the stored batch override, for
 * a story's PUT; NULL for the batch's own, which replaces it) applied.
 * No I/O: tests/fuzz/fuzz_policy_body.c drives it.  0 with *stored the
 * body to store (compact, keys sorted; the caller's to free) and *p the
 * effective policy; else SC_EDATA with *status 400 (not JSON), 422 (the
 * config's rules refuse it) or 500 (out of memory) and the message in
 * msg. */
int serve_policy_check(char **stored, struct policy *p, int *status, char *msg,
    size_t msglen, const struct config *c, const char *batch_body,
    const char *body, size_t len);

#endif
