/*
 * help.c - the words of every command's help.  One table feeds `storyctl
 * help CMD`, `storyctl CMD --help`, man/storyctl.1 and the completion
 * (docs/commands.md#help-man-page-completion); help_print.c lays it out.
 */
#include "controller/cli/help.h"

#define HELP_END \
	{ \
		NULL, NULL, NULL \
	}
#define OPT_HELP \
	{ \
		"-h, --help", "print this help and exit", NULL \
	}
#define OPT_JSON(what) \
	{ \
		"--json", "print " what " as JSON (docs/json.md)", NULL \
	}

/* the readers' exits: they only read the database */
#define EXITS_READ \
	{"0", "printed", NULL}, \
	    {"64", "a bad command line, or no storyctl.json found", NULL}, \
	    {"65", "storyctl.json is not valid", NULL}, \
	{ \
		"74", "the state database cannot be read", NULL \
	}

const struct help_item help_global_options[] = {
    {"-C DIR", "run as if storyctl had been started in DIR", NULL},
    {"-c CONFIG",
	"use the file CONFIG instead of looking for storyctl.json in\n"
	"the current directory and then in each parent",
	NULL},
    {"-h, --help", "print the list of commands and exit", NULL},
    {"--version", "print the version and exit", NULL},
    HELP_END,
};

const struct help_item help_exit_codes[] = {
    {"0", "success; for run and resume: every story done", NULL},
    {"3", "the batch finished, but some stories are not done", NULL},
    {"64", "usage: a bad command line", NULL},
    {"65", "bad config or story data", NULL},
    {"69",
	"an agent or gate program cannot be found or run, or\n"
	"sandbox.enabled is true and no sandbox can start",
	NULL},
    {"70", "an internal error (a bug)", NULL},
    {"71", "a system call failed (out of memory, for one)", NULL},
    {"74",
	"reading or writing the state failed (disk full, read-only);\n"
	"nothing recorded is lost: fix it, then resume",
	NULL},
    {"75", "stopped before the end and resumable (storyctl resume)", NULL},
    {"130, 143", "interrupted by SIGINT, SIGTERM", NULL},
    HELP_END,
};

static const struct help_item init_opts[] = {
    OPT_JSON("what it found and wrote"), OPT_HELP, HELP_END};
static const struct help_item init_exits[] = {
    {"0", "storyctl.json written", NULL},
    {"64", "storyctl.json exists already, or an argument was given", NULL},
    {"74", "a file cannot be written", NULL},
    HELP_END,
};
static const struct help_item init_examples[] = {
    {"storyctl init", "write storyctl.json for the stories found here", NULL},
    {"storyctl init && storyctl check", "write it, then see what run would do",
	NULL},
    {"storyctl init --json | jq .layout", "the layout it found, for a script",
	NULL},
    HELP_END,
};
const struct cli_help help_init = {
    "Write a starter storyctl.json in the current directory: the\n"
    "claude preset as the primary agent and codex as the fallback,\n"
    "the adaptive policy, and the story files found in the usual\n"
    "places.  The state dir is added to .gitignore.  With --json it\n"
    "says as JSON what it found and wrote: the layout, the story\n"
    "files, the agents and where their programs are.",
    init_opts, init_exits, init_examples, NULL};

static const struct help_item check_opts[] = {
    OPT_JSON("the problems and the plan"), OPT_HELP, HELP_END};
static const struct help_item check_exits[] = {
    {"0", "nothing wrong: run would start", NULL},
    {"64", "no storyctl.json found", NULL},
    {"65", "the config or a story is not valid", NULL},
    {"69",
	"an agent or gate program cannot be found, or\n"
	"sandbox.enabled is true and no sandbox can start",
	NULL},
    HELP_END,
};
static const struct help_item check_examples[] = {
    {"storyctl check", "every problem run would meet, and the order", NULL},
    {"storyctl -C ~/src/app check --json",
	"the same for another project, for a script", NULL},
    HELP_END,
};
const struct cli_help help_check = {
    "Validate the config, the stories (ids, tasks, dependencies) and\n"
    "the agents' programs: every problem run would hit, all at once,\n"
    "then the order the stories would run in.  Nothing runs.",
    check_opts, check_exits, check_examples, NULL};

static const struct help_item tasks_opts[] = {
    OPT_JSON("the lines and their verdicts"), OPT_HELP, HELP_END};
