/*
 * serve_session.c - see serve_session.h: the dashboard's sessions, in
 * memory (docs/api.md#the-dashboard).
 *
 * Only the server's one polling thread calls these (serve.c: the key
 * check and the answer of POST /session); the event streams' ticker
 * thread never does, so the table takes no lock.  A restart ends every
 * session: the browser signs in again.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <sodium.h>

#include "controller/serve/serve_session.h"

struct session {
	bool used;
	char id[SERVE_SESSION_ID_LEN + 1];
	struct serve_session_key key;
	int64_t created, expires;
};

struct serve_sessions {
	struct session s[SERVE_SESSION_MAX];
};

int
serve_sessions_new(struct serve_sessions **out, struct sc_err *err)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return err_set(err, SC_EOS, "out of memory");
	return 0;
}

static void
session_clear(struct session *s)
{
	sodium_memzero(s, sizeof(*s));
}

void
serve_sessions_free(struct serve_sessions *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < SERVE_SESSION_MAX; i++)
		session_clear(&t->s[i]);
	free(t);
}

/* 32 random bytes as hex; getrandom blocks only before the kernel's pool
 * is first ready, at boot. */
static int
session_id_new(char id[SERVE_SESSION_ID_LEN + 1], struct sc_err *err)
{
	unsigned char b[SERVE_SESSION_ID_LEN / 2];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(b)) {
		n = getrandom(b + got, sizeof(b) - got, 0);
		if (n <= 0)
			return err_set(err, SC_EOS,
			    "serve: no random bytes for a session id");
		got += (size_t)n;
	}
	sodium_bin2hex(id, SERVE_SESSION_ID_LEN + 1, b, sizeof(b));
	sodium_memzero(b, sizeof(b));
	return 0;
}

int
serve_session_add(struct serve_sessions *t, char id[SERVE_SESSION_ID_LEN + 1],
    const struct serve_session_key *key, int64_t now, struct sc_err *err)
{
	struct session *slot = NULL;
	size_t i;
	int rc;

	id[0] = '\0';
	for (i = 0; i < SERVE_SESSION_MAX; i++) {
		struct session *s = &t->s[i];

		if (s->used && s->expires <= now)
			session_clear(s);
		if (!s->used) {
			if (slot == NULL || slot->used)
				slot = s;
		} else if (slot == NULL ||
		    (slot->used && s->created < slot->created)) {
			slot = s;
		}
	}
	/* slot: the first free one, else the oldest session, evicted */
	session_clear(slot);
	if ((rc = session_id_new(slot->id, err)) < 0)
		return rc;
	slot->used = true;
	slot->key = *key;
	slot->created = now;
	slot->expires = now + SERVE_SESSION_TTL_S;
	memcpy(id, slot->id, SERVE_SESSION_ID_LEN + 1);
	return 0;
}

/* The slot of id, or NULL; every used slot is compared. */
static struct session *
session_lookup(struct serve_sessions *t, const char *id)
{
	struct session *hit = NULL;
	size_t i;

	/* the length is not a secret: anything but 64 bytes is no id */
	if (id == NULL || strlen(id) != SERVE_SESSION_ID_LEN)
		return NULL;
	for (i = 0; i < SERVE_SESSION_MAX; i++)
		if (t->s[i].used &&
		    sodium_memcmp(t->s[i].id, id, SERVE_SESSION_ID_LEN) == 0)
			hit = &t->s[i];
	return hit;
}

int
serve_session_find(struct serve_sessions *t, struct serve_session_key *key,
    const char *id, int64_t now)
{
	struct session *s = session_lookup(t, id);

	if (s == NULL)
		return -1;
	if (s->expires <= now) {
		session_clear(s);
		return -1;
	}
	*key = s->key;
	return 0;
}

void
serve_session_drop(struct serve_sessions *t, const char *id)
{
	struct session *s = session_lookup(t, id);

	if (s != NULL)
		session_clear(s);
}

size_t
serve_session_count(const struct serve_sessions *t)
{
	size_t i, n = 0;

	for (i = 0; i < SERVE_SESSION_MAX; i++)
		n += t->s[i].used ? 1 : 0;
	return n;
}
