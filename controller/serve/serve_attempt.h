/*
 * serve_attempt.h - one attempt's transcript and diff over HTTP
 * (docs/api.md#attempts).
 */
#ifndef STORYCTL_SERVE_ATTEMPT_H
#define STORYCTL_SERVE_ATTEMPT_H

#include <stdbool.h>

#include "controller/cli/cli.h"
#include "controller/optlib_mhd.h"

/* Answer GET /v1/stories/ID/attempts/N/transcript (diff false) or
 * .../diff on c: 200 with the JSON or text, 404 for a story, attempt,
 * log or diff there is none of, 500 when the record cannot be read. */
enum MHD_Result serve_attempt(struct MHD_Connection *c, const struct cli *cli,
    const char *id, int attempt, bool diff);

#endif
