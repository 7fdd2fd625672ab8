/* confine.c - see confine.h and docs/sandbox.md#the-mounts. */
#include <stdio.h>
#include <string.h>

#include "strategies/confine.h"

const char *const confine_home_secrets[] = {".ssh", ".gnupg", ".aws", ".azure",
    ".config/gcloud", ".config/gh", ".config/hub", ".kube", ".docker", ".netrc",
    ".git-credentials", ".config/git/credentials", ".npmrc", ".pypirc",
    ".cargo/credentials", ".cargo/credentials.toml", ".password-store",
    ".terraform.d", ".vault-token", NULL};

const char *const confine_host_sockets[] = {"/run/docker.sock",
    "/var/run/docker.sock", "/run/containerd", "/run/podman", "/run/dbus",
    "/run/user/%u", "/run/systemd/private", NULL};

bool
confine_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(path, dir, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/');
}

bool
confine_tmp_top(char *top, size_t len, const char *path)
{
	static const char *const tmps[] = {"/tmp/", "/var/tmp/"};
	size_t i, n, k;

	top[0] = '\0';
	for (i = 0; i < 2; i++) {
		n = strlen(tmps[i]);
		if (strncmp(path, tmps[i], n) != 0 || path[n] == '\0' ||
		    path[n] == '/')
			continue;
		k = n + strcspn(path + n, "/");
		if (k >= len)
			return false;
		memcpy(top, path, k);
		top[k] = '\0';
		return strcmp(top + n, ".") != 0 && strcmp(top + n, "..") != 0;
	}
	return false;
}

/* Append each of the NULL-terminated words; -1 when out of memory. */
static int
push_words(struct strlist *out, const char *const *w)
{
	for (; *w != NULL; w++)
		if (strlist_push(out, *w) < 0)
			return -1;
	return 0;
}

static int
push3(struct strlist *out, const char *a, const char *b, const char *c)
{
	const char *w[] = {a, b, c, NULL};

	if (c == NULL)
		w[2] = NULL;
	return push_words(out, w);
}

/* The plan's paths are absolute: bubblewrap would take a relative one
 * from its own cwd, which is ours, not the agent's. */
static bool
plan_valid(const struct confine_plan *p)
{
	size_t i;

	if (p->bwrap == NULL || p->tree == NULL || p->state_dir == NULL ||
	    p->tree[0] != '/' || p->state_dir[0] != '/')
		return false;
	if ((p->private_git == NULL) != (p->gitdir == NULL))
		return false;
	if (p->gitdir != NULL &&
	    (p->gitdir[0] != '/' || p->private_git[0] != '/'))
		return false;
	if ((p->commondir == NULL) != (p->shown_common == NULL))
		return false;
	if (p->shown_common != NULL &&
	    !confine_path_under(p->shown_common, p->state_dir))
		return false;
	for (i = 0; i < p->nshown; i++)
		if (!confine_path_under(p->shown[i], p->state_dir))
			return false;
	for (i = 0; i < p->nprogram_tops; i++) {
		char top[4096];

		/* the entry itself, never /tmp whole: that would show every
		 * other user's files and sockets kept there */
		if (!confine_tmp_top(top, sizeof(top), p->program_tops[i]) ||
		    strcmp(top, p->program_tops[i]) != 0)
			return false;
	}
	return true;
}

/* Namespaces, session, capabilities, the read-only root and the fresh
 * /dev, /proc, /tmp. */
static int
push_base(struct strlist *out, const struct confine_plan *p)
{
	/* --as-pid-1: no bubblewrap init inside, which would be a process
	 * outside the seccomp program that the agent could ptrace */
	static const char *const base[] = {"--new-session", "--die-with-parent",
	    "--unshare-all", "--as-pid-1", NULL};
	static const char *const fs[] = {"--cap-drop", "ALL", "--ro-bind", "/",
	    "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", NULL};
	size_t i;

	if (strlist_push(out, p->bwrap) < 0 || push_words(out, base) < 0)
		return -1;
	/* --unshare-all took the network too: --share-net gives it back */
	if (p->network && strlist_push(out, "--share-net") < 0)
		return -1;
	if (push_words(out, fs) < 0)
		return -1;
	if (p->var_tmp && push3(out, "--tmpfs", "/var/tmp", NULL) < 0)
		return -1;
	for (i = 0; i < p->nprogram_tops; i++)
		if (push3(out, "--ro-bind", p->program_tops[i],
			p->program_tops[i]) < 0)
			return -1;
	return 0;
}

