/*
 * test_gitobjects.c - packing loose objects through libgit2's
 * packbuilder: the loose files go, one pack and index appear, read-only
 * as git writes them, every object reads back (through the old handle
 * and a new one, and through the git CLI, which finds the repository
 * sound), and nothing is deleted when the pack cannot be written.
 *
 * Each test gets a fresh repository made with libgit2 in a mkdtemp
 * directory, removed afterwards.  libgit2's object cache is switched off
 * for the whole suite so that a read through the old handle really goes
 * to the disk and not to memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>
#include <git2/sys/alloc.h>

#include "state/gitobjects.h"

#define NBLOBS 4
/* blobs, a subtree, the root tree and a commit */
#define NOBJS (NBLOBS + 3)

struct fx {
	char dir[PATH_MAX]; /* realpath of the temp dir = work tree root */
	char gitdir[PATH_MAX]; /* dir/.git */
	char packdir[PATH_MAX]; /* dir/.git/objects/pack */
	git_repository *repo;
};

/* What make_objects() wrote. */
struct objs {
	git_oid id[NOBJS];
	git_object_t type[NOBJS];
	char blob[NBLOBS][128];
};

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/*
 * fsync as the code under test sees it: this definition in the test
 * program comes before libc's, for state/gitobjects.c linked in
 * statically.  While sync_log.on, each call records the file's path
 * (from /proc/self/fd), notes whether sync_log.loose (a loose object
 * file) was already gone, and fails with EIO when the path ends in
 * sync_log.fail.  Otherwise it is the real system call.
 */
static struct {
	int on;
	const char *loose;
	const char *fail;
	char seen[8][PATH_MAX];
	int n;
	int loose_gone;
} sync_log;

static int
ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

int
fsync(int fd)
{
	char link[64], path[PATH_MAX];
	struct stat st;
	ssize_t k;

	if (sync_log.on) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		k = readlink(link, path, sizeof(path) - 1);
		path[k < 0 ? 0 : k] = '\0';
		if (sync_log.n < 8)
			memcpy(sync_log.seen[sync_log.n++], path, sizeof(path));
		if (sync_log.loose != NULL && stat(sync_log.loose, &st) != 0)
			sync_log.loose_gone = 1;
		if (sync_log.fail != NULL && ends_with(path, sync_log.fail)) {
			errno = EIO;
			return -1;
		}
	}
	return (int)syscall(SYS_fsync, fd);
}

/*
 * libgit2's memory as the packing sees it: group_setup() gives libgit2
 * this allocator, malloc() and free() like libgit2's own (so memory
 * allocated before it counts is freed the same way), adding up the
 * usable size of what is live while galloc.on.  live can go below 0
 * when memory allocated before is freed; peak is what was reached
 * above the start.
 */
static struct {
	int on;
	long long live, peak;
} galloc;

static void *
ga_note(void *p)
{
	if (p != NULL && galloc.on) {
		galloc.live += (long long)malloc_usable_size(p);
		if (galloc.live > galloc.peak)
			galloc.peak = galloc.live;
	}
	return p;
}

static void
ga_forget(void *p)
{
	if (p != NULL && galloc.on)
		galloc.live -= (long long)malloc_usable_size(p);
}

static void *
ga_malloc(size_t n, const char *file, int line)
{
	(void)file, (void)line;
	return ga_note(malloc(n));
}

static void *
ga_calloc(size_t k, size_t n, const char *file, int line)
{
	(void)file, (void)line;
	return ga_note(calloc(k, n));
}

static char *
ga_strdup(const char *s, const char *file, int line)
{
	(void)file, (void)line;
	return ga_note(strdup(s));
}

static char *
ga_strndup(const char *s, size_t n, const char *file, int line)
{
	(void)file, (void)line;
	return ga_note(strndup(s, n));
}

