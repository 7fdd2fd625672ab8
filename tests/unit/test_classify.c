/*
 * test_classify.c - classify_attempt on real messages of claude code,
 * codex, gemini cli, aider, Node and curl (sources: docs/classification.md)
 * and on the traps: a successful exit that mentions errors, a transcript
 * that mentions 401 long before its end, NUL bytes and broken UTF-8.
 * test_real_cli_fixtures reads whole transcripts of the real CLIs run
 * offline from tests/fixtures/agents/ (docs/agents.md).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "tests/unit/fixture_fs.h"

#include "strategies/classify.h"

/* how the attempt ended */
enum end { END_EXIT0, END_EXIT1, END_SIGNAL, END_TIMEOUT, END_STALL };

struct ccase {
	const char *name;
	enum end end;
	int done, total; /* progress read after the attempt */
	const char *tail;
	enum error_code code; /* expected; the outcome follows from it */
	const char *msg_part; /* expected inside the message, or NULL */
};

/* -------- claude code (anthropics/claude-code issues) -------- */
#define CLAUDE_429 \
	"API Error: 429 {\"type\":\"error\",\"error\":{\"type\":" \
	"\"rate_limit_error\",\"message\":\"This request would exceed your " \
	"account's rate limit. Please try again later.\"}}\n"
#define CLAUDE_529 \
	"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":" \
	"\"overloaded_error\",\"message\":\"Overloaded\"}}\n"
#define CLAUDE_500 \
	"API Error: 500 {\"type\":\"error\",\"error\":{\"type\":" \
	"\"api_error\",\"message\":\"Internal server error\"}}\n"
#define CLAUDE_CONN \
	"  \xe2\x8e\xbf  API Error (Connection error.) \xc2\xb7 Retrying " \
	"in 1 seconds\xe2\x80\xa6 (attempt 1/10)\n" \
	"    \xe2\x8e\xbf  TypeError (fetch failed)\n"
#define CLAUDE_REFUSED \
	"Unable to connect to API (ConnectionRefused) \xc2\xb7 Retrying in " \
	"11s \xc2\xb7 attempt 8/10\n"
#define CLAUDE_KEY "Invalid API key \xc2\xb7 Please run /login\n"
#define CLAUDE_OAUTH \
	"API Error: 401 {\"type\":\"error\",\"error\":{\"type\":" \
	"\"authentication_error\",\"message\":\"OAuth token has expired. " \
	"Please obtain a new token or refresh your existing token.\"}}\n"
#define CLAUDE_CREDIT "Credit balance is too low\n"
#define CLAUDE_MODEL \
	"There's an issue with the selected model (claude-fable-5). It may " \
	"not exist or you may not have access to it. Run /model to pick a " \
	"different model.\n"
#define CLAUDE_404 \
	"API Error: 404 {\"type\":\"error\",\"error\":{\"type\":" \
	"\"not_found_error\",\"message\":\"model: claude-foo-9\"}}\n"
#define CLAUDE_403 \
	"API Error: 403 {\"type\":\"error\",\"error\":{\"type\":" \
	"\"permission_error\",\"message\":\"Your organization does not have " \
	"access to Claude Code.\"}}\n"
#define CLAUDE_EPOCH "Claude AI usage limit reached|1755615600\n"
#define CLAUDE_HIT \
	"You've hit your limit \xc2\xb7 resets 3pm (America/New_York)\n"
#define CLAUDE_5H \
	"5-hour limit reached \xe2\x88\x99 resets 1am " \
	"(Europe/Oslo)\n"
#define CLAUDE_OLD_BANNER \
	"Claude usage limit reached. Your limit will reset at 5pm " \
	"(Europe/Warsaw).\n"
/* claude -p --output-format stream-json: a rate limit reported as
 * subtype success, is_error true, exit 0 (anthropics/claude-code#79500) */
#define CLAUDE_SJ_RATE \
	"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n" \
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":" \
	"\"text\",\"text\":\"API Error: Rate limit reached\"}]},\"error\":" \
	"\"rate_limit\"}\n" \
	"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true," \
	"\"duration_api_ms\":0,\"num_turns\":1,\"result\":\"API Error: Rate " \
	"limit reached\",\"stop_reason\":\"stop_sequence\"," \
	"\"api_error_status\":429}\n"
#define CLAUDE_SJ_BUDGET \
	"{\"type\":\"result\",\"subtype\":\"error_max_budget_usd\"," \
	"\"is_error\":true,\"num_turns\":12,\"total_cost_usd\":5.02}\n"
#define CLAUDE_SJ_OK_MENTIONS \
	"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":" \
	"\"tool_result\",\"content\":\"FAIL test_auth: expected 401 got " \
	"500; ECONNREFUSED 127.0.0.1:5432\"}]}}\n" \
	"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false," \
	"\"result\":\"Done. Fixed the 401 handling and the rate limit " \
	"retries.\",\"api_error_status\":null}\n"
/* claude stream-json while it retries an API call (system/api_retry,
 * claude 2.1.197): the attempt was killed before the final result */
#define CLAUDE_SJ_RETRY_429 \
	"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n" \
	"{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":4," \
	"\"max_retries\":10,\"retry_delay_ms\":4237.2,\"error_status\":429," \
	"\"error\":\"rate_limit\",\"session_id\":\"s1\"}\n"
#define CLAUDE_SJ_RETRY_529 \
	"{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":2," \
	"\"max_retries\":10,\"retry_delay_ms\":1194.5,\"error_status\":529," \
	"\"error\":\"unknown\",\"session_id\":\"s1\"}\n"
/* a retry it got past: the assistant went on working after it */
#define CLAUDE_SJ_RETRY_RECOVERED \
	"{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1," \
	"\"max_retries\":10,\"retry_delay_ms\":524.5,\"error_status\":null," \
	"\"error\":\"unknown\",\"session_id\":\"s1\"}\n" \
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":" \
	"\"text\",\"text\":\"Editing src/app.c\"}]}}\n" \
	"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":" \
	"\"tool_result\",\"content\":\"ok\"}]}}\n"
/* claude --output-format json, an unmatched error subtype */
#define CLAUDE_MAX_TURNS \
	"{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":" \
	"true,\"num_turns\":30}\n"

/* -------- codex (openai/codex issues) -------- */
#define CODEX_USAGE \
	"\xe2\x96\xa0 You've hit your usage limit. Upgrade to Pro " \
	"(https://openai.com/chatgpt/pricing) or try again in 5 days 22 " \
	"hours 11\nminutes.\n"
#define CODEX_STREAM \
	"Reconnecting... 5/5\n" \
	"stream disconnected before completion: error sending request for " \
	"url (https://chatgpt.com/backend-api/codex/responses)\n"
#define CODEX_401 \
	"\xe2\x9a\xa0  stream error: exceeded retry limit, last status: 401 " \
	"Unauthorized; retrying 5/5 in 3.087s\xe2\x80\xa6\n"
#define CODEX_REFRESH \
	"\xe2\x96\xa0 Failed to refresh token: 401 Unauthorized: Your " \
	"refresh token has already been used to generate a new access " \
	"token. Please try signing in again.\n"
#define CODEX_429 \
	"ERROR: exceeded retry limit, last status: 429 Too Many Requests, " \
	"request id: 99687fc3cf714a2e-TPE\n"
#define CODEX_INSUFFICIENT \
	"ERROR: unexpected status 429 Too Many Requests: {\"error\":" \
	"{\"message\":\"You exceeded your current quota, please check your " \
	"plan and billing details.\",\"type\":\"insufficient_quota\"," \
	"\"code\":\"insufficient_quota\"}}\n"
#define CODEX_NO_MODEL \
	"ERROR: unexpected status 404 Not Found: The model `gpt-9-codex` " \
	"does not exist or you do not have access to it.\n"
