/* config_notify.c - see config_int.h: the "notify" list
 * (docs/notifications.md#configuration), each entry a webhook or a
 * command and the events it wants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/optlib_curl.h"
#include "controller/config/config_int.h"
#include "strategies/notifyev.h"
#include "strategies/suggest.h"

static const char *const notify_keys[] = {"on", "webhook", "command", NULL};

/* "on": a non-empty list of known event names. */
static int
parse_on(struct loader *ld, json_t *v, const char *key, unsigned *out)
{
	char ikey[KEY_MAX], shown[128], names[160];
	enum notify_event e;
	struct suggest sg;
	json_t *item;
	size_t i;
	int k, best;

	if (v == NULL)
		return config_fail(ld, key,
		    "missing: the list of events it is for (%s)",
		    (notify_event_names(names, sizeof(names)), names));
	if (!json_is_array(v))
		return config_wrong_type(ld, key, "an array of event names", v);
	if (json_array_size(v) == 0)
		return config_fail(ld, key, "must not be empty");
	*out = 0;
	json_array_foreach(v, i, item)
	{
		config_key_index(ikey, key, i);
		if (!json_is_string(item))
			return config_wrong_type(ld, ikey, "a string", item);
		if (notify_event_parse(&e, json_string_value(item)) == 0) {
			*out |= 1u << (unsigned)e;
			continue;
		}
		config_shown(shown, sizeof(shown), json_string_value(item));
		suggest_init(&sg, json_string_value(item));
		for (k = 0; k < NOTIFY__COUNT; k++)
			suggest_add(
			    &sg, notify_event_name((enum notify_event)k), k);
		best = suggest_best(&sg);
		if (best >= 0)
			return config_fail(ld, ikey,
			    "unknown event %s (did you mean %s?)", shown,
			    notify_event_name((enum notify_event)best));
		notify_event_names(names, sizeof(names));
		return config_fail(
		    ld, ikey, "unknown event %s (events: %s)", shown, names);
	}
	return 0;
}

/* An absolute http:// or https:// URL with a host, as libcurl reads it
 * (the URL itself is not repeated: it may hold a token). */
static int
check_url(struct loader *ld, const char *key, const char *url)
{
	struct sc_err lerr = {0};
	CURLU *u = NULL;
	char *scheme = NULL, *host = NULL;
	CURLUcode uc;
	int rc = 0;

	if (optlib_curl_load(&lerr) < 0)
		return config_fail(ld, key, "%s", lerr.msg);
	if ((u = curl_url()) == NULL)
		return config_fail_nomem(ld);
	uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK) {
		rc = config_fail(
		    ld, key, "not a URL: %s", curl_url_strerror(uc));
		goto out;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		rc = config_fail(ld, key, "must be an http:// or https:// URL");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    host[0] == '\0')
		rc = config_fail(ld, key, "the URL has no host");
out:
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

/* Entry v into *n (zeroed by the caller). */
static int
parse_entry(
    struct loader *ld, json_t *v, const char *path, struct notify_conf *n)
{
	json_t *hook = json_object_get(v, "webhook");
	json_t *cmd = json_object_get(v, "command");
	char key[KEY_MAX];
	int rc;

	if ((rc = config_want_object(ld, v, path)) != 0 ||
	    (rc = config_check_keys(ld, v, path, notify_keys)) != 0)
		return rc;
	if (hook == NULL && cmd == NULL)
		return config_fail(ld, path,
		    "needs \"webhook\" (a URL) or \"command\" (an argv array)");
	if (hook != NULL && cmd != NULL)
		return config_fail(ld, path,
		    "has both \"webhook\" and \"command\": one entry is one "
		    "target, write two entries");
	config_key_join(key, path, "on");
	if ((rc = parse_on(ld, json_object_get(v, "on"), key, &n->on)) != 0)
		return rc;
	if (hook != NULL) {
		config_key_join(key, path, "webhook");
		if ((rc = config_get_string(
			 ld, v, path, "webhook", &n->webhook)) != 0)
			return rc;
		return check_url(ld, key, n->webhook);
	}
	config_key_join(key, path, "command");
	return config_parse_argv(ld, cmd, key, &n->command);
}

int
config_parse_notify(struct loader *ld, json_t *v, struct config *c)
{
	char path[KEY_MAX];
	json_t *item;
	size_t i;
	int rc = 0;

	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return config_wrong_type(ld, "notify",
		    "an array of {\"on\", \"webhook\"} or "
		    "{\"on\", \"command\"} objects",
		    v);
	if (json_array_size(v) == 0)
		return 0;
	c->notify = calloc(json_array_size(v), sizeof(*c->notify));
	if (c->notify == NULL)
		return config_fail_nomem(ld);
	json_array_foreach(v, i, item)
	{
		config_key_index(path, "notify", i);
		/* counted first, so that a failure releases it too */
		c->nnotify = i + 1;
		rc = parse_entry(ld, item, path, &c->notify[i]);
		if (rc != 0)
			break;
	}
	return rc;
}

void
config_notify_release(struct config *c)
{
	size_t i;

	for (i = 0; i < c->nnotify; i++) {
		free(c->notify[i].webhook);
		strlist_release(&c->notify[i].command);
	}
	free(c->notify);
	c->notify = NULL;
	c->nnotify = 0;
}
