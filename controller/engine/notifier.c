/*
 * notifier.c - see notifier.h: a thread and a bounded queue per target,
 * libcurl for webhooks and spawn_start() for commands
 * (docs/notifications.md#delivery).
 *
 * Every wait of the thread is bounded: a webhook try by libcurl's connect
 * and total timeouts, a command try by NOTIFY_TRY_MS after which its
 * process group is killed, the pause between tries by the retry delay.
 * notifier_stop() sets abort_now, which each of those waits looks at
 * (libcurl through its progress callback, at least once a second), so
 * stopping never waits for a receiver that hangs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/optlib_curl.h"
#include "controller/clock.h"
#include "controller/engine/notifier.h"
#include "controller/engine/pgroup.h"
#include "controller/engine/spawn.h"
#include "state/redact.h"

extern char **environ;

/* How long a command's group has between SIGTERM and SIGKILL. */
#define NOTIFY_KILL_GRACE_MS 200
/* How often a command is looked at while it runs. */
#define NOTIFY_TICK_MS 20

struct njob {
	size_t target;
	enum notify_event event;
	char *json;
};

/* One target's thread and queue: a receiver that hangs delays only the
 * notifications meant for it. */
struct nworker {
	struct notifier *nf;
	size_t target;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a job queued, one done, quit, abort */
	struct njob q[NOTIFY_QUEUE_MAX];
	size_t head, len;
	bool busy; /* delivering one */
	bool quit;
	pthread_t th;
	bool th_ok, mu_ok, cv_ok;
};

struct notifier {
	const struct notify_conf *targets;
	size_t ntargets;
	char *cwd, *log_path;
	atomic_bool abort_now;
	pthread_mutex_t fmu; /* guards fails */
	struct notify_failure fails[NOTIFY_FAIL_MAX];
	size_t nfails;
	struct nworker *w; /* one per target */
	bool fmu_ok, curl_ok;
};

/* One try's answer. */
struct try_res {
	bool ok;
	bool retry; /* worth another try */
	char msg[320];
};

void
notifier_target_shown(char *buf, size_t cap, const struct notify_conf *t)
{
	const char *u = t->webhook, *sep, *host, *end, *at;
	char raw[256];

	if (u == NULL) {
		snprintf(raw, sizeof(raw), "command %s",
		    t->command.n > 0 ? t->command.items[0] : "?");
		redact_copy(buf, cap, raw);
		return;
	}
	/* scheme://host:port only: a Slack-style URL keeps its secret in
	 * the path, others in the query, some in user:password@ */
	sep = strstr(u, "://");
	host = sep != NULL ? sep + 3 : u;
	end = host + strcspn(host, "/?#");
	at = memrchr(host, '@', (size_t)(end - host));
	if (at != NULL)
		host = at + 1;
	snprintf(raw, sizeof(raw), "webhook %.*s%.*s",
	    (int)(sep != NULL ? sep + 3 - u : 0), u, (int)(end - host), host);
	redact_copy(buf, cap, raw);
}

/* CLOCK_MONOTONIC ms from now, for pthread_cond_timedwait (the
 * conditions are made on that clock: a change of the wall clock must not
 * stretch an interval). */
static void
deadline_ts(struct timespec *ts, int64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Wait up to ms, or until stopped; true when stopped. */
static bool
nap_or_abort(struct nworker *w, int64_t ms)
{
	struct notifier *nf = w->nf;
	struct timespec ts;
	bool stopped;

	deadline_ts(&ts, ms);
	pthread_mutex_lock(&w->mu);
	while (!atomic_load(&nf->abort_now) &&
	    pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
		;
	stopped = atomic_load(&nf->abort_now);
	pthread_mutex_unlock(&w->mu);
	return stopped;
}

/* ---- webhooks ---- */

static size_t
discard_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	(void)ptr;
	(void)ud;
	return size * nmemb;
}

/* libcurl calls it at least once a second: non-zero aborts the try. */
static int
curl_progress(
    void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct notifier *nf = ud;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return atomic_load(&nf->abort_now) ? 1 : 0;
}

static void
webhook_setup(CURL *c, struct notifier *nf, const char *url, const char *json,
    struct curl_slist *hdr, char *errbuf)
{
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(json));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "storyctl/" STORYCTL_VERSION);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)NOTIFY_CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)NOTIFY_TRY_MS);
	/* no SIGALRM for name lookups: this is a thread */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, curl_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, nf);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
}