#define CODEX_CAPACITY \
	"ERROR: Selected model is at capacity. Please try a different " \
	"model.\n"
/* codex 0.169 text mode offline, once the cause has scrolled away */
#define CODEX_WAITING \
	"ERROR: Reconnecting... waiting for network\n" \
	"ERROR: Reconnecting... waiting for network\n"
#define CODEX_JSON_NET \
	"{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n" \
	"{\"type\":\"turn.started\"}\n" \
	"{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\n" \
	"{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream " \
	"disconnected before completion: Transport error: network error: " \
	"error decoding response body\"}}\n"
#define CODEX_JSON_USAGE \
	"{\"type\":\"turn.started\"}\n" \
	"{\"type\":\"error\",\"message\":\"You've hit your usage limit. " \
	"Upgrade to Pro or try again in 2 days 3 hours 5 minutes.\"}\n" \
	"{\"type\":\"turn.failed\",\"error\":{\"message\":\"You've hit your " \
	"usage limit. Upgrade to Pro or try again in 2 days 3 hours 5 " \
	"minutes.\"}}\n"
/* codex 0.169.0 --json against a usage limit that names no reset, as
 * the stand-in API made it print (issue 31) */
#define CODEX_JSON_LATER \
	"{\"type\":\"turn.started\"}\n" \
	"{\"type\":\"error\",\"message\":\"You\xe2\x80\x99ve hit your " \
	"usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), " \
	"visit https://chatgpt.com/settings/usage to purchase more credits " \
	"or try again later.\"}\n" \
	"{\"type\":\"turn.failed\",\"error\":{\"message\":" \
	"\"You\xe2\x80\x99ve " \
	"hit your usage limit. Upgrade to Pro " \
	"(https://chatgpt.com/explore/pro), visit " \
	"https://chatgpt.com/settings/usage to purchase more credits or try " \
	"again later.\"}}\n"
#define CODEX_JSON_RECOVERED \
	"{\"type\":\"error\",\"message\":\"Reconnecting... 1/5 (stream " \
	"disconnected before completion)\"}\n" \
	"{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\"," \
	"\"text\":\"Implemented two tasks.\"}}\n" \
	"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10}}\n"

/* -------- gemini cli (google-gemini/gemini-cli issues) -------- */
#define GEMINI_EXHAUSTED \
	"\xe2\x9c\x95 [API Error: [{\n" \
	"    \"error\": {\n" \
	"      \"code\": 429,\n" \
	"      \"message\": \"Resource has been exhausted (e.g. check " \
	"quota).\",\n" \
	"      \"status\": \"RESOURCE_EXHAUSTED\"\n" \
	"    }\n" \
	"  }\n" \
	"  ]]\n" \
	"  Please wait and try again later. To increase your limits, " \
	"request a quota increase through AI Studio, or switch to another " \
	"/auth method\n"
#define GEMINI_QUOTA_METRIC \
	"      \"code\": 429,\n" \
	"      \"message\": \"Quota exceeded for quota metric 'Gemini 2.5 " \
	"Pro Requests' and limit 'Gemini 2.5 Pro Requests per minute per " \
	"user' of service 'cloudcode-pa.googleapis.com'.\",\n" \
	"      \"status\": \"RESOURCE_EXHAUSTED\",\n" \
	"Please retry in 4.53s.\n"
#define GEMINI_BILLING \
	"\xe2\x9c\x95 [API Error: {\"error\":{\"message\":\"{\\n  \\\"error" \
	"\\\": {\\n    \\\"code\\\": 429,\\n    \\\"message\\\": \\\"You " \
	"exceeded your current quota, please check your plan and billing " \
	"details. For more information on this error, head to: " \
	"https://ai.google.dev/gemini-api/docs/rate-limits.\\\",\\n    " \
	"\\\"status\\\": \\\"RESOURCE_EXHAUSTED\\\"\\n  }\\n}\\n\",\"code\":" \
	"429,\"status\":\"Too Many Requests\"}}]\n"
#define GEMINI_PER_MINUTE \
	"Error 429, Message: You exceeded your current quota, please check " \
	"your plan and billing details. For more information on this error, " \
	"head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n" \
	"* Quota exceeded for metric: generativelanguage.googleapis.com/" \
	"generate_content_free_tier_input_token_count, limit: 250000\n" \
	"Please retry in 47.434392449s.\n" \
	"Status: RESOURCE_EXHAUSTED\n"
#define GEMINI_KEY \
	"\xe2\x9c\x95 [API Error: {\"error\":{\"code\":400,\"message\":\"API " \
	"key not valid. Please pass a valid API key.\",\"status\":" \
	"\"INVALID_ARGUMENT\"}}]\n"
#define GEMINI_CAPACITY_LONG \
	"\xe2\x9c\x95 [API Error: [{\n" \
	"    \"error\": {\n" \
	"      \"code\": 429,\n" \
	"      \"message\": \"You have exhausted your capacity on this " \
	"model. Your quota will reset after 8h44m7s.\",\n" \
	"      \"errors\": [\n" \
	"        {\n" \
	"          \"message\": \"You have exhausted your capacity on this " \
	"model. Your quota will reset after 8h44m7s.\",\n" \
	"          \"domain\": \"global\",\n" \
	"          \"reason\": \"rateLimitExceeded\"\n" \
	"        }\n" \
	"      ],\n" \
	"      \"status\": \"RESOURCE_EXHAUSTED\"\n" \
	"    }\n" \
	"  }\n" \
	"  ]]\n"
#define GEMINI_CAPACITY_SHORT \
	"Attempt 1 failed: You have exhausted your capacity on this model. " \
	"Your quota will reset after 5s.. Retrying after 6173ms...\n" \
	"Attempt 3 failed: You have exhausted your capacity on this model. " \
	"Your quota will reset after 0s.. Retrying after 5710ms...\n"
#define GEMINI_SJ_AUTH \
	"{\"type\":\"init\",\"timestamp\":\"2026-02-24T10:00:00.000Z\"," \
	"\"session_id\":\"x\",\"model\":\"gemini-2.5-pro\"}\n" \
	"{\"type\":\"result\",\"timestamp\":\"2026-02-24T10:00:01.000Z\"," \
	"\"status\":\"error\",\"error\":{\"type\":\"Error\",\"message\":" \
	"\"Please set an Auth method in your /home/u/.gemini/settings.json " \
	"or specify GEMINI_API_KEY\"}}\n"
#define GEMINI_ENTITY \
	"\xe2\x9c\x95 [API Error: {\"error\":{\"code\":404,\"message\":" \
	"\"Requested entity was not found.\",\"status\":\"NOT_FOUND\"}}]\n"
#define GEMINI_OVERLOADED \
	"\xe2\x9c\x95 [API Error: {\"error\":{\"code\":503,\"message\":\"The " \
	"model is overloaded. Please try again later.\",\"status\":" \
	"\"UNAVAILABLE\"}}]\n"
#define GEMINI_SJ_TOOL_ERROR \
	"{\"type\":\"tool_result\",\"tool_id\":\"t1\",\"status\":\"error\"," \
	"\"output\":\"connect ECONNREFUSED 127.0.0.1:5432\"}\n" \
	"{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"The " \
	"database is down; I got 429 Too Many Requests from the mock.\"}\n"

/* -------- aider (Aider-AI/aider exceptions.py and issues) -------- */
#define AIDER_AUTH \
	"litellm.AuthenticationError: AnthropicException - {\"type\":" \
	"\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":" \
	"\"invalid x-api-key\"}}\n" \
	"The API provider is not able to authenticate you. Check your API " \
	"key.\n"
