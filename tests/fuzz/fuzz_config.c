/*
 * fuzz_config.c - libFuzzer target for config_load(): the input is the
 * text of a storyctl.json.  It is written to storyctl.json in a private
 * empty temporary directory (made once, removed at exit), because
 * config_load() resolves the project root and expands stories_glob
 * relative to the file's directory.  Story files are never read
 * (stories_load() is I/O heavy and not fuzzed here).
 *
 * Checks config.h's promises: on error the code is SC_EDATA with a
 * message naming the file and the config is left released (all zero);
 * on success the root and path are absolute and every story has an id.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char path[96];

static void
cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static int
setup(void)
{
	const char *tmp = getenv("TMPDIR");

	if (path[0] != '\0')
		return 0;
	snprintf(dir, sizeof(dir), "%s/fuzz_config.XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, CONFIG_FILE_NAME);
	atexit(cleanup);
	return 0;
}

static int
write_all(const uint8_t *data, size_t size)
{
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (size > 0) {
		n = write(fd, data, size);
		if (n <= 0) {
			rc = -1;
			break;
		}
		data += n;
		size -= (size_t)n;
	}
	close(fd);
	return rc;
}

static int
all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	struct sc_err err;
	size_t i;
	int rc;

	if (setup() < 0 || write_all(data, size) < 0)
		abort();
	memset(&c, 0xa5, sizeof(c));
	memset(&err, 0, sizeof(err));
	rc = config_load(&c, path, &err);
	if (rc != 0) {
		if (rc != SC_EDATA || err.code != SC_EDATA ||
		    strstr(err.msg, CONFIG_FILE_NAME) == NULL)
			abort();
		if (!all_zero(&c, sizeof(c)))
			abort();
		return 0;
	}
	if (c.root == NULL || c.root[0] != '/' || c.path == NULL ||
	    c.path[0] != '/' || c.state_dir == NULL || c.state_dir[0] != '/')
		abort();
	if (c.policy.max_attempts < 1)
		abort();
	for (i = 0; i < c.nstories; i++)
		if (c.stories[i].file == NULL ||
		    !config_id_valid(c.stories[i].id))
			abort();
	if (config_check_cycles(&c, &err) != 0)
		abort();
	config_release(&c);
	if (!all_zero(&c, sizeof(c)))
		abort();
	return 0;
}
