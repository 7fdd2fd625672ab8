/*
 * apikey.h - the service's API keys (docs/api.md#keys): a new random
 * key, its SHA-256 (the only form stored), the check of a presented key
 * against the stored hashes in constant time, and key names.  libsodium
 * does the randomness, the hash and the comparison.
 */
#ifndef STORYCTL_APIKEY_H
#define STORYCTL_APIKEY_H

#include <stddef.h>

#include "common/err.h"
#include "state/db.h"

/* "sc_" and 32 random bytes in unpadded base64url: 46 characters. */
#define APIKEY_LEN 46
/* A presented key longer than this is wrong without hashing it. */
#define APIKEY_MAX 256

/* A new key into out (size > APIKEY_LEN); SC_EOS when libsodium cannot
 * start. */
int apikey_generate(char *out, size_t size, struct sc_err *err);
/* The SHA-256 of key as 64 lowercase hex digits and a NUL; SC_EOS when
 * libsodium cannot start. */
int apikey_hash(char out[65], const char *key, struct sc_err *err);
/* The index of the row whose hash is key's, or -1.  Every row is
 * compared, each in constant time, so the time taken does not depend on
 * which key (if any) matched or how much of a hash agreed. */
int apikey_match(const struct key_row *rows, size_t n, const char *key);
/* A name is 1 to 63 of [A-Za-z0-9._-], starting with a letter or digit:
 * SC_EUSAGE naming it otherwise. */
int apikey_name_check(const char *name, struct sc_err *err);

#endif