static const struct help_item tasks_exits[] = {
    {"0", "printed", NULL},
    {"64", "no such story (with a suggestion), or no STORY given", NULL},
    {"65", "the story cannot be read", NULL},
    HELP_END,
};
static const struct help_item tasks_examples[] = {
    {"storyctl tasks 1.2", "which lines of story 1.2 count as tasks", NULL},
    {"storyctl tasks docs/stories/1.2.story.md --json",
	"the same by file name, as JSON", NULL},
    HELP_END,
};
const struct cli_help help_tasks = {
    "Print the lines of story STORY (an id, or its file name) that\n"
    "were counted as tasks and subtasks, and why each line was or was\n"
    "not counted (docs/stories.md).",
    tasks_opts, tasks_exits, tasks_examples, "@ids"};

/* run and resume --serve, and serve's TLS (docs/api.md#run-serve) */
#define OPT_SERVE \
	{ \
		"--serve ADDR:PORT", \
		    "serve the API (as storyctl serve does) from this " \
		    "process\n" \
		    "while the batch runs; it stops when the run ends", \
		    NULL \
	}
#define OPT_TLS_CERT \
	{ \
		"--tls-cert FILE", \
		    "serve HTTPS with this PEM certificate (chain); needs\n" \
		    "--tls-key", \
		    NULL \
	}
#define OPT_TLS_KEY \
	{ \
		"--tls-key FILE", "the PEM private key of --tls-cert", NULL \
	}

static const struct help_item run_opts[] = {
    {"-j N, --jobs N",
	"run up to N stories at once, N from 1 to 64 (default 1); with\n"
	"N > 1 each story works on its own branch storyctl/story/<id>,\n"
	"left for you to merge, in a git worktree its slot keeps from\n"
	"story to story (docs/git-work.md)",
	"1 2 3 4"},
    {"--include-drafts",
	"run stories whose status is Draft too (left out by default)", NULL},
    OPT_SERVE,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_HELP,
    HELP_END,
};
static const struct help_item run_exits[] = {
    {"0", "every story done", NULL},
    {"3",
	"the batch finished with stories deferred, escalated, blocked\n"
	"or invalid (see storyctl list)",
	NULL},
    {"64", "a bad command line or an unknown STORY", NULL},
    {"65", "the config or a story is not valid (see storyctl check)", NULL},
    {"69",
	"an agent or gate program cannot be found or run, or\n"
	"sandbox.enabled is true and no sandbox can start",
	NULL},
    {"74", "the state cannot be written; fix it, then resume", NULL},
    {"75",
	"stopped and resumable: agents paused, the breaker, the budget,\n"
	"or another controller holds the lock",
	NULL},
    {"130, 143", "interrupted; storyctl resume continues", NULL},
    HELP_END,
};
static const struct help_item run_examples[] = {
    {"storyctl run", "run every story that is not done, one at a time", NULL},
    {"storyctl run -j 3", "run up to three stories at once", NULL},
    {"storyctl run 1.1 1.2", "run only stories 1.1 and 1.2", NULL},
    {"storyctl run -j 3 --serve 127.0.0.1:8420",
	"run, and serve the API while it runs", NULL},
    HELP_END,
};
const struct cli_help help_run = {
    "Start a batch over the configured stories, or over the STORY ids\n"
    "given, and run the agents until every story is done, deferred,\n"
    "escalated or blocked.  After each attempt storyctl decides to\n"
    "retry, switch to the fallback agent, wait, defer or escalate.\n"
    "If the last batch is unfinished, run continues it.  Drafts are\n"
    "left out unless --include-drafts.",
    run_opts, run_exits, run_examples, "@ids"};

static const struct help_item resume_opts[] = {
    {"-j N, --jobs N",
	"run up to N stories at once, N from 1 to 64 (default 1)", "1 2 3 4"},
    OPT_SERVE,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_HELP,
    HELP_END,
};
static const struct help_item resume_examples[] = {
    {"storyctl resume", "continue after a crash, a stop or a reboot", NULL},
    {"storyctl resume -j 2", "continue with two stories at once", NULL},
    HELP_END,
};
const struct cli_help help_resume = {
    "Continue the unfinished batch (stopped, or left running by a\n"
    "controller that died) where it stopped.  An attempt that was\n"
    "running is closed first and does not count against the story.",
    resume_opts, run_exits, resume_examples, NULL};

static const struct help_item status_opts[] = {
    OPT_JSON("the batch's state"), OPT_HELP, HELP_END};
