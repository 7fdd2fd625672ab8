#!/bin/bash
# tests/agents/run.sh - the conformance suite (make check-agents,
# docs/agents.md): storyctl runs the REAL agent CLIs, through its own
# presets, against tests/agents/standin.js, a stand-in for each
# provider's API on 127.0.0.1.  One scenario a run: attempt 1's row
# (outcome, error code, decision, wait) is compared with what
# docs/classification.md and docs/retry-strategy.md say, and the CLI's output is kept as a fixture candidate.
# The CLIs run confined (docs/sandbox.md), with their full-autonomy
# argv: "success" asserts that from storyctl's record, and "shell" has
# the CLI's own shell tool run a command, whose effects are checked from
# outside: its file in the tree, nothing written to /etc or $HOME.
#
#   tests/agents/run.sh STORYCTL NODE_BIN_DIR [CLI…]
#
# NODE_BIN_DIR holds the CLIs (node_modules/.bin of tests/agents).
# CAPTURE=DIR copies each attempt's log to DIR/<cli>-<scenario>.txt;
# ONLY="name …" runs only those scenarios; KEEP=1 keeps the scratch
# repositories and HOMEs; AGENTS_HOMES=DIR is where the HOMEs go.
# The limit and dead-end scenarios of issue 31 (codex minute, later,
# offline; gemini capacity, longretry, timeout) and refusal, context and
# badrequest follow the first ones; docs/agents.md#limits-and-dead-ends
# says what each asserts.
# Prints "ok - …" / "not ok - …" and ends with "N passed, N failed".
set -u
STORYCTL=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BIN=$(cd "$2" && pwd)
shift 2
CLIS=("$@")
[ ${#CLIS[@]} -gt 0 ] || CLIS=(claude)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/storyctl-agents.XXXXXX")
# Each scenario's HOME lies outside /tmp, as a user's does: inside the
# sandbox /tmp is private, so a HOME there would be a private, writable
# copy; here it is the real one, read-only but for the CLI's own state
# (~/.claude, ~/.codex, ~/.gemini), which storyctl binds back in.
# AGENTS_HOMES=DIR puts them elsewhere.
homes=${AGENTS_HOMES:-$SRC/tests/agents/node_modules}
mkdir -p "$homes" && H=$(mktemp -d "$homes/.storyctl-homes.XXXXXX") || exit 1
export STORYCTL STORYCTL_SRC=$SRC
passed=0
failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }

node "$SRC/tests/agents/standin.js" "$T/port" "$T/control.json" "$T/requests.log" 1800 &
STANDIN=$!
# KEEP=1 keeps the scratch repositories and HOMEs (printed at the end)
trap 'kill $STANDIN 2>/dev/null; if [ -n "${KEEP:-}" ]; then echo "# kept $T $H"; else rm -rf "$T" "$H"; fi' EXIT
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port")
# what the "shell" scenario's model asks the CLI's own shell tool to run:
# a file in the tree, a package manager (offline), and two writes
# outside the tree that the sandbox must refuse
ESCAPE=/etc/storyctl-shell-escape
SHELL_STEP="sh -c 'echo inside >ran-inside.txt; npm --version >npm.txt 2>&1; echo pwned >$ESCAPE; echo pwned >\"\$HOME/storyctl-shell-escape\"'"
# "capacity": the reset gemini's API names (1h44m7s)
CAPACITY_S=6247
# a port with nothing listening: bind one, note it, close it
CLOSED=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com

# closed_port SCENARIO: the API is down (nothing listens on its port)
closed_port() { [ "$1" = refused ] || [ "$1" = offline ]; }

# agent_env CLI SCENARIO: the JSON env object of the preset for that CLI
agent_env() {
	local url="http://127.0.0.1:$PORT"
	closed_port "$2" && url="http://127.0.0.1:$CLOSED"
	case $1 in
	claude)
		if [ "$2" = limit ]; then
			# a subscription (OAuth) login: the usage walls are its
			jq -cn --arg u "$url" '{ANTHROPIC_BASE_URL: $u,
				CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-standin-not-a-real-token",
				CLAUDE_CODE_MAX_RETRIES: "1",
				CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"}'
		else
			jq -cn --arg u "$url" '{ANTHROPIC_BASE_URL: $u,
				ANTHROPIC_API_KEY: "sk-ant-api03-standin-not-a-real-key",
				CLAUDE_CODE_MAX_RETRIES: "1",
				CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"}'
		fi
		;;
	codex)
		jq -cn '{OPENAI_API_KEY: "sk-standin-not-a-real-key"}'
		;;
	gemini)
		jq -cn --arg u "${url%/v1}" '{GEMINI_API_KEY: "AIzaStandinNotARealKey0000000000000000",
			GOOGLE_GEMINI_BASE_URL: $u}'
		;;
	esac
}

