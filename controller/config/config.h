/*
 * config.h - storyctl.json: find it, load it, validate all of
 * it.  docs/configuration.md is the user-facing reference of every key.
 *
 * Validation is strict so that a typo never silently changes a night's
 * behaviour: unknown keys, wrong types and out-of-range values are
 * errors (SC_EDATA) whose message starts with the file name and names
 * the full key path, e.g.
 *   "storyctl.json: unknown key policy.max_atempts (did you mean
 *    max_attempts?)"
 *   "storyctl.json: policy.max_attempts: must be >= 1, got 0"
 *   "storyctl.json:3:15: ..."           (broken JSON: line and column)
 *
 * A struct config owns every pointer in it; config_release() frees them
 * and zeroes the struct.  It is a no-op on a zeroed or released config.
 */
#ifndef STORYCTL_CONFIG_H
#define STORYCTL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/err.h"
#include "common/model.h"
#include "strategies/notifyev.h"
#include "strategies/policy.h"
#include "common/strlist.h"

#define CONFIG_FILE_NAME "storyctl.json"
/* a story id is shorter than this (config_id_valid()) */
#define CONFIG_ID_MAX 128

/* sandbox.enabled: "auto" confines the agent where bubblewrap works
 * and runs it unconfined elsewhere; true makes "cannot confine" an
 * error instead (docs/configuration.md#sandbox). */
enum sandbox_mode { SANDBOX_AUTO = 0, SANDBOX_ON, SANDBOX_OFF };

/* "sandbox", at the top level and per agent
 * (docs/configuration.md#sandbox).  Owns its lists: release with
 * config_sandbox_release(), copy with config_sandbox_copy(). */
struct sandbox_conf {
	enum sandbox_mode enabled; /* default SANDBOX_AUTO */
	bool network; /* default true: agents need their API */
	/* absolute, lexically normalised ("~" expanded, a relative path
	 * made absolute against the root); they need not exist */
	struct strlist writable;
	struct strlist readable;
};

struct agent_conf {
	/* The role is set in the config (or by the defaults). */
	bool configured;
	/* The "name" key, else the preset name, else the base name of
	 * command[0]. */
	char name[64];
	char preset[32]; /* "" when none */
	struct strlist command; /* argv template with {placeholders} */
	/* The preset's full-autonomy argv, used instead of command when
	 * the agent runs confined; empty when the agent has no preset or
	 * its "command" replaced the preset's (that argv is used as is,
	 * inside a sandbox or not). */
	struct strlist command_confined;
	/* The effective setting for this agent: the top-level "sandbox"
	 * with the keys of the agent's own "sandbox" put over it one by
	 * one (a list given replaces the top-level list). */
	struct sandbox_conf sandbox;
	double timeout_s; /* default 3600 */
	/* < 0 = use policy.stall_timeout_s (default -1); 0 = off */
	double stall_timeout_s;
	struct strlist env; /* "KEY=VALUE" strings added to the env */
};

struct story_conf {
	/* relative to root, lexically normalised; owned, and owns id */
	char *file;
	/* at most CONFIG_ID_MAX - 1 bytes, in file's block
	 * (config_story_set_id()); a pointer, not an array, since the
	 * array of a large batch is its largest (192 bytes a story with
	 * the id inside, docs/performance.md#the-rest) */
	const char *id;
	struct strlist depends_on;
	bool include_dependency_result;
	/* its status in stories.sprint_status ("drafted", "ready-for-dev",
	 * ...); "" for a story listed or globbed (docs/stories.md) */
	char sprint_status[24];
};

struct gate_conf {
	char *name; /* default: basename of command[0] */
	struct strlist command;
	double timeout_s; /* default 1800 */
};

struct review_conf {
	struct strlist *agents; /* one argv template per reviewer */
	size_t nagents; /* 0 = no review panel */
	int quorum; /* 1..nagents; default a majority */
	int retries; /* per reviewer, default 2 */
	char *prompt; /* NULL = built-in review prompt */
};

struct breaker_conf {
	int after; /* 0 = off (default 0) */
	double cooldown_s; /* default 1800 */
};

struct budget_conf {
	double max_cost_usd; /* 0 = no limit */
	double story_max_cost_usd;
};

struct git_conf {
	char *state_branch; /* default "storyctl/state" */
	bool commit_work; /* default false */
};

/* verify: what an attempt's claims are checked against
 * (docs/configuration.md#verify, docs/evidence.md) */
