/* config_agents.c - see config_int.h: the "agents" section, presets
 * and environment (docs/configuration.md, docs/agents.md). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/config/config_int.h"
#include "controller/config/presets.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/sprintstatus.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

static bool
env_name_valid(const char *s)
{
	size_t i;

	if (s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* ---- agents ---- */

void
config_agent_init(struct agent_conf *a)
{
	memset(a, 0, sizeof(*a));
	a->timeout_s = 3600;
	a->stall_timeout_s = -1;
	config_sandbox_init(&a->sandbox);
}

void
config_agent_release(struct agent_conf *a)
{
	strlist_release(&a->command);
	strlist_release(&a->command_confined);
	strlist_release(&a->env);
	config_sandbox_release(&a->sandbox);
	config_agent_init(a);
}

/* Both of the preset's argvs: the cautious one for outside a sandbox,
 * the full-autonomy one for inside (docs/configuration.md#presets). */
static int
agent_use_preset(struct agent_conf *a, const struct preset *p)
{
	size_t i;

	strlist_release(&a->command);
	strlist_release(&a->command_confined);
	for (i = 0; p->argv[i] != NULL; i++)
		if (strlist_push(&a->command, p->argv[i]) < 0)
			return -1;
	for (i = 0; p->confined_argv[i] != NULL; i++)
		if (strlist_push(&a->command_confined, p->confined_argv[i]) < 0)
			return -1;
	snprintf(a->preset, sizeof(a->preset), "%s", p->name);
	snprintf(a->name, sizeof(a->name), "%s", p->name);
	a->configured = true;
	return 0;
}

