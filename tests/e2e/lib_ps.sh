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

# project_procs: the live processes working in project $P (a controller,
# its watchdog, the agents and what they started all run in the repo
# root or in a worktree under it), one "pid cmdline" a line.
project_procs() {
	local d cwd pid
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		cwd=$(readlink "$d/cwd" 2>/dev/null) || continue
		case $cwd in
		"$P" | "$P"/*) ;;
		*) continue ;;
		esac
		alive "$pid" || continue
		printf '%s %s\n' "$pid" "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)"
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
