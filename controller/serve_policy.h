/*
 * serve_policy.h - the retry-policy routes of the service
 * (docs/api.md#retry-policy): GET, PUT and DELETE of the batch's override
 * (/v1/retry-policy) and of one story's (/v1/stories/ID/retry-policy).
 */
#ifndef STORYCTL_SERVE_POLICY_H
#define STORYCTL_SERVE_POLICY_H

#include <stddef.h>

#include <jansson.h>

#include "controller/cli.h"

/* Answer method (GET, HEAD, PUT or DELETE) on the batch's policy (id
 * NULL) or story id's, with the request body (PUT) and the name of the
 * key that sent it.  *out: the JSON to send (an error object when
 * *status is not 200), the caller's.  Returns 0, or SC_EOS when no
 * answer could be built. */
int serve_policy_answer(json_t **out, int *status, const struct cli *cli,
    const char *method, const char *id, const char *body, size_t len,
    const char *key_name);

#endif