#define AIDER_RATE \
	"litellm.RateLimitError: AnthropicException - {\"type\":\"error\"," \
	"\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of " \
	"request tokens has exceeded your per-minute rate limit\"}}\n" \
	"The API provider has rate limited you. Try again later or check " \
	"your quotas.\n" \
	"Retrying in 0.2 seconds...\n"
#define AIDER_OVERLOADED \
	"litellm.InternalServerError: AnthropicException - Overloaded. " \
	"Handle with `litellm.InternalServerError`.\n" \
	"The API provider's servers are down or overloaded.\n"
#define AIDER_TIMEOUT \
	"litellm.Timeout: Connection timed out after 600.0 seconds.\n" \
	"The API provider timed out without returning a response. They may " \
	"be down or overloaded.\n"
#define AIDER_CONN \
	"litellm.APIConnectionError: OpenAIException - Connection error.\n"

/* -------- Node, curl, musl -------- */
#define NODE_ENOTFOUND \
	"Error: getaddrinfo ENOTFOUND api.anthropic.com\n" \
	"    at GetAddrInfoReqWrap.onlookupall [as oncomplete] " \
	"(node:dns:120:26)\n"
#define NODE_RESET \
	"Error: read ECONNRESET\n" \
	"    at TLSWrap.onStreamRead (node:internal/stream_base_commons:" \
	"218:20)\n"
#define NODE_HANGUP "Error: socket hang up\n"
#define CURL_HOST "curl: (6) Could not resolve host: api.openai.com\n"
#define MUSL_NAME \
	"Error: getaddrinfo EAI_AGAIN api.openai.com\n" \
	"wget: bad address 'api.openai.com': Name does not resolve\n"

/* -------- traps -------- */
#define TRAP_SHELL_PERMISSION \
	"Running ./scripts/migrate.sh\n" \
	"bash: ./scripts/migrate.sh: Permission denied\n"
#define TRAP_FILE_NOT_FOUND \
	"Error: src/models/user.py not found\n" \
	"Traceback (most recent call last):\n"
#define TRAP_TEST_COUNT "429 tests passed, 3 failed\nSegmentation fault\n"

