/*
 * serve_failures.h - the failure records of the service
 * (docs/api.md#failure-records): GET /v1/stories/ID/failures, a story's
 * failed attempts and the failures reported from outside as reference
 * 003's failure records; POST of the same path, a failure found outside
 * storyctl (a done story goes back to pending); and
 * POST /v1/stories/ID/requeue (docs/api.md#requeue), as
 * `storyctl requeue`.
 */
#ifndef STORYCTL_SERVE_FAILURES_H
#define STORYCTL_SERVE_FAILURES_H

#include <stddef.h>

#include <jansson.h>

#include "controller/cli/cli.h"

/* Answer method (GET, HEAD or POST) on story id's failures, with the
 * request body (POST) and the name of the key that sent it.  *out: the
 * JSON to send (an error object unless *status is 200 or 201), the
 * caller's.  Returns 0, or SC_EOS when no answer could be built. */
int serve_failures_answer(json_t **out, int *status, const struct cli *cli,
    const char *method, const char *id, const char *body, size_t len,
    const char *key_name);

/* Answer POST /v1/stories/ID/requeue: 200 with the story's show JSON,
 * 404, or 409 when the story cannot be requeued (the command's
 * message).  As serve_failures_answer() otherwise. */
int serve_requeue_answer(
    json_t **out, int *status, const struct cli *cli, const char *id);

#endif
