/* apikey.c - see apikey.h (docs/api.md#keys). */
#include <string.h>

#include <sodium.h>

#include "state/apikey.h"

#define APIKEY_PREFIX "sc_"
#define APIKEY_BYTES 32

/* sodium_init() is safe to call again and from any thread; it returns 1
 * when already done. */
static int
apikey_init(struct sc_err *err)
{
	if (sodium_init() < 0)
		return err_set(err, SC_EOS, "libsodium cannot start");
	return 0;
}

int
apikey_generate(char *out, size_t size, struct sc_err *err)
{
	unsigned char raw[APIKEY_BYTES];
	size_t pre = strlen(APIKEY_PREFIX);
	int rc;

	if ((rc = apikey_init(err)) < 0)
		return rc;
	if (size <= APIKEY_LEN)
		return err_set(err, SC_ESOFTWARE, "apikey buffer too small");
	randombytes_buf(raw, sizeof(raw));
	memcpy(out, APIKEY_PREFIX, pre);
	sodium_bin2base64(out + pre, size - pre, raw, sizeof(raw),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
	return 0;
}

int
apikey_hash(char out[65], const char *key, struct sc_err *err)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	int rc;

	if ((rc = apikey_init(err)) < 0)
		return rc;
	crypto_hash_sha256(h, (const unsigned char *)key, strlen(key));
	sodium_bin2hex(out, 65, h, sizeof(h));
	return 0;
}

int
apikey_match(const struct key_row *rows, size_t n, const char *key)
{
	char h[65];
	size_t i;
	int found = -1;

	if (key == NULL || strnlen(key, APIKEY_MAX + 1) > APIKEY_MAX ||
	    apikey_hash(h, key, NULL) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (sodium_memcmp(h, rows[i].sha256, 64) == 0 && found < 0)
			found = (int)i;
	sodium_memzero(h, sizeof(h));
	return found;
}

int
apikey_name_check(const char *name, struct sc_err *err)
{
	size_t i, len = strnlen(name, DB_KEY_NAME_MAX);
	int ok =
	    len > 0 && len < DB_KEY_NAME_MAX && strchr("._-", name[0]) == NULL;

	for (i = 0; ok && i < len; i++) {
		char c = name[i];
		ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("._-", c) != NULL;
	}
	if (!ok)
		return err_set(err, SC_EUSAGE,
		    "key name '%.80s' is not 1 to 63 letters, digits, '.', "
		    "'_' or '-' starting with a letter or digit",
		    name);
	return 0;
}
