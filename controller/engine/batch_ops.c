/* batch_ops.c - see batch.h: the agent seam (batch_agent_ops): the real
 * runner, started one at a time or supervised together
 * (docs/design.md#layout). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/engine/batch_run_int.h"
#include "controller/engine/requeue.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

int
batch_real_runner(void *ctx, struct runner_result *out,
    const struct runner_opts *o, struct sc_err *err)
{
	(void)ctx;
	return runner_run(out, o, err);
}

/* The blocking run_agent seam as an asynchronous one: start runs the
 * whole attempt, so a handle is done as soon as it exists. */
struct sync_handle {
	struct runner_result res;
};

static int
sync_start(
    void *ctx, void **handle, const struct runner_opts *o, struct sc_err *err)
{
	const struct batch_opts *bo = ctx;
	struct sync_handle *h = calloc(1, sizeof(*h));
	int rc;

	*handle = NULL;
	if (h == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc = bo->run_agent(bo->run_ctx, &h->res, o, err);
	if (rc < 0) {
		free(h);
		return rc;
	}
	*handle = h;
	return 0;
}

static int
sync_wait(void *ctx, void *const *handles, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err)
{
	(void)ctx;
	(void)handles;
	(void)timeout_ms;
	(void)wake_fd;
	(void)err;
	return (int)n;
}

static bool
sync_done(void *ctx, const void *handle)
{
	(void)ctx;
	(void)handle;
	return true;
}

static int
sync_finish(
    void *ctx, void *handle, struct runner_result *out, struct sc_err *err)
{
	struct sync_handle *h = handle;

	(void)ctx;
	(void)err;
	*out = h->res;
	free(h);
	return 0;
}

static int
real_start(
    void *ctx, void **handle, const struct runner_opts *o, struct sc_err *err)
{
	struct runner_proc *p = NULL;
	int rc;

	(void)ctx;
	rc = runner_start(&p, o, err);
	*handle = p;
	return rc;
}

static int
real_wait(void *ctx, void *const *handles, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err)
{
	(void)ctx;
	return runner_wait(
	    (struct runner_proc *const *)handles, n, timeout_ms, wake_fd, err);
}

static bool
real_done(void *ctx, const void *handle)
{
	(void)ctx;
	return runner_proc_done(handle);
}

static int
real_finish(
    void *ctx, void *handle, struct runner_result *out, struct sc_err *err)
{
	(void)ctx;
	return runner_proc_finish(handle, out, err);
}

void
batch_real_ops(struct batch_agent_ops *out)
{
	out->start = real_start;
	out->wait = real_wait;
	out->done = real_done;
	out->finish = real_finish;
	out->ctx = NULL;
}

void
batch_ops_init(struct batch_agent_ops *ops, const struct batch_opts *o)
{
	if (o->agent_ops.start != NULL) {
		*ops = o->agent_ops;
		return;
	}
	ops->start = sync_start;
	ops->wait = sync_wait;
	ops->done = sync_done;
	ops->finish = sync_finish;
	ops->ctx = (void *)o;
}
