#!/bin/bash
# test_sandbox.sh - agents confined to their tree (docs/sandbox.md).  A
# hostile agent (tests/e2e/agents/escape-agent) tries every way out that
# the page says is closed, under -j 1 and -j 3, and every try fails:
# each effect is checked from outside (files, refs, the database's
# integrity, git fsck, the processes), never from what the agent says.
# Its honest work (boxes, files, a build, a commit on its branch) gets
# through and is recorded as it is without the sandbox.
. "$(dirname "$0")/lib.sh"
ESC="$STORYCTL_SRC/tests/e2e/agents/escape-agent"

if ! command -v bwrap >/dev/null 2>&1; then
	not_ok "bubblewrap is installed (scripts/deps installs it)"
	finish
fi

# $HOME outside /tmp (which the sandbox replaces), with a key planted
mkdir -p "$STORYCTL_SRC/build"
H=$(mktemp -d "$STORYCTL_SRC/build/sandbox-home.XXXXXX")
SECRET="SECRET-KEY-MATERIAL-$$-$RANDOM"
mkdir -p "$H/.ssh"
printf '%s\n' "$SECRET" >"$H/.ssh/id_rsa"
chmod 600 "$H/.ssh/id_rsa"
# a secret store that is a link to a directory elsewhere
mkdir -p "$H/keys-elsewhere"
printf '[default]\naws_secret_access_key = %s\n' "$SECRET" >"$H/keys-elsewhere/credentials"
ln -s "$H/keys-elsewhere" "$H/.aws"
echo untouched >"$H/victim.txt"
# a process of the user's, and a listener on 127.0.0.1
sleep 900 &
VICTIM=$!
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); s.settimeout(600)
while True:
    c, _ = s.accept(); c.settimeout(2)
    try: d = c.recv(200)
    except Exception: d = b""
    open(sys.argv[2], "ab").write(d.split(b"\r\n")[0] + b"\n"); c.close()
' "$PORT" "$T_TMP/heard" &
LISTENER=$!
trap 'kill $VICTIM $LISTENER 2>/dev/null; rm -rf "$T_TMP" "$H" /tmp/escape-s? /var/tmp/escape-s? 2>/dev/null' EXIT
for _ in $(seq 1 50); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1).close()" 2>/dev/null && break
	sleep 0.1
done
: >"$T_TMP/heard"

# sandbox_project NAME SANDBOX-JSON [HONEST]: three stories run by
# escape-agent in a fresh repository; P is its path.
sandbox_project() {
	local name=$1 sb=$2 honest=${3:-0} i env
	P=$(new_repo)
	for i in 1 2 3; do new_story "$P" "s$i" 2; done
	printf 'out/%%.txt: src/%%.txt\n\tmkdir -p out && cp $< $@\n' >"$P/Makefile"
	ln -s "$H/victim.txt" "$P/outlink"
	printf '.storyctl/\n.escape/\n' >"$P/.gitignore"
	env=$(jq -cn --arg main "$P" --arg state "$P/.storyctl" \
		--arg victim "$VICTIM" --arg port "$PORT" --arg honest "$honest" \
		'{ESC_MAIN: $main, ESC_STATE: $state, ESC_OTHERS: "s1 s2 s3",
		  ESC_VICTIM: $victim, ESC_PORT: $port, ESC_LINK: "outlink",
		  ESC_HONEST: $honest}')
	cat >"$P/storyctl.json" <<JSON
{
  "stories_glob": "docs/stories/*.md",
  "sandbox": $sb,
  "agents": {"primary": {"name": "escape", "command": ["$ESC", "{story_file}", "{story_id}"],
                         "timeout_s": 60, "env": $env}},
  "policy": {"max_attempts": 2, "poll_interval_s": 0.2, "kill_grace_s": 1}
}
JSON
	git -C "$P" add -A
	git -C "$P" commit -q -m "stories ($name)"
}