# prepare_home CLI SCENARIO HOME: the CLI's own configuration, where it
# needs one to reach the stand-in
prepare_home() {
	local url="http://127.0.0.1:$PORT/v1"
	closed_port "$2" && url="http://127.0.0.1:$CLOSED/v1"
	case $1 in
	codex)
		# a model provider of its own (codex's config.toml): the
		# Responses API at the stand-in, one retry of each kind
		mkdir -p "$3/.codex"
		cat >"$3/.codex/config.toml" <<TOML
model = "gpt-5-standin"
model_provider = "standin"

[model_providers.standin]
name = "standin"
base_url = "$url"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 1
stream_idle_timeout_ms = 300000
TOML
		;;
	gemini)
		# the API-key auth type, chosen as a user would in its
		# settings; "authtype" leaves it out (exit 41).  Two tries
		# of the chat model (general.maxAttempts, 10 by default), as
		# claude and codex get one retry: gemini then gives up on a
		# 429, 503, 500 or a closed port by itself in seconds, where
		# its own backoff kept it retrying until stall_timeout_s
		# (about 5 of the suite's 8 minutes)
		mkdir -p "$3/.gemini"
		[ "$2" = authtype ] ||
			echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"maxAttempts": 2}}' >"$3/.gemini/settings.json"
		;;
	esac
}

