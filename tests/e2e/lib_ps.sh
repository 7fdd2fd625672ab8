# tests/e2e/lib_ps.sh - process helpers (sourced after lib.sh): is a
# process or a group alive, bounded waits, storyctl in the background, and
# killing what a failed case left behind.  No trap: each script cleans up
# its own way (lib_proc.sh, test_chaos.sh, test_hostile.sh).
BG=
BG_RC=
BG_PIDS=()

# ---- helpers ----

# alive PID: the process exists and is not a zombie.
alive() {
	local line rest
	[ -n "${1:-}" ] || return 1
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	rest=${line##*) }
	case ${rest%% *} in
	Z | X | x | "") return 1 ;;
	esac
	return 0
}
gone() { ! alive "${1:-}"; }
all_alive() {
	local p
	[ $# -gt 0 ] || return 1
	for p in "$@"; do alive "$p" || return 1; done
}

# group_alive PGID: some process of the group is alive (not a zombie).
group_alive() {
	local f line rest st pgrp
	[ -n "${1:-}" ] || return 1
	for f in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$f" || continue
		rest=${line##*) }
		read -r st _ pgrp _ <<<"$rest"
		[ "$pgrp" = "$1" ] || continue
		case $st in Z | X | x) continue ;; esac
		return 0
	done
	return 1
}
group_gone() { ! group_alive "${1:-}"; }

# wait_for SECONDS COMMAND...: poll every 0.05 s until the command succeeds.
wait_for() {
	local n=$(($1 * 20)) i=0
	shift
	until "$@"; do
		i=$((i + 1))
		[ "$i" -lt "$n" ] || return 1
		sleep 0.05
	done
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# start_bg ARGS...: storyctl -C $P ARGS in the background, in a process
# group of its own with default signal dispositions (as from a terminal);
# BG is its pid.  Its output replaces $T_TMP/bg.out and bg.err, or is
# appended to them when BG_APPEND is set.
start_bg() {
	set -m
	if [ -n "${BG_APPEND:-}" ]; then
		"$STORYCTL" -C "$P" "$@" >>"$T_TMP/bg.out" 2>>"$T_TMP/bg.err" &
	else
		"$STORYCTL" -C "$P" "$@" >"$T_TMP/bg.out" 2>"$T_TMP/bg.err" &
	fi
	BG=$!
	set +m
	BG_PIDS+=("$BG")
}

# bg_execd: wait at most 5 s until BG is storyctl itself, not yet the
# shell's fork about to exec it (a signal meant for storyctl would hit
# the shell, which runs the script's EXIT trap before it dies).
bg_execd() {
	local c i=0
	while [ "$i" -lt 5000 ]; do
		c=
		read -r c 2>/dev/null <"/proc/$BG/comm"
		case $c in bash | "") ;; *) return 0 ;; esac
		alive "$BG" || return 1
		nap_ms 1
		i=$((i + 1))
	done
	return 1
}

# wait_bg SECONDS: wait at most SECONDS for BG to exit; BG_RC is its exit
# status (or "hung" after a SIGKILL).
wait_bg() {
	if wait_for "$1" gone "$BG"; then
		wait "$BG" 2>/dev/null
		BG_RC=$?
	else
		kill -KILL "$BG" 2>/dev/null
		wait "$BG" 2>/dev/null
		BG_RC=hung
	fi
}

# kill_ours PID: SIGKILL a leftover process of ours (a storyctl, an agent
# or its sleep), never a recycled pid of someone else.
kill_ours() {
	local cmd
	alive "$1" || return 0
	cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)
	case $cmd in
	*storyctl* | *agent* | *sleep*) kill -KILL "$1" 2>/dev/null ;;
	esac
}

# project_pids: the live processes working in project $P (a controller,
# its watchdog, the agents and what they started all run in the repo
# root or in a worktree under it), one pid a line.
project_pids() {
	local d pid
	# one find for every cwd (a readlink per process took 0.2 s and more)
	find /proc/[0-9]* -maxdepth 1 -name cwd \( -lname "$P" -o -lname "$P/*" \) \
		-printf '%h\n' 2>/dev/null | while read -r d; do
		pid=${d#/proc/}
		alive "$pid" && echo "$pid"
	done
}
# project_procs: the same, one "pid cmdline" a line (the newlines of a
# prompt in the command line made spaces).
project_procs() {
	local pid
	for pid in $(project_pids); do
		printf '%s %s\n' "$pid" "$(tr '\0\n' '  ' 2>/dev/null <"/proc/$pid/cmdline")"
	done
}
# sim_procs: sim-agent processes of $P (their argv ends with the repo
# path, {repo}).
sim_procs() { pgrep -f -- "sim-agent .*$P" 2>/dev/null; }
# watch_procs: storyctl watchdogs working for project $P.
watch_procs() {
	local p
	for p in $(pgrep -x storyctl-watch 2>/dev/null); do
		[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$P" ] && echo "$p"
	done
}

# proc_start PID: the process's start time (field 22 of /proc/PID/stat,
# clock ticks since boot): with the pid, it names one process for good.
proc_start() {
	local line f
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	read -ra f <<<"${line##*) }"
	[ -n "${f[19]:-}" ] && echo "${f[19]}"
}

# nap_ms MS: sleep MS milliseconds without starting a process (read -t
# on a pipe nobody writes), for kills timed to the millisecond.
NAP_FD=
nap_ms() {
	local t
	[ -n "$NAP_FD" ] || exec {NAP_FD}<> <(:)
	[ "$1" -gt 0 ] || return 0
	printf -v t '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
	read -r -t "$t" -u "$NAP_FD" _
	return 0
}

# mark_of DIR: the mark storyctl gives every agent of the state dir DIR,
# STORYCTL_ATTEMPT=<dev>.<ino>.<attempt row id>, without the row id.
mark_of() { stat -c '%d.%i' "$1" 2>/dev/null; }
# marked_procs DIR: the live processes whose environment carries the mark
# of state dir DIR (agents, what they started, wherever they run).
marked_procs() {
	local m p f
	m=$(mark_of "$1") || return 0
	grep -lzsE "^STORYCTL_ATTEMPT=${m//./\\.}\\.[0-9]+$" /proc/[0-9]*/environ 2>/dev/null |
		while read -r f; do
			p=${f#/proc/}
			p=${p%/environ}
			alive "$p" && echo "$p"
		done
}
# has_mark PID DIR: the process's environment carries DIR's mark.
has_mark() {
	local m
	m=$(mark_of "$2") || return 1
	grep -qzsE "^STORYCTL_ATTEMPT=${m//./\\.}\\.[0-9]+$" "/proc/$1/environ"
}
