#!/bin/bash
# Bad input (docs/reliability.md#bad-input-a-clear-error-and-nothing-changes):
# every kind of bad config, story or command line exits with its code
# (docs/commands.md#exit-codes), says "storyctl: ..." naming the file,
# line, key, id or token, and leaves the database and the state branch
# byte for byte as they were.  Then bytes that are not text (invalid
# UTF-8, NUL) in a story file and in an agent's output: the batch runs,
# the JSON output stays JSON and the database stays sound.
. "$(dirname "$0")/lib.sh"

# ---- a finished batch, so a database and a state branch exist ----
new_project
new_story "$P" good 2 '<!-- sim *: checkall -->'
new_story "$P" other 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "a good batch runs to the end first" 0
cp "$P/storyctl.json" "$T_TMP/good.json"
SIM="$STORYCTL_SRC/scripts/sim-agent"

# snapshot: the database files, every ref, the state dir's files (with
# their sizes) and the good story files.
snapshot() {
	local f
	for f in state.db state.db-wal state.db-shm; do
		[ -e "$P/.storyctl/$f" ] && sha256sum "$P/.storyctl/$f"
	done
	git -C "$P" for-each-ref --format='%(refname) %(objectname)'
	git -C "$P" rev-parse storyctl/state
	git -C "$P" reflog show --format='%H %gs' storyctl/state | head -n 3
	(cd "$P/.storyctl" && find . -path ./lock -prune -o -printf '%p %s\n' | sort)
	sha256sum "$P/docs/stories/good.md" "$P/docs/stories/other.md"
}
SNAP=$(snapshot)
check "the snapshot has the database and the state branch" \
	bash -c 'grep -q state.db <<<"$1" && grep -q refs/heads/storyctl/state <<<"$1"' _ "$SNAP"

# restore: the good config and stories back, anything else removed.
restore() {
	cp "$T_TMP/good.json" "$P/storyctl.json"
	rm -rf "$P/docs/stories/bad.md" "$P/docs/stories/"*.extra
	find "$P/docs/stories" -mindepth 1 ! -name good.md ! -name other.md -exec rm -rf {} +
}

# config_with JQ-FILTER: the good config changed by a jq filter.
config_with() {
	jq "$1" "$T_TMP/good.json" >"$P/storyctl.json"
}

# bad NAME WANT-RC REGEX ARGS...: storyctl -C $P ARGS exits WANT-RC,
# its first stderr line is "storyctl: ..." and matches REGEX, and
# nothing was changed; then the good config is restored.
bad() {
	local name=$1 want=$2 re=$3 first now
	shift 3
	run_sc -C "$P" "$@"
	expect_rc "$name: exit $want" "$want"
	first=$(printf '%s\n' "$T_ERR" | head -n1)
	if [[ $first == "storyctl: "* ]] && printf '%s' "$first" | grep -Eq -- "$re"; then
		ok "$name: says storyctl: ... naming it"
	else
		not_ok "$name: says storyctl: ... naming it (no /$re/)"
		printf '%s\n' "$T_ERR" | head -3 | sed 's/^/# stderr: /'
	fi
	now=$(snapshot)
	if [ "$now" = "$SNAP" ]; then
		ok "$name: database and state branch unchanged"
	else
		not_ok "$name: database and state branch unchanged"
		diff <(printf '%s\n' "$SNAP") <(printf '%s\n' "$now") | sed 's/^/# /'
	fi
	restore
}