static const struct ccase cases[] = {
    /* claude code */
    {"claude 429 rate_limit_error", END_EXIT1, 1, 5, CLAUDE_429,
	ERRC_RATE_LIMIT, "rate_limit_error"},
    {"claude rate limit reached", END_EXIT1, 0, 5,
	"API Error: Rate limit reached\n", ERRC_RATE_LIMIT,
	"Rate limit reached"},
    {"claude 529 overloaded", END_EXIT1, 0, 5, CLAUDE_529, ERRC_OVERLOADED,
	"overloaded_error"},
    {"claude 500 api_error", END_EXIT1, 0, 5, CLAUDE_500, ERRC_SERVER_ERROR,
	"Internal server error"},
    {"claude connection error", END_EXIT1, 0, 5, CLAUDE_CONN,
	ERRC_NETWORK_ERROR, "fetch failed"},
    {"claude connection refused", END_EXIT1, 0, 5, CLAUDE_REFUSED,
	ERRC_NETWORK_ERROR, "ConnectionRefused"},
    {"claude invalid api key", END_EXIT1, 0, 5, CLAUDE_KEY, ERRC_AUTH,
	"Invalid API key"},
    {"claude oauth expired", END_EXIT1, 0, 5, CLAUDE_OAUTH, ERRC_AUTH,
	"OAuth token has expired"},
    {"claude not logged in", END_EXIT1, 0, 5,
	"Not logged in \xc2\xb7 Please run /login\n", ERRC_AUTH, NULL},
    {"claude credit balance", END_EXIT1, 0, 5, CLAUDE_CREDIT,
	ERRC_QUOTA_EXCEEDED, "Credit balance"},
    {"claude selected model", END_EXIT1, 0, 5, CLAUDE_MODEL,
	ERRC_MODEL_NOT_FOUND, "claude-fable-5"},
    {"claude 404 not_found_error", END_EXIT1, 0, 5, CLAUDE_404,
	ERRC_MODEL_NOT_FOUND, NULL},
    {"claude 403 permission_error", END_EXIT1, 0, 5, CLAUDE_403,
	ERRC_PERMISSION_DENIED, NULL},
    {"claude usage epoch banner", END_EXIT1, 2, 5, CLAUDE_EPOCH,
	ERRC_USAGE_LIMIT, "usage limit reached"},
    {"claude hit your limit", END_EXIT1, 2, 5, CLAUDE_HIT, ERRC_USAGE_LIMIT,
	"resets 3pm"},
    {"claude 5-hour limit", END_EXIT1, 2, 5, CLAUDE_5H, ERRC_USAGE_LIMIT,
	"Europe/Oslo"},
    {"claude old banner", END_EXIT1, 2, 5, CLAUDE_OLD_BANNER, ERRC_USAGE_LIMIT,
	NULL},
    {"claude stream-json is_error exit 0", END_EXIT0, 0, 3, CLAUDE_SJ_RATE,
	ERRC_RATE_LIMIT, "API Error: Rate limit reached"},
    {"claude stream-json is_error exit 1", END_EXIT1, 0, 3, CLAUDE_SJ_RATE,
	ERRC_RATE_LIMIT, "API Error: Rate limit reached"},
    {"claude max budget", END_EXIT1, 2, 5, CLAUDE_SJ_BUDGET,
	ERRC_BUDGET_EXCEEDED, "error_max_budget_usd"},
    {"claude max turns exit 0", END_EXIT0, 2, 5, CLAUDE_MAX_TURNS, ERRC_CRASH,
	"error_max_turns"},
    {"claude killed while retrying a 429", END_TIMEOUT, 0, 5,
	CLAUDE_SJ_RETRY_429, ERRC_RATE_LIMIT, "api_retry 4/10"},
    {"claude killed while retrying a 529", END_TIMEOUT, 0, 5,
	CLAUDE_SJ_RETRY_529, ERRC_OVERLOADED, "HTTP 529"},
    {"claude killed after a retry it got past", END_TIMEOUT, 1, 5,
	CLAUDE_SJ_RETRY_RECOVERED, ERRC_TIMEOUT, ""},
    /* ended at its timeout, its last error only as text: a timeout that
     * keeps the words (issue 31) */
    {"killed at the timeout after a text error", END_TIMEOUT, 1, 5,
	"working on task 2\nError: tool call failed: ENOSPC writing "
	"src/a.c\nthinking...\n",
	ERRC_TIMEOUT, "tool call failed: ENOSPC"},
    /* codex */
    {"codex usage limit", END_EXIT1, 1, 4, CODEX_USAGE, ERRC_USAGE_LIMIT,
	"try again in 5 days"},
    /* no reset named, but it lifts: a usage limit with the policy's
     * default wait, never permanent for the night */
    {"codex usage limit that lifts later", END_EXIT1, 1, 4, CODEX_JSON_LATER,
	ERRC_USAGE_LIMIT, "try again later"},
    {"codex stream disconnected", END_EXIT1, 1, 4, CODEX_STREAM,
	ERRC_NETWORK_ERROR, "stream disconnected"},
    {"codex 401 retry limit", END_EXIT1, 0, 4, CODEX_401, ERRC_AUTH,
	"401 Unauthorized"},
    {"codex refresh token", END_EXIT1, 0, 4, CODEX_REFRESH, ERRC_AUTH, NULL},
    {"codex 429 retry limit", END_EXIT1, 0, 4, CODEX_429, ERRC_RATE_LIMIT,
	"429 Too Many Requests"},
    {"codex insufficient_quota as 429", END_EXIT1, 0, 4, CODEX_INSUFFICIENT,
	ERRC_QUOTA_EXCEEDED, "insufficient_quota"},
    {"codex model does not exist", END_EXIT1, 0, 4, CODEX_NO_MODEL,
	ERRC_MODEL_NOT_FOUND, "gpt-9-codex"},
    {"codex model at capacity", END_EXIT1, 0, 4, CODEX_CAPACITY,
	ERRC_OVERLOADED, NULL},
    {"codex waiting for network until killed", END_TIMEOUT, 0, 4, CODEX_WAITING,
	ERRC_NETWORK_ERROR, "waiting for network"},
    {"codex json turn.failed network", END_EXIT1, 0, 4, CODEX_JSON_NET,
	ERRC_NETWORK_ERROR, "Transport error"},
    {"codex json turn.failed exit 0", END_EXIT0, 0, 4, CODEX_JSON_USAGE,
	ERRC_USAGE_LIMIT, "usage limit"},
    {"codex json recovered exit 0", END_EXIT0, 2, 4, CODEX_JSON_RECOVERED,
	ERRC_INCOMPLETE, ""},
    {"codex json recovered all done", END_EXIT0, 4, 4, CODEX_JSON_RECOVERED,
	ERRC_NONE, ""},
    /* gemini */
    {"gemini resource exhausted", END_EXIT1, 0, 3, GEMINI_EXHAUSTED,
	ERRC_RATE_LIMIT, NULL},
    {"gemini quota metric with retry", END_EXIT1, 0, 3, GEMINI_QUOTA_METRIC,
	ERRC_RATE_LIMIT, NULL},
    {"gemini billing quota as 429", END_EXIT1, 0, 3, GEMINI_BILLING,
	ERRC_QUOTA_EXCEEDED, "billing details"},
    {"gemini per-minute quota names its retry", END_EXIT1, 0, 3,
	GEMINI_PER_MINUTE, ERRC_RATE_LIMIT, NULL},
    {"gemini api key not valid", END_EXIT1, 0, 3, GEMINI_KEY, ERRC_AUTH,
	"API key not valid"},
    {"gemini capacity resets in hours", END_EXIT1, 0, 3, GEMINI_CAPACITY_LONG,
	ERRC_USAGE_LIMIT, "8h44m7s"},
    {"gemini capacity resets in seconds", END_EXIT1, 0, 3,
	GEMINI_CAPACITY_SHORT, ERRC_RATE_LIMIT, "capacity"},
    {"gemini stream-json auth result", END_EXIT1, 0, 3, GEMINI_SJ_AUTH,
	ERRC_AUTH, "Please set an Auth method"},
    {"gemini entity not found", END_EXIT1, 0, 3, GEMINI_ENTITY,
	ERRC_MODEL_NOT_FOUND, NULL},
    {"gemini model overloaded", END_EXIT1, 0, 3, GEMINI_OVERLOADED,
	ERRC_OVERLOADED, NULL},
    {"gemini tool_result error is content", END_SIGNAL, 1, 3,
	GEMINI_SJ_TOOL_ERROR, ERRC_CRASH, ""},
    /* aider */
    {"aider authentication", END_EXIT1, 0, 3, AIDER_AUTH, ERRC_AUTH, NULL},
    {"aider rate limited", END_EXIT1, 0, 3, AIDER_RATE, ERRC_RATE_LIMIT, NULL},
    {"aider overloaded", END_EXIT1, 0, 3, AIDER_OVERLOADED, ERRC_OVERLOADED,
	NULL},
    {"aider provider timed out", END_EXIT1, 0, 3, AIDER_TIMEOUT,
	ERRC_NETWORK_ERROR, "timed out"},
    {"aider connection error", END_EXIT1, 0, 3, AIDER_CONN, ERRC_NETWORK_ERROR,
	"APIConnectionError"},
    /* Node, curl, musl */
    {"node enotfound", END_EXIT1, 0, 3, NODE_ENOTFOUND, ERRC_NETWORK_ERROR,
	"ENOTFOUND"},
    {"node econnreset", END_EXIT1, 0, 3, NODE_RESET, ERRC_NETWORK_ERROR,
	"ECONNRESET"},
    {"node socket hang up", END_EXIT1, 0, 3, NODE_HANGUP, ERRC_NETWORK_ERROR,
	NULL},
    {"curl could not resolve host", END_EXIT1, 0, 3, CURL_HOST,
	ERRC_NETWORK_ERROR, NULL},
    {"musl name does not resolve", END_EXIT1, 0, 3, MUSL_NAME,
	ERRC_NETWORK_ERROR, NULL},
    /* traps */
    {"is_error false exit 0 done", END_EXIT0, 3, 3, CLAUDE_SJ_OK_MENTIONS,
	ERRC_NONE, ""},
    {"is_error false exit 0 tasks left", END_EXIT0, 1, 3, CLAUDE_SJ_OK_MENTIONS,
	ERRC_INCOMPLETE, ""},
    {"is_error false exit 1 is a crash", END_EXIT1, 1, 3, CLAUDE_SJ_OK_MENTIONS,
	ERRC_CRASH, ""},
    {"exit 0 with rate limit text stays incomplete", END_EXIT0, 2, 5,
	CLAUDE_429 "Retrying...\nAll good now.\n", ERRC_INCOMPLETE, ""},
    {"exit 0 with rate limit text stays success", END_EXIT0, 5, 5,
	CLAUDE_429 CLAUDE_KEY, ERRC_NONE, ""},
    {"exit 0 structured error but every box checked", END_EXIT0, 3, 3,
	CLAUDE_SJ_RATE, ERRC_NONE, ""},
    {"timeout with network tail", END_TIMEOUT, 2, 5, NODE_RESET,
	ERRC_NETWORK_ERROR, "ECONNRESET"},
    {"timeout with rate limit tail", END_TIMEOUT, 2, 5, CLAUDE_429,
	ERRC_RATE_LIMIT, NULL},
    {"timeout, nothing known", END_TIMEOUT, 2, 5,
	"Editing src/app.c\nRunning make test\n", ERRC_TIMEOUT, ""},
    {"stalled, nothing known", END_STALL, 2, 5, "thinking...\n", ERRC_STALLED,
	""},
    {"signal, no output", END_SIGNAL, 0, 5, "", ERRC_CRASH, ""},
    {"shell permission denied is a crash", END_EXIT1, 0, 5,
	TRAP_SHELL_PERMISSION, ERRC_CRASH, ""},
    {"a missing file is not a missing model", END_EXIT1, 0, 5,
	TRAP_FILE_NOT_FOUND, ERRC_CRASH, ""},
    {"a test count is not a status", END_EXIT1, 0, 5, TRAP_TEST_COUNT,
	ERRC_CRASH, ""},
    {"npm 404 is not a missing model", END_EXIT1, 0, 5,
	"npm ERR! code E404\nnpm ERR! 404 Not Found - GET "
	"https://registry.npmjs.org/left-padd - Not found\n",
	ERRC_CRASH, ""},
    {"http 401 without api context is not auth", END_EXIT1, 0, 5,
	"curl -i localhost:8080/admin\nHTTP/1.1 401 Unauthorized\n", ERRC_CRASH,
	""},
    {"json code 404 is strong", END_EXIT1, 0, 5,
	"  \"error\": {\n    \"code\": 404,\n    \"status\": "
	"\"NOT_FOUND\"\n  }\n",
	ERRC_MODEL_NOT_FOUND, "404"},
    {"5xx with a weak context is still transient", END_EXIT1, 0, 5,
	"Error: Request failed: HTTP 503\n", ERRC_SERVER_ERROR, NULL},
    {"unknown structured error falls back", END_EXIT1, 1, 5, CLAUDE_MAX_TURNS,
	ERRC_CRASH, "error_max_turns"},

    /* issue 12: the walls of claude 2.1 (its hJ() wordings), codex's
	 * 500 and gemini's quota forms */
    {"claude session limit with a reset", END_EXIT1, 0, 5,
	"You've hit your session limit \xc2\xb7 resets 2:10am (UTC)\n",
	ERRC_USAGE_LIMIT, "session limit"},
    {"claude weekly limit, no zone", END_EXIT1, 0, 5,
	"You've hit your weekly limit \xc2\xb7 resets 2am\n", ERRC_USAGE_LIMIT,
	"weekly limit"},
    {"claude out of extra usage", END_EXIT1, 0, 5,
	"You're out of extra usage \xc2\xb7 resets 3pm (Europe/Oslo)\n",
	ERRC_USAGE_LIMIT, "extra usage"},
    {"claude 5-hour limit, bullet", END_EXIT1, 0, 5,
	"5-hour limit reached \xe2\x88\x99 resets 2am\n", ERRC_USAGE_LIMIT,
	NULL},
    {"claude org monthly spend limit: no reset", END_EXIT1, 0, 5,
	"You've hit your org's monthly spend limit \xc2\xb7 ask your admin to "
	"raise it at claude.ai/settings/usage\n",
	ERRC_QUOTA_EXCEEDED, "monthly spend limit"},
    {"claude usage disabled by an admin", END_EXIT1, 0, 5,
	"Your usage allocation has been disabled by your admin \xc2\xb7 run "
	"/usage-credits to ask your admin for a higher limit\n",
	ERRC_QUOTA_EXCEEDED, "disabled"},
    /* the same walls both ways: with a reset (a zone or local time) a
	 * usage limit, without one a limit that no wait lifts */
    /* the Messages API's workspace cap, as claude prints its 400 */
    {"workspace API usage limit with an ISO reset", END_EXIT1, 0, 5,
	"API Error: 400 {\"type\":\"error\",\"error\":{\"type\":"
	"\"invalid_request_error\",\"message\":\"You have reached your "
	"specified workspace API usage limits. You will regain access on "
	"2025-06-01 at 00:00 UTC.\"}}\n",
	ERRC_USAGE_LIMIT, "usage limits"},
    {"claude session limit, no reset", END_EXIT1, 0, 5,
	"You've hit your session limit\n", ERRC_QUOTA_EXCEEDED,
	"session limit"},
    {"claude session limit, reset without a zone", END_EXIT1, 0, 5,
	"You've hit your session limit \xc2\xb7 resets 2am\n", ERRC_USAGE_LIMIT,
	"session limit"},
    {"claude out of extra usage, no reset", END_EXIT1, 0, 5,
	"You're out of extra usage \xc2\xb7 add more at "
	"claude.ai/settings/usage\n",
	ERRC_QUOTA_EXCEEDED, "extra usage"},
    {"claude 5-hour limit, bullet, with a zone", END_EXIT1, 0, 5,
	"5-hour limit reached \xe2\x88\x99 resets 2am (Europe/Oslo)\n",
	ERRC_USAGE_LIMIT, "5-hour limit"},
    {"claude dated reset (anthropics/claude-code#55876)", END_EXIT1, 0, 5,
	"You've hit your limit \xc2\xb7 resets May 5 at 9pm "
	"(America/New_York)\n",
	ERRC_USAGE_LIMIT, "hit your limit"},
    {"claude org monthly usage limit: no reset", END_EXIT1, 0, 5,
	"You've hit your org's monthly usage limit\n", ERRC_QUOTA_EXCEEDED,
	"monthly usage limit"},
    {"claude org monthly usage limit with a reset", END_EXIT1, 0, 5,
	"You've hit your org's monthly usage limit \xc2\xb7 resets Dec 1, "
	"12am (UTC)\n",
	ERRC_USAGE_LIMIT, "monthly usage limit"},
    {"claude spend limit (anthropics/claude-code#67939)", END_EXIT1, 0, 5,
	"You've hit your monthly spend limit \xc2\xb7 raise it at "
	"claude.ai/settings/usage\n",
	ERRC_QUOTA_EXCEEDED, "spend limit"},
    {"claude org usage disabled by an admin", END_EXIT1, 0, 5,
	"Your org's usage allocation has been disabled by an admin\n",
	ERRC_QUOTA_EXCEEDED, "disabled"},
    {"codex 500 in its own words", END_EXIT1, 0, 5,
	"{\"type\":\"turn.failed\",\"error\":{\"message\":\"We\xe2\x80\x99re "
	"currently experiencing high demand, which may cause temporary "
	"errors.\"}}\n",
	ERRC_SERVER_ERROR, "high demand"},
    {"gemini window past 5 minutes", END_EXIT1, 0, 5,
	"Quota exceeded for quota metric 'Generate Content API requests per "
	"hour'.\nSuggested retry after 7200s.\n",
	ERRC_USAGE_LIMIT, NULL},
    {"gemini per-minute retry stays a rate limit", END_EXIT1, 0, 5,
	"Quota exceeded for quota metric 'requests per minute'.\nSuggested "
	"retry after 60s.\n",
	ERRC_RATE_LIMIT, NULL},
    {"gemini prepaid credits depleted", END_EXIT1, 0, 5,
	"[API Error: Your prepayment credits are depleted. Please go to AI "
	"Studio to manage your project and billing.]\n",
	ERRC_QUOTA_EXCEEDED, "depleted"},
};

