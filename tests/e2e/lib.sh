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

ok() { echo "ok - $*"; }
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