struct verify_conf {
	/* boxes checked with no other change make the attempt
	 * incomplete / NO_EVIDENCE; default false */
	bool require_diff;
};

/* One entry of "notify" (docs/notifications.md#configuration). */
struct notify_conf {
	unsigned on; /* the events it wants: bit (1u << enum notify_event) */
	char *webhook; /* http(s) URL, or NULL for a command */
	struct strlist command; /* argv, empty for a webhook */
};

/* executor (docs/configuration.md#executor): where attempts run. */
struct executor_conf {
	bool is_remote; /* kind "remote"; false = "local" (default) */
	char *remote; /* git URL or path (a relative path made absolute) */
	struct strlist launch; /* argv prefix; {story_id} {attempt} */
	struct strlist cancel; /* argv, may be empty; the same placeholders */
};

/* worktree (docs/configuration.md#worktree): what a -j N slot's
 * worktree gets besides its checkout (docs/git-work.md#the-life-of-a-slots-worktree). */
struct worktree_conf {
	struct strlist setup; /* argv run in the worktree; empty: none */
	bool setup_on_create; /* setup_on lists "create" (the default) */
	bool setup_on_switch; /* setup_on lists "switch" */
	struct strlist copy; /* globs of ignored files, relative to the root */
};

/*
 * How the entries of stories.sprint_status found their files
 * (docs/stories.md#bmad-v6-sprint-statusyaml): what init says in one
 * line, what check says when none has one.
 */
struct sprint_found {
	size_t entries; /* story entries in the file */
	size_t listed; /* of them, listed with a file */
	size_t in_sub; /* files in a subfolder of where they were looked for */
	char sub[96]; /* the subfolder most of those are in ("stories/") */
	size_t nsubs; /* in how many subfolders */
	size_t v4; /* files under a BMAD v4 name (1.1.story.md) */
	size_t beside; /* files beside sprint-status.yaml, not story_location */
	size_t farther; /* copies passed over for a nearer one */
	char farther_ex[160]; /* the first of them */
	size_t missing; /* entries without a file (backlog included) */
	size_t backlog; /* of them, backlog */
	size_t renamed; /* of them, with a file of their number, other title */
	size_t ambiguous; /* entries two files match alike: skipped */
	/* why story_location was not used ("" when it was) */
	char location_note[192];
};

struct config {
	/* Absolute path of the config file; NULL for built-in defaults. */
	char *path;
	/* Absolute directory of the config: the project root. */
	char *root;
	/* Explicit entries, then glob matches not already listed, in
	 * sorted order. */
	struct story_conf *stories;
	size_t nstories;
	char *stories_glob; /* stories.glob or stories_glob; NULL: none */
	/* stories.sprint_status: BMAD v6's sprint-status.yaml, relative to
	 * root, normalised; NULL when absent.  Its story entries are
	 * listed after the explicit ones, in its order. */
	char *sprint_status;
	/* entries of sprint_status that are not listed, each "ID: why"
	 * ("2-3-edit: backlog, no story file yet"): run prints them */
	struct strlist stories_skipped;
	/* where the sprint status's files were found, for init and check */
	struct sprint_found sprint_found;
	/* stories.tasks_heading: the heading whose section holds the tasks
	 * (docs/stories.md); NULL = the default rule */
	char *tasks_heading;
	/* stories.include_drafts (or run --include-drafts): a story whose
	 * Status: line says Draft is run too; default false */
	bool include_drafts;
	char *prompt; /* NULL = built-in default prompt */
	struct agent_conf agents[2]; /* indexed by enum role */
	struct policy policy;
	struct gate_conf *gates;
	size_t ngates;
	struct review_conf review;
	struct breaker_conf breaker;
	struct budget_conf budget;
	struct git_conf git;
	char *state_dir; /* absolute; default <root>/.storyctl */
	struct verify_conf verify;
	struct notify_conf *notify; /* "notify": none when nnotify is 0 */
	size_t nnotify;
	struct executor_conf executor;
	struct worktree_conf worktree;
	/* the top-level "sandbox": what an agent without its own gets */
	struct sandbox_conf sandbox;
};

/*
 * Find storyctl.json in start_dir or its nearest parent that has one
 * (like git finds .git).  On success *out_path is a malloc'd absolute
 * path the caller frees.  When there is none: SC_EUSAGE with "no
 * storyctl.json in DIR or any parent directory" (so a command that can
 * work without one, like simulate, can fall back to config_defaults());
 * SC_EOS when start_dir cannot be resolved.
 */