static void
run_case(const struct ccase *c, struct classification *out)
{
	struct classify_input in;

	memset(&in, 0, sizeof(in));
	in.exit_code = c->end == END_EXIT0 ? 0 : c->end == END_EXIT1 ? 1 : -1;
	in.term_signal =
	    c->end == END_SIGNAL || c->end == END_TIMEOUT || c->end == END_STALL
	    ? 15
	    : 0;
	in.timed_out = c->end == END_TIMEOUT;
	in.stalled = c->end == END_STALL;
	in.tasks_completed = c->done;
	in.tasks_total = c->total;
	in.tail = c->tail;
	in.tail_len = strlen(c->tail);
	classify_attempt(out, &in);
}

static void
test_table(void **state)
{
	struct classification out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ccase *c = &cases[i];

		run_case(c, &out);
		if (out.code != c->code ||
		    (c->msg_part != NULL &&
			(c->msg_part[0] == '\0'
				? out.message[0] != '\0'
				: strstr(out.message, c->msg_part) == NULL)))
			print_message("case \"%s\": got %s, message \"%s\"\n",
			    c->name, errcode_name(out.code), out.message);
		assert_string_equal(
		    errcode_name(out.code), errcode_name(c->code));
		assert_string_equal(outcome_name(out.outcome),
		    outcome_name(errcode_outcome(c->code)));
		assert_false(out.retry_on_matched);
		if (c->msg_part != NULL && c->msg_part[0] == '\0')
			assert_string_equal(out.message, "");
		else if (c->msg_part != NULL)
			assert_non_null(strstr(out.message, c->msg_part));
	}
	assert_true(sizeof(cases) / sizeof(cases[0]) >= 35);
}

/* A transcript whose middle mentions 401, timeout and errors but whose
 * last 40 lines are ordinary output. */
