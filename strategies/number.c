/* number.c - see number.h. */
#include <errno.h>
#include <stdlib.h>

#include "strategies/number.h"

int
number_parse_int(int *out, const char *s, const char *what, int min, int max,
    struct sc_err *err)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return err_set(err, SC_EUSAGE,
		    "%s must be a whole number from %d to %d, not '%s'", what,
		    min, max, s);
	*out = (int)v;
	return 0;
}