static void
webhook_try(
    struct try_res *tr, struct notifier *nf, const char *url, const char *json)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL, *h;
	CURL *c = curl_easy_init();
	CURLcode cc;
	long status = 0;

	h = curl_slist_append(NULL, "Content-Type: application/json");
	/* no "Expect: 100-continue" pause before the body */
	hdr = h != NULL ? curl_slist_append(h, "Expect:") : NULL;
	if (c == NULL || hdr == NULL) {
		curl_slist_free_all(h);
		tr->retry = true;
		snprintf(tr->msg, sizeof(tr->msg), "out of memory");
		goto out;
	}
	webhook_setup(c, nf, url, json, hdr, errbuf);
	cc = curl_easy_perform(c);
	if (cc != CURLE_OK) {
		tr->retry = cc != CURLE_ABORTED_BY_CALLBACK;
		snprintf(tr->msg, sizeof(tr->msg), "%s",
		    cc == CURLE_ABORTED_BY_CALLBACK
			? "cut short: the batch ended"
			: errbuf[0] != '\0' ? errbuf
					    : curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	tr->ok = status >= 200 && status <= 299;
	tr->retry = notify_http_retryable(status);
	snprintf(tr->msg, sizeof(tr->msg), "HTTP %ld", status);
out:
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
}

/* ---- commands ---- */

/* fd moved above 2 (spawn_req wants it so), close-on-exec. */
static int
fd_high(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/* Start argv with json on a pipe to its stdin: *pid, *wfd our end. */
static void
command_spawn(struct try_res *tr, pid_t *pid, int *wfd, struct notifier *nf,
    const struct strlist *argv)
{
	struct spawn_req rq = {0};
	struct sc_err err = {0};
	int pfd[2] = {-1, -1}, out = -1, xe = 0;

	*pid = 0;
	*wfd = -1;
	tr->retry = true;
	if (pipe2(pfd, O_CLOEXEC) < 0 || (pfd[0] = fd_high(pfd[0])) < 0 ||
	    (pfd[1] = fd_high(pfd[1])) < 0 ||
	    (out = fd_high(open(nf->log_path,
		 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600))) < 0) {
		snprintf(tr->msg, sizeof(tr->msg), "cannot set up: %s",
		    strerror(errno));
		goto out;
	}
	rq.argv = (const char *const *)argv->items;
	rq.envp = environ;
	rq.cwd = nf->cwd;
	rq.out_fd = out;
	rq.in_fd = pfd[0];
	if (spawn_start(pid, &xe, &rq, &err) < 0) {
		snprintf(tr->msg, sizeof(tr->msg), "%.300s", err.msg);
	} else if (*pid == 0) {
		tr->retry = false;
		snprintf(tr->msg, sizeof(tr->msg), "cannot run %s: %s",
		    argv->items[0], strerror(xe));
	} else {
		/* never block on a reader that does not read */
		fcntl(pfd[1], F_SETFL, fcntl(pfd[1], F_GETFL) | O_NONBLOCK);
		*wfd = pfd[1];
		pfd[1] = -1;
	}
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (out >= 0)
		close(out);
}

/* Feed what is left of json to wfd; closes it when all is written or
 * the reader is gone. */
static void
command_feed(int *wfd, const char *json, size_t *off)
{
	size_t len = strlen(json);
	ssize_t n;

	if (*wfd < 0)
		return;
	n = write(*wfd, json + *off, len - *off);
	if (n > 0)
		*off += (size_t)n;
	if (*off >= len || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(*wfd);
		*wfd = -1;
	}
}

static void
command_try(struct try_res *tr, struct notifier *nf, const struct strlist *argv,
    const char *json)
{
	int64_t deadline = clock_mono_ms() + NOTIFY_TRY_MS;
	size_t off = 0;
	pid_t pid, w = 0;
	int wfd, st = 0;

	command_spawn(tr, &pid, &wfd, nf, argv);
	if (pid <= 0)
		return;
	for (;;) {
		command_feed(&wfd, json, &off);
		w = waitpid(pid, &st, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (atomic_load(&nf->abort_now) || clock_mono_ms() >= deadline)
			break;
		clock_nap_ms(NOTIFY_TICK_MS);
	}
	if (wfd >= 0)
		close(wfd);
	/* what it left behind in its group, or itself when it hangs */
	pgroup_kill(pid, NOTIFY_KILL_GRACE_MS);
	if (w != pid) {
		tr->retry = !atomic_load(&nf->abort_now);
		snprintf(tr->msg, sizeof(tr->msg), "%s",
		    tr->retry ? "did not exit within the time limit: killed"
			      : "cut short: the batch ended");
	} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		tr->ok = true;
	} else if (WIFEXITED(st)) {
		snprintf(
		    tr->msg, sizeof(tr->msg), "exited %d", WEXITSTATUS(st));
	} else {
		/* sigabbrev_np, not strsignal: this is a thread, and
		 * strsignal may share a buffer */
		snprintf(tr->msg, sizeof(tr->msg), "killed by signal %d (%s)",
		    WTERMSIG(st),
		    sigabbrev_np(WTERMSIG(st)) != NULL
			? sigabbrev_np(WTERMSIG(st))
			: "?");
	}
}

/* ---- the threads ---- */

/* Deliver job with its tries; on failure fill *f. */
static bool
deliver(struct nworker *w, const struct njob *job, struct notify_failure *f)
{
	struct notifier *nf = w->nf;
	const struct notify_conf *t = &nf->targets[w->target];
	struct try_res tr = {0};
	char raw[sizeof(f->msg)];
	int tries = 0;

	while (tries < NOTIFY_TRIES) {
		if (tries > 0 &&
		    nap_or_abort(w, notify_retry_delay_ms(tries + 1)))
			break;
		memset(&tr, 0, sizeof(tr));
		tries++;
		if (t->webhook != NULL)
			webhook_try(&tr, nf, t->webhook, job->json);
		else
			command_try(&tr, nf, &t->command, job->json);
		if (tr.ok)
			return true;
		if (!tr.retry)
			break;
	}
	f->event = job->event;
	notifier_target_shown(f->target, sizeof(f->target), t);
	snprintf(raw, sizeof(raw), "%s (%d %s)", tr.msg, tries,
	    tries == 1 ? "try" : "tries");
	redact_copy(f->msg, sizeof(f->msg), raw);
	return false;
}

static void
fail_add(struct notifier *nf, const struct notify_failure *f)
{
	pthread_mutex_lock(&nf->fmu);
	/* beyond the bound the loop has not looked for a long while; the
	 * end of the batch still says how many were given up */
	if (nf->nfails < NOTIFY_FAIL_MAX)
		nf->fails[nf->nfails++] = *f;
	pthread_mutex_unlock(&nf->fmu);
}

static void *
worker(void *arg)
{
	struct nworker *w = arg;
	struct notify_failure f;
	struct njob job;
	bool ok;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->len == 0 && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->len == 0 || atomic_load(&w->nf->abort_now))
			break;
		job = w->q[w->head];
		w->head = (w->head + 1) % NOTIFY_QUEUE_MAX;
		w->len--;
		w->busy = true;
		pthread_mutex_unlock(&w->mu);
		memset(&f, 0, sizeof(f));
		ok = deliver(w, &job, &f);
		free(job.json);
		if (!ok)
			fail_add(w->nf, &f);
		pthread_mutex_lock(&w->mu);
		w->busy = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int
real_post(void *ctx, size_t target, enum notify_event e, const char *json)
{
	struct notifier *nf = ctx;
	struct nworker *w;
	struct njob *j;
	char *copy;
	int rc = -1;

	if (target >= nf->ntargets || (copy = strdup(json)) == NULL)
		return -1;
	w = &nf->w[target];
	pthread_mutex_lock(&w->mu);
	if (w->len < NOTIFY_QUEUE_MAX && !w->quit) {
		j = &w->q[(w->head + w->len) % NOTIFY_QUEUE_MAX];
		j->target = target;
		j->event = e;
		j->json = copy;
		copy = NULL;
		w->len++;
		rc = 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	free(copy);
	return rc;
}

static size_t
real_take_failures(void *ctx, struct notify_failure *out, size_t cap)
{
	struct notifier *nf = ctx;
	size_t n;

	pthread_mutex_lock(&nf->fmu);
	n = nf->nfails < cap ? nf->nfails : cap;
	memcpy(out, nf->fails, n * sizeof(*out));
	memmove(nf->fails, nf->fails + n, (nf->nfails - n) * sizeof(*out));
	nf->nfails -= n;
	pthread_mutex_unlock(&nf->fmu);
	return n;
}

/* Every target's queue against one deadline. */
static size_t
real_drain(void *ctx, int64_t timeout_ms)
{
	struct notifier *nf = ctx;
	struct timespec ts;
	struct nworker *w;
	size_t i, left = 0;

	deadline_ts(&ts, timeout_ms);
	for (i = 0; i < nf->ntargets; i++) {
		w = &nf->w[i];
		pthread_mutex_lock(&w->mu);
		while ((w->len > 0 || w->busy) &&
		    pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
			;
		left += w->len + (w->busy ? 1 : 0);
		pthread_mutex_unlock(&w->mu);
	}
	return left;
}

void
notifier_ops(struct notify_ops *out, struct notifier *nf)
{
	out->post = real_post;
	out->take_failures = real_take_failures;
	out->drain = real_drain;
	out->ctx = nf;
}

/* Worker w's mutex, condition (on CLOCK_MONOTONIC) and thread, which
 * starts with every signal blocked: they are the loop's. */
static int
worker_start(struct nworker *w)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int e;

	e = pthread_mutex_init(&w->mu, NULL);
	w->mu_ok = e == 0;
	if (e == 0)
		e = pthread_condattr_init(&ca);
	if (e != 0)
		return e;
	e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (e == 0)
		e = pthread_cond_init(&w->cv, &ca);
	w->cv_ok = e == 0;
	pthread_condattr_destroy(&ca);
	if (e != 0)
		return e;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&w->th, NULL, worker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w->th_ok = e == 0;
	return e;
}

int
notifier_start(struct notifier **out, const struct notify_conf *targets,
    size_t n, const char *cwd, const char *log_path, struct sc_err *err)
{
	struct notifier *nf = calloc(1, sizeof(*nf));
	size_t i;
	int e = ENOMEM, rc = 0;

	*out = NULL;
	if (nf == NULL)
		goto fail;
	nf->targets = targets;
	atomic_init(&nf->abort_now, false);
	nf->cwd = strdup(cwd);
	nf->log_path = strdup(log_path);
	nf->w = calloc(n > 0 ? n : 1, sizeof(*nf->w));
	if (nf->cwd == NULL || nf->log_path == NULL || nf->w == NULL)
		goto fail;
	if ((rc = optlib_curl_load(err)) < 0)
		goto fail;
	/* here, before any thread: curl_global_init is the main one's */
	nf->curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
	if (!nf->curl_ok) {
		rc = err_set(err, SC_EOS, "notify: cannot set up libcurl");
		goto fail;
	}
	if ((e = pthread_mutex_init(&nf->fmu, NULL)) != 0)
		goto fail;
	nf->fmu_ok = true;
	for (i = 0; i < n; i++) {
		nf->ntargets = i + 1;
		nf->w[i].nf = nf;
		nf->w[i].target = i;
		if ((e = worker_start(&nf->w[i])) != 0)
			goto fail;
	}
	*out = nf;
	return 0;
fail:
	if (rc == 0)
		rc = err_set(err, SC_EOS,
		    "notify: cannot start its threads: %s", strerror(e));
	notifier_stop(nf);
	return rc;
}

/* Stop worker w (the abort is already raised) and free its queue. */
static void
worker_stop(struct nworker *w)
{
	if (w->th_ok) {
		pthread_mutex_lock(&w->mu);
		w->quit = true;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->th, NULL);
	}
	while (w->len > 0) {
		free(w->q[w->head].json);
		w->head = (w->head + 1) % NOTIFY_QUEUE_MAX;
		w->len--;
	}
	if (w->cv_ok)
		pthread_cond_destroy(&w->cv);
	if (w->mu_ok)
		pthread_mutex_destroy(&w->mu);
}

void
notifier_stop(struct notifier *nf)
{
	size_t i;

	if (nf == NULL)
		return;
	/* every thread cuts its try short at once, then all are joined */
	atomic_store(&nf->abort_now, true);
	for (i = 0; nf->w != NULL && i < nf->ntargets; i++)
		if (nf->w[i].mu_ok && nf->w[i].cv_ok) {
			pthread_mutex_lock(&nf->w[i].mu);
			pthread_cond_broadcast(&nf->w[i].cv);
			pthread_mutex_unlock(&nf->w[i].mu);
		}
	for (i = 0; nf->w != NULL && i < nf->ntargets; i++)
		worker_stop(&nf->w[i]);
	if (nf->fmu_ok)
		pthread_mutex_destroy(&nf->fmu);
	if (nf->curl_ok)
		curl_global_cleanup();
	free(nf->w);
	free(nf->cwd);
	free(nf->log_path);
	free(nf);
}
