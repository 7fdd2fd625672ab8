/* text.c - see text.h. */
#include <stdbool.h>
#include <stddef.h>

#include "strategies/text.h"

static bool
is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t
text_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t k, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		k = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < k || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < k; i++)
		if (!is_cont(s[i]))
			return 0;
	return k;
}

size_t
text_esc_len(const unsigned char *s, size_t n)
{
	size_t i;

	if (n < 2)
		return n;
	switch (s[1]) {
	case '[':
		i = 2;
		while (i < n && s[i] >= 0x30 && s[i] <= 0x3f)
			i++;
		while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
			i++;
		if (i < n && s[i] >= 0x40 && s[i] <= 0x7e)
			i++;
		return i;
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		for (i = 2; i < n; i++) {
			if (s[i] == 0x07)
				return i + 1;
			if (s[i] == 0x1b)
				return i + 1 < n && s[i + 1] == '\\' ? i + 2
								     : i;
			if (s[i] == '\n')
				return i;
		}
		return n;
	default:
		i = 1;
		while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
			i++;
		if (i < n && s[i] >= 0x30 && s[i] <= 0x7e)
			i++;
		return i;
	}
}

bool
text_json_depth_ok(const char *s, size_t n, int max_depth)
{
	bool str = false, esc = false;
	size_t i;
	int d = 0;

	for (i = 0; i < n; i++) {
		if (str) {
			if (esc)
				esc = false;
			else if (s[i] == '\\')
				esc = true;
			else if (s[i] == '"')
				str = false;
		} else if (s[i] == '"') {
			str = true;
		} else if (s[i] == '{' || s[i] == '[') {
			if (++d > max_depth)
				return false;
		} else if (s[i] == '}' || s[i] == ']') {
			d--;
		}
	}
	return true;
}
