/* duration.c - see duration.h. */
#include <stdio.h>

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
