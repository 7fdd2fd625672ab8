/* err.c - see err.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"

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
	char old[sizeof(err->msg)];
	size_t used, oldlen;
	va_list ap;

	if (err == NULL)
		return SC_ESOFTWARE;
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* "<context>: <old message>", truncated to fit */
	used = strlen(err->msg);
	oldlen = strlen(old);
	if (used + 2 < sizeof(err->msg)) {
		memcpy(err->msg + used, ": ", 2);
		used += 2;
		if (oldlen > sizeof(err->msg) - 1 - used)
			oldlen = sizeof(err->msg) - 1 - used;
		memcpy(err->msg + used, old, oldlen);
		err->msg[used + oldlen] = '\0';
	}
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
