/*
 * config_int.h - what the config_*.c files share: the loader and its
 * getters.
 *
 * The loader walks the JSON tree section by section.  Every object is
 * first checked against its list of allowed keys (so a typo is an error
 * naming the full key path), then each key is read with a getter that
 * checks the type and the range and leaves the default in place when the
 * key is absent.  Messages are "FILE: KEY: what is wrong".
 */
#ifndef STORYCTL_CONFIG_INT_H
#define STORYCTL_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "controller/config/config.h"

#define CONFIG_MAX_BYTES (4 * 1024 * 1024)
#define KEY_MAX 512
/* Upper bound of every duration: keeps conversions to ms in range. */
#define SECONDS_MAX 1e9
/* The shortest timeout_s of an agent or a gate: below a millisecond the
 * runner's limit rounded to 0, which means no limit at all, and nothing
 * can start, let alone finish, in less than this anyway
 * (docs/configuration.md). */
#define TIMEOUT_MIN_S 0.1
#define MS_MAX 1000000000000LL
#define USD_MAX 1e9
/* timeout_s x factor x 1000 must stay far inside int64 milliseconds. */
#define FACTOR_MAX 100

struct loader {
	const char *file; /* the config path as given: starts every message */
	struct sc_err *err;
};

/* config_json.c */
/* "FILE: KEY: message" (or "FILE: message" when key is NULL) into
 * ld->err; returns SC_EDATA. */
int config_fail(struct loader *ld, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int config_fail_nomem(struct loader *ld);
void config_key_join(char *buf, const char *parent, const char *key);
void config_key_index(char *buf, const char *parent, size_t i);
const char *config_type_word(const json_t *v);
int config_wrong_type(
    struct loader *ld, const char *key, const char *want, const json_t *v);
/* s fit for a message: text_clean()'s visible text, a control or an
 * escape a space, a byte that is not UTF-8 a '?'. */
void config_shown(char *dst, size_t cap, const char *s);
int config_check_keys(struct loader *ld, json_t *obj, const char *path,
    const char *const *allowed);
int config_get_number(struct loader *ld, json_t *obj, const char *path,
    const char *name, double *out, double min, double max, bool min_open);
int config_get_integer(struct loader *ld, json_t *obj, const char *path,
    const char *name, long long *out, long long min, long long max);
int config_get_int(struct loader *ld, json_t *obj, const char *path,
    const char *name, int *out, int min, int max);
int config_get_bool(struct loader *ld, json_t *obj, const char *path,
    const char *name, bool *out);
int config_get_string(struct loader *ld, json_t *obj, const char *path,
    const char *name, char **out);
int config_parse_strings(struct loader *ld, json_t *v, const char *key,
    struct strlist *out, bool nonempty_list, bool nonempty_items);
int config_get_strings(struct loader *ld, json_t *obj, const char *path,
    const char *name, struct strlist *out);
int config_parse_argv(
    struct loader *ld, json_t *v, const char *key, struct strlist *out);
int config_want_object(struct loader *ld, json_t *v, const char *key);

/* config_sandbox.c */
/* The top-level "sandbox" into c->sandbox (read before "agents"). */
int config_parse_sandbox(struct loader *ld, json_t *v, struct config *c);
/* An agent's effective setting into *out (released first): a copy of
 * c->sandbox with the keys of v, the agent's "sandbox" at path (NULL:
 * none), put over it. */
int config_agent_sandbox(struct loader *ld, json_t *v, const char *path,
    const struct config *c, struct sandbox_conf *out);

/* config_agents.c */
void config_agent_init(struct agent_conf *a);
void config_agent_release(struct agent_conf *a);
void config_preset_names(char *buf, size_t cap);
int config_agents_default(struct config *c);
int config_parse_agents(struct loader *ld, json_t *v, struct config *c);

/* config_policy.c */
int config_parse_policy(struct loader *ld, json_t *v, struct policy *p);
int config_parse_gates(struct loader *ld, json_t *v, struct config *c);
int config_parse_review(struct loader *ld, json_t *v, struct review_conf *r);
int config_parse_small_sections(
    struct loader *ld, json_t *root, struct config *c);

/* config_worktree.c */
int config_parse_worktree(struct loader *ld, json_t *v, struct config *c);
void config_worktree_release(struct worktree_conf *w);

/* config_executor.c (after the agents: it checks their templates) */
int config_parse_executor(struct loader *ld, json_t *v, struct config *c);
void config_executor_release(struct executor_conf *e);

/* config_stories.c */
/* Lexically normalise a path relative to the root; -1 when it leaves
 * the root, -2 when out of memory. */
int config_path_normalize(char **out, const char *in);
struct story_conf *config_story_add(struct config *c, size_t *alloc);
/* s->id = the first len bytes of id, cut below CONFIG_ID_MAX, copied
 * into one block with s->file (which must be set: s->file owns the
 * block, s->id points into it); -1 when out of memory */
int config_story_set_id(struct story_conf *s, const char *id, size_t len);
int config_story_find_file(const struct config *c, const char *file);
int config_parse_stories(struct loader *ld, json_t *root, struct config *c);

/* config_sprint.c */
int config_expand_sprint(struct loader *ld, struct config *c, size_t *alloc);

/* config_notify.c */
int config_parse_notify(struct loader *ld, json_t *v, struct config *c);
void config_notify_release(struct config *c);

/* config.c */
int config_read_file(struct loader *ld, const char *key, const char *shown,
    const char *path, char **out, size_t *out_len);

#endif