# scenario CLI NAME WANT_OUTCOME WANT_CODE WANT_DECISION [MIN_DELAY_S MAX_DELAY_S]
# CFG='{…}' is merged into the scenario's storyctl.json (jq *), for the
# short timeouts, max_wait_s and network_stall_s a dead end is cut with;
# RUN_UNTIL=S lets the night run on (S seconds at most) instead of
# stopping it once attempt 1 is decided: WANT_* are still attempt 1's.
scenario() {
	local cli=$1 name=$2 outcome=$3 code=$4 decision=$5 dmin=${6:-} dmax=${7:-}
	# ONLY="limit authtype": just those scenarios
	if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
	local P="$T/$cli-$name" home="$H/$cli-$name" row rc i s0
	mkdir -p "$P/docs/stories" "$home"
	prepare_home "$cli" "$name" "$home"
	git -C "$P" init -q -b main
	printf '# Story 1.1\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Task one\n  - [ ] subtask\n- [ ] Task two\n' \
		>"$P/docs/stories/s1.md"
	printf '.storyctl/\n' >"$P/.gitignore"
	# the stall limit is short only where a stall is the point: a CLI's
	# start-up on a loaded 2-core machine printed nothing for over 8 s
	# (gemini server/auth/model/refused read STALLED in one CI run)
	local stall=30
	[ "$name" = hang ] && stall=8
	jq -n --argjson env "$(agent_env "$cli" "$name")" --arg c "$cli" --argjson st "$stall" --argjson x "${CFG:-"{}"}" '{
		stories_glob: "docs/stories/*.md",
		agents: {primary: {preset: $c, timeout_s: 120, stall_timeout_s: $st, env: $env}},
		policy: {max_attempts: 3, network_sleep_s: 30, poll_interval_s: 1,
			kill_grace_s: 2, max_wait_s: 21600}} * $x' >"$P/storyctl.json"
	git -C "$P" add -A && git -C "$P" commit -q -m story
	jq -n --arg s "$name" --arg f "$P/docs/stories/s1.md" --arg sh "$SHELL_STEP" \
		--argjson r $(($(date +%s) + 7200)) --argjson cap "$CAPACITY_S" \
		'{scenario: $s, story: $f, reset: $r, shell: $sh, capacity_s: $cap}' >"$T/control.json"
	# a write outside the tree that an earlier, unconfined run left
	[ "$name" = shell ] && rm -f "$ESCAPE"
	# the requests log so far: what this scenario's requests add follows
	logged=$(wc -l <"$T/requests.log")
	s0=$(date +%s)
	# exec: $! is then storyctl itself, which the TERM below must reach
	(cd "$P" && exec env HOME="$home" PATH="$BIN:$PATH" "$STORYCTL" run >"$T/out" 2>"$T/err") &
	local sc=$!
	if [ -n "${RUN_UNTIL:-}" ]; then
		# the night runs on until it ends by itself (or RUN_UNTIL s)
		for _ in $(seq 1 $((RUN_UNTIL * 10))); do
			kill -0 $sc 2>/dev/null || break
			sleep 0.1
		done
	else
		# attempt 1 decided (or the run over): then stop the night
		for i in $(seq 1 1800); do
			row=$(sqlite3 "$P/.storyctl/state.db" "SELECT outcome FROM attempts WHERE seq = 1 AND outcome != 'running'" 2>/dev/null)
			[ -n "$row" ] && break
			kill -0 $sc 2>/dev/null || break
			sleep 0.1
		done
	fi
	kill -TERM $sc 2>/dev/null
	wait $sc 2>/dev/null
	# storyctl's exit status (143 when the TERM stopped it)
	echo $? >"$T/rc"
	row=$("$STORYCTL" -C "$P" show s1 --json 2>/dev/null | jq -c '.attempts[0] // {}')
	# no row at all (storyctl refused the config, say): jq -e would
	# take the empty input for a match
	[ -n "$row" ] || row='{}'
	if [ -n "${CAPTURE:-}" ]; then
		mkdir -p "$CAPTURE"
		log=$(sqlite3 "$P/.storyctl/state.db" "SELECT log_path FROM attempts WHERE seq = 1")
		[ -f "$log" ] && sed -e "s|$P|/home/dev/repo|g" -e "s|$home|/home/dev|g" \
			-e "s|127.0.0.1:$PORT|127.0.0.1:8642|g" -e "s|127.0.0.1:$CLOSED|127.0.0.1:9|g" \
			-e "s|$SRC/tests/agents/node_modules|/usr/lib/node_modules|g" \
			"$log" >"$CAPTURE/$cli-$name.txt"
		printf '%s\t%s\n' "$cli-$name" "$row" >>"$CAPTURE/rows.tsv"
	fi
	local got
	got=$(printf '%s' "$row" | jq -r '"\(.outcome) \(.error_code) \(.decision) \(.delay_ms)"')
	if printf '%s' "$row" | jq -e --arg o "$outcome" --arg c "$code" --arg d "$decision" \
		'.outcome == $o and (.error_code // "") == $c and (.decision // "") == $d' >/dev/null; then
		if [ -n "$dmin" ] && ! printf '%s' "$row" | jq -e --argjson a "$dmin" --argjson b "$dmax" \
			'.delay_ms >= $a * 1000 and .delay_ms <= $b * 1000' >/dev/null; then
			not_ok "$cli $name: wait $dmin..$dmax s (got: $got)"
		else
			ok "$cli $name: $outcome $code $decision${dmin:+ wait $dmin..$dmax s}"
		fi
	else
		not_ok "$cli $name: want $outcome $code $decision (got: $got)"
		printf '%s' "$row" | jq -r '.error_message // empty' | sed 's/^/# message: /' | head -3
		[ "$row" = '{}' ] && tail -n 2 "$T/err" | sed 's/^/# storyctl: /'
	fi
	case $name in
	success) check_confined "$cli" "$P" ;;
	shell) check_shell "$cli" "$P" "$home" ;;
	minute) check_minute "$cli" "$P" ;;
	offline) check_offline "$cli" "$P" ;;
	capacity) check_capacity "$cli" "$P" ;;
	longretry) check_announced "$cli" "$P" longretry ;;
	refusal | context | badrequest | timeout) check_message "$cli" "$name" "$row" ;;
	esac
	echo "# $cli $name: $(($(date +%s) - s0)) s"
}