static void
test_deep_mentions_do_not_decide(void **state)
{
	struct classify_input in;
	struct classification out;
	char *tail;
	size_t cap = 16384, len;
	int i;

	(void)state;
	tail = malloc(cap);
	assert_non_null(tail);
	len = (size_t)snprintf(tail, cap, "%s%s%s",
	    "FAIL test_login: expected status 401 Unauthorized\n",
	    "Error: connect ETIMEDOUT 10.0.0.1:443 (timeout)\n", CLAUDE_429);
	for (i = 0; i < 60; i++)
		len += (size_t)snprintf(
		    tail + len, cap - len, "  compiling module %d ... ok\n", i);
	memset(&in, 0, sizeof(in));
	in.exit_code = 2;
	in.tasks_completed = 1;
	in.tasks_total = 4;
	in.tail = tail;
	in.tail_len = len;
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_CRASH);
	assert_int_equal(out.code, ERRC_CRASH);
	assert_string_equal(out.message, "");
	/* the same mentions in the last lines do decide: the newest error
	 * (the 429), not a test's "expected status 401" above it */
	in.tail_len = strlen("FAIL test_login: expected status 401 "
			     "Unauthorized\n") +
	    strlen("Error: connect ETIMEDOUT 10.0.0.1:443 "
		   "(timeout)\n") +
	    strlen(CLAUDE_429);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_RATE_LIMIT);
	assert_non_null(strstr(out.message, "rate_limit_error"));
	/* and alone, "status 401" is an API status */
	in.tail_len = strlen("FAIL test_login: expected status 401 "
			     "Unauthorized\n");
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_AUTH);
	free(tail);
}

/* An agent stuck redrawing a spinner with '\r' after a network error is
 * still a network failure when it is killed at its timeout. */
static void
test_spinner_after_error(void **state)
{
	struct classify_input in;
	struct classification out;
	char tail[8192];
	size_t len;
	int i;

	(void)state;
	len = (size_t)snprintf(tail, sizeof(tail), "%s", NODE_RESET);
	for (i = 0; i < 200; i++)
		len += (size_t)snprintf(tail + len, sizeof(tail) - len,
		    "\r\xe2\xa0\x8b Waiting for network (%d s)", i);
	memset(&in, 0, sizeof(in));
	in.exit_code = -1;
	in.term_signal = 15;
	in.timed_out = true;
	in.tasks_completed = 1;
	in.tasks_total = 3;
	in.tail = tail;
	in.tail_len = len;
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_NETWORK);
	assert_string_equal(out.message, "Error: read ECONNRESET");
}

/* Only the newest error block counts for built-in messages; the user's
 * patterns count anywhere in the window. */
static void
test_newest_block(void **state)
{
	struct strlist perm = {0};
	struct classify_input in;
	struct classification out;
	char tail[8192];
	size_t len;
	int i;

	(void)state;
	len = (size_t)snprintf(tail, sizeof(tail), "%s%s",
	    "tests: got {\"type\":\"authentication_error\"} as expected\n",
	    "mock provider: quota policy violation\n");
	for (i = 0; i < 30; i++)
		len += (size_t)snprintf(
		    tail + len, sizeof(tail) - len, "  editing file %d\n", i);
	len +=
	    (size_t)snprintf(tail + len, sizeof(tail) - len, "%s", CLAUDE_429);
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 3;
	in.tail = tail;
	in.tail_len = len;
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_RATE_LIMIT);

	assert_int_equal(strlist_push(&perm, "policy violation"), 0);
	in.permanent_on = &perm;
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_PERMANENT);
	assert_non_null(strstr(out.message, "policy violation"));
	strlist_release(&perm);
}

static void
test_nul_and_invalid_utf8(void **state)
{
	static const char tail[] =
	    "garbage \0\0\xff\xfe\xc3\n"
	    "\x1b[31mAPI Error: 429 \xc3\x28 \xed\xa0\x80 \0 "
	    "rate_limit_error\x1b[0m caf\xc3\xa9 \xe2\x82\n";
	struct classify_input in;
	struct classification out;
	size_t i, n;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 2;
	in.tail = tail;
	in.tail_len = sizeof(tail) - 1;
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_RATE_LIMIT);
	n = strlen(out.message);
	assert_true(n > 0 && n < CLASSIFY_MSG_MAX);
	/* no control bytes, no escape, and the multi-byte é kept whole */
	for (i = 0; i < n; i++)
		assert_true((unsigned char)out.message[i] >= 0x20 &&
		    out.message[i] != 0x7f);
	assert_non_null(strstr(out.message, "caf\xc3\xa9"));
	assert_null(strstr(out.message, "\xff"));
	assert_null(strstr(out.message, "\xed\xa0"));
	assert_null(strstr(out.message, "[31m"));
	assert_true(out.message[0] != ' ' && out.message[n - 1] != ' ');
}

/* A message longer than CLASSIFY_MSG_MAX is cut at a character boundary. */
static void
test_message_bounded(void **state)
{
	struct classify_input in;
	struct classification out;
	char tail[4096];
	size_t i, len, n;

	(void)state;
	len = (size_t)snprintf(tail, sizeof(tail), "API Error: 529 ");
	for (i = 0; i < 600; i++) {
		/* "é" is two bytes: an odd cut would split one */
		tail[len++] = '\xc3';
		tail[len++] = '\xa9';
	}
	tail[len++] = '\n';
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 1;
	in.tail = tail;
	in.tail_len = len;
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_OVERLOADED);
	n = strlen(out.message);
	assert_true(n <= CLASSIFY_MSG_MAX - 1);
	assert_true(n >= CLASSIFY_MSG_MAX - 3);
	/* ends with a whole "é" */
	assert_int_equal((unsigned char)out.message[n - 2], 0xc3);
	assert_int_equal((unsigned char)out.message[n - 1], 0xa9);
}

static void
test_null_tail(void **state)
{
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tail_len = 100; /* ignored with a NULL tail */
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_CRASH);
	assert_int_equal(out.hint.kind, WAITHINT_NONE);
	in.exit_code = 0;
	in.tasks_total = 0;
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_INCOMPLETE);
}

static void
test_interrupted_first(void **state)
{
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = -1;
	in.term_signal = 2;
	in.interrupted = true;
	in.timed_out = true;
	in.tasks_completed = 3;
	in.tasks_total = 3;
	in.tail = CLAUDE_KEY;
	in.tail_len = strlen(CLAUDE_KEY);
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_INTERRUPTED);
	assert_int_equal(out.code, ERRC_INTERRUPTED);
}

static void
test_gate_failed(void **state)
{
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.tasks_completed = 4;
	in.tasks_total = 4;
	in.gate_failed = true;
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_GATE_FAILED);
	assert_int_equal(out.code, ERRC_GATE_FAILED);
	/* zero tasks is never a success */
	memset(&in, 0, sizeof(in));
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_INCOMPLETE);
}

static void
test_hint_filled(void **state)
{
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 3;
	in.tail = CLAUDE_HIT;
	in.tail_len = strlen(CLAUDE_HIT);
	classify_attempt(&out, &in);
	assert_int_equal(out.hint.kind, WAITHINT_CLOCK);
	assert_int_equal(out.hint.hour, 15);
	assert_string_equal(out.hint.zone, "America/New_York");
	in.tail = GEMINI_QUOTA_METRIC;
	in.tail_len = strlen(GEMINI_QUOTA_METRIC);
	classify_attempt(&out, &in);
	assert_int_equal(out.hint.kind, WAITHINT_DELAY);
	assert_int_equal(out.hint.delay_ms, 4530);
	in.tail = CLAUDE_EPOCH;
	in.tail_len = strlen(CLAUDE_EPOCH);
	classify_attempt(&out, &in);
	assert_int_equal(out.hint.kind, WAITHINT_EPOCH);
	assert_int_equal(out.hint.epoch_s, 1755615600);
}

/* The reset each wall names is the wait hint: its clock time, its zone
 * ("" is local time) and its date when it has one. */
