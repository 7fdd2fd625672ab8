/*
 * review.c - see review.h.
 *
 * review_parse() makes one pass over the output, oldest line first, so
 * that "the last verdict wins" is simply the last assignment.  The spans
 * of the last REVIEW_REASON_LINES visible lines are kept in a ring; when
 * a verdict line is found they are cleaned and joined into the reason
 * right away (a JSON result string, whose lines the ring then points
 * into, is freed once its line is done).  The working buffers live in
 * one bounded struct on the stack.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "strategies/review.h"
#include "strategies/text.h"

/* a line is looked at through its first LINE_CAP - 1 visible bytes; a
 * longer verdict line says more than a verdict and does not approve */
#define LINE_CAP 4096
#define ACC_CAP (REVIEW_REASON_MAX + LINE_CAP + 1)
#define JSON_MAX ((size_t)1024 * 1024)
#define JSON_DEPTH 128
#define NAME_MAX_BYTES 64
#define ELLIPSIS "\xe2\x80\xa6"
#define ELLIPSIS_LEN 3
/* a reason in review_reasons(): "\n" becomes "\n  " */
#define INDENT_CAP (3 * REVIEW_REASON_MAX)

struct span {
	const char *s;
	size_t n;
};

struct work {
	char line[LINE_CAP];
	char tmp[LINE_CAP];
	char acc[ACC_CAP];
};

/* one text being scanned: the raw output or a JSON result string */
struct scan {
	struct review_vote *out;
	struct work *w;
	struct span ring[REVIEW_REASON_LINES];
	size_t nring; /* lines seen; ring[i % REVIEW_REASON_LINES] */
};

/* s[0..n) equals the lowercase word w, ignoring ASCII case */
static bool
word_is(const char *s, size_t n, const char *w)
{
	size_t i;

	if (strlen(w) != n)
		return false;
	for (i = 0; i < n; i++)
		if (text_lower((unsigned char)s[i]) != (unsigned char)w[i])
			return false;
	return true;
}

/* The visible text of src[0..n) (text_clean()), trimmed; with keep_nl
 * newlines stay. */
static size_t
clean(char *dst, size_t cap, const char *src, size_t n, bool keep_nl, bool *cut)
{
	return text_clean(
	    dst, cap, src, n, TEXT_TRIM | (keep_nl ? TEXT_KEEP_NL : 0), cut);
}

/* The start of the last at most max bytes of the valid UTF-8 s[0..n),
 * at a character boundary. */
static size_t
tail_start(const char *s, size_t n, size_t max)
{
	size_t i;

	if (n <= max)
		return 0;
	i = n - max;
	while (i < n && text_utf8_cont((unsigned char)s[i]))
		i++;
	return i;
}

/*
 * Is the cleaned line l[0..m) a verdict line (review.h says which)?
 * Returns its verdict, or REVIEW_NONE when it is not one.  *more tells
 * whether it says anything besides the verdict word; cut (the line was
 * too long to see whole) counts as saying more.
 */
static enum review_verdict
verdict_of(const char *l, size_t m, bool cut, bool *more)
{
	size_t i = 0, j, k;
	bool known, rest = cut;

	*more = false;
	while (i < m && strchr(" \t>*_`#-", l[i]) != NULL)
		i++;
	if (m - i < 7 || !word_is(l + i, 7, "verdict"))
		return REVIEW_NONE;
	i += 7;
	while (i < m && strchr("*_`", l[i]) != NULL)
		i++;
	if (i >= m || l[i] != ':')
		return REVIEW_NONE;
	i++;
	while (i < m && strchr(" \t*_`", l[i]) != NULL)
		i++;
	for (j = i; j < m && text_is_alpha((unsigned char)l[j]); j++)
		;
	for (k = j; k < m && !rest; k++)
		rest = text_is_alnum((unsigned char)l[k]);
	known = word_is(l + i, j - i, "reject") ||
	    word_is(l + i, j - i, "rejected");
	if (word_is(l + i, j - i, "approve") ||
	    word_is(l + i, j - i, "approved")) {
		known = true;
		if (!rest)
			return REVIEW_APPROVE;
	}
	*more = rest || !known;
	return REVIEW_REJECT;
}

