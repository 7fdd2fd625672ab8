# tests/e2e/lib_chaos.sh - what the chaos scripts share (sourced after
# lib.sh and lib_ps.sh): projects whose agent is
# tests/e2e/agents/chaos-agent, the kill of a controller together with
# its watchdog, and the resume that ends a batch.

AGENT="$STORYCTL_SRC/tests/e2e/agents/chaos-agent"

# ms_now: MS is the wall clock in milliseconds.
ms_now() { MS=$((${EPOCHREALTIME/./} / 1000)); }

# chaos_project NAME POLICY-JSON AGENT-PREFIX: a project ($P) whose two
# agents, AGENT-PREFIX-p and AGENT-PREFIX-f, are chaos-agent keeping
# their books in $CH ($T_TMP/ch-NAME).
chaos_project() {
	local cmd
	CH="$T_TMP/ch-$1"
	mkdir -p "$CH"
	touch "$CH/overlap" "$CH/early" "$CH/orphans" "$CH/spawns" "$CH/started"
	cmd=$(jq -cn --arg a "$AGENT" --arg d "$CH" \
		'[$a, $d, "{role}", "{attempt}", "{story_file}", "{prompt}", "{repo}"]')
	new_project "$2" "$(jq -cn --argjson c "$cmd" --arg n "$3" \
		'{primary: {name: ($n + "-p"), command: $c, timeout_s: 30},
		  fallback: {name: ($n + "-f"), command: $c, timeout_s: 30}}')"
}

# kill_both PID: SIGKILL controller PID and its watchdog at once: both
# stopped first, so that neither acts on the other's death (a controller
# replaces a dead watchdog, a watchdog ends a dead controller's agents);
# wd is the watchdog's pid (or empty).
kill_both() {
	kill -STOP "$1"
	wd=$(pgrep -x -P "$1" storyctl-watch | tr '\n' ' ')
	# shellcheck disable=SC2086 # $wd: zero or more pids
	[ -z "$wd" ] || kill -STOP $wd
	# shellcheck disable=SC2086
	kill -KILL $wd "$1"
}

# resume_to_end: `resume -j 3` until it exits anything but 75 (at most 4
# times); FINAL is its last exit status.
resume_to_end() {
	local i
	FINAL=
	for i in 1 2 3 4; do
		start_bg resume -j 3
		wait_bg 120
		FINAL=$BG_RC
		echo "# final resume $i: exit $BG_RC"
		[ "$BG_RC" = 75 ] || break
	done
}

# chaos_cleanup PROJECT...: end everything a chaos script started (its
# background runs; each project's processes, its simulated agents and
# whatever carries its mark; the orphans and grandchildren listed in
# $T_TMP/ch-*/spawns), then remove $T_TMP unless CHAOS_KEEP is set.
chaos_cleanup() {
	local p d f
	for p in "${BG_PIDS[@]}"; do kill_ours "$p"; done
	for d in "$@"; do
		P=$d
		for p in $(project_pids) $(sim_procs) $(marked_procs "$d/.storyctl"); do
			kill_ours "$p"
		done
	done
	for f in "$T_TMP"/ch-*/spawns; do
		[ -f "$f" ] || continue
		# pids of earlier rounds may be anyone's by now: an agent
		# only while it has the start time it recorded, a grandchild
		# only while it is still exactly `sleep 300` (a tmux server
		# of another script once matched kill_ours' looser test)
		while read -r _ _ p s g _; do
			[ "$(proc_start "$p")" = "$s" ] && kill_ours "$p"
			[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$g/cmdline")" = "sleep 300 " ] &&
				kill -KILL "$g" 2>/dev/null
		done <"$f"
	done
	wait 2>/dev/null
	if [ -n "${CHAOS_KEEP:-}" ]; then
		echo "# kept $T_TMP"
	else
		rm -rf "$T_TMP"
	fi
}
