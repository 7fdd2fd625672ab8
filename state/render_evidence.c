/* render_evidence.c - see render_evidence.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/render_evidence.h"
#include "strategies/evidence.h"

char *
render_evidence_files(const struct gitevidence_diff *d)
{
	json_t *arr = json_array(), *one;
	char status[2] = "";
	char *text = NULL;
	size_t i;

	for (i = 0; arr != NULL && i < d->nlisted; i++) {
		const struct gitevidence_file *f = &d->listed[i];
		status[0] = f->status;
		one = json_pack("{s:s, s:s, s:i, s:i, s:b}", "path", f->path,
		    "status", status, "added", f->added, "removed", f->removed,
		    "binary", f->binary);
		if (one == NULL || json_array_append_new(arr, one) < 0)
			goto out;
	}
	if (arr != NULL)
		text = json_dumps(arr, JSON_COMPACT);
out:
	json_decref(arr);
	return text;
}

static json_t *
fig(const struct evidence_row *e, int v)
{
	return e->measured && v >= 0 ? json_integer(v) : json_null();
}

static json_t *
str_or_null(const char *s)
{
	return s != NULL && s[0] != '\0' ? json_string(s) : json_null();
}

json_t *
render_evidence_json(const struct evidence_row *e)
{
	json_t *flags = json_array(), *files = NULL, *o;

	if (flags == NULL)
		return NULL;
	if (e->ticked_without_change)
		json_array_append_new(flags, json_string(EVIDENCE_FLAG_TICKED));
	if (e->unticked > 0)
		json_array_append_new(
		    flags, json_string(EVIDENCE_FLAG_UNTICKED));
	if (e->measured && e->files != NULL)
		files = json_loads(e->files, 0, NULL);
	if (files == NULL)
		files = e->measured ? json_array() : json_null();
	o = json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:o, s:o, "
		      "s:o}",
	    "measured", e->measured, "not_measured",
	    str_or_null(e->not_measured), "files_changed",
	    fig(e, e->files_changed), "lines_added", fig(e, e->lines_added),
	    "lines_removed", fig(e, e->lines_removed), "files", files, "ticked",
	    e->ticked, "unticked", e->unticked, "first_unticked",
	    str_or_null(e->first_unticked), "flags", flags, "base_tree",
	    str_or_null(e->base_tree));
	return o;
}

int
render_story_add_evidence(json_t *story, const struct evidence_row *e, size_t n)
{
	json_t *arr = json_object_get(story, "attempts"), *a, *ev;
	json_int_t seq;
	size_t i, k;

	json_array_foreach(arr, i, a)
	{
		seq = json_integer_value(json_object_get(a, "seq"));
		ev = NULL;
		for (k = 0; k < n && ev == NULL; k++)
			if (e[k].seq == seq &&
			    (ev = render_evidence_json(&e[k])) == NULL)
				return SC_EOS;
		if (json_object_set_new(
			a, "evidence", ev != NULL ? ev : json_null()) < 0)
			return SC_EOS;
	}
	return 0;
}