/* Cover the hidden paths (all, or only those inside dir): a directory
 * by an empty read-only tmpfs, a file by /dev/null. */
static int
push_hide(struct strlist *out, const struct confine_plan *p, const char *dir)
{
	size_t i;

	for (i = 0; i < p->nhide; i++) {
		const struct confine_hide *h = &p->hide[i];

		if (dir != NULL && !confine_path_under(h->path, dir))
			continue;
		if (h->is_dir) {
			if (push3(out, "--tmpfs", h->path, NULL) < 0 ||
			    push3(out, "--remount-ro", h->path, NULL) < 0)
				return -1;
		} else if (push3(out, "--ro-bind", "/dev/null", h->path) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Secrets and sockets covered; then what the user opened again. */
static int
push_paths(struct strlist *out, const struct confine_plan *p)
{
	size_t i;

	if (push_hide(out, p, NULL) < 0)
		return -1;
	for (i = 0; i < p->nreadable; i++)
		if (push3(out, "--ro-bind-try", p->readable[i],
			p->readable[i]) < 0)
			return -1;
	for (i = 0; i < p->nwritable; i++)
		if (push3(out, "--bind-try", p->writable[i], p->writable[i]) <
		    0)
			return -1;
	return 0;
}

/* The tree, the state dir covered, and the git dirs. */
static int
push_tree(struct strlist *out, const struct confine_plan *p)
{
	bool inside = confine_path_under(p->tree, p->state_dir);
	size_t i;

	if (!inside && push3(out, "--bind", p->tree, p->tree) < 0)
		return -1;
	if (push3(out, "--tmpfs", p->state_dir, NULL) < 0)
		return -1;
	if (inside && push3(out, "--bind", p->tree, p->tree) < 0)
		return -1;
	/* a tree that holds a secret (a repository at $HOME) brought it
	 * back with its bind: covered again */
	if (push_hide(out, p, p->tree) < 0)
		return -1;
	for (i = 0; i < p->nshown; i++)
		if (push3(out, "--ro-bind", p->shown[i], p->shown[i]) < 0)
			return -1;
	if (p->commondir != NULL &&
	    push3(out, "--ro-bind", p->commondir, p->shown_common) < 0)
		return -1;
	if (push3(out, "--remount-ro", p->state_dir, NULL) < 0)
		return -1;
	/* last: the tree's own .git (inside the tree under -j 1) */
	if (p->gitdir != NULL &&
	    push3(out, "--bind", p->private_git, p->gitdir) < 0)
		return -1;
	return 0;
}

static int
push_env(struct strlist *out, const struct confine_plan *p)
{
	const char *const *e;

	for (e = p->unsetenv; e != NULL && *e != NULL; e++)
		if (push3(out, "--unsetenv", *e, NULL) < 0)
			return -1;
	for (e = p->setenv; e != NULL && e[0] != NULL && e[1] != NULL; e += 2)
		if (push3(out, "--setenv", e[0], e[1]) < 0)
			return -1;
	return 0;
}

int
confine_argv(struct strlist *out, const struct confine_plan *p,
    const char *const *agent, struct sc_err *err)
{
	char fd[16];
	int rc = 0;

	if (!plan_valid(p) || agent == NULL || agent[0] == NULL) {
		rc = err_set(err, SC_ESOFTWARE, "confine: bad plan");
		goto out;
	}
	if (push_base(out, p) < 0 || push_paths(out, p) < 0 ||
	    push_tree(out, p) < 0 ||
	    push3(out, "--chdir", p->cwd != NULL ? p->cwd : p->tree, NULL) <
		0 ||
	    push_env(out, p) < 0)
		goto nomem;
	if (p->seccomp_fd > 2) {
		snprintf(fd, sizeof(fd), "%d", p->seccomp_fd);
		if (push3(out, "--seccomp", fd, NULL) < 0)
			goto nomem;
	}
	if (strlist_push(out, "--") < 0 || push_words(out, agent) < 0)
		goto nomem;
	goto out;
nomem:
	rc = err_set(err, SC_EOS, "out of memory");
out:
	if (rc < 0)
		strlist_release(out);
	return rc;
}