# sqlv REPO SQL: one value from the scenario's state database
sqlv() { sqlite3 "$1/.storyctl/state.db" "$2" 2>/dev/null; }

# check_minute CLI REPO (issue 31, 1): codex named its reset to the
# minute ("try again at 9:17 AM") and the stand-in lifted the limit at
# 9:17:40.  The night must read the minute up to its end: attempt 1
# waits until then (never a reset 24 h away, never a stop), runs again
# and the story is done, all within RUN_UNTIL; the log shows the minute.
check_minute() {
	local cli=$1 P=$2 rows last log ended pause
	rows=$(sqlv "$P" "SELECT seq || ':' || outcome || '/' || decision || '/' || delay_ms FROM attempts ORDER BY seq" | tr '\n' ' ')
	log=$(sqlv "$P" "SELECT log_path FROM attempts WHERE seq = 1")
	# (another day, as just before midnight: "try again at Nov 29th,
	# 2026 12:00 AM")
	if grep -Eq 'try again at ([A-Z][a-z]{2} [0-9]{1,2}[a-z]{2}, [0-9]{4} )?[0-9]{1,2}:[0-9]{2} ?[AP]M' "$log" 2>/dev/null; then
		ok "$cli minute: codex named the minute ($(grep -Eo 'try again at [^.]*' "$log" | tail -n1); $(grep -a 'minute: first request' "$T/requests.log" | tail -n1 | sed 's/^.*minute: //'))"
	else
		not_ok "$cli minute: no \"try again at H:MM\" in attempt 1's log ($(grep -o '"message":"[^"]*' "$log" | tail -n1 | cut -c1-200))"
	fi
	# the agent's pause: the end of the named minute, at most 85 s
	# after attempt 1 (+ a little), never the same minute tomorrow
	ended=$(sqlv "$P" "SELECT ended_ms FROM attempts WHERE seq = 1")
	pause=$(sqlv "$P" "SELECT value FROM meta WHERE key = 'pause.primary'")
	if [ -n "$pause" ] && [ -n "$ended" ] && [ $((pause - ended)) -le 100000 ]; then
		ok "$cli minute: paused until the end of the named minute ($(((pause - ended) / 1000)) s after attempt 1), not 24 h"
	else
		not_ok "$cli minute: paused $(((${pause:-0} - ${ended:-0}) / 1000)) s after attempt 1, want the end of the named minute (<= 100 s); attempts: $rows"
	fi
	last=$(sqlv "$P" "SELECT outcome || ' ' || decision FROM attempts ORDER BY seq DESC LIMIT 1")
	if [ "$last" = "success done" ] && [ "$(cat "$T/rc" 2>/dev/null)" = 0 ] &&
		[ "$(sqlv "$P" "SELECT status FROM stories WHERE id = 's1'")" = 'done' ]; then
		ok "$cli minute: the rerun after the lift is done, the night ends 0 (attempts: $rows)"
	else
		not_ok "$cli minute: want the story done after one wait, exit 0 (exit $(cat "$T/rc" 2>/dev/null); attempts: $rows; $(tail -n2 "$T/err" | tr '\n' ' ' | cut -c1-300))"
	fi
}

# check_offline CLI REPO (issue 31, 4): codex keeps "Reconnecting...
# waiting for network" while the API is down; the attempt must end within
# network_stall_s (CFG) of its first failure, not at stall_timeout_s or
# timeout_s.  Bound: network_stall_s + 20 s (start-up, the first failed
# connections, a poll, kill_grace_s).
check_offline() {
	local cli=$1 P=$2 d ns
	ns=$(jq -r '.policy.network_stall_s' "$P/storyctl.json")
	d=$(sqlv "$P" "SELECT ended_ms - started_ms FROM attempts WHERE seq = 1")
	if [ -n "$d" ] && [ "$d" -le $(((ns + 20) * 1000)) ]; then
		ok "$cli offline: attempt 1 ended after $((d / 1000)) s (network_stall_s $ns)"
	else
		not_ok "$cli offline: attempt 1 lasted $((${d:-0} / 1000)) s, want <= network_stall_s $ns + 20 s, not stall_timeout_s/timeout_s"
	fi
}

# check_announced CLI REPO (issue 31, 5): gemini announced an internal
# retry longer than max_wait_s ("Retrying after <ms>ms...") and went to
# sleep for it.  The attempt must end within max_wait_s plus a poll of
# the 429 that made it announce (plus kill_grace_s and 2 s), not at
# stall_timeout_s.
check_announced() {
	local cli=$1 P=$2 name=$3 t429 ended mw bound
	mw=$(jq -r '.policy.max_wait_s' "$P/storyctl.json")
	t429=$(tail -n +$((logged + 1)) "$T/requests.log" | grep -a 'streamGenerateContent' | head -n1 | cut -d' ' -f1)
	t429=$(date -d "$t429" +%s%3N 2>/dev/null)
	ended=$(sqlv "$P" "SELECT ended_ms FROM attempts WHERE seq = 1")
	bound=$(((mw + 1 + 2 + 2) * 1000))
	if [ -n "$t429" ] && [ -n "$ended" ] && [ $((ended - t429)) -le "$bound" ]; then
		ok "$cli $name: ended $(((ended - t429) / 1000)) s after the 429 (max_wait_s $mw; $(grep -ao 'Retrying after [0-9]*ms' "$(sqlv "$P" "SELECT log_path FROM attempts WHERE seq = 1")" | tail -n1))"
	else
		not_ok "$cli $name: ended $(((${ended:-0} - ${t429:-0}) / 1000)) s after the 429, want <= max_wait_s $mw + a poll + kill_grace_s"
	fi
}

# check_capacity CLI REPO (issue 31, 2): as check_announced, and the
# agent's pause is the API's reset (CAPACITY_S, "Your quota will reset
# after 1h44m7s.") to the second, not gemini's own jittered delay.
check_capacity() {
	local cli=$1 P=$2 ended pause
	check_announced "$cli" "$P" capacity
	ended=$(sqlv "$P" "SELECT ended_ms FROM attempts WHERE seq = 1")
	pause=$(sqlv "$P" "SELECT value FROM meta WHERE key = 'pause.primary'")
	if [ -n "$pause" ] && [ -n "$ended" ] && [ $((pause - ended)) -ge $((CAPACITY_S * 1000)) ] &&
		[ $((pause - ended)) -le $(((CAPACITY_S + 1) * 1000)) ]; then
		ok "$cli capacity: paused until the API's reset, ${CAPACITY_S} s after the attempt"
	else
		not_ok "$cli capacity: paused $(((${pause:-0} - ${ended:-0}) / 1000)) s after the attempt, want the API's reset ${CAPACITY_S} s (gemini's own delay: $(grep -ao 'Retrying after [0-9]*ms' "$(sqlv "$P" "SELECT log_path FROM attempts WHERE seq = 1")" | tail -n1))"
	fi
}

# check_message CLI NAME ROW (issue 31, 5 and 6): what the CLI said is
# stored as the attempt's message, not ""; a silent timeout has none to
# keep, so only its exit status is shown
check_message() {
	local cli=$1 name=$2 row=$3 msg
	msg=$(printf '%s' "$row" | jq -r '.error_message // ""')
	if [ "$name" = timeout ]; then
		echo "# $cli timeout: exit $(printf '%s' "$row" | jq -r '.exit_code') signal $(printf '%s' "$row" | jq -r '.term_signal // .signal // "null"')"
	elif [ -n "$msg" ]; then
		ok "$cli $name: the message is kept (${msg:0:120})"
	else
		not_ok "$cli $name: the attempt's message is empty"
	fi
}

# The preset's full-autonomy flag, which storyctl gives a CLI only
# inside its sandbox (controller/config/presets.c, docs/sandbox.md#presets).
autonomy_flag() {
	case $1 in
	claude) echo bypassPermissions ;;
	codex) echo --dangerously-bypass-approvals-and-sandbox ;;
	gemini) echo yolo ;;
	esac
}

