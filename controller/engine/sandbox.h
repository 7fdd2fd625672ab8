/*
 * sandbox.h - agents confined to their tree (docs/sandbox.md): whether
 * bubblewrap works here, the seccomp program, and one attempt's sandbox
 * from its private git dir to the branch taken back.
 *
 * The mounts are strategies/confine.h's, the private git dir
 * state/gitsandbox.h's; this file finds out what exists (bubblewrap,
 * the secrets under $HOME, the CLI's state directories) and puts the
 * two together around an attempt.
 */
#ifndef STORYCTL_SANDBOX_H
#define STORYCTL_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "common/strlist.h"
#include "controller/config/config.h"
#include "state/gitsandbox.h"

/* What this machine offers, found once per process (sandbox_probe()). */
struct sandbox_host {
	bool works; /* bubblewrap found and a sandbox started */
	char *bwrap; /* its path, NULL when not found */
	/* when !works: why, in one line ("bubblewrap (bwrap) not found in
	 * PATH", "bwrap: No permissions to create new namespace ...") */
	char why[320];
	unsigned char *bpf; /* the seccomp program, bpf_len bytes */
	size_t bpf_len;
};

/*
 * Find bubblewrap in PATH and start one empty sandbox with the mounts
 * and namespaces an attempt uses: h->works says whether it ran, h->why
 * why not.  Negative only when out of memory or the seccomp program
 * cannot be built (SC_EOS).  Release with sandbox_host_release().
 */
int sandbox_probe(struct sandbox_host *h, struct sc_err *err);
void sandbox_host_release(struct sandbox_host *h); /* no-op on zeroed */

/*
 * Whether an agent with sandbox setting c is confined on host h (h NULL:
 * never).  enabled true where it cannot work is SC_EUNAVAIL, naming the
 * agent and h->why (docs/sandbox.md#where-it-cannot-work).
 */
int sandbox_decide(bool *confined, const struct sandbox_host *h,
    const struct sandbox_conf *c, const char *agent, struct sc_err *err);

/*
 * sandbox_decide() for each configured role of cfg into confined[]
 * (indexed by enum role).  *line gets the one line `check` and `run`
 * print when some agent wanted "auto" and no sandbox can start here, ""
 * otherwise.  SC_EUNAVAIL as sandbox_decide().
 */
int sandbox_decide_roles(bool confined[2], char *line, size_t len,
    const struct sandbox_host *h, const struct config *cfg, struct sc_err *err);

/* One confined attempt. */
struct sandbox_run {
	struct gitsandbox gs;
	bool has_git; /* the tree is a git work tree: gs is filled */
	int seccomp_fd; /* > 2 while open: runner_opts.keep_fd */
};

struct sandbox_req {
	const struct sandbox_host *host;
	const struct sandbox_conf *conf;
	const char *preset; /* the agent's preset name, "" for none */
	const char *home; /* the agent's $HOME, NULL when unset */
	const char *tree; /* the attempt's tree, absolute */
	const char *cwd; /* where the agent starts; NULL = tree */
	const char *state_dir; /* absolute */
	const char *private_dir; /* its private git dir, under state_dir */
	const char *const *shown; /* files under state_dir it reads */
	size_t nshown;
	const struct strlist *env; /* the agent's own env entries */
};

/*
 * Confine agent argv *argv (expanded; replaced by the bubblewrap argv
 * that runs it) as rq says: the private git dir made, the CLI's state
 * directories created, the seccomp program in a descriptor
 * (sr->seccomp_fd, for runner_opts.keep_fd).  On error *argv is
 * unchanged and sr empty.
 */
int sandbox_begin(struct sandbox_run *sr, struct strlist *argv,
    const struct sandbox_req *rq, struct sc_err *err);

/*
 * The agent has ended: take its branch back (gitsandbox_collect()).
 * *moved and new_oid (41 bytes) as gitsandbox_collect() sets them.
 */
int sandbox_end(struct sandbox_run *sr, bool *moved, char *new_oid,
    const char *tree, struct sc_err *err);

/* Close the descriptor, remove the private git dir; no-op on zeroed. */
void sandbox_run_release(struct sandbox_run *sr);

#endif
