#!/bin/bash
# SIGINT and SIGTERM while an agent works or the controller waits
# (docs/runner.md#kill-sequence, D4 in docs/retry-strategy.md).  The agent is tests/e2e/agents/gc-agent:
# the simulated agent with a grandchild and SIGTERM handling on demand.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
. "$(dirname "$0")/lib_proc.sh"

# ---- 1, 2: SIGINT / SIGTERM during an attempt, then resume ----

# interrupt_case SIG WANT_RC
interrupt_case() {
	local sig=$1 want=$2 apid gpid pgid t0 el
	gc_project "$sig"
	new_story "$P" s1 3 '<!-- gc a1: child -->' \
		'<!-- sim a1: check 1; hang -->' '<!-- sim *: checkall -->'
	commit_all
	start_bg run
	if ! wait_for 10 attempt_running 1; then
		not_ok "$sig: attempt 1 runs (no running row within 10 s)"
		kill_ours "$BG"
		return
	fi
	ok "$sig: attempt 1 is recorded as running while its agent works"
	apid=$(cat "$PIDS/agent.a1")
	gpid=$(cat "$PIDS/gc.a1")
	pgid=$(sql "SELECT pid FROM attempts WHERE attempt = 1")
	check "$sig: the agent and its grandchild run before the signal" \
		all_alive "$apid" "$gpid"
	check "$sig: the row names the agent's process group" \
		[ "$pgid" = "$apid" ]
	t0=$(now_ms)
	kill -"$sig" "$BG"
	wait_bg 20
	el=$(($(now_ms) - t0))
	if [ "$BG_RC" = "$want" ]; then
		ok "$sig: storyctl exits $want"
	else
		not_ok "$sig: storyctl exits $want (got $BG_RC)"
		sed 's/^/# stderr: /' "$T_TMP/bg.err" | head -5
	fi
	check "$sig: exits within 10 s (took ${el} ms, kill_grace_s 1)" \
		[ "$el" -lt 10000 ]
	check "$sig: the agent is gone" gone "$apid"
	check "$sig: the agent's grandchild is gone" wait_for 5 gone "$gpid"
	check "$sig: nothing is left in the agent's group" \
		wait_for 5 group_gone "$pgid"
	T_OUT=$(sql "SELECT outcome, error_code, counted, ended_ms IS NOT NULL FROM attempts ORDER BY seq")
	expect_match "$sig: the attempt is recorded interrupted, not counted" \
		"$T_OUT" '^interrupted\|INTERRUPTED\|0\|1$'
	check "$sig: no attempt row is left running" \
		[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running'")" = 0 ]
	check "$sig: the story is not done" \
		[ "$(sql "SELECT status FROM stories WHERE id = 's1'")" != "done" ]
	T_OUT=$(git -C "$P" log -1 --format=%B storyctl/state)
	expect_match "$sig: the branch's last commit names the interrupted attempt" \
		"$T_OUT" '^s1: attempt 1 .*interrupted'
	T_OUT=$(git -C "$P" show storyctl/state:progress.md 2>&1)
	expect_match "$sig: progress.md shows the interruption" \
		"$T_OUT" '^\| s1 \|.*\| interrupted \|'

	# the next run succeeds: resume runs attempt 1 again
	sed -i '/^<!-- gc a1:/d; /^<!-- sim a1:/d' "$P/docs/stories/s1.md"
	run_sc -C "$P" resume
	expect_rc "$sig: resume exits 0" 0
	T_OUT=$(sql "SELECT attempt || ':' || counted || ':' || outcome FROM attempts ORDER BY seq" | tr '\n' ' ')
	expect_match "$sig: resume ran attempt 1 again and it counted" \
		"$T_OUT" '^1:0:interrupted 1:1:success $'
	check "$sig: counted attempt numbers are 1..k" counted_numbers_ok
	check "$sig: the story is done" [ "$(story_status s1)" = "done" ]
}
interrupt_case INT 130
interrupt_case TERM 143

# ---- 3: a second SIGINT kills at once ----
gc_project twice '{"kill_grace_s": 30}'
new_story "$P" s1 2 '<!-- gc a1: noterm child tough -->' \
	'<!-- sim a1: hang -->' '<!-- sim *: checkall -->'
commit_all
start_bg run
if wait_for 10 attempt_running 1; then
	apid=$(cat "$PIDS/agent.a1")
	gpid=$(cat "$PIDS/gc.a1")
	check "second SIGINT: the agent and its grandchild run" \
		all_alive "$apid" "$gpid"
	t0=$(now_ms)
	kill -INT "$BG"
	# the first one asks the agent to stop; it ignores SIGTERM, and the
	# grace is 30 s, so storyctl is still waiting
	sleep 0.5
	check "second SIGINT: storyctl still waits after the first" alive "$BG"
	kill -INT "$BG"
	wait_bg 20
	el=$(($(now_ms) - t0))
	check "second SIGINT: exits 130 (got $BG_RC)" [ "$BG_RC" = 130 ]
	check "second SIGINT: exits well under the 30 s grace (took ${el} ms)" \
		[ "$el" -lt 10000 ]
	check "second SIGINT: the SIGTERM-proof agent is gone" \
		wait_for 5 gone "$apid"
	check "second SIGINT: the SIGTERM-proof grandchild is gone" \
		wait_for 5 gone "$gpid"
	check "second SIGINT: nothing is left in the agent's group" \
		wait_for 5 group_gone "$apid"
	T_OUT=$(sql "SELECT outcome || ':' || counted FROM attempts ORDER BY seq")
	expect_match "second SIGINT: the attempt is recorded interrupted" \
		"$T_OUT" '^interrupted:0$'
else
	not_ok "second SIGINT: attempt 1 runs (no running row within 10 s)"
fi

# ---- 4: SIGINT while waiting between attempts ----
# network_sleep_s 10: the wait after a network failure; storyctl must stop
# within 5 s of the signal, i.e. without sleeping it out.
gc_project wait '{"network_sleep_s": 10}'
new_story "$P" s1 2 '<!-- sim a1: check 1; network -->' '<!-- sim *: checkall -->'
commit_all
start_bg run
network_done() {
	[ -s "$P/.storyctl/state.db" ] &&
		[ "$(sql "SELECT outcome || ':' || decision FROM attempts" 2>/dev/null)" = network:retry ] &&
		grep -q 'waiting' "$T_TMP/bg.out"
}
if wait_for 10 network_done; then
	ok "wait: attempt 1 failed on the network and storyctl waits"
	t0=$(now_ms)
	kill -INT "$BG"
	wait_bg 20
	el=$(($(now_ms) - t0))
	check "wait: SIGINT exits 130 (got $BG_RC)" [ "$BG_RC" = 130 ]
	check "wait: exits promptly, not after the 10 s wait (took ${el} ms)" \
		[ "$el" -lt 5000 ]
	check "wait: no attempt row is running" \
		[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running'")" = 0 ]
	check "wait: no attempt was started after the signal" \
		[ "$(sql "SELECT count(*) FROM attempts")" = 1 ]
	check "wait: the batch is stopped, resumable" \
		[ "$(sql "SELECT status FROM batches ORDER BY id DESC LIMIT 1")" = stopped ]
	run_sc -C "$P" resume
	expect_rc "wait: resume exits 0" 0
	T_OUT=$(sql "SELECT attempt || ':' || outcome FROM attempts ORDER BY seq" | tr '\n' ' ')
	expect_match "wait: resume continues with attempt 2" \
		"$T_OUT" '^1:network 2:success $'
	check "wait: the story is done" [ "$(story_status s1)" = "done" ]
else
	not_ok "wait: attempt 1 ends as network within 10 s"
	sed 's/^/# stdout: /' "$T_TMP/bg.out" | head -5
fi

finish
