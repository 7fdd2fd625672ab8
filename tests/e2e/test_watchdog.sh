#!/bin/bash
# The controller killed together with its whole process group (issue 11;
# docs/runner.md#when-the-controller-dies): a terminal's
# kill of the job, or `kill -9 -- -PGID`, also hits the watchdog unless
# it has left the controller's group.  The watchdog (docs/runner.md)
# runs in a session of its own, survives, sees the controller gone and
# ends every agent group: the agent, and a grandchild that ignores
# SIGTERM, are gone after the grace.  Agent: tests/e2e/agents/gc-agent.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
. "$(dirname "$0")/lib_proc.sh"

# kill_case NAME HOW: HOW is "group" (kill -9 -- -PGID) or "pid"
kill_case() {
	local name=$1 how=$2 apid gpid wd
	gc_project "$name"
	new_story "$P" s1 2 '<!-- gc a1: child tough -->' \
		'<!-- sim a1: check 1; once hang -->' '<!-- sim *: checkall -->'
	commit_all
	start_bg run
	if ! wait_for 10 attempt_running 1 || ! wait_for 10 test -e "$PIDS/started.a1"; then
		not_ok "$name: attempt 1 runs within 10 s"
		kill_ours "$BG"
		return
	fi
	apid=$(cat "$PIDS/agent.a1")
	gpid=$(cat "$PIDS/gc.a1")
	wd=$(watch_procs)
	check "$name: the agent, its grandchild and a watchdog run" \
		all_alive "$apid" "$gpid" $wd
	check "$name: the watchdog is not in the controller's process group" \
		bash -c '[ -n "$1" ] && [ "$(ps -o pgid= -p "$1" | tr -d " ")" != "$2" ]' _ "$wd" "$BG"
	case $how in
	group) kill -KILL -- "-$BG" ;;
	pid) kill -KILL "$BG" ;;
	esac
	wait_bg 5
	check "$name: the controller died of SIGKILL (got $BG_RC)" [ "$BG_RC" = 137 ]
	check "$name: the agent is gone within 10 s" wait_for 10 gone "$apid"
	check "$name: the SIGTERM-proof grandchild is gone within 10 s" \
		wait_for 10 gone "$gpid"
	check "$name: nothing is left in the agent's group" \
		wait_for 10 group_gone "$apid"
	check "$name: the watchdog has exited" \
		wait_for 5 bash -c 'for p in $1; do [ -d /proc/$p ] && exit 1; done; exit 0' _ "$wd"
	run_sc -C "$P" resume
	expect_rc "$name: resume finishes the story" 0
}

kill_case group-kill group
kill_case pid-kill pid

# a normal end leaves no watchdog behind
gc_project normal
new_story "$P" s1 2 '<!-- gc a1: child -->' '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "normal end: run exits 0" 0
check "normal end: no watchdog is left" wait_for 5 bash -c '[ -z "$(pgrep -x storyctl-watch | while read -r p; do [ "$(readlink /proc/$p/cwd)" = "$1" ] && echo $p; done)" ]' _ "$P"

finish
