/*
 * fuzz_utf8.h - a check shared by the fuzz targets whose output text
 * promises "valid UTF-8, no control characters but tab and newline",
 * and of the unit tests of the same modules (test_agentout.c,
 * test_review.c).  Header-only (static) so that each stays one .c file.
 */
#ifndef STORYCTL_FUZZ_UTF8_H
#define STORYCTL_FUZZ_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the NUL-terminated s is valid UTF-8 (no overlong forms, no
 * surrogates, at most U+10FFFF) with no C0 control byte but '\t' and
 * '\n' and no DEL. */
static bool
fuzz_clean_utf8(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned int cp;
	int n, i;

	while (*s != '\0') {
		if (*s < 0x80) {
			if ((*s < 0x20 && *s != '\t' && *s != '\n') ||
			    *s == 0x7f)
				return false;
			s++;
			continue;
		}
		if ((*s & 0xe0) == 0xc0) {
			n = 1;
			cp = *s & 0x1f;
		} else if ((*s & 0xf0) == 0xe0) {
			n = 2;
			cp = *s & 0x0f;
		} else if ((*s & 0xf8) == 0xf0) {
			n = 3;
			cp = *s & 0x07;
		} else {
			return false;
		}
		for (i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += n + 1;
	}
	return true;
}

#endif
