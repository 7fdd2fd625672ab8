# tests/e2e/lib_proc.sh - process helpers shared by the signal and crash
# tests (sourced after lib.sh): background storyctl runs, bounded waits,
# and checks that agents and their groups are gone.
. "$STORYCTL_SRC/tests/e2e/lib_ps.sh"
GC_AGENT="$STORYCTL_SRC/tests/e2e/agents/gc-agent"
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
