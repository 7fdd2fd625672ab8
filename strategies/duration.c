/* duration.c - see duration.h. */
#include <stdio.h>
#include <string.h>

#include "strategies/duration.h"

void
duration_fmt(char *buf, size_t len, int64_t ms)
{
	int64_t s;

	if (ms < 0)
		ms = 0;
	s = ms / 1000;
	if (ms < 1000)
		snprintf(buf, len, "%lldms", (long long)ms);
	else if (s < 60)
		snprintf(buf, len, "%.3gs", (double)ms / 1000.0);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(s / 60),
		    (long long)(s % 60));
	else
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600),
		    (long long)(s / 60 % 60));
}

/* Longer units first, so that "ms" is not read as minutes. */
static const struct {
	const char *name;
	int64_t ms;
} units[] = {
    {"ms", 1},
    {"s", 1000},
    {"m", 60 * 1000},
    {"h", 3600 * 1000},
    {"d", 24 * 3600 * 1000},
};

#define DURATION_MAX_MS ((int64_t)100 * 365 * 24 * 3600 * 1000)

int
duration_parse(int64_t *out_ms, const char *s)
{
	int64_t total = 0, num;
	size_t i, len;
	int ret = -1, found;

	*out_ms = 0;
	if (s == NULL || *s == '\0')
		goto out;
	while (*s != '\0') {
		if (*s < '0' || *s > '9')
			goto out;
		num = 0;
		while (*s >= '0' && *s <= '9') {
			num = num * 10 + (*s++ - '0');
			if (num > DURATION_MAX_MS)
				goto out;
		}
		found = 0;
		for (i = 0; i < sizeof(units) / sizeof(units[0]) && !found;
		     i++) {
			len = strlen(units[i].name);
			if (strncmp(s, units[i].name, len) != 0)
				continue;
			/* "m" must not take the "m" of "ms" */
			if (s[len] != '\0' && (s[len] < '0' || s[len] > '9'))
				continue;
			if (num > DURATION_MAX_MS / units[i].ms)
				goto out;
			total += num * units[i].ms;
			s += len;
			found = 1;
		}
		if (!found || total > DURATION_MAX_MS)
			goto out;
	}
	*out_ms = total;
	ret = 0;
out:
	return ret;
}
