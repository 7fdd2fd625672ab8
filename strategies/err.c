/* err.c - see err.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "strategies/err.h"

int
err_set(struct sc_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int
err_prefix(struct sc_err *err, const char *fmt, ...)
{
	char head[512];
	char old[sizeof(err->msg)];
	va_list ap;

	if (err == NULL)
		return SC_ESOFTWARE;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old);
	return err->code;
}

void
err_clear(struct sc_err *err)
{
	if (err == NULL)
		return;
	err->code = SC_OK;
	err->msg[0] = '\0';
}

int
err_exit_status(int code)
{
	if (code >= 0)
		return 0;
	if (code < -255)
		return 70;
	return -code;
}