# ---- the config file ----
printf '{\n  "stories_glob": "docs/stories/*.md",\n  "agents": {"primary": {"command": ["%s", "{prompt}"]}},\n  "policy": {"max_attempts": 3,}\n}\n' "$SIM" >"$P/storyctl.json"
bad "broken JSON" 65 'storyctl\.json:4\b' run
printf '{\n  "stories_glob": "docs/stories/*.md",\n  "agents": {"primary": {"command": ["%s"]}}\n' "$SIM" >"$P/storyctl.json"
bad "truncated JSON" 65 'storyctl\.json:[0-9]+' run
: >"$P/storyctl.json"
bad "empty config file" 65 'storyctl\.json' run
printf '["docs/stories/good.md"]\n' >"$P/storyctl.json"
bad "config that is not an object" 65 'storyctl\.json' run
printf '{"stories_glob": "docs/stories/*.md", "stories_glob": "x/*.md"}\n' >"$P/storyctl.json"
bad "duplicate key in the config" 65 'storyctl\.json:1:[0-9]+: .*stories_glob' check
config_with '. + {"colour": "blue"}'
bad "unknown top-level key" 65 'storyctl\.json: .*\bcolour\b' run
config_with '.policy.backoff.jiter = 0.1'
bad "unknown nested key" 65 'policy\.backoff\.jiter' run
config_with '.agents.primary.timeout = 5'
bad "unknown agent key" 65 'agents\.primary\.timeout\b' run
config_with '.agents.tertiary = .agents.primary'
bad "unknown agent role" 65 'agents\.tertiary' run
config_with '.policy.max_attempts = "5"'
bad "wrong type (string for an integer)" 65 'policy\.max_attempts' run
config_with '.policy.max_attempts = 2.5'
bad "wrong type (fraction for an integer)" 65 'policy\.max_attempts' run
config_with ".agents.primary.command = \"$SIM {prompt}\""
bad "agent command as a shell string" 65 'agents\.primary\.command' run
config_with '.agents.primary.command = []'
bad "empty agent command" 65 'agents\.primary\.command' run
config_with '.agents.primary.command[1] = 7'
bad "agent argument that is not a string" 65 'agents\.primary\.command' run
config_with '.agents.primary.command[1] = "{promt}"'
bad "unknown placeholder in the argv" 65 'promt' run
config_with '.stories_glob = ["docs/stories/*.md"]'
bad "stories_glob of the wrong type" 65 'stories_glob' run
config_with '.policy.backoff.base_delay_ms = -5'
bad "negative delay" 65 'policy\.backoff\.base_delay_ms' run
config_with '.policy.network_sleep_s = -0.5'
bad "negative duration" 65 'policy\.network_sleep_s' run
config_with '.policy.backoff.jitter = 2'
bad "jitter 2" 65 'policy\.backoff\.jitter' run
config_with '.policy.max_attempts = 0'
bad "max_attempts 0" 65 'policy\.max_attempts' run
config_with '.policy.strategy = "yolo"'
bad "unknown strategy" 65 'policy\.strategy' run
config_with '.policy.backoff.strategy = "random"'
bad "unknown backoff strategy" 65 'policy\.backoff\.strategy' run
config_with '.agents.primary.timeout_s = -1'
bad "negative timeout" 65 'agents\.primary\.timeout_s' run
config_with '.policy.max_attempts = 1e400'
bad "a number too large for JSON" 65 'storyctl\.json' run

