/*
 * gitremote.c - see gitremote.h: push, fetch and clone of one branch
 * with libgit2's remote API (docs/cluster.md#how-an-attempt-runs-remotely).
 */
#include <stdio.h>
#include <string.h>

#include <git2.h>

#include "state/gitlib.h"
#include "state/gitremote.h"
#include "state/gitwork.h"
#include "state/gitwork_int.h"
#include "state/redact.h"

/* Where a fetched story branch lands: a ref of ours, not a branch. */
#define FETCH_PREFIX "refs/storyctl/remote/"

/*
 * A remote for url in repo, named (with its fetch refspec) or anonymous.
 * url.<base>.insteadOf is not applied: libgit2 1.5 leaks a PCRE2 match
 * block for every config entry it tries against that pattern, on every
 * remote made, which a controller making two per attempt cannot afford.
 */
static int
remote_new(git_remote **out, git_repository *repo, const char *url,
    const char *name, const char *fetchspec)
{
	git_remote_create_options o;

	git_remote_create_options_init(&o, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	o.repository = repo;
	o.name = name;
	o.fetchspec = fetchspec;
	o.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
	if (name == NULL)
		o.flags |= GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	return git_remote_create_with_opts(out, url, &o);
}

/*
 * Fail with code and "<url>: <what>", followed by libgit2's words when
 * git_msg.  The password of an https://user:token@host URL, the only
 * way libgit2 takes credentials from storyctl, is shown as [REDACTED]
 * (docs/cluster.md#credentials), since the message reaches the
 * terminal and the lock file's note of the stop.
 */
static int
remote_err(struct sc_err *err, int code, const char *url, const char *what,
    bool git_msg)
{
	char raw[sizeof(err->msg)], shown[sizeof(err->msg)];

	/* cut to err->msg's size, as err_set() would cut it */
	if (snprintf(raw, sizeof(raw), "%s: %s%s%s", url, what,
		git_msg ? ": " : "", git_msg ? gitwork_git_msg() : "") < 0)
		raw[0] = '\0';
	redact_copy(shown, sizeof(shown), raw);
	return err_set(err, code, "%s", shown);
}

/* SC_EDATA: the remote at url has no branch. */
static int
remote_no_branch(struct sc_err *err, const char *url, const char *branch)
{
	char what[GITWORK_REFMAX + 16];

	if (snprintf(what, sizeof(what), "has no branch %s", branch) < 0)
		what[0] = '\0';
	return remote_err(err, SC_EDATA, url, what, false);
}

/* SC_EIO naming url and libgit2's message. */
static int
remote_fail(struct sc_err *err, const char *url, const char *what)
{
	return remote_err(err, SC_EIO, url, what, true);
}

/* The refspec "[+]refs/heads/<branch>:<dst_prefix><branch>". */
static int
refspec(char *out, size_t len, bool force, const char *branch,
    const char *dst_prefix, struct sc_err *err)
{
	char ref[GITWORK_REFMAX];
	int rc = gitwork_refname(ref, sizeof(ref), branch, err);

	if (rc < 0)
		return rc;
	if ((size_t)snprintf(out, len, "%s%s:%s%s", force ? "+" : "", ref,
		dst_prefix, branch) >= len)
		return err_set(
		    err, SC_EDATA, "branch name too long: %s", branch);
	return 0;
}

int
gitremote_push(const char *dir, const char *url, const char *branch, bool force,
    struct sc_err *err)
{
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	git_push_options po;
	char spec[2 * GITWORK_REFMAX + 8];
	char *specs[1] = {spec};
	git_strarray arr = {specs, 1};
	int rc;

	rc = refspec(spec, sizeof(spec), force, branch, "refs/heads/", err);
	if (rc < 0)
		return rc;
	rc = gitwork_open(&repo, dir, err);
	if (rc < 0)
		return rc;
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	if (remote_new(&remote, repo, url, NULL, NULL) < 0)
		rc = remote_fail(err, url, "cannot use remote");
	else if (git_remote_push(remote, &arr, &po) < 0)
		rc = remote_fail(err, url, "push failed");
	git_remote_free(remote);
	gitwork_close(repo);
	return rc;
}

int
gitremote_fetch(char *hex, const char *dir, const char *url, const char *branch,
    struct sc_err *err)
{
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	git_fetch_options fo;
	git_oid oid;
	char spec[2 * GITWORK_REFMAX + 8];
	char dst[GITWORK_REFMAX + 32];
	char *specs[1] = {spec};
	git_strarray arr = {specs, 1};
	int rc;

	hex[0] = '\0';
	rc = refspec(spec, sizeof(spec), true, branch, FETCH_PREFIX, err);
	if (rc < 0)
		return rc;
	snprintf(dst, sizeof(dst), FETCH_PREFIX "%s", branch);
	rc = gitwork_open(&repo, dir, err);
	if (rc < 0)
		return rc;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	/* no tags and no pruning: only the one ref moves */
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (remote_new(&remote, repo, url, NULL, NULL) < 0)
		rc = remote_fail(err, url, "cannot use remote");
	else if (git_remote_fetch(remote, &arr, &fo, NULL) < 0)
		rc = remote_fail(err, url, "fetch failed");
	else if (git_reference_name_to_id(&oid, repo, dst) < 0)
		rc = remote_no_branch(err, url, branch);
	else
		git_oid_tostr(hex, GITWORK_HEXSZ, &oid);
	git_remote_free(remote);
	gitwork_close(repo);
	return rc;
}

int
gitremote_apply(const char *dir, const char *hex, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_commit *target = NULL, *head = NULL;
	git_checkout_options co;
	int rc;

	rc = gitwork_open(&repo, dir, err);
	if (rc < 0)
		return rc;
	rc = gitwork_lookup_commit(&target, repo, hex, dir, err);
	if (rc == 0)
		rc = gitwork_head_commit(&head, repo, dir, err);
	if (rc < 0)
		goto out;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_tree(repo, (git_object *)target, &co) < 0 ||
	    (head != NULL &&
		git_reset(repo, (git_object *)head, GIT_RESET_MIXED, NULL) < 0))
		rc = err_set(err, SC_EIO, "%s: cannot check out %s: %s", dir,
		    hex, gitwork_git_msg());
out:
	git_commit_free(head);
	git_commit_free(target);
	gitwork_close(repo);
	return rc;
}