/* Append s[0..n) to the reason being built, "\n" first unless it is the
 * first line; only the last REVIEW_REASON_MAX bytes need to be kept. */
static void
acc_add(char *acc, size_t *alen, const char *s, size_t n)
{
	if (*alen > REVIEW_REASON_MAX) {
		memmove(
		    acc, acc + *alen - REVIEW_REASON_MAX, REVIEW_REASON_MAX);
		*alen = REVIEW_REASON_MAX;
	}
	if (*alen > 0)
		acc[(*alen)++] = '\n';
	memcpy(acc + *alen, s, n);
	*alen += n;
}

/* The verdict line w->line[0..m) decided: set out->reason from the ring
 * (and the verdict line itself when it says more than its verdict). */
static void
reason_set(struct scan *sc, size_t m, bool more)
{
	struct work *w = sc->w;
	char *r = sc->out->reason;
	size_t first, i, n, alen = 0, at;
	struct span *sp;

	first = sc->nring > REVIEW_REASON_LINES
	    ? sc->nring - REVIEW_REASON_LINES
	    : 0;
	for (i = first; i < sc->nring; i++) {
		sp = &sc->ring[i % REVIEW_REASON_LINES];
		n = clean(w->tmp, sizeof(w->tmp), sp->s, sp->n, false, NULL);
		acc_add(w->acc, &alen, w->tmp, n);
	}
	if (more)
		acc_add(w->acc, &alen, w->line, m);
	if (alen < REVIEW_REASON_MAX) {
		memcpy(r, w->acc, alen);
		r[alen] = '\0';
	} else {
		at = tail_start(
		    w->acc, alen, REVIEW_REASON_MAX - 1 - ELLIPSIS_LEN);
		while (at < alen &&
		    (w->acc[at] == '\n' || text_is_blank(w->acc[at])))
			at++;
		memcpy(r, ELLIPSIS, ELLIPSIS_LEN);
		memcpy(r + ELLIPSIS_LEN, w->acc + at, alen - at);
		r[ELLIPSIS_LEN + alen - at] = '\0';
	}
}

static void scan_text(struct review_vote *out, struct work *w, const char *s,
    size_t n, bool json);

/* A JSON event line: scan the final message it carries, if any. */
static void
scan_event(struct scan *sc, const char *s, size_t n)
{
	json_t *root = NULL, *v, *item;
	json_error_t jerr;
	const char *t;

	if (n > JSON_MAX || !text_json_depth_ok(s, n, JSON_DEPTH))
		goto out;
	root = json_loadb(s, n, 0, &jerr);
	if (!json_is_object(root))
		goto out;
	/* claude: {"type":"result","result":"<final message>",...} */
	v = json_object_get(root, "result");
	if (json_is_string(v))
		scan_text(sc->out, sc->w, json_string_value(v),
		    json_string_length(v), false);
	/* codex exec --json: {"type":"item.completed","item":{"type":
	 * "agent_message","text":"<message>"}} */
	item = json_object_get(root, "item");
	t = json_string_value(json_object_get(item, "type"));
	v = json_object_get(item, "text");
	if (t != NULL && strcmp(t, "agent_message") == 0 && json_is_string(v))
		scan_text(sc->out, sc->w, json_string_value(v),
		    json_string_length(v), false);
out:
	json_decref(root);
}

/* One line s[0..n) (no CR or LF) of the text being scanned. */
static void
scan_line(struct scan *sc, const char *s, size_t n, bool json)
{
	struct work *w = sc->w;
	enum review_verdict v;
	size_t i = 0, m;
	bool cut, more;

	while (i < n && (text_is_blank((unsigned char)s[i]) || s[i] == '\0'))
		i++;
	if (json && i < n && s[i] == '{') {
		scan_event(sc, s + i, n - i);
	} else if ((m = clean(w->line, sizeof(w->line), s, n, false, &cut)) >
	    0) {
		v = verdict_of(w->line, m, cut, &more);
		if (v != REVIEW_NONE) {
			sc->out->verdict = v;
			reason_set(sc, m, more);
		}
		sc->ring[sc->nring % REVIEW_REASON_LINES].s = s;
		sc->ring[sc->nring % REVIEW_REASON_LINES].n = n;
		sc->nring++;
	}
}