static const struct help_item read_exits[] = {EXITS_READ, HELP_END};
static const struct help_item status_examples[] = {
    {"storyctl status", "how the batch is doing", NULL},
    {"watch storyctl status", "keep an eye on it", NULL},
    HELP_END,
};
const struct cli_help help_status = {
    "The batch at a glance: how many stories have each status, every\n"
    "story running now (one line each), the next wait, agents paused by a "
    "usage limit, and the\n"
    "money spent.  It only reads, so it works beside a running batch.",
    status_opts, read_exits, status_examples, NULL};

static const struct help_item list_opts[] = {
    {"--status S",
	"only the stories whose status is S: pending, running, done,\n"
	"deferred, escalated, blocked or invalid",
	"pending running done deferred escalated blocked invalid"},
    OPT_JSON("the stories"),
    OPT_HELP,
    HELP_END,
};
static const struct help_item list_examples[] = {
    {"storyctl list", "every story of the batch, one line each", NULL},
    {"storyctl list --status escalated", "the stories that need a person",
	NULL},
    HELP_END,
};
const struct cli_help help_list = {
    "One line per story of the latest batch (before the first batch,\n"
    "of the config): status, attempts, tasks and subtasks done, and\n"
    "the reason of the last decision.  The story column is as wide as\n"
    "the longest id, up to 40 columns; a longer id is cut with an\n"
    "ellipsis.  --json adds each story's file and cost.",
    list_opts, read_exits, list_examples, NULL};

static const struct help_item show_opts[] = {
    {"--attempt N",
	"that attempt's transcript instead: what the agent said, each\n"
	"command and file it ran or touched, errors and retries, tokens\n"
	"and cost, its final message (N as show prints it: a1, a2, ...)",
	NULL},
    OPT_JSON("the story and every attempt; with --attempt, the\n"
	     "transcript's events as an array"),
    OPT_HELP, HELP_END};
static const struct help_item show_exits[] = {
    EXITS_READ, {"64", "no such story (with a suggestion)", NULL}, HELP_END};
static const struct help_item show_examples[] = {
    {"storyctl show 1.2", "every attempt of story 1.2 and why", NULL},
    {"storyctl show 1.2 --json", "the same with every field", NULL},
    {"storyctl show 1.2 --attempt 2", "what the agent did in attempt 2", NULL},
    HELP_END,
};
const struct cli_help help_show = {
    "One story and every attempt, one line each, with the outcome and\n"
    "the reason of each decision; for a pending story, the next\n"
    "attempt and the time it may start.",
    show_opts, show_exits, show_examples, "@ids"};

static const struct help_item diff_opts[] = {
    {"--attempt N",
	"that attempt (its number, as show prints it: a1, a2, ...)\n"
	"instead of the story's last",
	NULL},
    OPT_HELP,
    HELP_END,
};
static const struct help_item diff_exits[] = {
    {"0", "printed (nothing when the attempt changed nothing)", NULL},
    {"1",
	"the attempt has no diff to print: it was not measured, is\n"
	"still running, or its diff was not kept (why, on stderr)",
	NULL},
    {"64",
	"a bad command line, no storyctl.json found, or no such STORY\n"
	"or attempt (with a suggestion)",
	NULL},
    {"65", "storyctl.json is not valid", NULL},
    {"74", "the state database or the kept diff cannot be read", NULL},
    HELP_END,
};
static const struct help_item diff_examples[] = {
    {"storyctl diff 1.2", "what the last attempt of story 1.2 changed", NULL},
    {"storyctl diff 1.2 --attempt 1", "what its first one changed", NULL},
    HELP_END,
};
const struct cli_help help_diff = {
    "What an attempt changed in its work tree besides the story file,\n"
    "as git diff prints it: every file added, changed, renamed or\n"
    "deleted, from the tree at the attempt's start to the tree its\n"
    "agent left.  The diff is kept beside the attempt's log when its\n"
    "agent ends (docs/evidence.md#the-attempts-diff), cut at 8 MiB,\n"
    "and secrets are redacted as everywhere.  On a terminal it is\n"
    "coloured as git colours it.",
    diff_opts, diff_exits, diff_examples, "@ids"};

