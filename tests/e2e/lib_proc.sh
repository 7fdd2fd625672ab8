# tests/e2e/lib_proc.sh - process helpers shared by the signal and crash
# tests (sourced after lib.sh): background storyctl runs, bounded waits,
# and checks that agents and their groups are gone.
GC_AGENT="$STORYCTL_SRC/tests/e2e/agents/gc-agent"
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

# wait_for SECONDS COMMAND...: poll every 0.1 s until the command succeeds.
wait_for() {
	local n=$(($1 * 10)) i=0
	shift
	until "$@"; do
		i=$((i + 1))
		[ "$i" -lt "$n" ] || return 1
		sleep 0.1
	done
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# start_bg ARGS...: storyctl -C $P ARGS in the background, in a process
# group of its own with default signal dispositions (as from a terminal);
# BG is its pid.
start_bg() {
	set -m
	"$STORYCTL" -C "$P" "$@" >"$T_TMP/bg.out" 2>"$T_TMP/bg.err" &
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

cleanup() {
	local p f
	for p in "${BG_PIDS[@]}"; do kill_ours "$p"; done
	for f in "$T_TMP"/pids*/agent.a* "$T_TMP"/pids*/gc.a*; do
		[ -f "$f" ] && kill_ours "$(cat "$f")"
	done
	wait 2>/dev/null
	rm -rf "$T_TMP"
}
trap cleanup EXIT

# gc_project NAME [POLICY-JSON [PRIMARY-JSON [FALLBACK-JSON]]]: a project
# whose agents are gc-agent writing pids under $T_TMP/pids-NAME ($PIDS);
# the objects are merged into the policy and into the two agents.
gc_project() {
	local cmd agents pol=${2:-} pri=${3:-} fb=${4:-}
	PIDS="$T_TMP/pids-$1"
	mkdir -p "$PIDS"
	cmd=$(jq -cn --arg a "$GC_AGENT" --arg d "$PIDS" \
		'[$a, $d, "{role}", "{attempt}", "{story_file}"]')
	agents=$(jq -cn --argjson c "$cmd" --argjson p "${pri:-"{}"}" \
		--argjson f "${fb:-"{}"}" \
		'{primary: ({name: "gc-p", command: $c, timeout_s: 60} * $p),
		  fallback: ({name: "gc-f", command: $c, timeout_s: 60} * $f)}')
	new_project "${pol:-"{}"}" "$agents"
}

# attempt_running N: attempt N has a running row and its agent wrote its
# pids.
attempt_running() {
	[ -s "$P/.storyctl/state.db" ] && [ -e "$PIDS/started.a$1" ] &&
		[ "$(sql "SELECT count(*) FROM attempts WHERE attempt = $1 AND outcome = 'running'" 2>/dev/null)" = 1 ]
}

# counted_numbers_ok: the counted rows are attempts 1..k in order.
counted_numbers_ok() {
	local got want
	got=$(sql "SELECT attempt FROM attempts WHERE counted = 1 ORDER BY seq" | tr '\n' ' ')
	want=$(seq 1 "$(sql "SELECT count(*) FROM attempts WHERE counted = 1")" | tr '\n' ' ')
	[ "$got" = "$want" ]
}


# story_status ID: the story's status from `storyctl list --json`.
story_status() {
	"$STORYCTL" -C "$P" list --json | jq -r --arg id "$1" '.[] | select(.id == $id) | .status'
}
