/*
 * serve_session.h - the dashboard's sessions (docs/api.md#the-dashboard):
 * a key is exchanged once, by POST /session, for a random session id the
 * browser's tab keeps in its sessionStorage and sends in
 * X-Storyctl-Session (no cookie); the server keeps the id with the name and
 * stored hash of the key, never the key.  A session reads only, expires,
 * and ends when its key is revoked (the caller checks the key at every
 * use).
 */
#ifndef STORYCTL_SERVE_SESSION_H
#define STORYCTL_SERVE_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "state/db.h"

/* Sessions kept at once; a new one past this evicts the oldest. */
#define SERVE_SESSION_MAX 256
/* A session's life from its sign-in, in seconds: 12 hours. */
#define SERVE_SESSION_TTL_S (12 * 3600)
/* An id: 32 random bytes (getrandom) as 64 lowercase hex digits. */
#define SERVE_SESSION_ID_LEN 64

struct serve_sessions;

/* What a session stands for: its key's row, by name and stored hash. */
struct serve_session_key {
	char name[DB_KEY_NAME_MAX];
	char sha256[65];
};

/* An empty table; *out is the caller's, to serve_sessions_free(). */
int serve_sessions_new(struct serve_sessions **out, struct sc_err *err);
/* NULL ok. */
void serve_sessions_free(struct serve_sessions *t);

/* A new session for key, from now (seconds since the epoch): its id into
 * id.  Expired sessions are dropped first; a full table loses its oldest
 * session.  SC_EOS when the system gives no random bytes. */
int serve_session_add(struct serve_sessions *t,
    char id[SERVE_SESSION_ID_LEN + 1], const struct serve_session_key *key,
    int64_t now, struct sc_err *err);

/* The key of session id at now into *key: 0, or -1 when there is no such
 * session or it has expired (then it is dropped).  id is compared with
 * every stored id, each in constant time. */
int serve_session_find(struct serve_sessions *t, struct serve_session_key *key,
    const char *id, int64_t now);

/* End session id (its key is gone); no such session is not an error. */
void serve_session_drop(struct serve_sessions *t, const char *id);

/* Sessions held now, expired ones included until they are next met. */
size_t serve_session_count(const struct serve_sessions *t);

#endif
