/*
 * serve_config.c - see serve_config.h: the config kept between requests
 * (docs/api.md#what-a-request-costs).
 *
 * Loading storyctl.json expands stories.glob and the sprint status and
 * stats every story file: for 200 stories about 258 stat calls, most of
 * a request's cost.  The kept config is used again while all of these
 * hold, and loaded again otherwise:
 *
 * - storyctl.json is the same file as when it was loaded: the same path
 *   (-c FILE, or the nearest storyctl.json up from the directory, looked
 *   up on every request as cli_load_config() does) and the same st_dev,
 *   st_ino, st_size and st_mtim.  An editor's save in place changes the
 *   size or the time, a save by rename the inode.
 * - Its modification time was at least RACY_MS before the load began.
 *   The kernel stamps files from a clock that ticks every few
 *   milliseconds, so a write in the same tick as the load, of the same
 *   size, would keep the identity: a file that new is loaded again on
 *   the next request, until it has been quiet that long ("racy git").
 * - A batch exists in the database.  Before the first batch the views
 *   list the config's stories (view_stories()), so every read view then
 *   loads the config again, as `status` and `list` do: a story file
 *   added or removed shows on the next request.  Those requests read
 *   every story file anyway (stories_load()), which costs more than the
 *   glob.
 *
 * Once a batch exists, what the read views take from the config is
 * state_dir, the policy, the agents and the breaker (the retry-policy
 * GET), all written in storyctl.json; the stories come from the
 * database.  So the one thing that can be stale is the part built from
 * other files: the glob's matches and the sprint status.  No read view
 * uses it then, with one difference left: a story file added after the
 * batch began that would make the config fail to load (an id that is
 * not valid, say) makes every request of a server without the cache a
 * 500, while this one answers from the database until storyctl.json
 * changes or the server restarts; `run` refuses that config as before.
 * Write requests (PUT, DELETE, POST) load the config themselves, as
 * before (requeue reads depends_on), and open the database for writing.
 *
 * A load that fails is never kept: the next request loads again and
 * gets the same error, as before.  A view borrows the kept config
 * (shallow copy, read only); while one does, a second view (none does
 * today) loads its own, so the kept one is never released under a
 * borrower.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/config/config.h"
#include "controller/serve/serve_config.h"

/* How old storyctl.json must be for its identity to be trusted. */
#define RACY_MS 2000

struct serve_config {
	struct config cfg; /* valid when have */
	bool have;
	bool racy; /* load again on the next request */
	char *path; /* the file cfg was loaded from */
	struct stat id; /* its identity, taken before the load */
	int lent; /* views borrowing cfg now */
	struct db *db; /* the request's read-only handle, or NULL */
	const char *db_dir; /* the state directory of db */
	unsigned long loads;
	struct view_lender lender; /* what view_open() is given */
};

static int sc_lend(
    struct view *v, void *arg, const char *config_path, struct sc_err *err);
static void sc_give_back(struct view *v, void *arg);

int
serve_config_new(struct serve_config **out, struct sc_err *err)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return err_set(err, SC_EOS, "out of memory");
	(*out)->lender.lend = sc_lend;
	(*out)->lender.give_back = sc_give_back;
	(*out)->lender.arg = *out;
	return 0;
}

void
serve_config_free(struct serve_config *sc)
{
	if (sc == NULL)
		return;
	config_release(&sc->cfg);
	free(sc->path);
	free(sc);
}

const struct view_lender *
serve_config_lender(struct serve_config *sc)
{
	return &sc->lender;
}

void
serve_config_use_db(
    struct serve_config *sc, struct db *db, const char *state_dir)
{
	sc->db = db;
	sc->db_dir = db != NULL ? state_dir : NULL;
}

unsigned long
serve_config_loads(const struct serve_config *sc)
{
	return sc->loads;
}

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Load sc->cfg again unless the kept one is current for storyctl.json
 * (force: load anyway).  *loaded: whether it was loaded. */
static int
sc_current(struct serve_config *sc, bool *loaded, const char *config_path,
    bool force, struct sc_err *err)
{
	struct stat st = {0};
	char *path = NULL;
	int64_t now_ms, mtime_ms;
	bool known;
	int rc;

	*loaded = false;
	rc = config_locate(&path, config_path, err);
	if (rc < 0)
		goto out;
	known = stat(path, &st) == 0;
	if (!force && known && sc->have && !sc->racy &&
	    strcmp(path, sc->path) == 0 && same_file(&st, &sc->id))
		goto out;
	now_ms = view_now_ms();
	config_release(&sc->cfg);
	sc->have = false;
	free(sc->path);
	sc->path = path;
	path = NULL;
	rc = config_load(&sc->cfg, sc->path, err);
	if (rc < 0)
		goto out;
	sc->have = true;
	sc->loads++;
	*loaded = true;
	sc->id = st;
	mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 +
	    (int64_t)st.st_mtim.tv_nsec / 1000000;
	sc->racy = !known || mtime_ms > now_ms - RACY_MS;
out:
	free(path);
	return rc;
}

/* v->db and v's latest batch for state_dir: the request's handle when
 * it is one on state_dir, else v's own, as view_open() opens it. */
static int
sc_batch(struct view *v, struct serve_config *sc, const char *state_dir,
    struct sc_err *err)
{
	struct stat sb;
	char path[4096];
	int rc;

	if (sc->db != NULL && strcmp(sc->db_dir, state_dir) == 0) {
		v->db = sc->db;
	} else {
		snprintf(path, sizeof(path), "%s/state.db", state_dir);
		if (stat(path, &sb) < 0)
			return 0; /* nothing has run yet */
		rc = db_open_readonly(&v->db, state_dir, err);
		if (rc < 0)
			return rc;
	}
	return db_batch_latest(v->db, &v->batch, &v->have_batch, err);
}

/* Close v's own handle (not the request's) and forget the batch. */
static void
sc_db_drop(struct view *v, struct serve_config *sc)
{
	if (v->db != sc->db)
		db_close(v->db);
	v->db = NULL;
	v->have_batch = 0;
	memset(&v->batch, 0, sizeof(v->batch));
}

/* view_open()'s lender: 0 while another view borrows (the kept config
 * is never replaced under a borrower), so v opens its own. */
static int
sc_lend(struct view *v, void *arg, const char *config_path, struct sc_err *err)
{
	struct serve_config *sc = arg;
	bool loaded = false;
	int rc;

	if (sc->lent > 0)
		return 0;
	memset(v, 0, sizeof(*v));
	rc = sc_current(sc, &loaded, config_path, false, err);
	if (rc == 0)
		rc = sc_batch(v, sc, sc->cfg.state_dir, err);
	/* before the first batch the views list the config's stories:
	 * glob them again (the header) */
	if (rc == 0 && !v->have_batch && !loaded) {
		sc_db_drop(v, sc);
		rc = sc_current(sc, &loaded, config_path, true, err);
		if (rc == 0)
			rc = sc_batch(v, sc, sc->cfg.state_dir, err);
	}
	if (rc < 0) {
		sc_db_drop(v, sc);
		memset(v, 0, sizeof(*v));
		return rc;
	}
	v->cfg = sc->cfg;
	v->lender = &sc->lender;
	sc->lent++;
	return 1;
}

static void
sc_give_back(struct view *v, void *arg)
{
	struct serve_config *sc = arg;

	sc_db_drop(v, sc);
	/* v->cfg is sc's: not released here */
	memset(&v->cfg, 0, sizeof(v->cfg));
	v->lender = NULL;
	sc->lent--;
}