static void
test_usage_wall_resets(void **state)
{
	static const struct {
		const char *tail;
		int hour, minute, month, day;
		const char *zone;
	} walls[] = {
	    {"You've hit your session limit \xc2\xb7 resets 2:10am (UTC)\n", 2,
		10, 0, 0, "UTC"},
	    {"You've hit your session limit \xc2\xb7 resets 2am\n", 2, 0, 0, 0,
		""},
	    {"5-hour limit reached \xe2\x88\x99 resets 2am\n", 2, 0, 0, 0, ""},
	    {"You're out of extra usage \xc2\xb7 resets 3pm "
	     "(Europe/Oslo)\n",
		15, 0, 0, 0, "Europe/Oslo"},
	    {"You've hit your weekly limit \xc2\xb7 resets Oct 6, 1pm\n", 13, 0,
		10, 6, ""},
	    {"You've hit your limit \xc2\xb7 resets May 5 at 9pm "
	     "(America/New_York)\n",
		21, 0, 5, 5, "America/New_York"},
	    {"You've hit your org's monthly usage limit \xc2\xb7 resets Dec "
	     "1, 12am (UTC)\n",
		0, 0, 12, 1, "UTC"},
	};
	struct classify_input in;
	struct classification out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(walls) / sizeof(walls[0]); i++) {
		memset(&in, 0, sizeof(in));
		in.exit_code = 1;
		in.tasks_total = 3;
		in.tail = walls[i].tail;
		in.tail_len = strlen(walls[i].tail);
		classify_attempt(&out, &in);
		if (out.code != ERRC_USAGE_LIMIT ||
		    out.hint.kind != WAITHINT_CLOCK ||
		    out.hint.hour != walls[i].hour ||
		    out.hint.minute != walls[i].minute ||
		    out.hint.month != walls[i].month ||
		    out.hint.day != walls[i].day ||
		    strcmp(out.hint.zone, walls[i].zone) != 0)
			fail_msg("%s: %s, hint %d %02d:%02d %d/%d \"%s\"",
			    walls[i].tail, errcode_name(out.code),
			    out.hint.kind, out.hint.hour, out.hint.minute,
			    out.hint.month, out.hint.day, out.hint.zone);
	}
}

/* A usage-limit banner without any reset time cannot be waited for: a
 * plan limit that a person lifts, permanent/QUOTA_EXCEEDED
 * (docs/classification.md#precedence, since issue 12; it used to be a
 * rate limit retried to the end). */
static void
test_usage_without_reset(void **state)
{
	static const char tail[] = "You've hit your usage limit.\n";
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 3;
	in.tail = tail;
	in.tail_len = strlen(tail);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_QUOTA_EXCEEDED);
	assert_int_equal(out.outcome, OUTCOME_PERMANENT);
}

/* claude's rate_limit_event: only "rejected" is a wall, and it decides
 * with its resetsAt before the result's words; without a reset it is a
 * limit no wait lifts; "allowed_warning" changes nothing. */
static void
test_claude_rate_limit_event(void **state)
{
	static const char rejected[] =
	    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":"
	    "\"rejected\",\"resetsAt\":1795486237,\"rateLimitType\":"
	    "\"five_hour\",\"isUsingOverage\":false}}\n"
	    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
	    "\"api_error_status\":429,\"result\":\"You've hit your session "
	    "limit \xc2\xb7 resets 2:10am (UTC)\"}\n";
	static const char noreset[] =
	    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":"
	    "\"rejected\",\"rateLimitType\":\"overage\"}}\n"
	    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":429,"
	    "\"result\":\"You're out of usage credits\"}\n";
	static const char warning[] =
	    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":"
	    "\"allowed_warning\",\"resetsAt\":1795486237,\"utilization\":0.9}}"
	    "\n"
	    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":500,"
	    "\"result\":\"API Error: 500 Internal server error\"}\n";
	static const char retry429[] =
	    "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,"
	    "\"max_retries\":1,\"retry_delay_ms\":7000,\"error_status\":429,"
	    "\"error\":\"rate_limit\"}\n"
	    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":429,"
	    "\"result\":\"API Error: Request rejected (429) \xc2\xb7 slow "
	    "down\"}\n";
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 2;
	in.tail = rejected;
	in.tail_len = strlen(rejected);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_USAGE_LIMIT);
	assert_int_equal(out.hint.kind, WAITHINT_EPOCH);
	assert_int_equal(out.hint.epoch_s, 1795486237);
	assert_non_null(strstr(out.message, "session limit"));
	in.tail = noreset;
	in.tail_len = strlen(noreset);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_QUOTA_EXCEEDED);
	in.tail = warning;
	in.tail_len = strlen(warning);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_SERVER_ERROR);
	in.tail = retry429;
	in.tail_len = strlen(retry429);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_RATE_LIMIT);
	assert_int_equal(out.hint.kind, WAITHINT_DELAY);
	assert_int_equal(out.hint.delay_ms, 7000);
}

/* gemini's documented exit codes through its adapter; the same exit of
 * a custom command means nothing. */
static void
test_gemini_exit_codes(void **state)
{
	static const char tail[] = "Invalid auth method selected.\n";
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 41;
	in.tasks_total = 2;
	in.tail = tail;
	in.tail_len = strlen(tail);
	in.adapter = adapter_for("gemini");
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_AUTH);
	assert_int_equal(out.outcome, OUTCOME_PERMANENT);
	assert_non_null(strstr(out.message, "Invalid auth method"));
	in.adapter = adapter_for(NULL);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_CRASH);
	in.adapter = adapter_for("custom-thing");
	assert_string_equal(in.adapter->name, "generic");
	assert_true(adapter_for("claude")->verified);
	assert_false(adapter_for("aider")->verified);
}

/* gemini's per-day quota names no reset: midnight Pacific time is. */
static void
test_gemini_daily_quota(void **state)
{
	static const char tail[] =
	    "{\"type\":\"result\",\"status\":\"error\",\"error\":{\"type\":"
	    "\"unknown\",\"message\":\"[API Error: You have exhausted your "
	    "daily quota on this model.]\"}}\n";
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 2;
	in.tail = tail;
	in.tail_len = strlen(tail);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_USAGE_LIMIT);
	assert_int_equal(out.hint.kind, WAITHINT_CLOCK);
	assert_int_equal(out.hint.hour, 0);
	assert_string_equal(out.hint.zone, "America/Los_Angeles");
}

static void
test_user_patterns(void **state)
{
	static const char tail[] = "HTTP 503 Service Unavailable\n"
				   "upstream said: Content Policy violation\n";
	struct strlist perm = {0}, net = {0}, retry = {0};
	struct classify_input in;
	struct classification out;

	(void)state;
	assert_int_equal(strlist_push(&perm, "content policy"), 0);
	assert_int_equal(strlist_push(&net, "SERVICE UNAVAILABLE"), 0);
	assert_int_equal(strlist_push(&retry, "503"), 0);
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 3;
	in.tail = tail;
	in.tail_len = strlen(tail);

	/* built-in: a server error */
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_SERVER_ERROR);
	assert_false(out.retry_on_matched);

	/* network_on wins over the built-in 503 */
	in.network_on = &net;
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_NETWORK_ERROR);
	assert_non_null(strstr(out.message, "503"));

	/* permanent_on wins over network_on */
	in.permanent_on = &perm;
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_PERMANENT);
	assert_non_null(strstr(out.message, "Content Policy"));

	/* retry_on: any pattern anywhere in the tail */
	in.retry_on = &retry;
	classify_attempt(&out, &in);
	assert_true(out.retry_on_matched);
	strlist_release(&retry);
	assert_int_equal(strlist_push(&retry, "overloaded"), 0);
	classify_attempt(&out, &in);
	assert_false(out.retry_on_matched);

	/* a clean exit stays what its progress says */
	in.exit_code = 0;
	in.tasks_completed = 1;
	classify_attempt(&out, &in);
	assert_int_equal(out.outcome, OUTCOME_INCOMPLETE);

	/* a user permanent pattern on a known permanent message keeps the
	 * more precise code */
	strlist_release(&perm);
	assert_int_equal(strlist_push(&perm, "balance"), 0);
	in.exit_code = 1;
	in.network_on = NULL;
	in.tail = CLAUDE_CREDIT;
	in.tail_len = strlen(CLAUDE_CREDIT);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_QUOTA_EXCEEDED);

	/* user patterns also read a structured error message */
	strlist_release(&net);
	assert_int_equal(strlist_push(&net, "error_max_turns"), 0);
	in.network_on = &net;
	in.tail = CLAUDE_MAX_TURNS;
	in.tail_len = strlen(CLAUDE_MAX_TURNS);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_NETWORK_ERROR);

	strlist_release(&perm);
	strlist_release(&net);
	strlist_release(&retry);
}