static const struct help_item log_opts[] = {
    {"-f, --follow",
	"keep printing new events while a controller runs the batch;\n"
	"ends (exit 0) once the batch has ended and its last events\n"
	"are printed",
	NULL},
    {"-n N", "only the last N events (N a whole number, 0 or more)", NULL},
    {"--since WHEN",
	"only the events from WHEN on: a UTC time as log prints it\n"
	"(2026-11-24T21:00:00Z) or a duration back from now, whole\n"
	"numbers with ms, s, m, h or d (30m, 2h, 1h30m)",
	"30m 1h 2h 1d"},
    {"--json",
	"print each event as one JSON object on a line of its own\n"
	"(id, batch, time, story, kind, message), with or without\n"
	"--follow (docs/commands.md)",
	NULL},
    OPT_HELP,
    HELP_END,
};
static const struct help_item log_exits[] = {
    {"0", "printed; with --follow, the batch has ended", NULL},
    {"64",
	"a bad command line (a bad -n or --since), no storyctl.json\n"
	"found, or no such STORY (with a suggestion)",
	NULL},
    {"65", "storyctl.json is not valid", NULL},
    {"74", "the state database cannot be read", NULL},
    HELP_END,
};
static const struct help_item log_examples[] = {
    {"storyctl log", "what happened, oldest first", NULL},
    {"storyctl log --follow",
	"watch a batch from another terminal, until it ends", NULL},
    {"storyctl log 1.2 -n 5", "the last five events of story 1.2", NULL},
    {"storyctl log --since 2h --json | jq -r .message",
	"the messages of the last two hours", NULL},
    HELP_END,
};
const struct cli_help help_log = {
    "The event log of the latest batch, oldest first: every start,\n"
    "outcome and decision, with its time and story; all of it, one\n"
    "STORY's events, the last N or those since a time.",
    log_opts, log_exits, log_examples, "@ids"};

static const struct help_item stats_opts[] = {
    {"--batch ID", "the figures of batch ID (default: the latest batch)", NULL},
    {"--all", "the figures of every batch together", NULL},
    OPT_JSON("the figures"),
    OPT_HELP,
    HELP_END,
};
static const struct help_item stats_exits[] = {
    {"0", "printed", NULL},
    {"64",
	"a bad command line (a bad ID, or --batch with --all), no\n"
	"storyctl.json found, or no such batch",
	NULL},
    {"65", "storyctl.json is not valid", NULL},
    {"74", "the state database cannot be read", NULL},
    HELP_END,
};
static const struct help_item stats_examples[] = {
    {"storyctl stats", "how the last night went, in figures", NULL},
    {"storyctl stats --all --json | jq .recovery.rate",
	"how often a transient failure was got past, over every batch", NULL},
    HELP_END,
};
const struct cli_help help_stats = {
    "Reference 001's telemetry of the latest batch, of batch ID or of\n"
    "every batch (docs/stats.md): attempts per agent and role, success\n"
    "by attempt number, recovery of transient failures, delays by\n"
    "cause (mean, p50, p95), error codes, time lost to limits and\n"
    "waits, cost per agent and story, and where plateaus deferred\n"
    "stories.  GET /v1/stats answers the same JSON.",
    stats_opts, stats_exits, stats_examples, NULL};

static const struct help_item requeue_opts[] = {OPT_HELP, HELP_END};
static const struct help_item requeue_exits[] = {
    {"0", "requeued", NULL},
    {"64", "no such story, or it is not deferred, escalated or blocked", NULL},
    {"74", "the state cannot be written", NULL},
    HELP_END,
};
static const struct help_item requeue_examples[] = {
    {"storyctl requeue 1.2 && storyctl resume",
	"give story 1.2 another round after fixing it", NULL},
    HELP_END,
};
const struct cli_help help_requeue = {
    "Put a deferred, escalated or blocked story back to pending, with\n"
    "the stories blocked by it; its attempts stay in the record and it\n"
    "gets a fresh max_attempts.  A finished batch becomes stopped, so\n"
    "storyctl resume runs it.",
    requeue_opts, requeue_exits, requeue_examples, "@ids"};

static const struct help_item key_opts[] = {
    {"--write", "key add: the key may also write (default: read only)", NULL},
    OPT_HELP,
    HELP_END,
};
static const struct help_item key_exits[] = {
    {"0", "added (the key printed), listed or revoked", NULL},
    {"64",
	"a bad command line, a bad or taken name (key add), or no such\n"
	"key (key revoke)",
	NULL},
    {"74", "the state database cannot be read or written", NULL},
    HELP_END,
};
static const struct help_item key_examples[] = {
    {"KEY=$(storyctl key add dashboard)",
	"a read key for a dashboard, kept in a variable", NULL},
    {"storyctl key add ci --write", "a key that may also write", NULL},
    {"storyctl key revoke dashboard", "the key stops working at once", NULL},
    HELP_END,
};
const struct cli_help help_key = {
    "The API keys of storyctl serve.  key add NAME prints a new random\n"
    "key once, alone on standard output; only its SHA-256 is stored,\n"
    "with the name, the scope (read, or write with --write) and the\n"
    "time.  key list shows names, scopes and times, never a key.  A\n"
    "name is 1 to 63 letters, digits, '.', '_' or '-'.",
    key_opts, key_exits, key_examples, "add list revoke"};

