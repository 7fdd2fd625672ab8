/* serve_guard.c - see serve_guard.h: a request that has not arrived
 * whole within the deadline has its socket shut down, and a client over
 * its share of connections loses its oldest idle one
 * (docs/api.md#limits). */
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "controller/optlib_mhd.h"
#include "controller/clock.h"
#include "controller/serve/serve_guard.h"

/* How often the guard looks: a request is cut at most this much after
 * its deadline. */
#define GUARD_TICK_MS 250

/* One connection of the library's, in the guard's list. */
struct slot {
	struct slot *prev, *next;
	int fd;
	int64_t since_ms; /* when the server began waiting for a request */
	bool waiting; /* its request has not arrived whole yet */
	bool cut; /* shut down: closing, no longer counted */
	unsigned char client[SERVE_CLIENT_LEN]; /* serve_client_of() */
};

struct serve_guard {
	pthread_mutex_t mu; /* the list and stop */
	pthread_cond_t cv; /* stop */
	pthread_t thread;
	bool stop;
	int64_t deadline_ms;
	struct slot *head;
};

/* Shut down the sockets of the requests past their deadline; called
 * with mu held. */
static void
guard_sweep(struct serve_guard *g, int64_t now)
{
	struct slot *s;

	for (s = g->head; s != NULL; s = s->next)
		if (s->waiting && now - s->since_ms >= g->deadline_ms) {
			/* the library's thread sees the end of the stream
			 * and closes the connection itself */
			shutdown(s->fd, SHUT_RDWR);
			s->waiting = false;
			s->cut = true;
		}
}

/* A new connection n (at the list's head) over a share: the client's
 * own when same, else the server's.  The oldest connection still
 * waiting for its request (idle, or slow) in that share is shut down;
 * with none, n itself is.  So idle sockets never keep a client that
 * sends its request at once waiting in the kernel's backlog
 * (docs/api.md#limits).  Called with mu held. */
static void
guard_evict(struct serve_guard *g, struct slot *n, bool same)
{
	struct slot *s, *oldest = NULL;

	for (s = n->next; s != NULL; s = s->next)
		if (s->waiting && !s->cut &&
		    (!same ||
			memcmp(s->client, n->client, sizeof(n->client)) == 0))
			oldest = s; /* the list is newest first */
	if (oldest == NULL)
		oldest = n;
	shutdown(oldest->fd, SHUT_RDWR);
	oldest->waiting = false;
	oldest->cut = true;
}

/* Count the connections not shut down: the server's and n's client's
 * (n included); evict over either cap.  Called with mu held. */
static void
guard_admit(struct serve_guard *g, struct slot *n)
{
	struct slot *s;
	size_t all = 0, same = 0;

	for (s = g->head; s != NULL; s = s->next) {
		if (s->cut)
			continue;
		all++;
		if (memcmp(s->client, n->client, sizeof(n->client)) == 0)
			same++;
	}
	if (same > SERVE_CLIENT_CONN_MAX)
		guard_evict(g, n, true);
	else if (all > SERVE_EVICT_AT)
		guard_evict(g, n, false);
}

void
serve_client_of(unsigned char out[SERVE_CLIENT_LEN], struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = info != NULL ? info->client_addr : NULL;

	/* IPv4 as its IPv4-mapped IPv6 address: one form for both */
	memset(out, 0, SERVE_CLIENT_LEN);
	if (sa != NULL && sa->sa_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12,
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
		    4);
	} else if (sa != NULL && sa->sa_family == AF_INET6) {
		memcpy(out,
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
		    16);
	}
}

static void *
guard_main(void *arg)
{
	struct serve_guard *g = arg;
	struct timespec ts;

	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += GUARD_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
		if (!g->stop)
			guard_sweep(g, clock_mono_ms());
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int
serve_guard_start(
    struct serve_guard **out, int64_t deadline_ms, struct sc_err *err)
{
	struct serve_guard *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;
	int rc = 0;

	*out = NULL;
	if (g == NULL)
		return err_set(err, SC_EOS, "out of memory");
	g->deadline_ms = deadline_ms;
	pthread_mutex_init(&g->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&g->thread, NULL, guard_main, g) != 0) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
		free(g);
		rc = err_set(err, SC_EOS, "serve: cannot start a thread");
		g = NULL;
	}
	*out = g;
	return rc;
}

void
serve_guard_stop(struct serve_guard *g)
{
	struct slot *s, *next;

	if (g == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = true;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thread, NULL);
	for (s = g->head; s != NULL; s = next) {
		next = s->next;
		free(s);
	}
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void
serve_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct serve_guard *g = cls;
	struct slot *s = *socket_context;
	const union MHD_ConnectionInfo *fd =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	pthread_mutex_lock(&g->mu);
	if (code == MHD_CONNECTION_NOTIFY_STARTED && fd != NULL &&
	    (s = calloc(1, sizeof(*s))) != NULL) {
		/* (no memory: this one connection goes unguarded) */
		s->fd = fd->connect_fd;
		s->since_ms = clock_mono_ms();
		s->waiting = true;
		serve_client_of(s->client, c);
		s->next = g->head;
		if (g->head != NULL)
			g->head->prev = s;
		g->head = s;
		*socket_context = s;
		guard_admit(g, s);
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && s != NULL) {
		/* before the library closes the socket: never shut down
		 * a number another connection has been given since */
		if (s->prev != NULL)
			s->prev->next = s->next;
		else
			g->head = s->next;
		if (s->next != NULL)
			s->next->prev = s->prev;
		free(s);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&g->mu);
}

/* Mark c's slot: waiting for a request since now, or not waiting. */
static void
guard_mark(struct serve_guard *g, struct MHD_Connection *c, bool waiting)
{
	const union MHD_ConnectionInfo *info =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct slot *s;

	if (g == NULL || info == NULL || info->socket_context == NULL)
		return;
	s = info->socket_context;
	pthread_mutex_lock(&g->mu);
	s->waiting = waiting;
	s->since_ms = clock_mono_ms();
	pthread_mutex_unlock(&g->mu);
}

void
serve_guard_arrived(struct serve_guard *g, struct MHD_Connection *c)
{
	guard_mark(g, c, false);
}

void
serve_guard_next(struct serve_guard *g, struct MHD_Connection *c)
{
	guard_mark(g, c, true);
}
