/*
 * progress_box.c - the items of a Tasks section that look like tasks to
 * their author but are no checkbox on GitHub: another mark in the box,
 * a check-mark emoji, Kiro's optional "[ ]*", a box with no text or no
 * space after it (docs/stories.md "Items storyctl does not count").
 * Pure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "strategies/progress_int.h"
#include "strategies/text.h"

/* Check marks and boxes written as emoji instead of "[ ]"/"[x]". */
static const struct {
	const char *mark;
	bool checked;
} emoji_boxes[] = {
    {"\xE2\x9C\x85", true}, /* U+2705 white heavy check mark */
    {"\xE2\x9C\x94", true}, /* U+2714 heavy check mark */
    {"\xE2\x9C\x93", true}, /* U+2713 check mark */
    {"\xE2\x98\x91", true}, /* U+2611 ballot box with check */
    {"\xE2\x98\x92", true}, /* U+2612 ballot box with x */
    {"\xE2\x98\x90", false}, /* U+2610 ballot box */
    {"\xE2\xAC\x9C", false}, /* U+2B1C white large square */
    {"\xF0\x9F\x94\xB2", false}, /* U+1F532 black square button */
    {"\xF0\x9F\x94\xB3", false}, /* U+1F533 white square button */
};

/* A check-mark emoji at the start of s[0..n) (emoji_boxes). */
static bool
emoji_box(char *why, size_t wlen, bool *checked, const char *s, size_t n)
{
	size_t i, k;

	for (i = 0; i < sizeof(emoji_boxes) / sizeof(*emoji_boxes); i++) {
		k = strlen(emoji_boxes[i].mark);
		if (n >= k && memcmp(s, emoji_boxes[i].mark, k) == 0) {
			*checked = emoji_boxes[i].checked;
			snprintf(why, wlen, "not counted: %s is not a checkbox",
			    emoji_boxes[i].mark);
			return true;
		}
	}
	return false;
}

/* A "[ ]" or "[x]" at the start of s[0..n) (n >= 2) that GitHub does
 * not take for a checkbox: no text, Kiro's optional "[ ]*", no space
 * after it. */
static bool
plain_box(char *why, size_t wlen, bool *checked, const char *s, size_t n)
{
	size_t i;

	if (n < 3 || s[2] != ']')
		return false;
	*checked = s[1] != ' ';
	for (i = 3; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	if (i == n) {
		snprintf(why, wlen,
		    "not counted: a box with no text is not a checkbox");
		return true;
	}
	if (s[3] == '*') {
		snprintf(why, wlen,
		    "not counted: an optional task ([%c]*) is not a checkbox",
		    s[1]);
		return true;
	}
	/* "[x](url)" and "[x][ref]" are links */
	if (i == 3 && s[3] != '(' && s[3] != '[') {
		snprintf(why, wlen, "not counted: no space after the box");
		return true;
	}
	return false;
}

/* One other character in the box at the start of s[0..n) (n >= 2):
 * "[-]", "[~]", "[/]", "[o]"; digits and letters are a reference
 * ("[1]"), except an "o". */
static bool
other_box(char *why, size_t wlen, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t k = text_utf8_len(u + 1, n - 1);

	if (k == 0 || s[1] == '[' || s[1] == '\t' ||
	    (k == 1 && text_is_alnum(u[1]) && s[1] != 'o' && s[1] != 'O'))
		return false;
	if (n < k + 2 || s[k + 1] != ']' ||
	    (n > k + 2 && s[k + 2] != ' ' && s[k + 2] != '\t'))
		return false;
	snprintf(
	    why, wlen, "not counted: [%.*s] is not a checkbox", (int)k, s + 1);
	return true;
}

/*
 * Whether an item whose text begins with s[0..n) looks like a task to
 * its author though GitHub shows no checkbox (docs/stories.md): another
 * mark in the box ("[-]", "[~]", "[/]"), a check-mark emoji, Kiro's
 * optional "[ ]*", a box with no text or no space after it, "[]".
 * Fills why and *checked when so.
 */
bool
progress_box_like(
    char *why, size_t wlen, bool *checked, const char *s, size_t n)
{
	*checked = false;
	if (emoji_box(why, wlen, checked, s, n))
		return true;
	if (n < 2 || s[0] != '[')
		return false;
	if (s[1] == ']') {
		snprintf(why, wlen,
		    "not counted: [] is not a checkbox (write [ ] or [x])");
		return true;
	}
	if (s[1] == ' ' || s[1] == 'x' || s[1] == 'X')
		return plain_box(why, wlen, checked, s, n);
	return other_box(why, wlen, s, n);
}
