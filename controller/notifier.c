/*
 * notifier.c - see notifier.h: one thread, a bounded queue, libcurl for
 * webhooks and spawn_start() for commands (docs/notifications.md#delivery).
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

#include <curl/curl.h>

#include "controller/clock.h"
#include "controller/notifier.h"
#include "controller/pgroup.h"
#include "controller/spawn.h"
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

struct notifier {
	const struct notify_conf *targets;
	size_t ntargets;
	char *cwd, *log_path;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a job queued, one done, quit, abort */
	struct njob q[NOTIFY_QUEUE_MAX];
	size_t head, len;
	bool busy; /* the thread is delivering one */
	bool quit;
	atomic_bool abort_now;
	struct notify_failure fails[NOTIFY_FAIL_MAX];
	size_t nfails;
	pthread_t th;
	bool th_ok, mu_ok, cv_ok, curl_ok;
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

/* Wait up to ms, or until stopped; true when stopped. */
static bool
nap_or_abort(struct notifier *nf, int64_t ms)
{
	struct timespec ts;
	bool stopped;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&nf->mu);
	while (!atomic_load(&nf->abort_now) &&
	    pthread_cond_timedwait(&nf->cv, &nf->mu, &ts) != ETIMEDOUT)
		;
	stopped = atomic_load(&nf->abort_now);
	pthread_mutex_unlock(&nf->mu);
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
		snprintf(tr->msg, sizeof(tr->msg), "killed by %s",
		    strsignal(WTERMSIG(st)));
	}
}

/* ---- the thread ---- */

