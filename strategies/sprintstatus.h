/*
 * sprintstatus.h - BMAD v6's sprint-status.yaml (docs/stories.md "BMAD
 * v6"): the stories of its development_status map, in the file's
 * order, with their statuses, and where their files are.  Pure: parsed
 * with libyaml from a buffer the caller read.
 *
 * development_status mixes epics, stories and retrospectives:
 *     epic-1: in-progress
 *     1-1-user-auth: done
 *     1-2-account-page: ready-for-dev
 *     epic-1-retrospective: optional
 * Only story entries are kept: not "epic-N", not "...-retrospective"
 * (BMAD's own sprint-status workflow classifies keys the same way).  A
 * value that is not a plain scalar (a nested map, a list, an alias) is
 * not a story entry either.
 */
#ifndef STORYCTL_SPRINTSTATUS_H
#define STORYCTL_SPRINTSTATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct sprint_entry {
	char *key; /* "1-1-user-auth": the story's id and file name */
	char *status; /* "backlog", "drafted", "ready-for-dev", ... */
};

struct sprint_status {
	/* the story_location key as written ("{project-root}/..." kept);
	 * NULL when absent or not a string */
	char *story_location;
	struct sprint_entry *entries; /* story entries, in file order */
	size_t n;
};

/*
 * Parse the len bytes at text into *out (zeroed first; release with
 * sprint_status_release()).  SC_EDATA when the YAML is broken ("line
 * 12, column 3: could not find expected ':'"), when the document is not
 * a map, or has no development_status map; SC_EOS when out of memory.
 * *out is released on error.
 */
int sprint_status_parse(struct sprint_status *out, const char *text, size_t len,
    struct sc_err *err);

void sprint_status_release(struct sprint_status *s); /* no-op on zeroed */

/* Whether a development_status key names a story (see above). */
bool sprint_status_is_story_key(const char *key);

/*
 * Story file names (docs/stories.md#bmad-v6-sprint-statusyaml).  A
 * story's number is the run of numbers its name starts with, each
 * followed by '.' or '-' and the next number, joined with dots and
 * without leading zeros: the key "1-1-user-auth" is 1.1, "3-2-1-api"
 * is 3.2.1, the files "1.1.story.md" and "01-01.md" are 1.1.  Fewer
 * than two numbers is no number.
 */
#define STORY_NUMBER_MAX 32

/* The number of a development_status key into buf (STORY_NUMBER_MAX
 * bytes); false when it has none. */
bool sprint_key_number(char *buf, const char *key);

enum story_name {
	STORY_NAME_OTHER, /* no number, or not a .md file */
	/* BMAD v4's names, the number alone: 1.1.story.md, 1.1.md,
	 * 2.6-story.md, 1.1_story.md, 1-1.md, 1-1.story.md ("story" in
	 * any case) */
	STORY_NAME_V4,
	/* a number and a title, as v6 names its files: 1-5-login.md */
	STORY_NAME_NUMBERED,
};

/* What a file name (no directory) says of its number, the number into
 * buf (STORY_NUMBER_MAX bytes; "" for STORY_NAME_OTHER). */
enum story_name story_name_number(char *buf, const char *name);

enum sprint_match {
	SPRINT_MATCH_NONE,
	SPRINT_MATCH_EXACT, /* "<key>.md" */
	SPRINT_MATCH_V4, /* a v4 name with the key's number: 1.1.story.md */
	/* a v6 name with the key's number and another title: not the
	 * entry's file, but worth naming when it has none */
	SPRINT_MATCH_NUMBER,
};

/* How the file name (no directory) relates to a development_status
 * key: "1-1-user-auth" is matched exactly by "1-1-user-auth.md", by
 * the v4 names "1.1.story.md", "1.1.md", "1.1-story.md", "1-1.md", and
 * by number only by "1-1-login.md". */
enum sprint_match sprint_name_match(const char *key, const char *name);

/*
 * The string value of key in the top-level map of a YAML document
 * (BMAD v4's .bmad-core/core-config.yaml: devStoryLocation), malloc'd
 * into *out; *out NULL when the key is absent or its value is not a
 * scalar.  SC_EDATA when the YAML is broken or not a map, SC_EOS when
 * out of memory.
 */
int yaml_top_scalar(char **out, const char *text, size_t len, const char *key,
    struct sc_err *err);

#endif
