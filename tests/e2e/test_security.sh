#!/bin/bash
# Security (docs/reliability.md#security): agents and gates run from argv arrays only, so
# no story text, story file name or agent output is ever interpreted by a
# shell; secrets are redacted before anything reaches the database or the
# state branch (the raw attempt log keeps them, mode 0600); the state dir
# is 0700 and its files 0600; story files cannot escape the repository.
. "$(dirname "$0")/lib.sh"
AGENTS="$STORYCTL_SRC/tests/e2e/agents"

# ---- 1. shell syntax in story text, file names and agent output ----
REC="$T_TMP/rec"
mkdir -p "$REC" "$T_TMP/victim"
cmd=$(jq -cn --arg a "$AGENTS/argv-agent" --arg d "$REC" \
	'[$a, $d, "{story_id}", "{attempt}", "{story_file}", "{stalled_task}", "{prompt}", "--id={story_id}"]')
gate=$(jq -cn --arg a "$AGENTS/argv-agent" --arg d "$REC" \
	'[$a, $d, "gate", "{attempt}", "{story_file}", "{stalled_task}"]')
weird='docs/stories/w$(touch pwn-name1)`touch pwn-name2`;touch pwn-name3&x|y.md'
STORIES_JSON=$(jq -cn --arg w "$weird" '{stories: ["docs/stories/inj.md",
	{file: "docs/stories/dep.md", depends_on: ["inj"], include_dependency_result: true},
	{file: $w, id: "weird"}]}' | sed 's/^{//; s/}$//') \
	EXTRA_JSON=$(jq -cn --argjson g "$gate" \
		'{prompt: "Implement {story_file} ({story_id}), attempt {attempt}/{max_attempts}; stuck at: {stalled_task}",
		  gates: [{name: "g", command: $g}]}' | sed 's/^{//; s/}$/,/') \
	new_project '{"max_attempts": 5}' "$(jq -cn --argjson c "$cmd" \
		'{primary: {name: "rec-p", command: $c}, fallback: {name: "rec-f", command: $c}}')"
# the task texts, each an attempt at injection; the second and third
# become the stalled task of attempts 2 and 3 (after one box each)
t1="first \$(touch $T_TMP/pwn1) task"
t2="second \`touch $T_TMP/pwn2\`; rm -rf $T_TMP/victim | cat && touch $T_TMP/pwn3 > $T_TMP/pwn4"
t3="third {prompt} {story_id} %s%n \"'; touch $T_TMP/pwn5 # \${IFS}\$((1+1))"
mkdir -p "$P/docs/stories"
printf '# Story inj\n\n## Tasks\n\n- [ ] %s\n- [ ] %s\n- [ ] %s\n' "$t1" "$t2" "$t3" >"$P/docs/stories/inj.md"
new_story "$P" dep 1
printf '# Story weird\n\n- [ ] one $(touch %s/pwn6)\n' "$T_TMP" >"$P/$weird"
run_sc -C "$P" run
expect_rc "stories full of shell syntax run to the end (exit 0)" 0
markers=$(find "$T_TMP" "$P" -name 'pwn*' 2>/dev/null)
check "no marker file was created by story text, file name or output (${markers:-none})" \
	[ -z "$markers" ]
check "the rm -rf in a task never ran" test -d "$T_TMP/victim"

# arg FILE N: argument N (0 = the first after OUTDIR: the tag) of a
# recorded argv, byte for byte.
arg() {
	local -a a=()
	[ -e "$REC/$1" ] || return 1
	mapfile -d '' -t a <"$REC/$1"
	printf '%s' "${a[$2]-<none>}"
}
# same NAME GOT WANT: GOT is byte for byte WANT.
same() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1"
		printf '# got:  %s\n# want: %s\n' "$2" "$3" | cut -c1-300
	fi
}
nargs() {
	local -a a=()
	mapfile -d '' -t a <"$REC/$1"
	echo "${#a[@]}"
}
check "inj ran three attempts, each recorded" \
	test -e "$REC/argv.inj.a1" -a -e "$REC/argv.inj.a2" -a -e "$REC/argv.inj.a3"
check "every template argument arrived as one argument (6 each)" \
	[ "$(nargs argv.inj.a2)" = 6 ]
same "attempt 2: {stalled_task} is the literal second task" \
	"$(arg argv.inj.a2 3)" "$t2"
same "attempt 3: {stalled_task} is the literal third task ({prompt} not expanded again)" \
	"$(arg argv.inj.a3 3)" "$t3"
# (storyctl adds a paragraph about the previous attempt after the prompt)
same "attempt 2: the prompt holds the stalled task literally" \
	"$(arg argv.inj.a2 4 | head -n 1)" "Implement docs/stories/inj.md (inj), attempt 2/5; stuck at: $t2"
check "attempt 2: the previous-attempt paragraph quotes it literally too" \
	bash -c '[[ $1 == *"first unchecked task is: \"$2\""* ]]' _ "$(arg argv.inj.a2 4)" "$t2"
expect_match "attempt 3: the prompt holds {prompt} and {story_id} literally" \
	"$(arg argv.inj.a3 4)" 'stuck at: third \{prompt\} \{story_id\} %s%n'
same "a placeholder inside a longer argument: --id={story_id}" \
	"$(arg argv.inj.a1 5)" "--id=inj"
same "{story_file} with shell syntax in its name arrives literally" \
	"$(arg argv.weird.a1 2)" "$weird"
expect_match "the agent could work on that file (weird is done)" \
	"$("$STORYCTL" -C "$P" list --json | jq -r '.[] | select(.id == "weird") | .status')" '^done$'
check "the gate got {stalled_task} and {story_file} as single arguments" \
	bash -c '[ -e "$1/argv.gate.a1" ] && [ "$(tr -cd "\0" <"$1/argv.gate.a1" | wc -c)" = 4 ]' _ "$REC"
dp=$(arg argv.dep.a1 4)
want="inj: \$(touch $REC/pwn-res1) \`touch $REC/pwn-res2\`; touch $REC/pwn-res3"
check "the dependent prompt has the dependency's result literally" \
	bash -c '[[ $1 == "[Previous step result]:"*"$2"* ]]' _ "$dp" "$want"
check "the story file's text is what the agents left (3 boxes checked, text intact)" \
	bash -c 'grep -cF -- "- [x] $2" "$1" >/dev/null && [ "$(grep -c "^- \[x\]" "$1")" = 3 ]' _ "$P/docs/stories/inj.md" "$t2"

# ---- 2. secrets never reach the database or the state branch ----
# Synthetic credentials with the shapes of real ones (random each run).
rnd() { LC_ALL=C tr -dc "${2:-A-Za-z0-9}" </dev/urandom | head -c "$1"; }
# each key gets at least one digit and one letter where its shape has them
K_ANT="sk-ant-api03-$(rnd 40)7$(rnd 45 'A-Za-z0-9_-')-$(rnd 6)AA"
K_ANT_ADMIN="sk-ant-admin01-$(rnd 40)4$(rnd 45 'A-Za-z0-9_-')-$(rnd 6)AA"
K_OAI_PROJ="sk-proj-$(rnd 30)9$(rnd 43 'A-Za-z0-9_-')T3BlbkFJ$(rnd 30)2$(rnd 43 'A-Za-z0-9_-')"
K_OAI_LEGACY="sk-$(rnd 9)5$(rnd 10)T3BlbkFJ$(rnd 9)8$(rnd 10)"
K_OAI_SVC="sk-svcacct-$(rnd 30)3$(rnd 43 'A-Za-z0-9_-')T3BlbkFJ$(rnd 74)"
K_GH="ghp_$(rnd 35)1"
K_GH_FINE="github_pat_11$(rnd 7 'A-Z0-9')0$(rnd 12)_$(rnd 59)"
K_GH_OAUTH="gho_$(rnd 35)6"
K_SLACK_BOT="xoxb-$(rnd 12 0-9)-$(rnd 13 0-9)-$(rnd 24)"
K_SLACK_USER="xoxp-$(rnd 12 0-9)-$(rnd 12 0-9)-$(rnd 13 0-9)-$(rnd 32 0-9a-f)"
K_SLACK_APP="xapp-1-A$(rnd 10 A-Z0-9)-$(rnd 13 0-9)-$(rnd 64 0-9a-f)"
K_SLACK_HOOK_SECRET="$(rnd 24)"
K_SLACK_HOOK="https://hooks.slack.com/services/T$(rnd 8 A-Z0-9)/B$(rnd 10 A-Z0-9)/$K_SLACK_HOOK_SECRET"
K_AWS_ID="AKIA$(rnd 15 A-Z0-9)7"
K_AWS_SECRET="$(rnd 20 'A-Za-z0-9+/')5$(rnd 19 'A-Za-z0-9+/')"
K_GOOGLE="AIza$(rnd 34 'A-Za-z0-9_-')0"
K_GOOGLE_OAUTH="ya29.a0$(rnd 60 'A-Za-z0-9_-')3$(rnd 60 'A-Za-z0-9_-')"
K_GOOGLE_SECRET="GOCSPX-$(rnd 27 'A-Za-z0-9_-')8"
K_PEM_BODY="MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC$(rnd 60 'A-Za-z0-9+/')"
sk="$T_TMP/keys"
mkdir -p "$sk"
# story id, the line the agent dies on (and reports in its result), the
# secret part that must never be stored
declare -A LINE SECRET
add_key() { LINE[$1]=$2; SECRET[$1]=$3; }
add_key anthropic "ANTHROPIC_API_KEY=$K_ANT" "$K_ANT"
add_key anthropic-admin "x-api-key: $K_ANT_ADMIN" "$K_ANT_ADMIN"
add_key openai-proj "Authorization: Bearer $K_OAI_PROJ" "$K_OAI_PROJ"
add_key openai-legacy "openai.api_key = '$K_OAI_LEGACY'" "$K_OAI_LEGACY"
add_key openai-svcacct "using key $K_OAI_SVC" "$K_OAI_SVC"
add_key github "remote: https://x-access-token:$K_GH@github.com/o/r.git" "$K_GH"
add_key github-fine "GITHUB_TOKEN=$K_GH_FINE" "$K_GH_FINE"
add_key github-oauth "gh auth token: $K_GH_OAUTH" "$K_GH_OAUTH"
add_key slack-bot "slack token $K_SLACK_BOT" "$K_SLACK_BOT"
add_key slack-user "\"token\": \"$K_SLACK_USER\"" "$K_SLACK_USER"
add_key slack-app "SLACK_APP_TOKEN=$K_SLACK_APP" "$K_SLACK_APP"
add_key slack-webhook "posting to $K_SLACK_HOOK" "$K_SLACK_HOOK_SECRET"
add_key aws-id "aws_access_key_id = $K_AWS_ID" "$K_AWS_ID"
add_key aws-secret "AWS_SECRET_ACCESS_KEY=$K_AWS_SECRET" "$K_AWS_SECRET"
add_key google "https://maps.googleapis.com/maps/api/geocode/json?key=$K_GOOGLE" "$K_GOOGLE"
add_key google-oauth "Authorization: Bearer $K_GOOGLE_OAUTH" "$K_GOOGLE_OAUTH"
add_key google-oauth-bare "gcloud auth print-access-token: $K_GOOGLE_OAUTH" "$K_GOOGLE_OAUTH"
add_key google-secret "\"client_secret\":\"$K_GOOGLE_SECRET\"" "$K_GOOGLE_SECRET"
add_key google-pem "\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n$K_PEM_BODY\\n-----END PRIVATE KEY-----\\n\"" "$K_PEM_BODY"
K_TASK="ghp_$(rnd 35)2"
# a key given to the agent on its command line (stored with the argv)
K_ARGV="sk-ant-api03-$(rnd 40)6$(rnd 45 'A-Za-z0-9_-')-$(rnd 6)AA"
cmd=$(jq -cn --arg a "$AGENTS/leak-agent" --arg d "$sk" --arg k "--api-key=$K_ARGV" \
	'[$a, $d, "{attempt}", "{story_id}", "{story_file}", $k]')
gate=$(jq -cn --arg a "$AGENTS/leak-gate" --arg d "$sk" '[$a, $d, "{story_id}"]')
EXTRA_JSON=$(jq -cn --argjson g "$gate" '{gates: [{name: "leaky", command: $g}]}' | sed 's/^{//; s/}$/,/') \
	new_project '{"max_attempts": 5}' "$(jq -cn --argjson c "$cmd" \
		'{primary: {name: "leak-p", command: $c}, fallback: {name: "leak-f", command: $c}}')"
mkdir -p "$P/docs/stories"
for id in "${!LINE[@]}"; do
	printf '%s\n' "${LINE[$id]}" >"$sk/$id"
	# the second task names a token too: it becomes the stalled task and
	# goes into the next prompt
	printf '# %s\n\n- [ ] call the API\n- [ ] rotate %s and retry\n' "$id" "$K_TASK" >"$P/docs/stories/$id.md"
done
# (the story files stay uncommitted: only storyctl's own commits are in
# the repository, so `git log -p --all` shows what storyctl stored)
run_sc -C "$P" run
expect_rc "the leaking agents run to the end (exit 0)" 0
T_OUT=$("$STORYCTL" -C "$P" list --json)
expect_json "each story took three attempts (crash, gate failed, success)" \
	"length == ${#LINE[@]} and all(.[]; .status == \"done\" and .attempts == 3)"

dump=$(sqlite3 "$P/.storyctl/state.db" .dump)
branch=$(git -C "$P" log -p --all)
shows=$(for id in "${!LINE[@]}"; do "$STORYCTL" -C "$P" show "$id" --json; "$STORYCTL" -C "$P" show "$id"; done
	"$STORYCTL" -C "$P" log --json)
logs=$(cat "$P"/.storyctl/logs/*.log)
check "the database holds the error messages (redacted, not dropped)" \
	grep -q 'the upstream rejected the credential' <<<"$dump"
check "the database holds the gate output" grep -q 'FAIL test_client' <<<"$dump"
check "the database holds the agents' result text" grep -q 'to call the API' <<<"$dump"
check "the database holds the stalled task" grep -q 'rotate .* and retry' <<<"$dump"
check "the database holds the argv" grep -q -- '--api-key=' <<<"$dump"
leaks() {
	local id where=$1 text=$2 out=
	for id in $(printf '%s\n' "${!SECRET[@]}" | sort); do
		grep -qF -- "${SECRET[$id]}" <<<"$text" && out="$out $id"
	done
	grep -qF -- "$K_TASK" <<<"$text" && out="$out task-token"
	grep -qF -- "$K_ARGV" <<<"$text" && out="$out argv-key"
	if [ -z "$out" ]; then
		ok "no secret in $where"
	else
		not_ok "no secret in $where (found:$out)"
		for id in $out; do
			case $id in task-token | argv-key) continue ;; esac
			grep -F -- "${SECRET[$id]}" <<<"$text" | head -n 1 | cut -c1-200 | sed "s/^/# $id: /"
		done
	fi
}
leaks "the database (.dump)" "$dump"
leaks "the state branch (git log -p --all)" "$branch"
leaks "show, show --json and log --json" "$shows"
missing=
for id in "${!SECRET[@]}"; do
	grep -qF -- "${SECRET[$id]}" <<<"$logs" || missing="$missing $id"
done
check "the raw attempt logs keep every secret (missing:${missing:- none})" [ -z "$missing" ]

# ---- 3. modes: the state dir 0700, the database and the logs 0600 ----
modes_ok() {
	local f bad=
	[ "$(stat -c %a "$1/.storyctl")" = 700 ] || bad="$bad .storyctl=$(stat -c %a "$1/.storyctl")"
	for f in "$1"/.storyctl/state.db* "$1"/.storyctl/logs/* "$1"/.storyctl/lock; do
		[ -e "$f" ] || continue
		[ "$(stat -c %a "$f")" = 600 ] || bad="$bad ${f#"$1"/}=$(stat -c %a "$f")"
	done
	f="$1/.storyctl/logs"
	[ $((0$(stat -c %a "$f") & 077)) = 0 ] || bad="$bad logs/=$(stat -c %a "$f")"
	[ -z "$bad" ] && return 0
	echo "#$bad"
	return 1
}
check "modes: after the leaking run" modes_ok "$P"
new_project
new_story "$P" s1 1 '<!-- sim a1: exit 1 -->' '<!-- sim *: checkall -->'
(umask 000 && "$STORYCTL" -C "$P" run >/dev/null 2>&1)
check "modes: with umask 000 as well" modes_ok "$P"
new_project
new_story "$P" s1 1 '<!-- sim *: checkall -->'
mkdir -m 755 "$P/.storyctl"
run_sc -C "$P" run
expect_rc "modes: a state dir made 0755 beforehand still works" 0
check "modes: ... and is tightened to 0700" modes_ok "$P"

# ---- 4. story files cannot escape the repository ----
# outside.md looks like a story; its marker must never show up.
OUTSIDE_MARK="OUTSIDE-$(rnd 12)"
mkdir -p "$T_TMP/outdir"
printf '# %s\n\n- [ ] %s task\n' "$OUTSIDE_MARK" "$OUTSIDE_MARK" >"$T_TMP/outdir/outside.md"
cp "$T_TMP/outdir/outside.md" "$T_TMP/outside.md"
new_project
new_story "$P" good 1 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "escape: a good batch first" 0
cp "$P/storyctl.json" "$T_TMP/good.json"
SNAP=$(sha256sum "$P/.storyctl/state.db"; git -C "$P" for-each-ref)
ln -s "$T_TMP/outside.md" "$T_TMP/outside-link.md"
# escape NAME REGEX ARGS...: `check` and `run` refuse with 65 naming the
# file, never show the outside file's text, and change nothing.
escape() {
	local name=$1 re=$2 cmd all
	shift 2
	for cmd in check run; do
		run_sc -C "$P" "$cmd"
		expect_rc "escape: $name: $cmd exits 65" 65
		expect_match "escape: $name: $cmd names it" "$T_ERR" "^storyctl: .*$re"
		all="$T_OUT$T_ERR"
		check "escape: $name: $cmd never shows the outside file" \
			bash -c '! grep -qF "$1" <<<"$2"' _ "$OUTSIDE_MARK" "$all"
	done
	check "escape: $name: database and branches unchanged" \
		[ "$(sha256sum "$P/.storyctl/state.db"; git -C "$P" for-each-ref)" = "$SNAP" ]
	cp "$T_TMP/good.json" "$P/storyctl.json"
	rm -f "$P/docs/stories/link.md" "$P/docs/stories/dirlink"
}
jq 'del(.stories_glob) | .stories = ["../outside.md"]' "$T_TMP/good.json" >"$P/storyctl.json"
escape "config file ../outside.md" '\.\./outside\.md'
jq 'del(.stories_glob) | .stories = ["docs/../../outside.md"]' "$T_TMP/good.json" >"$P/storyctl.json"
escape "config file docs/../../outside.md" 'outside\.md'
jq 'del(.stories_glob) | .stories = ["/etc/passwd"]' "$T_TMP/good.json" >"$P/storyctl.json"
escape "config file /etc/passwd" '/etc/passwd'
jq --arg f "$T_TMP/outside.md" 'del(.stories_glob) | .stories = [$f]' "$T_TMP/good.json" >"$P/storyctl.json"
escape "config file given as an absolute path outside" 'outside\.md'
ln -s "$T_TMP/outside.md" "$P/docs/stories/link.md"
jq 'del(.stories_glob) | .stories = ["docs/stories/link.md"]' "$T_TMP/good.json" >"$P/storyctl.json"
escape "a story file that is a symlink out of the repo" 'docs/stories/link\.md'
ln -s "$T_TMP/outside-link.md" "$P/docs/stories/link.md"
jq 'del(.stories_glob) | .stories = ["docs/stories/link.md"]' "$T_TMP/good.json" >"$P/storyctl.json"
escape "a symlink to a symlink out of the repo" 'docs/stories/link\.md'
# stories_glob matching a symlink out of the repo: the whole load is
# refused with 65 naming the link (storyctl does not skip it silently), so
# the outside file is never read as a story.
ln -s "$T_TMP/outside.md" "$P/docs/stories/link.md"
escape "stories_glob matching a symlink out of the repo" 'docs/stories/link\.md'
# a glob through a symlinked directory that points out of the repo
ln -s "$T_TMP/outdir" "$P/docs/stories/dirlink"
jq '.stories_glob = "docs/stories/*/*.md"' "$T_TMP/good.json" >"$P/storyctl.json"
escape "stories_glob through a symlinked directory out of the repo" 'dirlink/outside\.md'
jq '.stories_glob = "../*.md"' "$T_TMP/good.json" >"$P/storyctl.json"
escape "stories_glob ../*.md" 'stories_glob'
jq --arg g "$T_TMP/*.md" '.stories_glob = $g' "$T_TMP/good.json" >"$P/storyctl.json"
escape "stories_glob given as an absolute path" 'stories_glob'
check "escape: the outside file was never changed" \
	cmp -s "$T_TMP/outside.md" "$T_TMP/outdir/outside.md"
check "escape: the outside file's text is not in the database" \
	bash -c '! sqlite3 "$1/.storyctl/state.db" .dump | grep -qF "$2"' _ "$P" "$OUTSIDE_MARK"
# a symlink between two files inside the repo is fine
ln -s good.md "$P/docs/stories/alias.md"
jq 'del(.stories_glob) | .stories = [{"file": "docs/stories/alias.md", "id": "alias"}]' "$T_TMP/good.json" >"$P/storyctl.json"
run_sc -C "$P" check
expect_rc "a symlink to a story inside the repo is accepted" 0

finish