static char *
ga_substrdup(const char *s, size_t n, const char *file, int line)
{
	char *p;

	(void)file, (void)line;
	if (n == SIZE_MAX || (p = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return ga_note(p);
}

static void *
ga_realloc(void *old, size_t n, const char *file, int line)
{
	void *p;

	(void)file, (void)line;
	ga_forget(old);
	if ((p = realloc(old, n)) == NULL && n > 0)
		return ga_note(old), NULL; /* old is still there */
	return ga_note(p);
}

static void *
ga_reallocarray(void *old, size_t k, size_t n, const char *file, int line)
{
	if (n != 0 && k > SIZE_MAX / n)
		return NULL;
	return ga_realloc(old, k * n, file, line);
}

static void *
ga_mallocarray(size_t k, size_t n, const char *file, int line)
{
	return ga_reallocarray(NULL, k, n, file, line);
}

static void
ga_free(void *p)
{
	ga_forget(p);
	free(p);
}

static git_allocator ga_allocator = {ga_malloc, ga_calloc, ga_strdup,
    ga_strndup, ga_substrdup, ga_realloc, ga_reallocarray, ga_mallocarray,
    ga_free};

/* out = dir/name (out has PATH_MAX bytes). */
static void
join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

static int
group_setup(void **state)
{
	if (git_libgit2_opts(GIT_OPT_SET_ALLOCATOR, &ga_allocator) < 0 ||
	    git_libgit2_init() < 0)
		return -1;
	/* reads must reach the object database, not libgit2's cache */
	return git_libgit2_opts(GIT_OPT_ENABLE_CACHING, 0);
}

static int
group_teardown(void **state)
{
	git_libgit2_shutdown();
	return 0;
}

static int
fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	assert_non_null(fx);
	snprintf(tmpl, sizeof(tmpl), "%s/gitobjects-test-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->dir));
	join(fx->gitdir, fx->dir, ".git");
	join(fx->packdir, fx->gitdir, "objects/pack");
	assert_int_equal(git_repository_init(&fx->repo, fx->dir, 0), 0);
	*state = fx;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *fx = *state;

	git_repository_free(fx->repo);
	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* out = the loose file of id under gitdir (out has PATH_MAX bytes). */
static void
loose_path(char *out, const char *gitdir, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];
	int n;

	git_oid_tostr(hex, sizeof(hex), id);
	n = snprintf(out, PATH_MAX, "%s/objects/%.2s/%s", gitdir, hex, hex + 2);
	assert_true(n > 0 && n < PATH_MAX);
}

static int
is_loose(const char *gitdir, const git_oid *id)
{
	char path[PATH_MAX];
	struct stat st;

	loose_path(path, gitdir, id);
	if (stat(path, &st) == 0)
		return 1;
	assert_int_equal(errno, ENOENT);
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names in dir, sorted, one per line, in a malloc'd string ("" for
 * an empty directory, NULL when dir does not exist).
 */
static char *
list_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *names[256], *out;
	size_t n = 0, len = 1, i;

	if (d == NULL) {
		assert_int_equal(errno, ENOENT);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		assert_true(n < 256);
		names[n] = strdup(de->d_name);
		assert_non_null(names[n]);
		len += strlen(names[n]) + 1;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	out = malloc(len);
	assert_non_null(out);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		strcat(out, names[i]);
		strcat(out, "\n");
		free(names[i]);
	}
	return out;
}

/* The number of names in dir ending in suffix. */
static int
count_suffix(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t ls = strlen(suffix), l;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		l = strlen(de->d_name);
		if (l >= ls && strcmp(de->d_name + l - ls, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Every file in dir ending in suffix has permission bits mode. */
static void
assert_mode(const char *dir, const char *suffix, mode_t mode)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	char path[PATH_MAX];
	size_t ls = strlen(suffix), l;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		l = strlen(de->d_name);
		if (l < ls || strcmp(de->d_name + l - ls, suffix) != 0)
			continue;
		join(path, dir, de->d_name);
		assert_int_equal(stat(path, &st), 0);
		if ((st.st_mode & 07777) != mode)
			fail_msg("%s: mode %o, want %o", path,
			    (unsigned)(st.st_mode & 07777), (unsigned)mode);
		n++;
	}
	closedir(d);
	assert_true(n > 0);
}

/*
 * Write NBLOBS blobs, a subtree holding two of them, a root tree and a
 * commit, all loose; nothing points at the commit.  seed varies the
 * content between calls.
 */
static void
make_objects(git_repository *repo, struct objs *o, int seed)
{
	git_treebuilder *tb = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	char name[32];
	int i;

	for (i = 0; i < NBLOBS; i++) {
		snprintf(o->blob[i], sizeof(o->blob[i]),
		    "{\"story\": \"%d-%d\", \"status\": \"done\"}\n", seed, i);
		assert_int_equal(git_blob_create_from_buffer(&o->id[i], repo,
				     o->blob[i], strlen(o->blob[i])),
		    0);
		o->type[i] = GIT_OBJECT_BLOB;
	}
	/* stories/ with blobs 2 and 3 */
	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	for (i = 2; i < NBLOBS; i++) {
		snprintf(name, sizeof(name), "%d-%d.json", seed, i);
		assert_int_equal(git_treebuilder_insert(NULL, tb, name,
				     &o->id[i], GIT_FILEMODE_BLOB),
		    0);
	}
	assert_int_equal(git_treebuilder_write(&o->id[NBLOBS], tb), 0);
	o->type[NBLOBS] = GIT_OBJECT_TREE;
	git_treebuilder_free(tb);
	/* root: progress.md, notes.json, stories/ */
	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "progress.md",
			     &o->id[0], GIT_FILEMODE_BLOB),
	    0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "notes.json",
			     &o->id[1], GIT_FILEMODE_BLOB),
	    0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "stories",
			     &o->id[NBLOBS], GIT_FILEMODE_TREE),
	    0);
	assert_int_equal(git_treebuilder_write(&o->id[NBLOBS + 1], tb), 0);
	o->type[NBLOBS + 1] = GIT_OBJECT_TREE;
	git_treebuilder_free(tb);

	assert_int_equal(git_tree_lookup(&tree, repo, &o->id[NBLOBS + 1]), 0);
	assert_int_equal(git_signature_new(&sig, "storyctl",
			     "storyctl@localhost", 1700000000 + seed, 0),
	    0);
	assert_int_equal(git_commit_create(&o->id[NBLOBS + 2], repo, NULL, sig,
			     sig, NULL, "decision\n", tree, 0, NULL),
	    0);
	o->type[NBLOBS + 2] = GIT_OBJECT_COMMIT;
	git_signature_free(sig);
	git_tree_free(tree);
	for (i = 0; i < NOBJS; i++)
		assert_true(
		    is_loose(git_repository_commondir(repo), &o->id[i]));
}