# outside NAME J: what no confined agent may have done, read from
# outside after the batch of project P ran with -j J.
outside() {
	local name=$1 j=$2 main_before=$3 refs bad f
	run_sc -C "$P" list --json
	expect_json "$name: every story done" 'length == 3 and all(.[]; .status == "done" and .attempts == 1)'
	check "$name: nothing written in \$HOME" bash -c '! ls "$1"/escape-* 2>/dev/null | grep -q .' _ "$H"
	check "$name: nothing written in /tmp" bash -c '! ls /tmp/escape-s? /tmp/hook-ran 2>/dev/null | grep -q .'
	check "$name: nothing written in /var/tmp" bash -c '! ls /var/tmp/escape-s? 2>/dev/null | grep -q .'
	check "$name: nothing written in /etc" bash -c '! ls /etc/escape-* 2>/dev/null | grep -q .'
	check "$name: the file behind the planted link untouched" \
		bash -c '[ "$(cat "$1")" = untouched ]' _ "$H/victim.txt"
	check "$name: the ssh key and the linked ~/.aws read by no agent" \
		bash -c '! grep -rqsF "$1" "$2"' _ "$SECRET" "$P"
	check "$name: the state database read by no agent" \
		bash -c '! grep -rlsF "SQLite format 3" "$1"/.escape "$1"/.storyctl/worktrees/*/.escape' _ "$P"
	check "$name: the logs read by no agent" \
		bash -c '! cat "$1"/.escape/logs-* "$1"/.storyctl/worktrees/*/.escape/logs-* 2>/dev/null | grep -q .' _ "$P"
	run_sc -C "$P" status --json
	expect_rc "$name: status reads the database after the night" 0
	check "$name: the database passes its integrity check" \
		bash -c '[ "$(sqlite3 "$1/.storyctl/state.db" "PRAGMA integrity_check")" = ok ]' _ "$P"
	check "$name: git fsck finds the repository whole" \
		git -C "$P" fsck --full --no-progress --no-dangling
	refs=$(git -C "$P" for-each-ref --format='%(refname)' | sort | tr '\n' ' ')
	check "$name: no ref but main, the state branch and the story branches ($refs)" \
		bash -c '[ "$1" = "refs/heads/main refs/heads/storyctl/state refs/heads/storyctl/story/s1 refs/heads/storyctl/story/s2 refs/heads/storyctl/story/s3 " ] ||
			[ "$1" = "refs/heads/main refs/heads/storyctl/state " ]' _ "$refs"
	check "$name: the state branch holds storyctl's commits only" \
		bash -c '! git -C "$1" log --format=%s storyctl/state | grep -q "^work on"' _ "$P"
	check "$name: no hooksPath in the git config" \
		bash -c '! git -C "$1" config --get core.hooksPath' _ "$P"
	check "$name: no hook planted" \
		bash -c '[ ! -e "$1/.git/hooks/post-checkout" ]' _ "$P"
	bad=$(find "$P" -perm /6000 -type f 2>/dev/null | head -3)
	check "$name: no set-user-ID or set-group-ID file in any tree ($bad)" test -z "$bad"
	check "$name: the user's process still runs" kill -0 "$VICTIM"
	check "$name: and nobody traces it" \
		bash -c '[ "$(sed -n "s/^TracerPid:[[:space:]]*//p" /proc/$1/status)" = 0 ]' _ "$VICTIM"
	f=$(cat "$P"/.storyctl/logs/*.log 2>/dev/null | sed -n 's/^ps: //p')
	check "$name: the agents saw their own processes only" \
		bash -c '[ -n "$1" ] && ! printf "%s" "$1" | grep -Eq "storyctl|sleep|python3"' _ "$f"
	if [ "$j" -gt 1 ]; then
		check "$name: main not moved" \
			bash -c '[ "$(git -C "$1" rev-parse main)" = "$2" ]' _ "$P" "$main_before"
		check "$name: the main tree untouched" \
			bash -c '[ -z "$(git -C "$1" status --porcelain)" ] && ! ls "$1"/escape-* 2>/dev/null | grep -q .' _ "$P"
		for f in s1 s2 s3; do
			check "$name: $f's commit is on its branch, with its build" \
				bash -c 'git -C "$1" log --format=%s "storyctl/story/$2" | grep -qx "work on $2" &&
					git -C "$1" cat-file -e "storyctl/story/$2:out/$2.txt" &&
					git -C "$1" cat-file -e "storyctl/story/$2:src/$2.txt"' _ "$P" "$f"
			check "$f's worktree untouched by the others" \
				bash -c '! grep -q pwned "$1/.storyctl/worktrees/$2/README.md" 2>/dev/null' _ "$P" "$f"
		done
	else
		for f in s1 s2 s3; do
			check "$name: $f's commit is on the checked-out branch, with its build" \
				bash -c 'git -C "$1" log --format=%s main | grep -qx "work on $2" &&
					git -C "$1" cat-file -e "main:out/$2.txt"' _ "$P" "$f"
		done
	fi
}

for j in 1 3; do
	: >"$T_TMP/heard"
	sandbox_project "j$j" '{"enabled": true}'
	before=$(git -C "$P" rev-parse main)
	HOME="$H" run_sc -C "$P" run -j "$j"
	expect_rc "-j $j: the hostile batch ends as a night that went well" 0
	outside "-j $j" "$j" "$before"
	check "-j $j: the network is there by default (the test hears the agents)" \
		grep -q "GET /from-s" "$T_TMP/heard"
done

# network false: not a packet reaches 127.0.0.1
: >"$T_TMP/heard"
sandbox_project "no-network" '{"enabled": true, "network": false}'
HOME="$H" run_sc -C "$P" run -j 3
expect_rc "network false: the batch ends well" 0
check "network false: nothing reached the listener on 127.0.0.1" \
	bash -c '! grep -q "GET" "$1"' _ "$T_TMP/heard"
run_sc -C "$P" list --json
expect_json "network false: the honest work still done" 'all(.[]; .status == "done")'

# the honest agent alone, confined and not: the same record
rec() {
	"$STORYCTL" -C "$P" list --json | jq -c '[.[] | {id, status, attempts, tasks_completed, tasks_total, reason}]'
}
for mode in true false; do
	sandbox_project "honest-$mode" "{\"enabled\": $mode}" 1
	HOME="$H" run_sc -C "$P" run -j 3
	expect_rc "honest agent, sandbox $mode: exit 0" 0
	rec >"$T_TMP/rec-$mode"
	git -C "$P" ls-tree -r --name-only storyctl/story/s2 >"$T_TMP/tree-$mode"
done
check "the story is recorded the same with and without the sandbox" \
	cmp -s "$T_TMP/rec-true" "$T_TMP/rec-false"
check "and its branch holds the same files" cmp -s "$T_TMP/tree-true" "$T_TMP/tree-false"

# the remote executor: `storyctl job` confines the agent on the worker
# the same way (here a fake launcher, `env`, on this machine)
. "$STORYCTL_SRC/tests/e2e/lib_remote.sh"
: >"$T_TMP/heard"
sandbox_project "remote" '{"enabled": true, "network": false}'
git init -q --bare "$T_TMP/remote.git"
mkdir -p "$T_TMP/scratch"
remote_config "$T_TMP/remote.git" "[\"env\", \"TMPDIR=$T_TMP/scratch\", \"PATH=$(dirname "$STORYCTL"):$PATH\"]" '[]'
before=$(git -C "$P" rev-parse main)
HOME="$H" run_sc -C "$P" run -j 3
expect_rc "remote: the hostile batch ends well" 0
run_sc -C "$P" list --json
expect_json "remote: every story done" 'length == 3 and all(.[]; .status == "done")'
for f in s1 s2 s3; do
	# the job pushes the agent's own commit; the controller lays the
	# branch's files into the story's worktree (docs/cluster.md)
	check "remote: $f's own commit was pushed by the job" \
		bash -c 'git -C "$1" log --format=%s "storyctl/story/$2" | grep -qx "work on $2"' _ "$T_TMP/remote.git" "$f"
	check "remote: and its work, with its build, is on the story's branch" \
		bash -c 'git -C "$1" cat-file -e "storyctl/story/$2:out/$2.txt" &&
			git -C "$1" cat-file -e "storyctl/story/$2:src/$2.txt"' _ "$P" "$f"
done
check "remote: main not moved" bash -c '[ "$(git -C "$1" rev-parse main)" = "$2" ]' _ "$P" "$before"
check "remote: the main tree untouched" \
	bash -c '[ -z "$(git -C "$1" status --porcelain)" ]' _ "$P"
check "remote: nothing written in \$HOME, /tmp or /etc" \
	bash -c '! ls "$1"/escape-* /tmp/escape-s? /etc/escape-* 2>/dev/null | grep -q .' _ "$H"
check "remote: the ssh key read by no agent" \
	bash -c '! grep -rqsF "$1" "$2" "$3"' _ "$SECRET" "$P" "$T_TMP/remote.git"
check "remote: nothing reached the listener (network false went along)" \
	bash -c '! grep -q GET "$1"' _ "$T_TMP/heard"
f=$(cat "$P"/.storyctl/logs/*.log 2>/dev/null | sed -n 's/^ps: //p')
check "remote: the agents saw their own processes only, not the job" \
	bash -c '[ -n "$1" ] && ! printf "%s" "$1" | grep -Eq "storyctl|sleep|python3"' _ "$f"
check "remote: the user's process still runs" kill -0 "$VICTIM"
check "remote: git fsck finds the remote whole" git -C "$T_TMP/remote.git" fsck --no-progress --no-dangling

# an agent kept in /tmp, which the sandbox replaces with its own: it
# still runs (its directory shown read-only), and does its work
mkdir -p "$T_TMP/bin"
cp "$ESC" "$T_TMP/bin/agent"
sandbox_project "in-tmp" '{"enabled": true}' 1
jq --arg a "$T_TMP/bin/agent" '.agents.primary.command[0] = $a' "$P/storyctl.json" >"$T_TMP/cfg" &&
	cp "$T_TMP/cfg" "$P/storyctl.json" && git -C "$P" commit -q -am "agent in /tmp"
HOME="$H" run_sc -C "$P" run -j 3
expect_rc "an agent program in /tmp runs confined" 0
run_sc -C "$P" list --json
expect_json "an agent program in /tmp: every story done" 'all(.[]; .status == "done")'

# unprivileged: bubblewrap through a user namespace instead of root's
# mounts; the same hostile agent, the same checks from outside
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	U=$(mktemp -d /tmp/storyctl-unpriv.XXXXXX)
	chmod 755 "$U"
	mkdir -p "$U/home/.ssh"
	printf '%s\n' "$SECRET" >"$U/home/.ssh/id_rsa"
	T_TMP_SAVED=$T_TMP
	T_TMP=$U
	: >"$T_TMP_SAVED/heard"
	sandbox_project "unprivileged" '{"enabled": true}'
	T_TMP=$T_TMP_SAVED
	before=$(git -C "$P" rev-parse main)
	chown -R 65534:65534 "$U"
	setpriv --reuid=65534 --regid=65534 --clear-groups -- env HOME="$U/home" \
		"$STORYCTL" -C "$P" run -j 3 >"$T_TMP/unpriv.out" 2>&1
	T_RC=$?
	expect_rc "unprivileged: the hostile batch ends well" 0
	T_OUT=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$STORYCTL" -C "$P" list --json)
	expect_json "unprivileged: every story done" 'length == 3 and all(.[]; .status == "done")'
	check "unprivileged: main not moved" \
		bash -c '[ "$(git -c safe.directory="*" -C "$1" rev-parse main)" = "$2" ]' _ "$P" "$before"
	check "unprivileged: each story's commit is on its branch" \
		bash -c 'for f in s1 s2 s3; do git -c safe.directory="*" -C "$1" log --format=%s "storyctl/story/$f" | grep -qx "work on $f" || exit 1; done' _ "$P"
	check "unprivileged: the ssh key read by no agent" \
		bash -c '! grep -rqsF "$1" "$2"' _ "$SECRET" "$P"
	check "unprivileged: nothing written in \$HOME or /tmp" \
		bash -c '! ls "$1"/home/escape-* /tmp/escape-s? 2>/dev/null | grep -q .' _ "$U"
	f=$(cat "$P"/.storyctl/logs/*.log 2>/dev/null | sed -n 's/^ps: //p')
	check "unprivileged: the agents saw their own processes only" \
		bash -c '[ -n "$1" ] && ! printf "%s" "$1" | grep -Eq "storyctl|sleep|python3"' _ "$f"
	check "unprivileged: the user's process still runs" kill -0 "$VICTIM"
	check "unprivileged: git fsck finds the repository whole" \
		git -c safe.directory='*' -C "$P" fsck --full --no-progress --no-dangling
	check "unprivileged: no set-user-ID file in any tree" \
		bash -c '[ -z "$(find "$1" -perm /6000 -type f | head -1)" ]' _ "$P"
	rm -rf "$U"
fi

# where no sandbox can start: "auto" says so in one line and runs as
# today; true refuses the night (exit 69)
mkdir -p "$T_TMP/nobwrap"
printf '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces" >&2\nexit 1\n' >"$T_TMP/nobwrap/bwrap"
chmod +x "$T_TMP/nobwrap/bwrap"
sandbox_project "auto" '{"enabled": "auto"}' 1
PATH="$T_TMP/nobwrap:$PATH" HOME="$H" run_sc -C "$P" run
expect_rc "auto without a sandbox: the night runs" 0
expect_match "auto without a sandbox: one line says so, and why" "$T_OUT" \
	'^sandbox: no sandbox can start here, agents run unconfined: bwrap: No permissions'
check "auto without a sandbox: that line once" \
	bash -c '[ "$(printf "%s\n" "$1" | grep -c "^sandbox:")" = 1 ]' _ "$T_OUT"
PATH="$T_TMP/nobwrap:$PATH" run_sc -C "$P" check --json
expect_json "check says the agent would run unconfined, and warns why" \
	'.ok and (.agents[] | select(.role == "primary") | .sandbox == "unconfined") and
	 (.warnings | map(.message) | any(test("^sandbox: no sandbox can start here")))'
run_sc -C "$P" check --json
expect_json "check, with bubblewrap: confined" \
	'.ok and (.agents[] | select(.role == "primary") | .sandbox == "confined")'
run_sc -C "$P" agents --json
expect_json "agents --json: the sandbox works here and the agent is confined" \
	'.sandbox.available and .agents.primary.confined and .agents.primary.sandbox.enabled == "auto"'
expect_json "agents --json: each preset's argv inside and out" \
	'(.presets[] | select(.name == "claude") | (.argv | index("acceptEdits")) and (.confined_argv | index("bypassPermissions")))'
run_sc -C "$P" agents
expect_match "agents: the preset's argv inside a sandbox" "$T_OUT" 'inside a sandbox: claude .*bypassPermissions'
expect_match "agents: the configured agent confined" "$T_OUT" '^  primary  escape, confined: '
# a preset: full autonomy inside, its cautious mode where it runs
# unconfined (claude need not be installed for the argv to be shown)
jq '.agents.primary = {"preset": "claude"}' "$P/storyctl.json" >"$T_TMP/cfg" && cp "$T_TMP/cfg" "$P/storyctl.json"
run_sc -C "$P" agents
expect_match "a confined claude runs without permission prompts" "$T_OUT" \
	'^  primary  claude, confined: claude .*--permission-mode bypassPermissions'
PATH="$T_TMP/nobwrap:$PATH" run_sc -C "$P" agents
expect_match "an unconfined claude keeps acceptEdits" "$T_OUT" \
	'^  primary  claude, unconfined: claude .*--permission-mode acceptEdits'
sandbox_project "on" '{"enabled": true}' 1
PATH="$T_TMP/nobwrap:$PATH" run_sc -C "$P" check
expect_rc "check, enabled true without a sandbox: exit 69" 69
PATH="$T_TMP/nobwrap:$PATH" HOME="$H" run_sc -C "$P" run
expect_rc "enabled true without a sandbox: exit 69" 69
expect_match "enabled true without a sandbox: the error says why" "$T_ERR" \
	'sandbox.enabled is true but no sandbox can start here: bwrap: No permissions'
run_sc -C "$P" list --json
expect_json "enabled true without a sandbox: nothing ran" 'all(.[]; .attempts == 0)'

finish