# ---- story ids and files ----
config_with 'del(.stories_glob) | .stories = [{"file": "docs/stories/good.md", "id": "../x"}]'
bad "story id ../x" 65 '"\.\./x".*docs/stories/good\.md' run
config_with 'del(.stories_glob) | .stories = [{"file": "docs/stories/good.md", "id": "/abs"}]'
bad "story id /abs" 65 '"/abs".*docs/stories/good\.md' run
config_with 'del(.stories_glob) | .stories = [{"file": "docs/stories/good.md", "id": ".hidden"}]'
bad "story id .hidden" 65 '"\.hidden".*docs/stories/good\.md' run
config_with 'del(.stories_glob) | .stories = [{"file": "docs/stories/good.md", "id": "a b;rm"}]'
bad "story id with a blank and ;" 65 'a b;rm' run
config_with 'del(.stories_glob) | .stories = [{"file": "docs/stories/good.md", "id": ""}]'
bad "empty story id" 65 'stories\[0\]\.id' run
config_with 'del(.stories_glob) | .stories = [{"file": "docs/stories/good.md", "id": "same"}, {"file": "docs/stories/other.md", "id": "same"}]'
bad "duplicate story id" 65 '"same"' run
# a path the record could only keep cut short is refused, not cut
deep="docs/stories/$(printf 'd%.0s' $(seq 200))/$(printf 'e%.0s' $(seq 200))/$(printf 'f%.0s' $(seq 100))"
mkdir -p "$P/$deep" && cp "$P/docs/stories/good.md" "$P/$deep/long.md"
config_with "del(.stories_glob) | .stories = [{\"file\": \"$deep/long.md\", \"id\": \"long\"}]"
bad "a story path over 511 bytes" 65 'story long: its file path is 523 bytes, longer than the 511' run
config_with 'del(.stories_glob) | .stories = ["docs/stories/good.md", "docs/stories/missing.md"]'
bad "missing story file" 65 'docs/stories/missing\.md' run
mkdir "$P/docs/stories/bad.md"
config_with 'del(.stories_glob) | .stories = ["docs/stories/good.md", "docs/stories/bad.md"]'
bad "a directory in place of the story file" 65 'docs/stories/bad\.md' run
ln -s nowhere.md "$P/docs/stories/bad.md"
config_with 'del(.stories_glob) | .stories = ["docs/stories/good.md", "docs/stories/bad.md"]'
bad "a dangling symlink as the story file" 65 'docs/stories/bad\.md' run
mkfifo "$P/docs/stories/bad.md"
config_with 'del(.stories_glob) | .stories = ["docs/stories/good.md", "docs/stories/bad.md"]'
bad "a FIFO as the story file (no hang)" 65 'docs/stories/bad\.md' run
truncate -s 20M "$P/docs/stories/bad.md"
config_with 'del(.stories_glob) | .stories = ["docs/stories/good.md", "docs/stories/bad.md"]'
bad "a 20 MB story file" 65 'docs/stories/bad\.md' run
: >"$P/docs/stories/$(printf 'caf\351').md"
bad "a story file name that is not UTF-8 (glob)" 65 'invalid story id' run
# a file name that would write to the terminal: escapes must not reach
# it raw, nor may a newline in the name fake a second message
: >"$P/docs/stories/$(printf 'x\033]0;owned\007\nstoryctl: fake.md')"
bad "a story file name with terminal escapes and a newline (glob)" 65 'invalid story id' check
check "... the message is one line with no control character" \
	bash -c '[ "$(printf "%s\n" "$1" | wc -l)" = 1 ] && ! LC_ALL=C grep -q "[[:cntrl:]]" <<<"$1"' _ "$T_ERR"
# (a box in a code block is no task on GitHub, nor for storyctl)
printf '# no tasks\n\nJust prose, and a box in a code block:\n\n```\n- [ ] not a task\n```\n' >"$P/docs/stories/bad.md"
# docs/commands.md#exit-codes: the error on stderr names the file (stdout may go elsewhere)
bad "a story without tasks (check)" 65 'docs/stories/bad\.md|\bbad\b' check

# ---- programs that cannot run ----
config_with '.agents.primary.command[0] = "no-such-agent-xyz"'
bad "primary agent not found" 69 'agent primary.*no-such-agent-xyz' run
config_with '.agents.fallback.command[0] = "/nonexistent/agent"'
bad "fallback agent not found" 69 'agent fallback.*/nonexistent/agent' run
config_with ".agents.primary.command[0] = \"$T_TMP\""
bad "agent program that is a directory" 69 "agent primary.*$T_TMP" run
printf 'not executable\n' >"$T_TMP/noexec"
config_with ".agents.primary.command[0] = \"$T_TMP/noexec\""
bad "agent program that is not executable" 69 'noexec' run
config_with '. + {"gates": [{"name": "tests", "command": ["no-such-gate-xyz"]}]}'
bad "gate program not found" 69 'no-such-gate-xyz' run
config_with '. + {"review": {"agents": [["no-such-reviewer-xyz", "{prompt}"]], "quorum": 1}}'
bad "reviewer program not found" 69 'no-such-reviewer-xyz' run

# ---- the command line ----
bad "simulate with an unknown outcome" 64 "'bogus'" simulate success bogus
bad "simulate with tasks that are not a number" 64 "'incomplete:x'" simulate incomplete:x
bad "simulate with negative tasks" 64 "'crash:-1'" simulate crash:-1
bad "simulate with an empty token" 64 "simulate|token|''" simulate ''
bad "simulate with tasks past the total" 64 "'incomplete:12'" simulate --tasks 9 incomplete:12
bad "simulate --tasks 0" 64 '--tasks' simulate --tasks 0 success
bad "unknown command" 64 "'frobnicate'" frobnicate
bad "unknown option of run" 64 "'--nope'" run --nope
bad "unknown global option" 64 '--bogus' --bogus list
bad "unknown option of list" 64 '--colour' list --colour
bad "option without its value" 64 '--status' list --status
bad "list --status of an unknown status" 64 'sleeping' list --status sleeping
bad "show of an unknown story" 64 'nosuch' show nosuch
bad "show without a story" 64 'show' show
bad "requeue of an unknown story" 64 'nosuch' requeue nosuch
bad "run of an unknown story" 64 'nosuch' run nosuch
# -c naming no file: a usage error (64, like "no config found") or bad
# config data (65); either way it names the file.
run_sc -C "$P" -c "$T_TMP/nowhere.json" run
check "-c naming a missing config: exit 64 or 65 (got $T_RC)" \
	[ "$T_RC" -eq 64 -o "$T_RC" -eq 65 ]