/* Every object of o reads back from repo with its type and content. */
static void
assert_readable(git_repository *repo, const struct objs *o)
{
	git_odb *odb = NULL;
	git_odb_object *obj = NULL;
	git_oid again;
	int i;

	assert_int_equal(git_repository_odb(&odb, repo), 0);
	for (i = 0; i < NOBJS; i++) {
		if (git_odb_read(&obj, odb, &o->id[i]) != 0)
			fail_msg(
			    "read object %d: %s", i, git_error_last()->message);
		assert_int_equal(git_odb_object_type(obj), o->type[i]);
		/* the content hashes to the id: the bytes are intact */
		assert_int_equal(git_odb_hash(&again, git_odb_object_data(obj),
				     git_odb_object_size(obj), o->type[i]),
		    0);
		assert_true(git_oid_equal(&again, &o->id[i]));
		if (i < NBLOBS) {
			assert_int_equal(
			    git_odb_object_size(obj), strlen(o->blob[i]));
			assert_memory_equal(git_odb_object_data(obj),
			    o->blob[i], strlen(o->blob[i]));
		}
		git_odb_object_free(obj);
		obj = NULL;
	}
	git_odb_free(odb);
}

/* The same through a handle opened now. */
static void
assert_readable_fresh(const char *dir, const struct objs *o)
{
	git_repository *repo = NULL;

	assert_int_equal(git_repository_open(&repo, dir), 0);
	assert_readable(repo, o);
	git_repository_free(repo);
}

/*
 * Run argv (argv[0] looked up in PATH) with stdout and stderr into out (NUL
 * terminated, at most outsz - 1 bytes kept); returns the exit status,
 * or -1 when it did not exit normally.
 */
