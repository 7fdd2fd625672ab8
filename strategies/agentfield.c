/* agentfield.c - see agentfield.h. */
#include <math.h>
#include <string.h>

#include "strategies/agentfield.h"

json_t *
agentfield_text(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) && json_string_length(v) > 0 ? v : NULL;
}

bool
agentfield_is(json_t *o, const char *key, const char *want)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL && strcmp(s, want) == 0;
}

long long
agentfield_count(json_t *v)
{
	double d;

	if (json_is_integer(v))
		return json_integer_value(v) >= 0
		    ? (long long)json_integer_value(v)
		    : -1;
	if (!json_is_real(v))
		return -1;
	d = json_real_value(v);
	return isfinite(d) && d >= 0 && d < 9e18 ? (long long)d : -1;
}

long long
agentfield_claude_input(json_t *u)
{
	long long in = agentfield_count(json_object_get(u, "input_tokens")), c;

	if (in < 0)
		return -1;
	c = agentfield_count(json_object_get(u, "cache_creation_input_tokens"));
	in += c > 0 ? c : 0;
	c = agentfield_count(json_object_get(u, "cache_read_input_tokens"));
	return in + (c > 0 ? c : 0);
}

bool
agentfield_amount_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.' || c == ',' || c == 'k' ||
	    c == 'K' || c == 'm' || c == 'M';
}

double
agentfield_amount(const char *s, size_t n)
{
	double v = 0, scale = 1, mult = 1;
	bool dot = false, digit = false;
	size_t i;

	if (n > 0 && (s[n - 1] == 'k' || s[n - 1] == 'K'))
		mult = 1e3;
	else if (n > 0 && (s[n - 1] == 'm' || s[n - 1] == 'M'))
		mult = 1e6;
	if (mult > 1)
		n--;
	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digit = true;
			scale = dot ? scale / 10 : scale;
			v = dot ? v + (s[i] - '0') * scale
				: v * 10 + (s[i] - '0');
		} else if (s[i] == '.' && !dot) {
			dot = true;
		} else if (s[i] != ',' || dot) {
			return -1;
		}
	}
	return digit && v * mult < 9e18 ? v * mult : -1;
}