# check_confined CLI REPO: the CLI ran confined, as storyctl's own
# record says: `agents --json` calls the agent confined, with the
# preset's confined argv, and attempt 1 ran that argv (the prompt
# last).  With bubblewrap missing or no namespaces, "auto" runs it
# unconfined and this fails: the suite is meant to run confined.
check_confined() {
	local cli=$1 P=$2 agents argv flag
	flag=$(autonomy_flag "$cli")
	agents=$("$STORYCTL" -C "$P" agents --json 2>/dev/null)
	argv=$(sqlite3 "$P/.storyctl/state.db" "SELECT argv_json FROM attempts WHERE seq = 1")
	if printf '%s' "$agents" | jq -e --arg c "$cli" --arg f "$flag" --argjson a "${argv:-null}" '
		.sandbox.available and .agents.primary.confined == true and
		(.presets[] | select(.name == $c) | .confined_argv) as $want |
		.agents.primary.argv == $want and ($want | index($f)) != null and
		$a[:-1] == $want[:-1] and ($a | length) == ($want | length)' >/dev/null; then
		ok "$cli confined: attempt 1 ran $(printf '%s' "$argv" | jq -r '.[:-1] | join(" ")') …"
	else
		not_ok "$cli confined: want agents.primary.confined and $flag in attempt 1's argv (got: $(printf '%s' "$agents" | jq -c '{sandbox, confined: .agents.primary.confined, argv: .agents.primary.argv}') ${argv:0:200})"
	fi
}

