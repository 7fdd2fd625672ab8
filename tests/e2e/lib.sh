# tests/e2e/lib.sh - shared helpers for end-to-end tests.  Each case
# prints "ok - name" or "not ok - name"; scripts/run-tests counts them.
# Needs: STORYCTL (absolute path of the built binary), jq, git.
set -u
: "${STORYCTL:?STORYCTL must name the built storyctl binary}"
STORYCTL_SRC=${STORYCTL_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/storyctl-e2e.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT
T_FAILED=0
export GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
export GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
unset NO_COLOR CLAUDECODE

# The fake agents of most tests report through files outside their tree
# (the repository's .git, $T_TMP) and test the runner's handling of
# processes that the sandbox would hide: they run unconfined, as a
# project with "sandbox": {"enabled": false} would.  Confined agents
# are test_sandbox.sh's and test_run.sh's (SANDBOX_JSON), and the
# demo's (docs/sandbox.md).
E2E_SANDBOX='{"enabled": false}'

ok() { echo "ok - $*"; }

# tier_count N MIN: how many rounds a soak runs.  N in the long tier
# (make check-long, run by .ci/run), and in make check's quick tier
# (STORYCTL_TIER=quick) a third of it but at least MIN: every kind of
# stop and every assertion still runs, fewer times
# (docs/design.md#build-and-tests).
tier_count() {
	local n=$1
	if [ "${STORYCTL_TIER:-long}" = quick ]; then
		n=$(($1 / 3))
		[ "$n" -lt "$2" ] && n=$2
	fi
	echo "$n"
}
not_ok() {
	echo "not ok - $*"
	T_FAILED=$((T_FAILED + 1))
}

# check NAME COMMAND...: the command must succeed.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# run_sc [ARGS...]: run storyctl, capturing $T_OUT, $T_ERR and $T_RC.
run_sc() {
	"$STORYCTL" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	T_RC=$?
	T_OUT=$(cat "$T_TMP/out")
	T_ERR=$(cat "$T_TMP/err")
}

# expect_rc NAME WANT: the last run_sc exited WANT.
expect_rc() {
	if [ "$T_RC" -eq "$2" ]; then
		ok "$1"
	else
		not_ok "$1 (exit $T_RC, want $2)"
		printf '%s\n' "$T_ERR" | head -5 | sed 's/^/# stderr: /'
		printf '%s\n' "$T_OUT" | head -5 | sed 's/^/# stdout: /'
	fi
}

# expect_json NAME JQ_EXPR: the expression is true of the last stdout.
expect_json() {
	if printf '%s' "$T_OUT" | jq -e "$2" >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1 (jq: $2)"
		printf '%s\n' "$T_OUT" | head -20 | sed 's/^/# stdout: /'
	fi
}

# expect_match NAME TEXT REGEX
expect_match() {
	if printf '%s' "$2" | grep -Eq -- "$3"; then
		ok "$1"
	else
		not_ok "$1 (no match for /$3/)"
		printf '%s\n' "$2" | head -10 | sed 's/^/# got: /'
	fi
}

# new_repo: a fresh git repository with one commit; prints its path.
new_repo() {
	local d
	d=$(mktemp -d "$T_TMP/repo.XXXXXX")
	git -C "$d" init -q -b main
	echo "# project" >"$d/README.md"
	git -C "$d" add README.md
	git -C "$d" commit -q -m "initial"
	printf '%s\n' "$d"
}

finish() {
	exit 0
}

# new_story DIR ID NTASKS [SIM-LINE...]: a BMAD-style story file with
# NTASKS unchecked tasks (each with an indented subtask that must not
# count) and the given sim-agent script lines.
new_story() {
	local dir=$1 id=$2 n=$3 i
	shift 3
	mkdir -p "$dir/docs/stories"
	{
		printf '# Story %s\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n' "$id"
		for i in $(seq 1 "$n"); do
			printf -- '- [ ] Task %d of %s\n  - [ ] subtask %d.1\n' "$i" "$id" "$i"
		done
		printf '\n## Dev Notes\n\n'
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$dir/docs/stories/$id.md"
}

# new_project [POLICY-JSON] [AGENTS-JSON]: a git repository with a
# storyctl.json that runs the simulated agent for both roles; add stories
# with new_story "$P" ... before running.  Sets P to its path.
new_project() {
	local policy=${1:-'{}'} agents=${2:-}
	local sim="$STORYCTL_SRC/scripts/sim-agent"
	P=$(new_repo)
	if [ -z "$agents" ]; then
		agents='{"primary": {"name": "sim-p", "command": ["'"$sim"'", "{role}", "{attempt}", "{story_file}", "{prompt}"], "timeout_s": 30},
		  "fallback": {"name": "sim-f", "command": ["'"$sim"'", "{role}", "{attempt}", "{story_file}", "{prompt}"], "timeout_s": 30}}'
	fi
	local stories=${STORIES_JSON:-'"stories_glob": "docs/stories/*.md"'}
	cat >"$P/storyctl.json" <<JSON
{
  $stories,${EXTRA_JSON:-}
  "sandbox": ${SANDBOX_JSON:-$E2E_SANDBOX},
  "agents": $agents,
  "policy": $(printf '%s' "$policy" | jq -c '{"network_sleep_s": 0.2, "poll_interval_s": 0.2, "kill_grace_s": 1, "backoff": {"strategy": "fixed", "base_delay_ms": 10, "max_delay_ms": 100, "jitter": 0}} * .')
}
JSON
	printf '.storyctl/\n' >"$P/.gitignore"
}

# commit_all: commit the project's files (so HEAD is a known commit).
commit_all() {
	git -C "$P" add -A && git -C "$P" commit -q -m "stories"
}

# sql QUERY: run a query on the project's state database.
sql() {
	sqlite3 "$P/.storyctl/state.db" "$1"
}

# wait_port FILE: the port a `serving on port N` line in FILE names
# (bounded); empty when none came.
wait_port() {
	local port=
	for _ in $(seq 1 300); do
		port=$(sed -n 's/^serving on port \([0-9]*\) .*/\1/p' "$1")
		[ -n "$port" ] && break
		sleep 0.1
	done
	printf '%s' "$port"
}

# serve_up: start `storyctl serve` in $P on a free loopback port; sets
# SRV_PID and SRV_PORT (what the server printed), 1 if it never said.
serve_up() {
	"$STORYCTL" -C "$P" serve --listen 127.0.0.1:0 >"$T_TMP/srv.out" 2>"$T_TMP/srv.err" &
	SRV_PID=$!
	SRV_PORT=
	for _ in $(seq 1 300); do
		SRV_PORT=$(sed -n 's/^serving on port \([0-9]*\) .*/\1/p' "$T_TMP/srv.out")
		[ -n "$SRV_PORT" ] && return 0
		sleep 0.1
	done
	return 1
}

# req METHOD PATH KEY [CURL-ARGS...]: one request to the server serve_up
# started (KEY "" sends no X-API-Key); sets H_CODE, H_BODY and H_HEAD
# (the response headers).  Bounded at 20 s.
req() {
	local m=$1 path=$2 key=$3
	shift 3
	local hdr=()
	[ -n "$key" ] && hdr=(-H "X-API-Key: $key")
	H_CODE=$(curl -s --max-time 20 -D "$T_TMP/head" -o "$T_TMP/body" -w '%{http_code}' \
		-X "$m" "${hdr[@]}" "$@" "http://127.0.0.1:$SRV_PORT$path")
	H_BODY=$(cat "$T_TMP/body" 2>/dev/null)
	H_HEAD=$(cat "$T_TMP/head" 2>/dev/null)
}

# expect_http NAME WANT-CODE [JQ-TEST]: the last req's status and body.
expect_http() {
	local why=""
	[ "$H_CODE" = "$2" ] || why="status $H_CODE, want $2"
	if [ -z "$why" ] && [ -n "${3:-}" ] &&
		! printf '%s' "$H_BODY" | jq -e "$3" >/dev/null 2>&1; then
		why="body: $(printf '%s' "$H_BODY" | head -c 300)"
	fi
	if [ -z "$why" ]; then ok "$1"; else not_ok "$1 ($why)"; fi
}
