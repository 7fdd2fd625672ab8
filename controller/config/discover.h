/*
 * discover.h - where `storyctl init` finds a repository's stories, and
 * in which layout (docs/stories.md "Discovery"): BMAD v6 (a
 * sprint-status.yaml where _bmad/bmm/config.yaml or BMAD's defaults put
 * it, or v4-named files in a v6 folder), BMAD v4
 * (docs/stories/N.M.story.md, or its core-config.yaml's
 * devStoryLocation), or the plain *.md files of docs/stories.
 */
#ifndef STORYCTL_DISCOVER_H
#define STORYCTL_DISCOVER_H

#include "common/err.h"
#include "common/strlist.h"

enum layout {
	LAYOUT_PLAIN,
	LAYOUT_BMAD_V4,
	LAYOUT_BMAD_V6,
};

struct discovery {
	enum layout layout;
	/* BMAD v6: the sprint-status.yaml, relative to the directory */
	char *sprint_status;
	/* BMAD v4 or v6 without a sprint status, or plain with no story
	 * file yet: the stories_glob */
	char *glob;
	/* plain: the *.md files of docs/stories, listed one by one; BMAD
	 * v4 or v6 without a sprint status: the v4-named files, listed when
	 * a glob cannot take them all (2.6-story.md beside 1.1.story.md) */
	struct strlist files;
	/* beside files: the id a file gets ("2.6" for 2.6-story.md), ""
	 * when its name gives it (docs/stories.md "Ids") */
	struct strlist ids;
	/* what told it, for init's message ("" for plain) */
	char from[256];
	/* why there: "implementation_artifacts in _bmad/bmm/config.yaml",
	 * "BMAD's default place" ("" for plain) */
	char source[256];
	/* what was passed over and why ("" when nothing): other
	 * sprint-status.yaml files, files that are not stories */
	char passed[640];
	size_t npassed; /* how many things passed contains or counts */
};

/*
 * Look at the current directory (init runs there).  Never fails for
 * want of stories: plain with a glob of docs/stories then.  SC_EOS
 * when out of memory; a BMAD v4 core-config.yaml or v6
 * _bmad/bmm/config.yaml that cannot be read or parsed is passed over
 * (the default places are used).
 */
int discover_stories(struct discovery *out, struct sc_err *err);

void discovery_release(struct discovery *d); /* no-op on zeroed */

/* "BMAD v6", "BMAD v4", "plain" */
const char *layout_name(enum layout l);

#endif