static const struct help_item serve_opts[] = {
    {"--listen ADDR:PORT",
	"where to listen: a numeric IPv4 address or [IPv6] and a port\n"
	"(default 127.0.0.1:8420; port 0 picks a free one)",
	NULL},
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_HELP,
    HELP_END,
};
static const struct help_item serve_exits[] = {
    {"0", "stopped by SIGINT or SIGTERM", NULL},
    {"64",
	"a bad command line, a non-loopback address while no key\n"
	"exists, or a --tls-cert or --tls-key that cannot be read",
	NULL},
    {"69", "TLS asked for, and libmicrohttpd was built without it", NULL},
    {"65", "storyctl.json is not valid", NULL},
    {"71", "the address cannot be listened on", NULL},
    {"74", "the state database cannot be read", NULL},
    HELP_END,
};
static const struct help_item serve_examples[] = {
    {"storyctl serve", "serve on 127.0.0.1:8420 beside a running batch", NULL},
    {"curl -H \"X-API-Key: $KEY\" localhost:8420/v1/status",
	"what status --json prints", NULL},
    {"curl -N -H \"X-API-Key: $KEY\" localhost:8420/v1/events/stream",
	"follow the event log as server-sent events", NULL},
    HELP_END,
};
const struct cli_help help_serve = {
    "Serve the batch over HTTP (docs/api.md): GET /v1/status,\n"
    "/v1/stories, /v1/stories/ID and /v1/stats answer what status,\n"
    "list, show and stats --json print; /v1/retry-policy and\n"
    "/v1/stories/ID/retry-policy get, set and remove a policy override;\n"
    "/v1/stories/ID/failures lists and records failures, and\n"
    "/v1/stories/ID/requeue requeues; /v1/events?after=SEQ and\n"
    "/v1/events/stream are the event log; / is the live dashboard\n"
    "(sign in once with a key).  Every request needs a key in X-API-Key\n"
    "(storyctl key add); a read key can only GET.  It reads the\n"
    "database beside a running controller and never blocks it.  With\n"
    "--tls-cert and --tls-key it serves HTTPS.  It prints the port it\n"
    "listens on and runs until SIGINT or SIGTERM.",
    serve_opts, serve_exits, serve_examples, NULL};

static const struct help_item report_opts[] = {
    {"--html FILE",
	"write the report as one self-contained HTML page: styles and\n"
	"the timeline inline, nothing loaded from the network ('-' for\n"
	"standard output)",
	NULL},
    {"--md FILE",
	"write it as markdown ('-' for standard output; the default\n"
	"when neither option is given)",
	NULL},
    OPT_HELP,
    HELP_END,
};
static const struct help_item report_exits[] = {
    {"0", "written", NULL},
    {"64", "a bad command line, or no storyctl.json found", NULL},
    {"65", "storyctl.json is not valid", NULL},
    {"74", "the state database cannot be read, or FILE not written", NULL},
    HELP_END,
};
static const struct help_item report_examples[] = {
    {"storyctl report --html night.html", "the page to open in the morning",
	NULL},
    {"storyctl report | less", "the same as markdown, in the terminal", NULL},
    HELP_END,
};
const struct cli_help help_report = {
    "The morning report of the latest batch (docs/report.md): the\n"
    "stories that need a person first, with the reason and the\n"
    "storyctl commands to act, then the counts, the night as a\n"
    "timeline (one row per story, one bar per attempt coloured and\n"
    "labelled by outcome, waits, breaker pauses and stops) and every\n"
    "story's attempts.  storyctl serve shows the same page live at /.",
    report_opts, report_exits, report_examples, NULL};