static int
run(const char *const *argv, char *out, size_t outsz)
{
	int fds[2], status = 0;
	size_t n = 0;
	ssize_t r;
	char drop[512];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		/* stderr too, so that a failure message shows it */
		if (dup2(fds[1], STDOUT_FILENO) < 0 ||
		    dup2(fds[1], STDERR_FILENO) < 0)
			_exit(126);
		close(fds[1]);
		/* the test's repository, not one the environment names */
		unsetenv("GIT_DIR");
		unsetenv("GIT_WORK_TREE");
		unsetenv("GIT_OBJECT_DIRECTORY");
		unsetenv("GIT_ALTERNATE_OBJECT_DIRECTORIES");
		unsetenv("GIT_COMMON_DIR");
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		if (out != NULL && n + 1 < outsz)
			r = read(fds[0], out + n, outsz - 1 - n);
		else
			r = read(fds[0], drop, sizeof(drop));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (out != NULL && n + 1 < outsz)
			n += (size_t)r;
	}
	close(fds[0]);
	if (out != NULL)
		out[n] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		assert_int_equal(errno, EINTR);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
assert_fsck(const char *dir)
{
	const char *argv[] = {"git", "-C", dir, "fsck", "--strict", "--full",
	    "--no-dangling", NULL};
	char out[4096];

	if (run(argv, out, sizeof(out)) != 0)
		fail_msg("git fsck --strict failed in %s: %s", dir, out);
}