expect_match "-c naming a missing config: names it" "$T_ERR" '^storyctl: .*nowhere\.json'
check "-c naming a missing config: nothing changed" [ "$(snapshot)" = "$SNAP" ]
bad "-j 0" 64 '-j' run -j 0
bad "-j that is not a number" 64 '-j|many' run -j many

# ---- an invalid story among good ones: reported, the rest runs ----
printf '# no tasks\n' >"$P/docs/stories/notasks.md"
new_story "$P" third 1 '<!-- sim *: checkall -->'
run_sc -C "$P" run
expect_rc "run with a story without tasks goes on and exits 3" 3
run_sc -C "$P" list --json
expect_json "the story without tasks is invalid, the new one done" \
	'(.[] | select(.id == "notasks") | .status == "invalid") and (.[] | select(.id == "third") | .status == "done")'

# ---- bytes that are not text ----
BYTES="$STORYCTL_SRC/tests/e2e/agents/bytes-agent"
new_project '{}' "$(jq -cn --arg a "$BYTES" '{primary: {name: "bytes", command: [$a, "{attempt}", "{story_file}"]},
	fallback: {name: "bytes-f", command: [$a, "{attempt}", "{story_file}", "{stalled_task}", "{prompt}"]}}')"
mkdir -p "$P/docs/stories"
printf '# Story bin\n\n## Tasks\n\n- [ ] plain first task\n- [ ] second \377\376 task with a NUL [\000] inside\n- [ ] third \303\050 bad sequence \033[2J\n' >"$P/docs/stories/bin.md"
commit_all
run_sc -C "$P" run
expect_rc "a story with invalid UTF-8 and NUL runs to done" 0
check "the run's output names the story" grep -q 'bin' <<<"$T_OUT"
run_sc -C "$P" show bin --json
expect_json "show --json is valid JSON with two attempts" '(.attempts | length) == 2 and .status == "done"'
expect_json "show --json keeps every field of the attempt" \
	'all(.attempts[]; has("stalled_task") and has("reason") and has("outcome") and has("error_code"))'
expect_json "the stalled task is recorded as a string" \
	'(.attempts[0].stalled_task | type) == "string" and (.attempts[0].stalled_task | test("second"))'
expect_json "the failed attempt is a crash" '.attempts[0].outcome == "crash"'
for cmd in "list --json" "status --json" "log --json" "show bin --json"; do
	# shellcheck disable=SC2086
	run_sc -C "$P" $cmd
	expect_rc "$cmd exits 0" 0
	check "$cmd is valid JSON (jq parses it)" \
		bash -c 'jq -e . >/dev/null <<<"$1"' _ "$T_OUT"
done
run_sc -C "$P" show bin
expect_rc "show (text) exits 0" 0
check "show (text) prints no NUL and no raw escape" \
	bash -c '! LC_ALL=C grep -qaP "\x00|\x1b" "$1/out"' _ "$T_TMP"
check "stories/bin.json on the branch is valid JSON" \
	bash -c 'git -C "$1" show storyctl/state:stories/bin.json | jq -e ".attempts | length == 2" >/dev/null' _ "$P"
check "progress.md on the branch names the story" \
	bash -c 'git -C "$1" show storyctl/state:progress.md | grep -q "^| bin |"' _ "$P"
check "PRAGMA integrity_check is ok" [ "$(sql 'PRAGMA integrity_check')" = ok ]
check "the attempt log keeps the raw bytes" \
	bash -c 'LC_ALL=C grep -qaP "\xff\xfe" "$(sqlite3 "$1/.storyctl/state.db" "SELECT log_path FROM attempts WHERE seq = 1")"' _ "$P"
check "the error message in the database has no NUL" \
	[ "$(sql "SELECT instr(CAST(error_message AS BLOB), X'00') FROM attempts WHERE seq = 1")" = 0 ]

finish
