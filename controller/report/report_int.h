/*
 * report_int.h - what the report's renderers share (report_html.c,
 * report_svg.c, report_md.c): reading the model, the rule for what
 * needs a person and the commands offered for it.  Not an interface:
 * controller/report/report.h is.
 */
#ifndef STORYCTL_REPORT_INT_H
#define STORYCTL_REPORT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "common/err.h"

/* An ISO 8601 UTC time of the model ("2026-11-24T21:05:09Z") in ms;
 * 0 for null or anything else. */
int64_t report_time_ms(const json_t *t);
/* The string member key of o, or "" (never NULL). */
const char *report_str(const json_t *o, const char *key);
/* The integer member key of o, or 0. */
int64_t report_int(const json_t *o, const char *key);

/* Where a story that needs a person stands in the list of them (lower
 * first: escalated, deferred, blocked, invalid), or -1 when the status
 * needs nobody (docs/report.md#needs-you). */
int report_needs_rank(const char *status);
/* The storyctl commands offered for a story of that status, at most
 * REPORT_ACTIONS_MAX, each "storyctl VERB ID" in buf[i]; returns their
 * count. */
#define REPORT_ACTIONS_MAX 3
int report_actions(
    char buf[REPORT_ACTIONS_MAX][200], const char *status, const char *id);
/* The stories of model that need a person, in the order of
 * report_needs_rank() then the batch's: *out is a new array (the
 * caller's) of borrowed references' copies. */
json_t *report_needs(const json_t *model);

/* The evidence flags of attempt a in words ("ticked 2 boxes without
 * changing another file; ...") into buf; returns how many flags
 * (docs/evidence.md).  0 and "" when none. */
int report_flag_text(char *buf, size_t len, const json_t *a);
/* Call fn for every flagged attempt a of every story s of model, in
 * the batch's order, with the flags in words and how many came before;
 * returns how many there were. */
typedef void (*report_flag_fn)(
    void *ctx, const json_t *s, const json_t *a, const char *why, int n);
int report_each_flag(const json_t *model, report_flag_fn fn, void *ctx);
/* Attempt a's change besides the story file, "3 files +40 -2", or ""
 * when it was not measured. */
void report_fmt_change(char *buf, size_t len, const json_t *a);

/* Write s to f escaped for HTML text and attribute values. */
void report_put_html(FILE *f, const char *s);
/* A duration for people: "850ms", "42s", "3m05s", "2h10m". */
void report_fmt_ms(char *buf, size_t len, int64_t ms);

/* Write s to f as text of a markdown table cell: '|' escaped, control
 * characters as spaces, so agent text cannot break the table. */
void report_put_md(FILE *f, const char *s);

/* The telemetry section (report_stats.c, docs/report.md). */
void report_stats_html(FILE *f, const json_t *model);
void report_stats_md(FILE *f, const json_t *model);

/* The timeline of model as inline SVG (docs/report.md#timeline). */
void report_svg(FILE *f, const json_t *model);

/* report_attempts.c (docs/report.md#attempts). */
struct config;
struct story_record;
struct redact_values;
/* Into each attempt of story (show --json's object of record r): the
 * end of its transcript ("transcript", "transcript_omitted") and its
 * diff ("diff", "diff_cut"), or why there is none ("transcript_why",
 * "diff_why"), redacted with rv.  SC_EOS. */
int report_attempts_embed(json_t *story, const struct config *cfg,
    const struct story_record *r, const struct redact_values *rv,
    struct sc_err *err);
/* The links of attempt k of story number story to its two parts. */
void report_attempt_links(FILE *f, size_t story, size_t k);
/* The Attempts section: each attempt's transcript and diff, as the
 * model holds them (empty for the live page, whose script fetches
 * them). */
void report_attempts_html(FILE *f, const json_t *model);

#endif