static void
assert_cat_file(const char *dir, const git_oid *id, const char *want)
{
	char hex[GIT_OID_HEXSZ + 1];
	const char *argv[] = {"git", "-C", dir, "cat-file", "-p", hex, NULL};
	char out[1024];

	git_oid_tostr(hex, sizeof(hex), id);
	assert_int_equal(run(argv, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

/* `git count-objects -v`'s "<key>: <n>" */
static long
count_objects(const char *dir, const char *key)
{
	const char *argv[] = {"git", "-C", dir, "count-objects", "-v", NULL};
	char out[1024], k[64];
	const char *p;
	int n;

	assert_int_equal(run(argv, out, sizeof(out)), 0);
	n = snprintf(k, sizeof(k), "%s: ", key);
	assert_true(n > 0 && (size_t)n < sizeof(k));
	p = strstr(out, k);
	assert_non_null(p);
	return strtol(p + n, NULL, 10);
}

static void
read_file(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sz - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void
pack_ok(git_repository *repo, const git_oid *ids, size_t n)
{
	struct sc_err err = {0, ""};

	if (gitobjects_pack(repo, ids, NULL, n, &err) != 0)
		fail_msg("gitobjects_pack: %s", err.msg);
}

static void
test_pack_basic(void **state)
{
	struct fx *fx = *state;
	struct objs o;
	char *before, *after;
	char head0[256], head1[256], path[PATH_MAX], *refs;
	char hex[GIT_OID_HEXSZ + 1], fan[16];
	struct stat st;
	mode_t mask;
	int i;

	join(path, fx->gitdir, "HEAD");
	read_file(path, head0, sizeof(head0));
	make_objects(fx->repo, &o, 1);
	before = list_dir(fx->packdir);
	assert_non_null(before);
	assert_string_equal(before, "");

	pack_ok(fx->repo, o.id, NOBJS);

	for (i = 0; i < NOBJS; i++) {
		assert_false(is_loose(fx->gitdir, &o.id[i]));
		/* the fan-out directory stays */
		git_oid_tostr(hex, sizeof(hex), &o.id[i]);
		snprintf(fan, sizeof(fan), "objects/%.2s", hex);
		join(path, fx->gitdir, fan);
		assert_int_equal(stat(path, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
	}
	/* exactly pack-<h>.idx and pack-<h>.pack, same <h> */
	after = list_dir(fx->packdir);
	assert_non_null(after);
	assert_int_equal(count_suffix(fx->packdir, ".pack"), 1);
	assert_int_equal(count_suffix(fx->packdir, ".idx"), 1);
	assert_int_equal(strlen(after), 2 * (5 + GIT_OID_HEXSZ) + 5 + 4 + 2);
	/* "pack-<h>.idx\n" is 50 bytes, then "pack-<h>.pack\n" */
	assert_memory_equal(after, "pack-", 5);
	assert_memory_equal(after + 50, "pack-", 5);
	assert_memory_equal(after + 5, after + 55, GIT_OID_HEXSZ);

	/* read-only for everyone, as git writes them (less the umask) */
	mask = umask(0);
	umask(mask);
	assert_mode(fx->packdir, ".pack", 0444 & ~mask);
	assert_mode(fx->packdir, ".idx", 0444 & ~mask);

	assert_readable(fx->repo, &o);
	assert_readable_fresh(fx->dir, &o);
	assert_fsck(fx->dir);
	for (i = 0; i < NBLOBS; i++)
		assert_cat_file(fx->dir, &o.id[i], o.blob[i]);
	assert_int_equal(count_objects(fx->dir, "count"), 0);
	assert_int_equal(count_objects(fx->dir, "in-pack"), NOBJS);

	/* HEAD, the index and refs were left alone */
	join(path, fx->gitdir, "HEAD");
	read_file(path, head1, sizeof(head1));
	assert_string_equal(head0, head1);
	join(path, fx->gitdir, "index");
	assert_int_equal(stat(path, &st), -1);
	join(path, fx->gitdir, "refs/heads");
	refs = list_dir(path);
	assert_string_equal(refs, "");
	free(refs);
	free(before);
	free(after);
}

static void
test_pack_duplicates(void **state)
{
	struct fx *fx = *state;
	struct objs o;
	git_oid ids[3 * NOBJS];
	int i;

	make_objects(fx->repo, &o, 2);
	for (i = 0; i < NOBJS; i++) {
		ids[i] = o.id[i];
		ids[NOBJS + i] = o.id[NOBJS - 1 - i];
		ids[2 * NOBJS + i] = o.id[0];
	}
	pack_ok(fx->repo, ids, 3 * NOBJS);
	for (i = 0; i < NOBJS; i++)
		assert_false(is_loose(fx->gitdir, &o.id[i]));
	assert_int_equal(count_suffix(fx->packdir, ".pack"), 1);
	/* each object once in the pack */
	assert_int_equal(count_objects(fx->dir, "in-pack"), NOBJS);
	assert_readable(fx->repo, &o);
	assert_readable_fresh(fx->dir, &o);
	assert_fsck(fx->dir);
}

static void
test_pack_nothing(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct objs o;
	char *before, *after;
	int i;

	make_objects(fx->repo, &o, 3);
	before = list_dir(fx->packdir);
	assert_int_equal(gitobjects_pack(fx->repo, o.id, NULL, 0, &err), 0);
	assert_int_equal(gitobjects_pack(fx->repo, NULL, NULL, 0, &err), 0);
	assert_int_equal(gitobjects_pack(fx->repo, NULL, NULL, 0, NULL), 0);
	/* a caller's bug, not a failure to pack */
	assert_int_equal(
	    gitobjects_pack(fx->repo, NULL, NULL, 1, &err), SC_ESOFTWARE);
	assert_int_equal(
	    gitobjects_pack(NULL, o.id, NULL, 1, &err), SC_ESOFTWARE);
	after = list_dir(fx->packdir);
	assert_string_equal(before, after);
	for (i = 0; i < NOBJS; i++)
		assert_true(is_loose(fx->gitdir, &o.id[i]));
	free(before);
	free(after);
}

static void
test_pack_missing_id(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct objs o;
	git_oid ids[NOBJS + 1];
	char *before, *after, want[PATH_MAX + 64];
	int i;

	make_objects(fx->repo, &o, 4);
	for (i = 0; i < NOBJS; i++)
		ids[i] = o.id[i];
	/* not in the odb: in the middle, so some ids come after it */
	assert_int_equal(git_oid_fromstr(&ids[NOBJS],
			     "0123456789abcdef0123456789abcdef01234567"),
	    0);
	ids[NOBJS - 1] = ids[NOBJS];
	ids[NOBJS] = o.id[NOBJS - 1];
	before = list_dir(fx->packdir);

	assert_int_equal(
	    gitobjects_pack(fx->repo, ids, NULL, NOBJS + 1, &err), SC_EIO);
	assert_int_equal(err.code, SC_EIO);
	snprintf(want, sizeof(want),
	    "%s: cannot pack %d objects: ", fx->packdir, NOBJS + 1);
	if (strncmp(err.msg, want, strlen(want)) != 0)
		fail_msg("unexpected message: %s", err.msg);
	assert_non_null(strstr(err.msg, "0123456789abcdef"));
	if (getenv("GITOBJECTS_TEST_VERBOSE") != NULL)
		print_message("missing id: %s\n", err.msg);

	for (i = 0; i < NOBJS; i++)
		assert_true(is_loose(fx->gitdir, &o.id[i]));
	after = list_dir(fx->packdir);
	assert_string_equal(before, after);
	assert_readable(fx->repo, &o);
	assert_fsck(fx->dir);
	/* err may be NULL: still the code */
	assert_int_equal(
	    gitobjects_pack(fx->repo, ids, NULL, NOBJS + 1, NULL), SC_EIO);
	free(before);
	free(after);
}

/*
 * No objects/pack: libgit2 would never read a pack made there by this
 * handle (gitobjects.h), so nothing is packed and nothing deleted;
 * gitstate_open() makes the directory (test_gitstate.c).
 */
static void
test_pack_no_pack_dir(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct objs o;
	char want[PATH_MAX + 64];
	int i;

	assert_int_equal(rmdir(fx->packdir), 0);
	make_objects(fx->repo, &o, 5);

	assert_int_equal(
	    gitobjects_pack(fx->repo, o.id, NULL, NOBJS, &err), SC_EIO);
	snprintf(want, sizeof(want),
	    "%s: cannot pack %d objects: No such file or directory",
	    fx->packdir, NOBJS);
	assert_string_equal(err.msg, want);
	assert_null(list_dir(fx->packdir));
	for (i = 0; i < NOBJS; i++)
		assert_true(is_loose(fx->gitdir, &o.id[i]));
	assert_readable(fx->repo, &o);
	assert_fsck(fx->dir);
}

/* Packing again what is packed, and packing in several rounds. */
static void
test_pack_again(void **state)
{
	struct fx *fx = *state;
	struct objs a, b;
	char *first, *second;

	make_objects(fx->repo, &a, 6);
	pack_ok(fx->repo, a.id, NOBJS);
	first = list_dir(fx->packdir);
	/* no loose copies left: the same pack again, same name */
	pack_ok(fx->repo, a.id, NOBJS);
	second = list_dir(fx->packdir);
	assert_string_equal(first, second);
	assert_readable(fx->repo, &a);

	make_objects(fx->repo, &b, 7);
	pack_ok(fx->repo, b.id, NOBJS);
	assert_int_equal(count_suffix(fx->packdir, ".pack"), 2);
	assert_int_equal(count_suffix(fx->packdir, ".idx"), 2);
	assert_readable(fx->repo, &a);
	assert_readable(fx->repo, &b);
	assert_readable_fresh(fx->dir, &a);
	assert_readable_fresh(fx->dir, &b);
	assert_fsck(fx->dir);
	assert_int_equal(count_objects(fx->dir, "count"), 0);
	assert_int_equal(count_objects(fx->dir, "in-pack"), 2 * NOBJS);
	free(first);
	free(second);
}

/*
 * The pack cannot be written (here: the file size limit makes write()
 * fail with EFBIG half-way, as a full disk would): nothing deleted, no
 * file left behind in objects/pack.
 */
static void
test_pack_write_fails(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct objs o;
	struct rlimit old, lim;
	void (*oldsig)(int);
	git_oid ids[NOBJS + 1];
	char *big, *before, *after;
	size_t i, bigsz = 512 * 1024;
	uint32_t x = 12345;
	int rc;

	make_objects(fx->repo, &o, 8);
	/* incompressible, so the pack cannot be small */
	big = malloc(bigsz);
	assert_non_null(big);
	for (i = 0; i < bigsz; i++) {
		x = x * 1103515245u + 12345u;
		big[i] = (char)(x >> 24);
	}
	assert_int_equal(
	    git_blob_create_from_buffer(&ids[NOBJS], fx->repo, big, bigsz), 0);
	for (i = 0; i < NOBJS; i++)
		ids[i] = o.id[i];
	before = list_dir(fx->packdir);

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 64 * 1024;
	oldsig = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = gitobjects_pack(fx->repo, ids, NULL, NOBJS + 1, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, oldsig);
	if (getenv("GITOBJECTS_TEST_VERBOSE") != NULL)
		print_message("write failure: %s\n", err.msg);

	assert_int_equal(rc, SC_EIO);
	if (strstr(err.msg, "cannot pack 8 objects: ") == NULL)
		fail_msg("unexpected message: %s", err.msg);
	after = list_dir(fx->packdir);
	assert_string_equal(before, after);
	for (i = 0; i < NOBJS + 1; i++)
		assert_true(is_loose(fx->gitdir, &ids[i]));
	assert_fsck(fx->dir);

	/* and with room again it works */
	pack_ok(fx->repo, ids, NOBJS + 1);
	for (i = 0; i < NOBJS + 1; i++)
		assert_false(is_loose(fx->gitdir, &ids[i]));
	assert_readable_fresh(fx->dir, &o);
	assert_fsck(fx->dir);
	free(big);
	free(before);
	free(after);
}

/* A linked worktree's handle packs into the shared object database. */
static void
test_pack_worktree(void **state)
{
	struct fx *fx = *state;
	git_worktree *wt = NULL;
	git_repository *wrepo = NULL;
	git_signature *sig = NULL;
	git_treebuilder *tb = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, commit_id;
	struct objs o;
	char wtpath[PATH_MAX], wtgit[PATH_MAX];
	int i;

	/* the main work tree needs a commit to branch the worktree from */
	assert_int_equal(git_treebuilder_new(&tb, fx->repo, NULL), 0);
	assert_int_equal(git_treebuilder_write(&tree_id, tb), 0);
	git_treebuilder_free(tb);
	assert_int_equal(git_tree_lookup(&tree, fx->repo, &tree_id), 0);
	assert_int_equal(
	    git_signature_new(&sig, "T", "t@example.org", 1000, 0), 0);
	assert_int_equal(git_commit_create(&commit_id, fx->repo, "HEAD", sig,
			     sig, NULL, "init\n", tree, 0, NULL),
	    0);
	git_signature_free(sig);
	git_tree_free(tree);
	join(wtpath, fx->dir, "wt");
	assert_int_equal(
	    git_worktree_add(&wt, fx->repo, "wt", wtpath, NULL), 0);
	assert_int_equal(git_repository_open_from_worktree(&wrepo, wt), 0);
	join(wtgit, fx->gitdir, "worktrees/wt");

	make_objects(wrepo, &o, 9);
	for (i = 0; i < NOBJS; i++)
		assert_true(is_loose(fx->gitdir, &o.id[i]));
	pack_ok(wrepo, o.id, NOBJS);
	for (i = 0; i < NOBJS; i++)
		assert_false(is_loose(fx->gitdir, &o.id[i]));
	assert_int_equal(count_suffix(fx->packdir, ".pack"), 1);
	/* nothing under the worktree's own git dir */
	{
		char p[PATH_MAX];
		struct stat st;

		join(p, wtgit, "objects");
		assert_int_equal(stat(p, &st), -1);
	}
	assert_readable(wrepo, &o);
	assert_readable_fresh(wtpath, &o);
	assert_readable_fresh(fx->dir, &o);
	assert_fsck(fx->dir);
	git_repository_free(wrepo);
	git_worktree_free(wt);
}

/*
 * The pack, its index and the pack directory are fsynced, in that
 * order, while every loose copy is still there; only then do the loose
 * files go (docs/state-branch.md#packing).
 */
static void
test_pack_sync_order(void **state)
{
	struct fx *fx = *state;
	struct objs o;
	char loose[PATH_MAX];
	int i;

	make_objects(fx->repo, &o, 10);
	loose_path(loose, fx->gitdir, &o.id[NOBJS - 1]);
	memset(&sync_log, 0, sizeof(sync_log));
	sync_log.loose = loose;
	sync_log.on = 1;
	pack_ok(fx->repo, o.id, NOBJS);
	sync_log.on = 0;

	assert_int_equal(sync_log.n, 3);
	assert_true(ends_with(sync_log.seen[0], ".pack"));
	assert_true(ends_with(sync_log.seen[1], ".idx"));
	assert_memory_equal(sync_log.seen[0], fx->packdir, strlen(fx->packdir));
	assert_memory_equal(sync_log.seen[1], fx->packdir, strlen(fx->packdir));
	assert_string_equal(sync_log.seen[2], fx->packdir);
	assert_false(sync_log.loose_gone);
	for (i = 0; i < NOBJS; i++)
		assert_false(is_loose(fx->gitdir, &o.id[i]));
	assert_fsck(fx->dir);
}

/*
 * An fsync fails: SC_EIO naming the file, and every loose copy stays.
 * The complete pack stays too (removing it could remove an earlier pack
 * of the same name); git reads the objects from either.
 */
static void
test_pack_sync_fails(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct objs o;
	const char *which[] = {".pack", ".idx", "/objects/pack"};
	size_t w;
	int i;

	for (w = 0; w < sizeof(which) / sizeof(which[0]); w++) {
		make_objects(fx->repo, &o, 11 + (int)w);
		memset(&sync_log, 0, sizeof(sync_log));
		sync_log.fail = which[w];
		sync_log.on = 1;
		assert_int_equal(
		    gitobjects_pack(fx->repo, o.id, NULL, NOBJS, &err), SC_EIO);
		sync_log.on = 0;
		if (strstr(err.msg, ": fsync ") == NULL ||
		    strstr(err.msg, "Input/output error") == NULL)
			fail_msg("unexpected message: %s", err.msg);
		for (i = 0; i < NOBJS; i++)
			assert_true(is_loose(fx->gitdir, &o.id[i]));
		assert_readable(fx->repo, &o);
		assert_fsck(fx->dir);
	}
}

/*
 * git's modes under another umask: the pack and index are 0444 less
 * the umask, as the loose objects libgit2 wrote under it are.
 */
static void
test_pack_umask(void **state)
{
	struct fx *fx = *state;
	struct objs o;
	char loose[PATH_MAX];
	struct stat st;
	mode_t old;

	old = umask(027);
	make_objects(fx->repo, &o, 14);
	loose_path(loose, fx->gitdir, &o.id[0]);
	assert_int_equal(stat(loose, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0440);
	pack_ok(fx->repo, o.id, NOBJS);
	umask(old);
	assert_mode(fx->packdir, ".pack", 0440);
	assert_mode(fx->packdir, ".idx", 0440);
	assert_readable_fresh(fx->dir, &o);
}

/*
 * The pack goes to the indexer in pieces as it is written, never held
 * whole in memory (state/gitobjects.c): packing 1000 blobs of 4 KiB of
 * random bytes (a pack of 4 MiB: nothing compresses, nothing deltas)
 * keeps libgit2's live memory under half the pack (1.4 MB here).  Built in
 * memory first, the pack was a buffer that grew to 6.7 MB.
 */
static void
test_pack_streams(void **state)
{
	struct fx *fx = *state;
	enum { N = 1000, LEN = 4096 };
	git_oid *ids = calloc(N, sizeof(*ids));
	unsigned char blob[LEN];
	unsigned long long x = 88172645463325252ULL;
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	long long packsize = 0;
	DIR *d;
	size_t i, j;

	assert_non_null(ids);
	for (i = 0; i < N; i++) {
		for (j = 0; j < LEN; j++) { /* xorshift: incompressible */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			blob[j] = (unsigned char)x;
		}
		assert_int_equal(
		    git_blob_create_from_buffer(&ids[i], fx->repo, blob, LEN),
		    0);
	}
	galloc.live = galloc.peak = 0;
	galloc.on = 1;
	pack_ok(fx->repo, ids, N);
	galloc.on = 0;

	assert_non_null(d = opendir(fx->packdir));
	while ((de = readdir(d)) != NULL)
		if (ends_with(de->d_name, ".pack")) {
			join(path, fx->packdir, de->d_name);
			assert_int_equal(stat(path, &st), 0);
			packsize += st.st_size;
		}
	closedir(d);
	assert_true(packsize > (long long)N * LEN);
	assert_int_equal(count_objects(fx->dir, "in-pack"), N);
	if (galloc.peak >= packsize / 2)
		fail_msg("libgit2 peaked at %lld bytes packing %lld",
		    galloc.peak, packsize);
	free(ids);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_pack_basic, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_duplicates, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_nothing, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_missing_id, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_no_pack_dir, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_again, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_write_fails, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_worktree, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_sync_order, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_sync_fails, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_umask, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_streams, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
