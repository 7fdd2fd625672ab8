#!/bin/bash
# A prompt too long for execve (issue 11, docs/configuration.md
# "{prompt_file}"): one argument may hold at most 131072 bytes (32 pages)
# on Linux.  `check` reports it before the night; `run` starts no agent,
# escalates the story with the reason (not "likely API or connection
# issue" after every attempt failed with exit 126) and goes on; with
# {prompt_file} the same prompt reaches the agent through a 0600 file.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

# (jq gets it from a file: an argument that long would fail its own execve)
{ head -c 200000 /dev/zero | tr '\0' 'x'; printf ' {story_file}'; } >"$T_TMP/big.txt"
big_json() { jq -cn --rawfile p "$T_TMP/big.txt" '{prompt: $p}' | sed 's/^{//; s/}$//'; }
agent="$T_TMP/file-agent"
cat >"$agent" <<'SH'
#!/bin/sh
# file-agent MODE PROMPT_OR_FILE STORY: copies what it was given, checks
# every box
case $1 in
file) cp "$2" "$COPY"; stat -c %a "$2" >"$COPY.mode" ;;
arg) printf '%s' "$2" >"$COPY" ;;
esac
sed -i 's/^- \[ \]/- [x]/' "$3"
SH
chmod +x "$agent"

# ---- {prompt}: too long ----
cmd=$(jq -cn --arg a "$agent" '[$a, "arg", "{prompt}", "{story_file}"]')
EXTRA_JSON=$(big_json),
new_project '{}' "$(jq -cn --argjson c "$cmd" --arg d "$T_TMP/copy1" \
	'{primary: {name: "argagent", command: $c, timeout_s: 30, env: {COPY: $d}}}')"
unset EXTRA_JSON
new_story "$P" big 2
commit_all
run_sc -C "$P" check
check "check fails on the long prompt (exit $T_RC)" [ "$T_RC" = 65 ]
expect_match "check names the story, the agent and the limit" "$T_OUT$T_ERR" \
	'big\.md\)?: agent primary.*over the 131072-byte limit of one argument.*\{prompt_file\}'
run_sc -C "$P" run
expect_rc "run finishes with the story not done (exit 3)" 3
run_sc -C "$P" show big --json
expect_json "the story is escalated with the reason, no attempt ran" \
	'.status == "escalated" and (.reason | test("cannot be started: argument 2 of the agent command is [0-9]+ bytes, over the 131072-byte limit")) and (.attempts | length) == 0'
check "the agent never ran" [ ! -e "$T_TMP/copy1" ]

# ---- {prompt_file}: the same prompt through a file ----
cmd=$(jq -cn --arg a "$agent" '[$a, "file", "{prompt_file}", "{story_file}"]')
EXTRA_JSON=$(big_json),
new_project '{}' "$(jq -cn --argjson c "$cmd" --arg d "$T_TMP/copy2" \
	'{primary: {name: "fileagent", command: $c, timeout_s: 30, env: {COPY: $d}}}')"
unset EXTRA_JSON
new_story "$P" big 2
commit_all
run_sc -C "$P" check
expect_rc "check is ok with {prompt_file}" 0
run_sc -C "$P" run
expect_rc "run with {prompt_file} finishes the story (exit 0)" 0
check "the agent got the whole prompt from the file" \
	bash -c '[ "$(wc -c <"$1")" -ge 200000 ] && grep -q "docs/stories/big.md" "$1"' _ "$T_TMP/copy2"
check "the prompt file was mode 600" [ "$(cat "$T_TMP/copy2.mode")" = 600 ]

# ---- an environment too large: the runner refuses to exec ----
# The prompt fits, but the agent's env holds one string over the limit of
# one argument.  Before: execve failed with E2BIG, every attempt exited
# 126 and the story was escalated as "likely API or connection issue".
# Now `check` names it, and run starts no process: the one attempt is
# `permanent`, the agent is disabled (D2) and the story escalated.
head -c 140000 /dev/zero | tr '\0' 'y' >"$T_TMP/bigenv.txt"
cmd=$(jq -cn --arg a "$agent" '[$a, "arg", "{story_id}", "{story_file}"]')
new_project '{"max_attempts": 3}' "$(jq -cn --argjson c "$cmd" --arg d "$T_TMP/copy3" \
	--rawfile v "$T_TMP/bigenv.txt" \
	'{primary: {name: "envagent", command: $c, timeout_s: 30, env: {COPY: $d, BIG: $v}}}')"
new_story "$P" envbig 2
commit_all
run_sc -C "$P" check
check "check fails on the agent's environment (exit $T_RC)" [ "$T_RC" = 65 ]
expect_match "check names the story, the agent and the environment" "$T_OUT$T_ERR" \
	'envbig\.md\)?: agent primary.*environment variable BIG is [0-9]+ bytes.*over the 131072-byte limit'
run_sc -C "$P" run
check "run does not finish the story (exit $T_RC)" [ "$T_RC" != 0 ]
run_sc -C "$P" show envbig --json
expect_json "one permanent attempt that says why, not a 126 crash loop" \
	'(.attempts | length) == 1 and .attempts[0].outcome == "permanent" and (.attempts[0].error_message | test("environment variable BIG is [0-9]+ bytes.*over the 131072-byte limit"))'
expect_json "the story is escalated, not for an API or connection issue" \
	'.status == "escalated" and (.reason | test("connection") | not)'
check "the agent never ran" [ ! -e "$T_TMP/copy3" ]

finish