int config_find(char **out_path, const char *start_dir, struct sc_err *err);

/*
 * The storyctl.json a command uses: path when not NULL (-c FILE), else
 * config_find() from the current directory.  *out is the caller's
 * (free()); errors as config_find()'s.
 */
int config_locate(char **out, const char *path, struct sc_err *err);

/*
 * config_load() of config_locate()'s file.  When there is none and
 * optional is true, the built-in defaults (config_defaults(), root =
 * the current directory) instead of SC_EUSAGE.
 */
int config_locate_load(
    struct config *out, const char *path, bool optional, struct sc_err *err);

/*
 * Load and validate path into *out (which must be zeroed or released).
 * On error: SC_EDATA with "FILE:LINE:COLUMN: ..." for broken JSON,
 * "FILE: unknown key policy.max_atempts", "FILE: policy.max_attempts:
 * must be >= 1, got 0" etc.; SC_EDATA too when the file cannot be read
 * or is larger than 4 MiB.  "stories" is an array of entries or an
 * object {"files", "glob", "sprint_status", "tasks_heading",
 * "include_drafts"}.  Expands the sprint status (reads the yaml and
 * looks for each story's file) and the glob relative to root (glob(3),
 * sorted, directories skipped).  Checks ids, duplicates, depends_on
 * (an unknown id with a did-you-mean) and dependency cycles.  Does NOT
 * read story files.  On error *out is left released.
 */
int config_load(struct config *out, const char *path, struct sc_err *err);

/*
 * Built-in defaults with no file: primary preset claude, fallback preset
 * codex, default policy, root = the absolute form of root (which must
 * exist).  Used by `simulate` and `agents` when no config exists.
 */
int config_defaults(struct config *out, const char *root, struct sc_err *err);

/*
 * Reject a dependency cycle among c->stories: SC_EDATA with "dependency
 * cycle: a -> b -> a" (prefixed with the file name when c->path is set).
 * config_load() already calls it; exposed for configs built in code.
 */
int config_check_cycles(const struct config *c, struct sc_err *err);

/* Index of the story with this id in c->stories, or -1. */
int config_story_index(const struct config *c, const char *id);

/*
 * A retry-policy override (docs/api.md#retry-policy) onto *p: the RFC's
 * fields and/or "policy", a partial storyctl.json policy, checked by the
 * config's own rules; what starts every message ("WHAT: KEY: ...").
 * SC_EDATA with the message when the body is not acceptable (p may then
 * be partly changed).  The pattern lists and the keys read when an
 * attempt starts are refused, so p never needs a release of its own.
 */
int config_policy_override(struct policy *p, const struct config *c,
    json_t *body, const char *what, struct sc_err *err);
/* c's policy with the stored batch and story override bodies (either
 * NULL) applied, the story's last.  On error *out is c's policy. */
int config_policy_effective(struct policy *out, const struct config *c,
    const char *batch_body, const char *story_body, struct sc_err *err);

/* Whether s is a valid story id: [A-Za-z0-9][A-Za-z0-9._-]*, < 128 bytes. */
bool config_id_valid(const char *s);

void config_release(struct config *c); /* no-op on zeroed */

/* The default sandbox setting: "auto", network on, no paths. */
void config_sandbox_init(struct sandbox_conf *s);
/* Deep copy of src into dst (dst is overwritten, not released first).
 * 0, or -1 when out of memory (dst then released). */
int config_sandbox_copy(
    struct sandbox_conf *dst, const struct sandbox_conf *src);
/* Free the lists and reset to config_sandbox_init()'s default. */
void config_sandbox_release(struct sandbox_conf *s);

/*
 * A sandbox path as the config spells it made absolute and lexically
 * normalised: "~" and "~/..." are under home (NULL or "" is an error),
 * a relative path is under root, "." and ".." are resolved without
 * looking at the file system.  SC_EDATA with a message that names no
 * key ("~ needs $HOME, which is not set") when in cannot be made one,
 * SC_EOS when out of memory; *out is then NULL.  The loader's own
 * expansion; exposed so that a preset's state paths ("~/.claude/")
 * are expanded by the same rules.
 */
int config_sandbox_path(char **out, const char *in, const char *root,
    const char *home, struct sc_err *err);

#endif
