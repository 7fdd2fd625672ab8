/*
 * agentfield.h - reading the fields the agent CLIs print, for the two
 * walks over their output that need them: the final message and cost
 * (strategies/agentout.c) and the transcript (strategies/transcript*.c).
 * Pure.  docs/agents.md#one-reader-what-storyctl-takes-from-an-attempts-output.
 */
#ifndef STORYCTL_AGENTFIELD_H
#define STORYCTL_AGENTFIELD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The string at key of o when it is not empty, else NULL (borrowed). */
json_t *agentfield_text(json_t *o, const char *key);

/* Whether the string at key of o is want. */
bool agentfield_is(json_t *o, const char *key, const char *want);

/* A token count: a non-negative integer or finite real below 9e18,
 * else -1. */
long long agentfield_count(json_t *v);

/* The input tokens of claude's usage object u: input_tokens with the
 * cache's writes and reads added (what the request really sent), or
 * -1 without input_tokens. */
long long agentfield_claude_input(json_t *u);

/* aider's counts and dollars, the whole of s[0..n): "997", "1,234"
 * (thousands commas skipped), "1.6k", "1.2M", "0.31"; locale-free.
 * -1 when it is none of them. */
double agentfield_amount(const char *s, size_t n);

/* Whether c may be part of such an amount. */
bool agentfield_amount_char(char c);

#endif