void
config_preset_names(char *buf, size_t cap)
{
	const struct preset *all;
	size_t n, i, o = 0;

	all = presets_all(&n);
	buf[0] = '\0';
	for (i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(
		    buf + o, cap - o, "%s%s", i ? ", " : "", all[i].name);
}

static int
parse_env(struct loader *ld, json_t *v, const char *key, struct strlist *out)
{
	struct strlist tmp = {0};
	char ikey[KEY_MAX], shown[KEY_MAX], *entry = NULL;
	const char *name;
	json_t *val;
	int rc = 0;

	if (!json_is_object(v)) {
		rc = config_wrong_type(ld, key, "an object of strings", v);
		goto out;
	}
	json_object_foreach(v, name, val)
	{
		config_shown(shown, sizeof(shown), name);
		config_key_join(ikey, key, shown);
		if (!env_name_valid(name)) {
			rc = config_fail(ld, ikey,
			    "not a valid environment variable "
			    "name (letters, digits and _)");
			goto out;
		}
		if (!json_is_string(val)) {
			rc = config_wrong_type(ld, ikey, "a string", val);
			goto out;
		}
		if (asprintf(&entry, "%s=%s", name, json_string_value(val)) <
		    0) {
			entry = NULL;
			rc = config_fail_nomem(ld);
			goto out;
		}
		if (strlist_push(&tmp, entry) < 0) {
			rc = config_fail_nomem(ld);
			goto out;
		}
		free(entry);
		entry = NULL;
	}
	strlist_release(out);
	*out = tmp;
	memset(&tmp, 0, sizeof(tmp));
out:
	free(entry);
	strlist_release(&tmp);
	return rc;
}

static const char *const agent_keys[] = {"preset", "command", "timeout_s",
    "stall_timeout_s", "env", "name", "sandbox", NULL};

/* "preset": its argvs and name into *a, the preset itself to *out. */
static int
agent_parse_preset(struct loader *ld, json_t *pv, const char *path,
    struct agent_conf *a, const struct preset **out)
{
	const struct preset *p;
	char key[KEY_MAX], known[256];

	config_key_join(key, path, "preset");
	if (!json_is_string(pv))
		return config_wrong_type(ld, key, "a string", pv);
	p = presets_find(json_string_value(pv));
	if (p == NULL) {
		config_preset_names(known, sizeof(known));
		return config_fail(ld, key, "unknown preset \"%s\" (known: %s)",
		    json_string_value(pv), known);
	}
	if (agent_use_preset(a, p) < 0)
		return config_fail_nomem(ld);
	*out = p;
	return 0;
}

/* "command": the argv that runs; without a preset, its program's base
 * name names the agent. */
static int
agent_parse_command(struct loader *ld, json_t *cv, const char *path,
    const struct preset *p, struct agent_conf *a)
{
	char key[KEY_MAX];
	const char *base;
	int rc;

	config_key_join(key, path, "command");
	if ((rc = config_parse_argv(ld, cv, key, &a->command)) != 0)
		return rc;
	/* the user's argv is what runs, inside a sandbox or not: a
	 * preset's flags must not come back when it is confined */
	strlist_release(&a->command_confined);
	if (p == NULL) {
		base = strrchr(a->command.items[0], '/');
		base = base != NULL && base[1] != '\0' ? base + 1
						       : a->command.items[0];
		snprintf(a->name, sizeof(a->name), "%s", base);
	}
	return 0;
}

/* "name": what the agent is called in records and reports. */
static int
agent_parse_name(
    struct loader *ld, json_t *nv, const char *path, struct agent_conf *a)
{
	char key[KEY_MAX];

	config_key_join(key, path, "name");
	if (!json_is_string(nv))
		return config_wrong_type(ld, key, "a string", nv);
	if (json_string_length(nv) == 0 ||
	    json_string_length(nv) >= sizeof(a->name))
		return config_fail(ld, key, "must be 1 to %zu bytes long",
		    sizeof(a->name) - 1);
	config_shown(a->name, sizeof(a->name), json_string_value(nv));
	return 0;
}

static int
parse_agent(struct loader *ld, json_t *v, const char *path,
    const struct config *c, struct agent_conf *a)
{
	const struct preset *p = NULL;
	json_t *pv, *cv, *ev, *nv;
	char key[KEY_MAX];
	int rc;

	if ((rc = config_want_object(ld, v, path)) != 0)
		return rc;
	if ((rc = config_check_keys(ld, v, path, agent_keys)) != 0)
		return rc;
	pv = json_object_get(v, "preset");
	cv = json_object_get(v, "command");
	if (pv != NULL && (rc = agent_parse_preset(ld, pv, path, a, &p)) != 0)
		return rc;
	if (cv != NULL && (rc = agent_parse_command(ld, cv, path, p, a)) != 0)
		return rc;
	if (p == NULL && cv == NULL)
		return config_fail(ld, path, "needs a preset or a command");
	nv = json_object_get(v, "name");
	if (nv != NULL && (rc = agent_parse_name(ld, nv, path, a)) != 0)
		return rc;
	if ((rc = config_get_number(ld, v, path, "timeout_s", &a->timeout_s,
		 TIMEOUT_MIN_S, SECONDS_MAX, false)) != 0)
		return rc;
	if ((rc = config_get_number(ld, v, path, "stall_timeout_s",
		 &a->stall_timeout_s, 0, SECONDS_MAX, false)) != 0)
		return rc;
	ev = json_object_get(v, "env");
	if (ev != NULL) {
		config_key_join(key, path, "env");
		if ((rc = parse_env(ld, ev, key, &a->env)) != 0)
			return rc;
	}
	if ((rc = config_agent_sandbox(
		 ld, json_object_get(v, "sandbox"), path, c, &a->sandbox)) != 0)
		return rc;
	a->configured = true;
	return 0;
}

int
config_agents_default(struct config *c)
{
	if (agent_use_preset(&c->agents[ROLE_PRIMARY], presets_find("claude")) <
	    0)
		return -1;
	if (agent_use_preset(&c->agents[ROLE_FALLBACK], presets_find("codex")) <
	    0)
		return -1;
	return 0;
}

static const char *const agents_keys[] = {"primary", "fallback", NULL};

int
config_parse_agents(struct loader *ld, json_t *v, struct config *c)
{
	json_t *pv, *fv;
	int rc;

	/* Every role starts from the top-level sandbox, a fallback not
	 * configured too, so that no agent is ever left without one. */
	if ((rc = config_agent_sandbox(ld, NULL, "agents.primary", c,
		 &c->agents[ROLE_PRIMARY].sandbox)) != 0 ||
	    (rc = config_agent_sandbox(ld, NULL, "agents.fallback", c,
		 &c->agents[ROLE_FALLBACK].sandbox)) != 0)
		return rc;
	if (v == NULL) {
		/* No "agents" at all: the same pair as config_defaults(). */
		if (config_agents_default(c) < 0)
			return config_fail_nomem(ld);
		return 0;
	}
	if ((rc = config_want_object(ld, v, "agents")) != 0)
		return rc;
	if ((rc = config_check_keys(ld, v, "agents", agents_keys)) != 0)
		return rc;
	pv = json_object_get(v, "primary");
	fv = json_object_get(v, "fallback");
	if (pv == NULL)
		return config_fail(ld, "agents.primary",
		    "missing (give a preset or a command)");
	if ((rc = parse_agent(
		 ld, pv, "agents.primary", c, &c->agents[ROLE_PRIMARY])) != 0)
		return rc;
	if (fv != NULL &&
	    (rc = parse_agent(
		 ld, fv, "agents.fallback", c, &c->agents[ROLE_FALLBACK])) != 0)
		return rc;
	return 0;
}