# check_shell CLI REPO HOME: what the shell step did, seen from outside
# the sandbox: its file in the tree, npm run there, and neither write
# outside the tree (/etc, $HOME) landed.  What the tool told the model is
# the requests log's "shell result:" line.
check_shell() {
	local cli=$1 P=$2 home=$3 seen f landed=
	seen=$(tail -n +$((logged + 1)) "$T/requests.log" | grep -a 'shell result:' | tail -n1 | cut -c1-400)
	if [ "$(cat "$P/ran-inside.txt" 2>/dev/null)" = inside ]; then
		ok "$cli shell: the command ran in the tree (ran-inside.txt)"
	else
		not_ok "$cli shell: no ran-inside.txt in $P (${seen:-no shell result})"
	fi
	if grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+' "$P/npm.txt" 2>/dev/null; then
		ok "$cli shell: npm ran inside ($(head -c 40 "$P/npm.txt"))"
	else
		not_ok "$cli shell: npm --version inside (got: $(head -c 200 "$P/npm.txt" 2>/dev/null))"
	fi
	for f in "$ESCAPE" "$home/storyctl-shell-escape"; do
		[ -e "$f" ] && landed="$landed $f"
	done
	if [ -n "$landed" ]; then
		not_ok "$cli shell: a write outside the tree landed:$landed"
		rm -f "$ESCAPE"
	else
		ok "$cli shell: the writes to /etc and \$HOME did not land"
	fi
	if [ -n "$seen" ]; then echo "# $seen"; fi
}

