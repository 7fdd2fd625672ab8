#!/bin/bash
# An ssh:// remote against a real sshd on loopback (docs/cluster.md#credentials,
# docs/performance.md#ssh-start).  storyctl starts libssh2 without its
# OpenSSL start (state/gitlib.c); this shows the SSH handshake still
# completes: the key exchange, then the host key checked against
# ~/.ssh/known_hosts.  storyctl gives libgit2 no credentials, so the
# furthest a connection can get is the authentication it cannot answer,
# and that is what a trusted host's connection must reach.  sshd runs as
# root (its privilege separation needs it), so the cases are skipped
# elsewhere or without openssh-server (scripts/deps installs it).
. "$(dirname "$0")/lib.sh"

SSHD=/usr/sbin/sshd
if [ ! -x "$SSHD" ] || ! command -v ssh-keygen >/dev/null || [ "$(id -u)" -ne 0 ]; then
	ok "# SKIP no sshd, no ssh-keygen or not root (scripts/deps installs openssh-server)"
	finish
fi

S="$T_TMP/sshd"
mkdir -p "$S" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$S/host" || not_ok "ssh-keygen made the host key"
SSHD_PID=
trap '[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

# sshd_up [OPTION...]: sshd on a free loopback port with the host key and
# the given extra lines of configuration; sets SSH_PORT and SSHD_PID.
sshd_up() {
	local try port
	[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null && wait "$SSHD_PID" 2>/dev/null
	SSHD_PID=
	for try in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		{
			# the given lines first: sshd takes a keyword's first
			# value
			printf '%s\n' "$@"
			echo "ListenAddress 127.0.0.1:$port"
			echo "HostKey $S/host"
			echo "PidFile $S/pid"
			echo "UsePAM no"
			echo "AuthorizedKeysFile none"
		} >"$S/config"
		: >"$S/log"
		"$SSHD" -D -e -f "$S/config" 2>"$S/log" &
		SSHD_PID=$!
		for _ in $(seq 50); do
			grep -q "Server listening" "$S/log" && break
			kill -0 "$SSHD_PID" 2>/dev/null || break
			sleep 0.1
		done
		if grep -q "Server listening" "$S/log"; then
			SSH_PORT=$port
			return 0
		fi
		kill "$SSHD_PID" 2>/dev/null
		wait "$SSHD_PID" 2>/dev/null
		SSHD_PID=
	done
	sed 's/^/# sshd: /' "$S/log"
	return 1
}

# job_over_ssh: `storyctl job` clones from the remote first, which is
# all this needs: it fails, and the message says how far it got.
# libgit2 1.5.1 leaks 48 bytes when an ssh connection fails (inside
# git_remote_connect_ext(); valgrind shows the same with the build
# before storyctl started libssh2 itself), so under `make asan` the leak
# check is off for these runs alone.
job_over_ssh() {
	local LSAN_OPTIONS=detect_leaks=0
	export LSAN_OPTIONS
	run_sc job --remote "ssh://git@127.0.0.1:$SSH_PORT/srv/app.git" \
		--branch storyctl/story/one -- true
}

export HOME="$T_TMP/home"
mkdir -p "$HOME/.ssh"

check "sshd listens on loopback" sshd_up

# --- a host not in known_hosts: refused after the key exchange ----------
job_over_ssh
expect_rc "the job fails (exit 74)" 74
expect_match "the host key arrived, so the key exchange completed, and it is unknown" \
	"$T_ERR" 'invalid or unknown remote ssh hostkey'

# --- a trusted host: the handshake completes, authentication is next ----
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$S/host.pub")" \
	>"$HOME/.ssh/known_hosts"
job_over_ssh
expect_rc "the job fails (exit 74)" 74
expect_match "the host key is checked and accepted; storyctl has no credentials to offer" \
	"$T_ERR" 'authentication required but no callback set'
check "sshd saw the connection" grep -q "Connection from 127.0.0.1\|Connection closed\|Disconnected from\|authenticating user git" "$S/log"

# --- the check above can fail: a key exchange libssh2 cannot do ---------
check "sshd listens, offering only a key exchange libssh2 1.10 lacks" \
	sshd_up "KexAlgorithms sntrup761x25519-sha512@openssh.com"
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$S/host.pub")" \
	>"$HOME/.ssh/known_hosts"
job_over_ssh
expect_rc "the job fails (exit 74)" 74
expect_match "a key exchange that fails says so" "$T_ERR" \
	'failed to start SSH session: Unable to exchange encryption keys'
check "and is told apart from one that completes" \
	bash -c '! grep -q "authentication required\|unknown remote ssh hostkey" "$1"' _ "$T_TMP/err"

# --- an executor.launch through ssh keeps every word (issue 33) --------
# ssh joins its command words and the remote shell parses them again: a
# prompt's quotes, "$", backticks, ";" and newlines change the argv or
# run.  scripts/ssh-launch quotes each word (docs/cluster.md#ssh); the
# same argv through bare ssh shows the finding.
ssh-keygen -q -t ed25519 -N '' -f "$S/client"
cp "$S/client.pub" "$S/authorized"
check "sshd listens, taking the test's key" \
	sshd_up "AuthorizedKeysFile $S/authorized" "PermitRootLogin prohibit-password" \
	"StrictModes no"
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$S/host.pub")" \
	>"$HOME/.ssh/known_hosts"
SSH_OPTS=(-p "$SSH_PORT" -i "$S/client" -o BatchMode=yes
	-o "UserKnownHostsFile=$HOME/.ssh/known_hosts" root@127.0.0.1)
PROMPT=$(printf 'Fix "the" story; it'"'"'s $HOME and `id` & more\n\tline two *')
printf '[%s]\n' one "$PROMPT" >"$T_TMP/want"
"$STORYCTL_SRC/scripts/ssh-launch" "${SSH_OPTS[@]}" -- printf '[%s]\n' one "$PROMPT" \
	>"$T_TMP/got" 2>"$T_TMP/ssh.err"
check "ssh-launch: the remote argv is the argv, word for word" cmp -s "$T_TMP/want" "$T_TMP/got"
ssh "${SSH_OPTS[@]}" printf '[%s]\n' one "$PROMPT" >"$T_TMP/bare" 2>&1
check "bare ssh: the same argv comes out changed" bash -c '! cmp -s "$1" "$2"' _ "$T_TMP/want" "$T_TMP/bare"

finish