/* Scan s[0..n) line by line (LF, CRLF or a bare CR end a line); json:
 * lines that start with "{" are JSON events. */
static void
scan_text(
    struct review_vote *out, struct work *w, const char *s, size_t n, bool json)
{
	struct scan sc;
	size_t a = 0, b;

	memset(&sc, 0, sizeof(sc));
	sc.out = out;
	sc.w = w;
	while (a < n) {
		for (b = a; b < n && s[b] != '\n' && s[b] != '\r'; b++)
			;
		if (b > a)
			scan_line(&sc, s + a, b - a, json);
		a = b + 1;
	}
}

void
review_parse(struct review_vote *out, const char *text, size_t len)
{
	struct work w;

	memset(out, 0, sizeof(*out));
	if (text != NULL && len > 0)
		scan_text(out, &w, text, len, true);
}

void
review_tally(struct review_tally *out, const struct review_vote *votes,
    size_t n, int quorum)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n > REVIEW_TALLY_MAX)
		n = REVIEW_TALLY_MAX;
	out->total = (int)n;
	for (i = 0; i < n; i++)
		if (votes[i].verdict == REVIEW_APPROVE)
			out->approve++;
	if (quorum < 1)
		quorum = 1;
	if (quorum > out->total)
		quorum = out->total;
	out->pass =
	    n > 0 && (out->approve == out->total || out->approve >= quorum);
	out->degraded = out->pass && out->approve < out->total;
	snprintf(out->consensus, sizeof(out->consensus), "%d/%d", out->approve,
	    out->total);
}

/* ---- review_reasons ---- */

/* One entry of review_reasons(): "<label> (<verdict>)" and the reason
 * with its continuation lines indented. */
struct entry {
	char label[NAME_MAX_BYTES + 32];
	size_t label_len;
	char reason[INDENT_CAP];
	size_t reason_len;
	char tmp[REVIEW_REASON_MAX];
};

static void
entry_get(struct entry *e, const struct review_vote *v,
    const char *const *names, size_t i)
{
	const char *name = names != NULL ? names[i] : NULL;
	const char *what =
	    v->verdict == REVIEW_REJECT ? "REJECT" : "no verdict";
	char nm[NAME_MAX_BYTES + 1];
	size_t k, n;

	k = name != NULL
	    ? clean(nm, sizeof(nm), name, strlen(name), false, NULL)
	    : 0;
	if (k > 0)
		snprintf(e->label, sizeof(e->label), "%s (%s)", nm, what);
	else
		snprintf(e->label, sizeof(e->label), "reviewer %zu (%s)", i + 1,
		    what);
	e->label_len = strlen(e->label);
	n = clean(e->tmp, sizeof(e->tmp), v->reason,
	    strnlen(v->reason, REVIEW_REASON_MAX), true, NULL);
	e->reason_len = 0;
	for (k = 0; k < n; k++) {
		e->reason[e->reason_len++] = e->tmp[k];
		if (e->tmp[k] == '\n') {
			e->reason[e->reason_len++] = ' ';
			e->reason[e->reason_len++] = ' ';
		}
	}
}

/* the bytes the reason part (": " and the reason) of e needs */
static size_t
entry_need(const struct entry *e)
{
	return e->reason_len > 0 ? 2 + e->reason_len : 0;
}

/* Append s[0..n) to out[0..*o) within cap - 1 bytes, cut at a character
 * boundary. */
static void
put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
	size_t room = cap - 1 - *o;

	if (n > room) {
		n = room;
		while (n > 0 && text_utf8_cont((unsigned char)s[n]))
			n--;
	}
	memcpy(out + *o, s, n);
	*o += n;
}