for cli in "${CLIS[@]}"; do
	t0=$(date +%s)
	scenario "$cli" success success "" done
	scenario "$cli" shell success "" done
	scenario "$cli" plain incomplete INCOMPLETE retry
	# claude prints the retry-after it waited (api_retry
	# retry_delay_ms); codex keeps it to itself ("exceeded retry limit,
	# last status: 429"), so its wait is the backoff
	case $cli in
	claude) scenario "$cli" ratelimit rate_limit RATE_LIMIT retry 7 60 ;;
	*) scenario "$cli" ratelimit rate_limit RATE_LIMIT retry 0 60 ;;
	esac
	scenario "$cli" overloaded rate_limit OVERLOADED retry 0 60
	scenario "$cli" server rate_limit SERVER_ERROR retry 0 60
	scenario "$cli" auth permanent AUTH escalate
	scenario "$cli" model permanent MODEL_NOT_FOUND escalate
	scenario "$cli" refused network NETWORK_ERROR retry 30 30
	scenario "$cli" hang timeout STALLED retry 0 60
	# each names the reset (2 h away, + jitter)
	scenario "$cli" limit usage_limit USAGE_LIMIT wait 7000 10900
	if [ "$cli" = gemini ]; then
		# a per-day quota: gemini names no reset, but it is midnight
		# Pacific time, which may be past max_wait_s (6 h): then the
		# batch stops (wait 0)
		scenario "$cli" daily usage_limit USAGE_LIMIT wait 0 86400
	fi
	scenario "$cli" noreset permanent QUOTA_EXCEEDED escalate
	[ "$cli" = gemini ] && scenario "$cli" authtype permanent AUTH escalate
	# issue 31 (docs/classification.md#dead-ends, #wait-hints): resets read to their precision,
	# the API's reset over the CLI's own delay, "try again later" a
	# usage limit, dead ends stopped when the output shows them
	case $cli in
	codex)
		# "try again at 9:17 AM" while the limit lifts at 9:17:40: one
		# wait to the end of that minute (25 to 85 s), then done; a
		# reader that wakes at 9:17:00 meets the limit again and must
		# not take "9:17 AM" for tomorrow (max_wait_s 600: a 24 h
		# pause stops the night, exit 75)
		CFG='{"policy": {"max_wait_s": 600, "backoff": {"jitter": 0}}}' RUN_UNTIL=200 \
			scenario "$cli" minute usage_limit USAGE_LIMIT wait
		# "… purchase more credits or try again later.": a usage
		# limit with the default wait (1 h + jitter), not permanent
		scenario "$cli" later usage_limit USAGE_LIMIT wait 3600 5400
		# the API down: codex reconnects forever; ended within
		# network_stall_s (10 s), long before stall_timeout_s (45 s)
		CFG='{"agents": {"primary": {"timeout_s": 50, "stall_timeout_s": 45}}, "policy": {"network_stall_s": 10}}' \
			scenario "$cli" offline network NETWORK_ERROR retry 30 30
		;;
	gemini)
		# a capacity limit whose reset (1h44m7s) is over max_wait_s
		# (10 s): gemini announces its own, longer, jittered delay and
		# sleeps; ended within max_wait_s + a poll (stall_timeout_s
		# 40 s would be too late), paused until the API's reset to
		# the second; the night stops (wait 0, exit 75)
		CFG='{"agents": {"primary": {"stall_timeout_s": 40}}, "policy": {"max_wait_s": 10}}' \
			scenario "$cli" capacity usage_limit USAGE_LIMIT wait 0 0
		# a rate limit whose retry (60 s) is over max_wait_s: the same
		# cut, a RATE_LIMIT whose wait is capped at max_wait_s
		CFG='{"agents": {"primary": {"stall_timeout_s": 40}}, "policy": {"max_wait_s": 10}}' \
			scenario "$cli" longretry rate_limit RATE_LIMIT retry 10 10
		# silence ended at timeout_s (15 s), not stall_timeout_s:
		# gemini exits 0 on the TERM, and the attempt is a timeout.
		# Unconfined: inside bubblewrap storyctl sees bwrap die of the
		# TERM (signal 15), and gemini's exit 0 never shows
		CFG='{"agents": {"primary": {"timeout_s": 15, "stall_timeout_s": 60}}, "sandbox": {"enabled": false}}' \
			scenario "$cli" timeout timeout TIMEOUT retry
		;;
	esac
	# the model or the API's safety system declines (claude stop_reason
	# "refusal", codex 400 invalid_prompt, gemini finish reason SAFETY),
	# the prompt is over the context window, a 400: counted failures
	# (none is network, limit or permanent), their message kept
	scenario "$cli" refusal crash CRASH retry
	scenario "$cli" context crash CRASH retry
	scenario "$cli" badrequest crash CRASH retry
	echo "# $cli: $(($(date +%s) - t0)) s"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