/* Pretty-printed gemini --output-format json on a failed exit. */
static void
test_gemini_pretty_json(void **state)
{
	static const char tail[] =
	    "{\n"
	    "  \"session_id\": \"b2b90938\",\n"
	    "  \"error\": {\n"
	    "    \"type\": \"Error\",\n"
	    "    \"message\": \"Please set an Auth method in your "
	    "/Users/r/.gemini/settings.json\",\n"
	    "    \"code\": 41\n"
	    "  }\n"
	    "}\n";
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 41;
	in.tasks_total = 3;
	in.tail = tail;
	in.tail_len = strlen(tail);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_AUTH);
	assert_string_equal(out.message,
	    "Please set an Auth method in your "
	    "/Users/r/.gemini/settings.json");
}

/* A structured error without a message decides by its API status. */
static void
test_structured_status_only(void **state)
{
	static const char tail[] =
	    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
	    "\"result\":\"\",\"api_error_status\":529}\n";
	struct classify_input in;
	struct classification out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 3;
	in.tail = tail;
	in.tail_len = strlen(tail);
	classify_attempt(&out, &in);
	assert_int_equal(out.code, ERRC_OVERLOADED);
	assert_string_equal(out.message, "success");
}

/*
 * The real CLIs, installed from npm and run offline with their preset
 * argv (no network to the API hosts; with no credentials and with a fake
 * key): claude 2.1.197, codex-cli 0.169.0, gemini 0.61.0.  The files hold
 * their combined stdout+stderr, trimmed to the last 8 KB, home and
 * install paths renamed; docs/agents.md tells how each was made.
 */
struct fcase {
	const char *file; /* under tests/fixtures/agents/ */
	int exit_code; /* -1: killed at timeout_s */
	enum error_code code;
	const char *msg_part; /* expected inside the message */
};

static const struct fcase fixtures[] = {
    /* stream-json, no credentials: fails at once */
    {"claude-nokey.txt", 1, ERRC_AUTH, "Not logged in"},
    /* stream-json, fake ANTHROPIC_API_KEY: 10 retries, 192 s */
    {"claude-offline.txt", 1, ERRC_NETWORK_ERROR,
	"Unable to connect to API (FailedToOpenSocket)"},
    /* the same killed at 60 s, while it retried */
    {"claude-offline-killed.txt", -1, ERRC_NETWORK_ERROR, "no HTTP response"},
    {"claude-text-nokey.txt", 1, ERRC_AUTH, "Please run /login"},
    /* text mode: silent for 186 s, then one line */
    {"claude-text-offline.txt", 1, ERRC_NETWORK_ERROR,
	"Unable to connect to API"},
    /* codex never gives up: "waiting for network" until killed */
    {"codex-offline-killed.txt", -1, ERRC_NETWORK_ERROR, "waiting for network"},
    {"codex-apikey-offline-killed.txt", -1, ERRC_NETWORK_ERROR,
	"waiting for network"},
    /* the cause, above the "waiting for network" lines, names it */
    {"codex-text-offline-killed.txt", -1, ERRC_NETWORK_ERROR,
	"Name does not resolve"},
    /* exit 41 (FatalAuthenticationError), plain text on stderr */
    {"gemini-nokey.txt", 41, ERRC_AUTH, "Please set an Auth method"},
    /* exit 55 without --skip-trust (FatalUntrustedWorkspaceError) */
    {"gemini-untrusted.txt", 55, ERRC_PERMISSION_DENIED,
	"not running in a trusted directory"},
    /* stream-json, fake GEMINI_API_KEY: 4 + 10 retries, 288 s */
    {"gemini-offline.txt", 1, ERRC_NETWORK_ERROR, "fetch failed"},
    {"gemini-offline-killed.txt", -1, ERRC_NETWORK_ERROR, "fetch failed"},
    {"gemini-text-offline.txt", 1, ERRC_NETWORK_ERROR, "fetch failed"},
};

/* tests/fixtures/agents/ under $STORYCTL_SRC, else the current directory
 * (scripts/run-tests runs the suites from the repository root) */
static void
fixture_path(char *buf, size_t len, const char *name)
{
	const char *src = getenv("STORYCTL_SRC");

	if (src == NULL || src[0] == '\0')
		src = ".";
	snprintf(buf, len, "%s/tests/fixtures/agents%s%s", src,
	    name != NULL ? "/" : "", name != NULL ? name : "");
}

static void
test_real_cli_fixtures(void **state)
{
	struct classify_input in;
	struct classification out;
	char path[4096], *tail;
	struct dirent *de;
	size_t i, len, nfiles = 0;
	DIR *d;

	(void)state;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fcase *c = &fixtures[i];

		tail = fxfs_fixture_read("agents", c->file, &len);
		memset(&in, 0, sizeof(in));
		in.exit_code = c->exit_code;
		in.term_signal = c->exit_code < 0 ? 15 : 0;
		in.timed_out = c->exit_code < 0;
		/* the story had two tasks; none was done offline */
		in.tasks_total = 2;
		in.tail = tail;
		in.tail_len = len;
		classify_attempt(&out, &in);
		if (out.code != c->code ||
		    strstr(out.message, c->msg_part) == NULL)
			print_message("fixture %s: got %s, message \"%s\"\n",
			    c->file, errcode_name(out.code), out.message);
		assert_string_equal(
		    errcode_name(out.code), errcode_name(c->code));
		assert_int_equal(out.outcome, errcode_outcome(c->code));
		assert_non_null(strstr(out.message, c->msg_part));
		free(tail);
	}
	/* every fixture in the directory is in the table */
	fixture_path(path, sizeof(path), NULL);
	d = opendir(path);
	if (d == NULL)
		fail_msg("cannot open %s", path);
	while ((de = readdir(d)) != NULL) {
		struct stat sb;
		char file[4200];
		/* real/ holds the conformance suite's fixtures, replayed by
		 * tests/e2e/test_replay.sh */
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		if (de->d_name[0] != '.' && stat(file, &sb) == 0 &&
		    S_ISREG(sb.st_mode))
			nfiles++;
	}
	closedir(d);
	assert_int_equal(nfiles, sizeof(fixtures) / sizeof(fixtures[0]));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_deep_mentions_do_not_decide),
	    cmocka_unit_test(test_spinner_after_error),
	    cmocka_unit_test(test_newest_block),
	    cmocka_unit_test(test_nul_and_invalid_utf8),
	    cmocka_unit_test(test_message_bounded),
	    cmocka_unit_test(test_null_tail),
	    cmocka_unit_test(test_interrupted_first),
	    cmocka_unit_test(test_gate_failed),
	    cmocka_unit_test(test_hint_filled),
	    cmocka_unit_test(test_usage_without_reset),
	    cmocka_unit_test(test_usage_wall_resets),
	    cmocka_unit_test(test_user_patterns),
	    cmocka_unit_test(test_gemini_pretty_json),
	    cmocka_unit_test(test_structured_status_only),
	    cmocka_unit_test(test_real_cli_fixtures),
	    cmocka_unit_test(test_claude_rate_limit_event),
	    cmocka_unit_test(test_gemini_exit_codes),
	    cmocka_unit_test(test_gemini_daily_quota),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