static const struct help_item simulate_opts[] = {
    {"--tasks N", "the story's number of tasks, 1 or more (default 9)",
	"5 9 12"},
    OPT_JSON("the rows"),
    OPT_HELP,
    HELP_END,
};
static const struct help_item simulate_exits[] = {
    {"0", "printed", NULL},
    {"64", "an unknown OUTCOME or bad TASKS", NULL},
    {"65", "storyctl.json is not valid", NULL},
    HELP_END,
};
static const struct help_item simulate_examples[] = {
    {"storyctl simulate incomplete:3 incomplete:3 crash",
	"what the policy does when a story stalls at 3 tasks", NULL},
    {"storyctl simulate --tasks 4 network network success",
	"two network errors on a four-task story", NULL},
    HELP_END,
};
const struct cli_help help_simulate = {
    "Feed a made-up attempt history through the configured policy and\n"
    "print each decision, its reason and the wait.  Each OUTCOME is\n"
    "success, incomplete, gate_failed, crash, timeout, network,\n"
    "rate_limit, usage_limit, permanent or interrupted, optionally\n"
    "followed by :TASKS, the tasks done at its end.  Nothing runs.",
    simulate_opts, simulate_exits, simulate_examples,
    "success incomplete gate_failed crash timeout network rate_limit "
    "usage_limit permanent interrupted"};

static const struct help_item agents_opts[] = {
    OPT_JSON("the presets and agents"), OPT_HELP, HELP_END};
static const struct help_item agents_exits[] = {
    {"0", "printed", NULL},
    {"65", "storyctl.json is not valid", NULL},
    HELP_END,
};
static const struct help_item agents_examples[] = {
    {"storyctl agents", "the presets and what the config runs", NULL},
    {"storyctl agents --json", "the same with each argv", NULL},
    HELP_END,
};
const struct cli_help help_agents = {
    "List the built-in agent presets (claude, codex, gemini, ...) and\n"
    "the configured agents, with the argv each runs.",
    agents_opts, agents_exits, agents_examples, NULL};

static const struct help_item help_opts[] = {OPT_HELP, HELP_END};
static const struct help_item help_exits[] = {
    {"0", "printed", NULL},
    {"64", "no such command (with a suggestion)", NULL},
    HELP_END,
};
static const struct help_item help_examples[] = {
    {"storyctl help", "the list of commands", NULL},
    {"storyctl help run", "everything about run", NULL},
    HELP_END,
};
const struct cli_help help_help = {
    "Without COMMAND, list the commands; with it, print that command's\n"
    "help, as storyctl COMMAND --help does.  man storyctl has all of\n"
    "them on one page.",
    help_opts, help_exits, help_examples, "@commands"};

static const struct help_item job_opts[] = {
    {"--remote URL", "the git remote the story's branch is on (required)",
	NULL},
    {"--branch BRANCH", "the story's branch, storyctl/story/ID (required)",
	NULL},
    {"--story ID", "the story, for the commit message", NULL},
    {"--attempt N", "the attempt number, for the commit message", NULL},
    {"--scratch DIR",
	"where the clone goes (default $TMPDIR, else /tmp); it is\n"
	"removed at the end",
	NULL},
    {"--kill-grace-ms MS",
	"SIGTERM to SIGKILL grace for the agent when the job is\n"
	"stopped (default 5000)",
	NULL},
    {"--sandbox",
	"confine the agent to the clone as a local attempt is, or\n"
	"refuse to run it (exit 69) where no sandbox can start",
	NULL},
    {"--sandbox-no-network", "with --sandbox: leave the agent no network",
	NULL},
    {"--sandbox-preset NAME",
	"with --sandbox: keep that preset's state directories\n"
	"(~/.claude, ...) writable",
	NULL},
    OPT_HELP,
    HELP_END,
};
static const struct help_item job_exits[] = {
    {"N", "the agent's exit status (or the same signal)", NULL},
    {"1", "the agent exited 0 but its work could not be pushed", NULL},
    {"64", "a bad command line", NULL},
    {"69", "--sandbox, and no sandbox can start on this worker", NULL},
    {"74", "the branch cannot be cloned", NULL},
    HELP_END,
};
static const struct help_item job_examples[] = {
    {"srun -- storyctl job --remote git@host:p.git --branch "
     "storyctl/story/1-1 -- claude -p \"$PROMPT\"",
	"what the remote executor runs; not typed by hand", NULL},
    HELP_END,
};
const struct cli_help help_job = {
    "Run one attempt on a cluster worker, as the remote executor's\n"
    "launcher starts it (docs/cluster.md): clone the story's branch\n"
    "into a scratch directory, run the agent there (its own process\n"
    "group, the nesting variables removed from its environment), copy\n"
    "its output to stdout, commit what it changed, push the branch\n"
    "back and exit with the agent's status.  SIGTERM, SIGINT and\n"
    "SIGHUP stop the agent, then its work is pushed all the same.",
    job_opts, job_exits, job_examples, NULL};