/* Deliver job with its tries; on failure fill *f. */
static bool
deliver(struct notifier *nf, const struct njob *job, struct notify_failure *f)
{
	const struct notify_conf *t = &nf->targets[job->target];
	struct try_res tr = {0};
	char raw[sizeof(f->msg)];
	int tries = 0;

	while (tries < NOTIFY_TRIES) {
		if (tries > 0 &&
		    nap_or_abort(nf, notify_retry_delay_ms(tries + 1)))
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

static void *
worker(void *arg)
{
	struct notifier *nf = arg;
	struct notify_failure f;
	struct njob job;
	bool ok;

	pthread_mutex_lock(&nf->mu);
	for (;;) {
		while (nf->len == 0 && !nf->quit)
			pthread_cond_wait(&nf->cv, &nf->mu);
		if (nf->len == 0 || atomic_load(&nf->abort_now))
			break;
		job = nf->q[nf->head];
		nf->head = (nf->head + 1) % NOTIFY_QUEUE_MAX;
		nf->len--;
		nf->busy = true;
		pthread_mutex_unlock(&nf->mu);
		memset(&f, 0, sizeof(f));
		ok = deliver(nf, &job, &f);
		free(job.json);
		pthread_mutex_lock(&nf->mu);
		nf->busy = false;
		if (!ok && nf->nfails < NOTIFY_FAIL_MAX)
			nf->fails[nf->nfails++] = f;
		pthread_cond_broadcast(&nf->cv);
	}
	pthread_mutex_unlock(&nf->mu);
	return NULL;
}

static int
real_post(void *ctx, size_t target, enum notify_event e, const char *json)
{
	struct notifier *nf = ctx;
	char *copy;
	int rc = -1;

	if (target >= nf->ntargets || (copy = strdup(json)) == NULL)
		return -1;
	pthread_mutex_lock(&nf->mu);
	if (nf->len < NOTIFY_QUEUE_MAX && !nf->quit) {
		struct njob *j =
		    &nf->q[(nf->head + nf->len) % NOTIFY_QUEUE_MAX];
		j->target = target;
		j->event = e;
		j->json = copy;
		copy = NULL;
		nf->len++;
		rc = 0;
		pthread_cond_broadcast(&nf->cv);
	}
	pthread_mutex_unlock(&nf->mu);
	free(copy);
	return rc;
}

static size_t
real_take_failures(void *ctx, struct notify_failure *out, size_t cap)
{
	struct notifier *nf = ctx;
	size_t n;

	pthread_mutex_lock(&nf->mu);
	n = nf->nfails < cap ? nf->nfails : cap;
	memcpy(out, nf->fails, n * sizeof(*out));
	memmove(nf->fails, nf->fails + n, (nf->nfails - n) * sizeof(*out));
	nf->nfails -= n;
	pthread_mutex_unlock(&nf->mu);
	return n;
}

static size_t
real_drain(void *ctx, int64_t timeout_ms)
{
	struct notifier *nf = ctx;
	struct timespec ts;
	size_t left;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(timeout_ms / 1000);
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&nf->mu);
	while ((nf->len > 0 || nf->busy) &&
	    pthread_cond_timedwait(&nf->cv, &nf->mu, &ts) != ETIMEDOUT)
		;
	left = nf->len + (nf->busy ? 1 : 0);
	pthread_mutex_unlock(&nf->mu);
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

/* The mutex and the condition (on CLOCK_MONOTONIC: the timed waits are
 * intervals, which a change of the wall clock must not stretch). */
static int
sync_init(struct notifier *nf)
{
	pthread_condattr_t ca;
	int e;

	e = pthread_mutex_init(&nf->mu, NULL);
	nf->mu_ok = e == 0;
	if (e == 0)
		e = pthread_condattr_init(&ca);
	if (e != 0)
		return e;
	e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (e == 0)
		e = pthread_cond_init(&nf->cv, &ca);
	nf->cv_ok = e == 0;
	pthread_condattr_destroy(&ca);
	return e;
}

int
notifier_start(struct notifier **out, const struct notify_conf *targets,
    size_t n, const char *cwd, const char *log_path, struct sc_err *err)
{
	struct notifier *nf = calloc(1, sizeof(*nf));
	sigset_t all, old;
	int e = ENOMEM, rc = 0;

	*out = NULL;
	if (nf == NULL)
		goto fail;
	nf->targets = targets;
	nf->ntargets = n;
	atomic_init(&nf->abort_now, false);
	nf->cwd = strdup(cwd);
	nf->log_path = strdup(log_path);
	if (nf->cwd == NULL || nf->log_path == NULL)
		goto fail;
	/* here, before the thread: curl_global_init is for the main one */
	nf->curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
	if (!nf->curl_ok) {
		rc = err_set(err, SC_EOS, "notify: cannot set up libcurl");
		goto fail;
	}
	if ((e = sync_init(nf)) != 0)
		goto fail;
	/* the thread starts with every signal blocked: they are the loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&nf->th, NULL, worker, nf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	nf->th_ok = e == 0;
	if (e != 0)
		goto fail;
	*out = nf;
	return 0;
fail:
	if (rc == 0)
		rc = err_set(err, SC_EOS, "notify: cannot start its thread: %s",
		    strerror(e));
	notifier_stop(nf);
	return rc;
}

void
notifier_stop(struct notifier *nf)
{
	if (nf == NULL)
		return;
	if (nf->th_ok) {
		pthread_mutex_lock(&nf->mu);
		nf->quit = true;
		atomic_store(&nf->abort_now, true);
		pthread_cond_broadcast(&nf->cv);
		pthread_mutex_unlock(&nf->mu);
		pthread_join(nf->th, NULL);
	}
	while (nf->len > 0) {
		free(nf->q[nf->head].json);
		nf->head = (nf->head + 1) % NOTIFY_QUEUE_MAX;
		nf->len--;
	}
	if (nf->cv_ok)
		pthread_cond_destroy(&nf->cv);
	if (nf->mu_ok)
		pthread_mutex_destroy(&nf->mu);
	if (nf->curl_ok)
		curl_global_cleanup();
	free(nf->cwd);
	free(nf->log_path);
	free(nf);
}
