/*
 * presets.c - see presets.h.
 *
 * The common thread: non-interactive, machine-readable output where the
 * CLI has it (the classifier reads the structured final result), the
 * prompt the last argument after every option, and two permission
 * levels.  Outside a sandbox the agent may edit files in the repository
 * without a person to approve but not run arbitrary commands; inside
 * one it may do anything, since the sandbox keeps it in its tree
 * (docs/configuration.md#presets).  Every flag was checked against the
 * CLIs pinned in tests/agents/package.json.
 */
#include <string.h>

#include "controller/config/presets.h"

static const char *const claude_argv[] = {"claude", "-p", "--output-format",
    "stream-json", "--verbose", "--permission-mode", "acceptEdits", "{prompt}",
    NULL};

/* bypassPermissions, the mode --dangerously-skip-permissions sets:
 * claude 2.1.197 refuses it as root (exit 1, "cannot be used with
 * root/sudo privileges") unless its environment has IS_SANDBOX=1 or
 * CLAUDE_CODE_BUBBLEWRAP=1, so a confined claude run as root needs one
 * (docs/configuration.md#presets). */
static const char *const claude_confined[] = {"claude", "-p", "--output-format",
    "stream-json", "--verbose", "--permission-mode", "bypassPermissions",
    "{prompt}", NULL};

/* CLAUDE_CONFIG_DIR moves both.  .claude.json is rewritten through a
 * temporary file next to it, so under a read-only $HOME a missing one
 * cannot be made (claude logs that and goes on). */
static const char *const claude_state[] = {
    "~/.claude/", "~/.claude.json", NULL};

static const char *const codex_argv[] = {"codex", "exec", "--json", "--sandbox",
    "workspace-write", "{prompt}", NULL};

/* Its own sandbox is a bubblewrap that cannot start inside ours
 * ("setting up uid map: Operation not permitted"); exec asks for no
 * approvals anyway, the flag makes that so whatever config.toml says. */
static const char *const codex_confined[] = {"codex", "exec", "--json",
    "--dangerously-bypass-approvals-and-sandbox", "{prompt}", NULL};

/* CODEX_HOME moves it (and CODEX_SQLITE_HOME its databases). */
static const char *const codex_state[] = {"~/.codex/", NULL};

/* --skip-trust: gemini-cli 0.61 refuses to run headless in a folder the
 * user has not trusted (exit 55, "not running in a trusted directory"),
 * and in such a folder it would also drop auto_edit back to "default";
 * storyctl runs it in the repository the user pointed it at. */
static const char *const gemini_argv[] = {"gemini", "--output-format",
    "stream-json", "--approval-mode", "auto_edit", "--skip-trust", "--prompt",
    "{prompt}", NULL};

/* yolo through --approval-mode (--yolo cannot be given with it); the
 * untrusted-folder rule would drop yolo too, so --skip-trust stays. */
static const char *const gemini_confined[] = {"gemini", "--output-format",
    "stream-json", "--approval-mode", "yolo", "--skip-trust", "--prompt",
    "{prompt}", NULL};

/* GEMINI_CLI_HOME moves it (to $GEMINI_CLI_HOME/.gemini). */
static const char *const gemini_state[] = {"~/.gemini/", NULL};

/* aider has no permission levels: --yes-always already answers every
 * question, so one argv serves both. */
static const char *const aider_argv[] = {"aider", "--message", "{prompt}",
    "--yes-always", "--no-pretty", "--no-auto-commits", "{story_file}", NULL};

/* its caches, analytics and OAuth keys; its chat history is in the
 * repository */
static const char *const aider_state[] = {"~/.aider/", NULL};

static const struct preset presets[] = {
    {"claude", claude_argv,
	"Claude Code in print mode, stream-json events, file edits "
	"accepted",
	claude_confined,
	"Claude Code in print mode, stream-json events, no permission "
	"prompts",
	claude_state},
    {"codex", codex_argv,
	"OpenAI Codex exec, JSONL events, workspace-write sandbox",
	codex_confined,
	"OpenAI Codex exec, JSONL events, its own sandbox and approvals "
	"off",
	codex_state},
    {"gemini", gemini_argv,
	"Gemini CLI headless, stream-json events, edits auto-approved, "
	"workspace trusted",
	gemini_confined,
	"Gemini CLI headless, stream-json events, every tool approved "
	"(yolo), workspace trusted",
	gemini_state},
    {"aider", aider_argv,
	"aider single message on the story file, no auto-commits", aider_argv,
	"aider single message on the story file, no auto-commits", aider_state},
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