/* The clone's steps once the repository exists: fetch the one branch,
 * make it the local branch, check it out. */
static int
clone_into(git_repository *repo, const char *url, const char *branch,
    const char *ref, struct sc_err *err)
{
	git_remote *remote = NULL;
	git_fetch_options fo;
	git_checkout_options co;
	git_reference *local = NULL;
	git_commit *tip = NULL;
	git_oid oid;
	char spec[3 * GITWORK_REFMAX], track[GITWORK_REFMAX + 32];
	int rc = 0;

	snprintf(track, sizeof(track), "refs/remotes/origin/%s", branch);
	snprintf(spec, sizeof(spec), "+%s:%s", ref, track);
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (remote_new(&remote, repo, url, "origin", spec) < 0)
		rc = remote_fail(err, url, "cannot use remote");
	else if (git_remote_fetch(remote, NULL, &fo, NULL) < 0)
		rc = remote_fail(err, url, "fetch failed");
	else if (git_reference_name_to_id(&oid, repo, track) < 0)
		rc = remote_no_branch(err, url, branch);
	else if (git_commit_lookup(&tip, repo, &oid) < 0 ||
	    git_branch_create(&local, repo, branch, tip, 0) < 0 ||
	    git_repository_set_head(repo, ref) < 0 ||
	    git_checkout_head(repo, &co) < 0)
		rc = remote_fail(err, url, "cannot check out the branch");
	git_reference_free(local);
	git_commit_free(tip);
	git_remote_free(remote);
	return rc;
}

/* Not git_clone(): it fails without a message on a remote whose HEAD
 * names a branch that does not exist (a fresh bare repository). */
int
gitremote_clone(
    const char *dir, const char *url, const char *branch, struct sc_err *err)
{
	git_repository *repo = NULL;
	char ref[GITWORK_REFMAX];
	int rc;

	rc = gitwork_refname(ref, sizeof(ref), branch, err);
	if (rc < 0)
		return rc;
	if (gitlib_init() < 0)
		return err_set(err, SC_EIO, "cannot initialise libgit2: %s",
		    gitwork_git_msg());
	if (git_repository_init(&repo, dir, 0) < 0)
		rc = err_set(err, SC_EIO, "%s: cannot make a repository: %s",
		    dir, gitwork_git_msg());
	else
		rc = clone_into(repo, url, branch, ref, err);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}
