/*
 * presets.c - see presets.h.
 *
 * The common thread: non-interactive, machine-readable output where the
 * CLI has it (the classifier reads the structured final result), and a
 * permission level that lets the agent edit files in the repository
 * without a person to approve, but not run arbitrary commands outside a
 * sandbox.  The prompt is the last argument, after every option.
 */
#include <string.h>

#include "controller/presets.h"

static const char *const claude_argv[] = {"claude", "-p", "--output-format",
    "stream-json", "--verbose", "--permission-mode", "acceptEdits", "{prompt}",
    NULL};

static const char *const codex_argv[] = {"codex", "exec", "--json", "--sandbox",
    "workspace-write", "{prompt}", NULL};

/* --skip-trust: gemini-cli 0.61 refuses to run headless in a folder the
 * user has not trusted (exit 55, "not running in a trusted directory"),
 * and in such a folder it would also drop auto_edit back to "default";
 * storyctl runs it in the repository the user pointed it at. */
static const char *const gemini_argv[] = {"gemini", "--output-format",
    "stream-json", "--approval-mode", "auto_edit", "--skip-trust", "--prompt",
    "{prompt}", NULL};

static const char *const aider_argv[] = {"aider", "--message", "{prompt}",
    "--yes-always", "--no-pretty", "--no-auto-commits", "{story_file}", NULL};

static const struct preset presets[] = {
    {"claude", claude_argv,
	"Claude Code in print mode, stream-json events, file edits "
	"accepted"},
    {"codex", codex_argv,
	"OpenAI Codex exec, JSONL events, workspace-write sandbox"},
    {"gemini", gemini_argv,
	"Gemini CLI headless, stream-json events, edits auto-approved, "
	"workspace trusted"},
    {"aider", aider_argv,
	"aider single message on the story file, no auto-commits"},
};

const struct preset *
presets_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}

const struct preset *
presets_all(size_t *n)
{
	*n = sizeof(presets) / sizeof(presets[0]);
	return presets;
}