/* Sum over the non-approving reviewers of min(reason need, level); with
 * heads, the bytes of their labels and separators instead. */
static size_t
reasons_sum(struct entry *e, const struct review_vote *votes,
    const char *const *names, size_t n, size_t level, bool heads)
{
	size_t i, sum = 0, need, cnt = 0;

	for (i = 0; i < n; i++) {
		if (votes[i].verdict == REVIEW_APPROVE)
			continue;
		entry_get(e, &votes[i], names, i);
		need = entry_need(e);
		if (heads)
			sum += e->label_len + (cnt > 0 ? 1 : 0);
		else
			sum += need < level ? need : level;
		cnt++;
	}
	return sum;
}

void
review_reasons(char *out, size_t len, const struct review_vote *votes,
    const char *const *names, size_t n)
{
	struct entry e;
	size_t i, o = 0, heads, full, room, lo, hi, mid, level, need, at;
	bool first = true;

	if (len == 0)
		return;
	heads = reasons_sum(&e, votes, names, n, 0, true);
	full = reasons_sum(&e, votes, names, n, SIZE_MAX, false);
	room = heads < len - 1 ? len - 1 - heads : 0;
	/* the largest level at which every reason gets min(need, level)
	 * bytes and all of them fit in room */
	level = SIZE_MAX;
	if (full > room) {
		lo = 0;
		hi = 2 + INDENT_CAP;
		while (lo < hi) {
			mid = lo + (hi - lo + 1) / 2;
			if (reasons_sum(&e, votes, names, n, mid, false) <=
			    room)
				lo = mid;
			else
				hi = mid - 1;
		}
		level = lo;
	}
	for (i = 0; i < n; i++) {
		if (votes[i].verdict == REVIEW_APPROVE)
			continue;
		entry_get(&e, &votes[i], names, i);
		if (!first)
			put(out, len, &o, "\n", 1);
		first = false;
		put(out, len, &o, e.label, e.label_len);
		need = entry_need(&e);
		if (need == 0)
			continue;
		if (need <= level) {
			put(out, len, &o, ": ", 2);
			put(out, len, &o, e.reason, e.reason_len);
		} else if (level > 2 + ELLIPSIS_LEN) {
			at = tail_start(
			    e.reason, e.reason_len, level - 2 - ELLIPSIS_LEN);
			while (at < e.reason_len &&
			    (e.reason[at] == '\n' ||
				text_is_blank((unsigned char)e.reason[at])))
				at++;
			put(out, len, &o, ": " ELLIPSIS, 2 + ELLIPSIS_LEN);
			put(out, len, &o, e.reason + at, e.reason_len - at);
		}
	}
	out[o] = '\0';
}

/* No line may itself be a verdict line (see review.h); the only braces
 * are placeholders argv_expand() knows. */
const char review_default_prompt[] =
    "You are reviewing, unattended, the work done for story {story_id} in "
    "the git repository at {repo}. No one will answer questions.\n"
    "\n"
    "Read the story file {story_file}: its acceptance criteria and its "
    "task checklist. Then review the change made for it (see git status, "
    "git diff, git diff --cached and the recent commits with git log -p) "
    "against every acceptance criterion and every task:\n"
    "1. Is each acceptance criterion met by the code, not just claimed?\n"
    "2. Is each checked task really done?\n"
    "3. Do tests cover the new behaviour, and is anything unrelated "
    "changed or broken?\n"
    "\n"
    "Change nothing and run nothing destructive: do not edit, create or "
    "delete files, and do not commit, push, reset, check out, stash or "
    "otherwise modify the repository, its branches or its working tree. "
    "Reading files and read-only commands are fine.\n"
    "\n"
    "Give your reasons first: list each problem you found with the file "
    "and what is wrong, or say briefly why the change is complete. Then "
    "end your reply with exactly one line, either VERDICT: APPROVE or "
    "VERDICT: REJECT, with nothing after it. Approve only when every "
    "acceptance criterion is met and every checked task is done.\n";
