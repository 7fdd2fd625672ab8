#!/bin/bash
# The controller's own death never costs a story, and no agent outlives it
# (issue 30; docs/reliability.md#controller-deaths,
# docs/runner.md#when-the-controller-dies):
#  (a) SIGKILL of the controller and its watchdog together within
#      0-100 ms of an agent spawn, at least 20 times under -j 3, in three
#      ways: from outside (this script sees the agent's first act), by
#      the agent itself (tests/e2e/agents/chaos-agent, DIR/selfkill), and
#      from inside the controller (spawnkill.so below, LD_PRELOAD: right
#      after its k-th posix_spawn returned, before the pid can reach the
#      database, or some ms later, both stopped first).  After
#      each, the next start ends the orphaned agents and their
#      grandchildren (`sleep 300`) before any new attempt starts (each
#      new agent looks for the ones this script listed), no two agents
#      ever hold one story's tree, every agent and what it started carry
#      STORYCTL_ATTEMPT=<dev>.<ino>.<row id> of its attempt, and once the
#      batch is over nothing of it lives (seen from /proc).  Then a death
#      twice in the same attempt, deterministic: the first is
#      `interrupted` (not counted, progress from its worktree, the same
#      number runs again), the second a counted `crash` naming both pids.
#      And a few kills of both with the agents confined (bubblewrap), where
#      it runs.
#  (b) SIGTERM or SIGINT at random points of the first 100 ms of `run`
#      and `resume` (-j 1 and -j 3), at least 20 times: each exits 143 or
#      130 (0 or 3 only when the batch had really finished), `status
#      --json` works after each, and `resume` then finishes the batch.
#  (c) the disk fills while an attempt runs (tests/fault/faultshim.c):
#      the first controller cannot record the attempt's end and stops with
#      74, leaving the row running and a note in .storyctl/lock; two more
#      starts on the still-full disk fail with 74 before they reconcile
#      and leave that note alone; with space freed, the next start records
#      the first controller's attempt `interrupted` (not counted) with a
#      message saying it stopped on an error, and runs attempt 1 again.
# CHAOS_SEED replays the kill points (the processes' timing still varies),
# CHAOS_KILLS sets the number of kills of (a) and of signals of (b) (24),
# CHAOS_KEEP=1 keeps the projects.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SEED=${CHAOS_SEED:-3030}
KILLS=${CHAOS_KILLS:-$(tier_count 24 8)}
RANDOM=$SEED
echo "# chaos recovery seed $SEED (replay with CHAOS_SEED=$SEED)"
. "$STORYCTL_SRC/tests/e2e/lib_ps.sh"
. "$STORYCTL_SRC/tests/e2e/lib_chaos.sh"
FAULT_AGENT="$STORYCTL_SRC/tests/e2e/agents/fault-agent"
PROJS=()

cleanup() { chaos_cleanup "${PROJS[@]}"; }
trap cleanup EXIT

# chaos_project_r NAME [POLICY-JSON]: chaos_project (lib_chaos.sh),
# remembered for the cleanup.
chaos_project_r() {
	chaos_project "$1" "${2:-"{}"}" ch
	PROJS+=("$P")
}
# n_started: agents that began ($CH/started has one line per agent, its
# first act), in N_STARTED without starting a process.
n_started() {
	local a=()
	[ -f "$CH/started" ] && mapfile -t a <"$CH/started"
	N_STARTED=${#a[@]}
}
batch_finished() {
	[ "$("$STORYCTL" -C "$P" status --json 2>/dev/null | jq -r .state)" = finished ]
}
requeue_all() {
	local id n=0
	for id in $("$STORYCTL" -C "$P" list --json | jq -r '.[].id'); do
		"$STORYCTL" -C "$P" requeue "$id" >/dev/null 2>&1 && n=$((n + 1))
	done
	echo "# the batch had ended, $n stories requeued"
	[ "$n" -gt 0 ]
}
# nothing_of_project: no process works in $P, none carries its mark, no
# watchdog of it runs.
nothing_of_project() {
	[ -z "$(project_pids)" ] && [ -z "$(marked_procs "$P/.storyctl")" ] &&
		[ -z "$(watch_procs)" ]
}
# still_alive FILE: the "pid starttime" lines of FILE whose process lives.
still_alive() {
	local p s
	[ -f "$1" ] || return 0
	cut -d' ' -f1,2 "$1" | sort -u | while read -r p s; do
		[ -n "$s" ] && [ "$(proc_start "$p")" = "$s" ] && alive "$p" &&
			echo "$p $(tr '\0\n' '  ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-100)"
	done
}
# note_orphans: what lives in $P now that its controller and watchdog are
# dead, appended to $CH/orphans as "pid starttime" (chaos-agent checks
# them at its start); sets N_ORPHANS, and UNMARKED gets those without
# the mark.
note_orphans() {
	local p s
	N_ORPHANS=0
	for p in $(project_pids); do
		# a watchdog that outlived the kill is the controller's, not an
		# agent's: it ends agents, it works no tree
		case $(tr -d '\n' 2>/dev/null <"/proc/$p/comm") in storyctl*) continue ;; esac
		s=$(proc_start "$p") || continue
		echo "$p $s $(tr -d '\n' 2>/dev/null <"/proc/$p/comm") round $rounds" >>"$CH/orphans"
		N_ORPHANS=$((N_ORPHANS + 1))
		if ! has_mark "$p" "$P/.storyctl" && alive "$p" &&
			grep -qz . "/proc/$p/environ" 2>/dev/null; then
			UNMARKED+=("$p $(tr '\0\n' '  ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-60)")
		fi
	done
}

# ======== (a) SIGKILL of the controller and its watchdog at a spawn ========
# spawnkill.so, preloaded into one controller: once its SPAWNKILL_NTH-th
# posix_spawn has returned (the agent runs, its pid is known to no one
# else yet), a fork of it waits SPAWNKILL_MS ms, stops the controller and
# its watchdog (its child named storyctl-watch), kills both and writes
# "CONTROLLER WATCHDOG" to SPAWNKILL_DONE.  With 0 the controller waits
# for that fork, so it dies before it has done anything with the pid.
SPAWNSHIM="$T_TMP/spawnkill.so"
cat >"$T_TMP/spawnkill.c" <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int spawned;

static int
is_comm(pid_t pid, const char *want)
{
	char p[64], c[32] = "";
	int fd, n;

	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	if ((fd = open(p, O_RDONLY)) < 0)
		return 0;
	n = (int)read(fd, c, sizeof(c) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	c[n] = '\0';
	c[strcspn(c, "\n")] = '\0';
	return strcmp(c, want) == 0;
}

static pid_t
watchdog_of(pid_t ctl)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char p[64], buf[512], *r;
	pid_t found = 0;
	int fd, n, ppid;

	while (d != NULL && (e = readdir(d)) != NULL && found == 0) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/stat", e->d_name);
		if ((fd = open(p, O_RDONLY)) < 0)
			continue;
		n = (int)read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if ((r = strrchr(buf, ')')) == NULL ||
		    sscanf(r + 2, "%*c %d", &ppid) != 1 || ppid != ctl)
			continue;
		if (is_comm((pid_t)atoi(e->d_name), "storyctl-watch"))
			found = (pid_t)atoi(e->d_name);
	}
	if (d != NULL)
		closedir(d);
	return found;
}

static void
spawnkill(int ms, const char *done)
{
	pid_t ctl = getpid(), wd = watchdog_of(ctl), k;
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	char line[64];
	int fd, i;

	k = fork();
	if (k == 0) {
		for (i = 3; i < 1024; i++)
			close(i);
		if (ms > 0)
			nanosleep(&ts, NULL);
		kill(ctl, SIGSTOP);
		if (wd > 0)
			kill(wd, SIGSTOP);
		if (wd > 0)
			kill(wd, SIGKILL);
		kill(ctl, SIGKILL);
		if (done != NULL &&
		    (fd = open(done, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
			snprintf(line, sizeof(line), "%d %d\n", (int)ctl, (int)wd);
			if (write(fd, line, strlen(line)) < 0)
				_exit(1);
			close(fd);
		}
		_exit(0);
	}
	if (k > 0 && ms <= 0)
		waitpid(k, NULL, 0);
}

int
posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
    const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	static int (*real)(pid_t *, const char *,
	    const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	    char *const[], char *const[]);
	const char *nth = getenv("SPAWNKILL_NTH");
	int rc;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "posix_spawn");
	rc = real(pid, path, fa, at, argv, envp);
	if (rc == 0 && nth != NULL && is_comm(getpid(), "storyctl") &&
	    ++spawned == atoi(nth))
		spawnkill(atoi(getenv("SPAWNKILL_MS") ? getenv("SPAWNKILL_MS") : "0"),
		    getenv("SPAWNKILL_DONE"));
	return rc;
}
C
if cc -shared -fPIC -O1 -o "$SPAWNSHIM" "$T_TMP/spawnkill.c" -ldl; then
	ok "(a) the spawn-kill shim compiles"
	nmodes=3
else
	not_ok "(a) the spawn-kill shim compiles"
	nmodes=2
fi
chaos_project_r a '{"max_attempts": 10}'
for i in $(seq -w 1 12); do
	new_story "$P" "k$i" 2 '<!-- sim *: sleep 0.3; check 1; sleep 0.2; checkall -->'
done
commit_all
kills=0
rounds=0
by_mode=([0]=0 [1]=0 [2]=0)
wrong_rc=()
no_wd=()
orphan_rounds=0
UNMARKED=()
declare -A ctl_pids=()
while [ "$kills" -lt "$KILLS" ] && [ "$rounds" -lt $((KILLS * 3)) ]; do
	rounds=$((rounds + 1))
	args=(run -j 3)
	if [ "$rounds" -gt 1 ]; then
		if batch_finished; then requeue_all || break; fi
		[ $((RANDOM % 2)) = 0 ] && args=(resume -j 3)
	fi
	# 0: from outside, 1: the agent itself, 2: the controller (shim)
	mode=$((RANDOM % nmodes))
	delay=$((RANDOM % 101))
	# a third of the agent's own kills as its first command; half of the
	# controller's right after the spawn, before it can record the pid
	[ "$mode" = 1 ] && [ $((RANDOM % 3)) = 0 ] && delay=0
	[ "$mode" = 2 ] && [ $((RANDOM % 2)) = 0 ] && delay=0
	nth=$((1 + RANDOM % 3))
	rm -f "$CH/selfkill" "$CH/selfkill.taken" "$CH/spawnkill.done"
	if [ "$mode" = 1 ]; then
		echo "$delay" >"$CH/selfkill.tmp" && mv "$CH/selfkill.tmp" "$CH/selfkill"
	fi
	n_started
	before=$N_STARTED
	if [ "$mode" = 2 ]; then
		LD_PRELOAD=$SPAWNSHIM SPAWNKILL_NTH=$nth SPAWNKILL_MS=$delay \
			SPAWNKILL_DONE="$CH/spawnkill.done" start_bg "${args[@]}"
	else
		start_bg "${args[@]}"
	fi
	if [ "$mode" = 2 ]; then
		wait_bg 10
		# the killer writes its note after the kill
		[ "$BG_RC" = 137 ] && wait_for 5 test -s "$CH/spawnkill.done"
		if [ "$BG_RC" = hung ] || [ ! -s "$CH/spawnkill.done" ]; then
			echo "# round $rounds: ${args[*]}: no spawn-kill (exit $BG_RC)"
			case $BG_RC in hung | 137) ctl_pids[$BG]=1 ;; esac
			continue
		fi
		read -r killed wd <"$CH/spawnkill.done"
		[ "$killed" = "$BG" ] || wrong_rc+=("round $rounds: the shim killed $killed, not $BG")
		[ "${wd:-0}" != 0 ] || no_wd+=("round $rounds")
	elif [ "$mode" = 0 ]; then
		# the first agent's first act, then the delay, then both at once
		ms_now
		t_end=$((MS + 20000))
		while n_started && [ "$N_STARTED" -eq "$before" ] && alive "$BG"; do
			ms_now
			[ "$MS" -lt "$t_end" ] || break
			nap_ms 1
		done
		if [ "$N_STARTED" -eq "$before" ]; then
			wait_bg 20
			echo "# round $rounds: ${args[*]}: no agent started (exit $BG_RC)"
			case $BG_RC in hung | 137) ctl_pids[$BG]=1 ;; esac
			continue
		fi
		nap_ms "$delay"
		kill_both "$BG"
		[ -n "$wd" ] || no_wd+=("round $rounds")
		wait_bg 10
	else
		# the agent kills its controller and watchdog itself, then
		# writes its note
		wait_bg 30
		[ "$BG_RC" = 137 ] && wait_for 5 bash -c 'test -e "$(echo "$1"/selfkill.done.*)"' _ "$CH"
		f=
		for f in "$CH"/selfkill.done.*; do break; done
		if [ ! -e "$f" ]; then
			echo "# round $rounds: ${args[*]}: no agent took the kill (exit $BG_RC)"
			case $BG_RC in hung | 137) ctl_pids[$BG]=1 ;; esac
			continue
		fi
		read -r killed wd <"$f"
		mv "$f" "$CH/done.$(basename "$f")"
		[ "$killed" = "$BG" ] || wrong_rc+=("round $rounds: the agent killed $killed, not the controller $BG")
		[ -n "${wd:-}" ] || no_wd+=("round $rounds")
	fi
	kills=$((kills + 1))
	by_mode[mode]=$((by_mode[mode] + 1))
	ctl_pids[$BG]=1
	[ "$BG_RC" = 137 ] || wrong_rc+=("round $rounds: exit $BG_RC")
	note_orphans
	[ "$N_ORPHANS" -gt 0 ] && orphan_rounds=$((orphan_rounds + 1))
	how=("from outside" "by the agent" "by the controller after spawn $nth")
	echo "# round $rounds: ${args[*]}: controller and watchdog killed $delay ms after a spawn (${how[mode]}), exit $BG_RC, $N_ORPHANS processes left"
done
echo "# (a) $kills kills in $rounds rounds: ${by_mode[0]} from outside, ${by_mode[1]} by the agent, ${by_mode[2]} by the controller"
check "(a) at least $KILLS kills of the controller and its watchdog at a spawn (got $kills)" \
	[ "$kills" -ge "$KILLS" ]
every_way() {
	[ "${by_mode[0]}" -gt 0 ] && [ "${by_mode[1]}" -gt 0 ] &&
		{ [ "$nmodes" -lt 3 ] || [ "${by_mode[2]}" -gt 0 ]; }
}
check "(a) every way of killing happened (outside ${by_mode[0]}, agent ${by_mode[1]}, controller ${by_mode[2]})" every_way
check "(a) every controller died of SIGKILL (${wrong_rc[*]:-})" [ "${#wrong_rc[@]}" -eq 0 ]
check "(a) its watchdog was found and killed with it every time (${no_wd[*]:-})" \
	[ "${#no_wd[@]}" -eq 0 ]
check "(a) kills left agents alive for the next start to end ($orphan_rounds of $kills)" \
	[ "$orphan_rounds" -gt 0 ]
check "(a) every process a dead controller left carries the mark of the state dir (${#UNMARKED[@]} without: ${UNMARKED[*]:0:3})" \
	[ "${#UNMARKED[@]}" -eq 0 ]

resume_to_end
final=$FINAL
check "(a) the final resume ends the batch with exit 0 or 3 (got $final)" \
	test "$final" = 0 -o "$final" = 3
n_early=$(cut -d' ' -f1 "$CH/early" 2>/dev/null | sort -u | wc -l)
n_orph=$(cut -d" " -f1,2 "$CH/orphans" | sort -u | wc -l)
check "(a) no attempt started while an agent of a dead controller, or its grandchild, lived ($n_early of $n_orph such processes still lived when one started)" \
	[ "$n_early" = 0 ]
sort -u -k1,1 "$CH/early" 2>/dev/null | head -n 5 | sed 's/^/# early: /'
check "(a) no two agents ever held one story's tree ($(wc -l <"$CH/overlap") overlaps)" \
	[ ! -s "$CH/overlap" ]
head -n 5 "$CH/overlap" 2>/dev/null | sed 's/^/# overlap: /'
check "(a) nothing of the batch lives afterwards: no process in the project, none with its mark, no watchdog" \
	wait_for 5 nothing_of_project
project_procs | head -n 5 | sed 's/^/# left: /'
left=$(still_alive "$CH/orphans")
check "(a) no process a dead controller left lives afterwards ($(printf '%s' "$left" | grep -c '^'))" \
	[ -z "$left" ]
printf '%s\n' "$left" | grep . | head -n 5 | sed 's/^/# left: /'
gc_left=$(while read -r _ _ _ _ g _; do
	alive "$g" && grep -qzx 'sleep' "/proc/$g/cmdline" 2>/dev/null && echo "$g"
done <"$CH/spawns" | wc -l)
check "(a) no agent's grandchild (sleep 300) lives afterwards ($gc_left alive)" [ "$gc_left" = 0 ]

# every agent carried STORYCTL_ATTEMPT=<dev>.<ino>.<id> of its own row
mark=$(mark_of "$P/.storyctl")
bad_mark=()
nspawn=0
while read -r id att _ _ _ m; do
	nspawn=$((nspawn + 1))
	row=${m##*.}
	if [ "${m%.*}" != "$mark" ] || [ -z "$row" ] ||
		[ "$(sql "SELECT story_id || ' a' || attempt FROM attempts WHERE id = ${row//[^0-9]/0}" 2>/dev/null)" != "$id $att" ]; then
		bad_mark+=("$id $att: '$m'")
	fi
done <"$CH/spawns"
check "(a) every agent ($nspawn) had STORYCTL_ATTEMPT=$mark.<its row id> (${#bad_mark[@]} wrong: ${bad_mark[*]:0:3})" \
	test "$nspawn" -gt 0 -a "${#bad_mark[@]}" -eq 0

# the record: nothing left running; a death's row is interrupted and not
# counted, a second death of the same attempt a crash naming both pids
check "(a) no attempt row is left running" \
	[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running' OR ended_ms IS NULL")" = 0 ]
check "(a) counted attempt numbers are 1..k per story, none twice" \
	[ -z "$(sql "SELECT story_id FROM attempts WHERE counted = 1 GROUP BY story_id, attempt HAVING count(*) > 1")" ]
# the rows start-up closed for a dead controller: controller_deaths
# (docs/state.md#controller_deaths), one per closed attempt row
deaths=$(sql "SELECT story_id, attempt, group_concat(outcome || ':' || counted, ' ')
	FROM (SELECT a.* FROM attempts a JOIN controller_deaths d ON d.attempt_id = a.id
	      ORDER BY a.seq)
	GROUP BY story_id, attempt" 2>&1)
n_deaths=$(printf '%s' "$deaths" | grep -c '|')
n_twice=$(printf '%s' "$deaths" | grep -c 'crash:1$')
bad_deaths=$(printf '%s\n' "$deaths" | grep -Ev '\|(interrupted:0|interrupted:0 crash:1)$' | grep .)
check "(a) the attempts the kills cut short are interrupted (not counted) the first time, a counted crash the second ($n_deaths attempts, $n_twice twice; wrong: $(printf '%s' "$bad_deaths" | head -n 3 | tr '\n' ';'))" \
	test "$n_deaths" -gt 0 -a -z "$bad_deaths"
# each second death's crash names both controllers
bad_names=()
while IFS='|' read -r sid att; do
	[ -n "$att" ] || continue
	read -r p1 p2 <<<"$(sql "SELECT d.controller_pid FROM attempts a JOIN controller_deaths d ON d.attempt_id = a.id
		WHERE a.story_id = '$sid' AND a.attempt = $att ORDER BY a.seq" | tr '\n' ' ')"
	msg=$(sql "SELECT error_message FROM attempts a JOIN controller_deaths d ON d.attempt_id = a.id
		WHERE a.story_id = '$sid' AND a.attempt = $att AND a.outcome = 'crash'")
	[[ $msg =~ (^|[^0-9])${p1:-x}([^0-9]|$) ]] && [[ $msg =~ (^|[^0-9])${p2:-x}([^0-9]|$) ]] ||
		bad_names+=("$sid a$att ($p1, $p2): $msg")
done <<<"$(printf '%s\n' "$deaths" | grep 'crash:1$' | cut -d'|' -f1,2)"
check "(a) every second death's crash names both dead controllers (${bad_names[*]:0:2})" \
	[ "${#bad_names[@]}" -eq 0 ]
db_ctl=$(sql "SELECT DISTINCT controller_pid FROM controller_deaths" 2>/dev/null)
bad_ctl=()
for c in $db_ctl; do [ -n "${ctl_pids[$c]:-}" ] || bad_ctl+=("$c"); done
check "(a) deaths are recorded only for the controllers this script killed (${bad_ctl[*]:-})" \
	test -n "$db_ctl" -a "${#bad_ctl[@]}" -eq 0
check "PRAGMA integrity_check is ok" [ "$(sql 'PRAGMA integrity_check')" = ok ]

# ---- a second death in the same attempt, deterministic (-j 2) ----
# the agent checks one box, then the controller and its watchdog die 200
# ms into the attempt; the next start must end that agent long before
# its `sleep 5` is over.  Twice in attempt 1, then attempt 2 succeeds.
chaos_project_r twice '{"max_attempts": 5}'
new_story "$P" d1 3 '<!-- sim a1: check 1; sleep 5; checkall -->' '<!-- sim *: checkall -->'
new_story "$P" d2 2 '<!-- sim *: sleep 0.2; checkall -->'
commit_all
pids=()
for round in 1 2; do
	rm -f "$CH/selfkill.taken"
	echo 200 >"$CH/selfkill"
	start_bg run -j 2
	wait_bg 30
	pids+=("$BG")
	check "twice: death $round: the agent killed its controller (exit $BG_RC)" \
		[ "$BG_RC" = 137 ]
	note_orphans
	rm -f "$CH/selfkill"
	T_OUT=$(sql "SELECT story_id || ' ' || attempt || ' ' || outcome FROM attempts WHERE story_id = 'd1' ORDER BY seq DESC LIMIT 1")
	check "twice: death $round: d1's attempt 1 was left running (got '$T_OUT')" \
		[ "$T_OUT" = "d1 1 running" ]
done
start_bg run -j 2
wait_bg 60
check "twice: the next run finishes the batch (exit $BG_RC)" [ "$BG_RC" = 0 ]
T_OUT=$(sql "SELECT attempt || ':' || outcome || ':' || counted || ':' ||
	(SELECT count(*) FROM controller_deaths d WHERE d.attempt_id = attempts.id) || ':' ||
	tasks_completed FROM attempts WHERE story_id = 'd1' ORDER BY seq" 2>&1 | tr '\n' ' ')
expect_match "twice: d1 is interrupted (not counted, 1/3 from its worktree), then a counted crash, in attempt 1; attempt 2 succeeds" \
	"$T_OUT" '^1:interrupted:0:1:1 1:crash:1:1:1 2:success:1:0:3 $'
T_OUT=$(sql "SELECT error_code || ' ' || error_message FROM attempts WHERE story_id = 'd1' ORDER BY seq LIMIT 1")
expect_match "twice: the first death's row says INTERRUPTED and names its controller" \
	"$T_OUT" "^INTERRUPTED .*\\b${pids[0]}\\b"
T_OUT=$(sql "SELECT error_message FROM attempts WHERE story_id = 'd1' ORDER BY seq LIMIT 1 OFFSET 1")
check "twice: the crash's reason names both dead controllers (${pids[*]}): '$T_OUT'" \
	bash -c '[[ $1 =~ (^|[^0-9])$2([^0-9]|$) ]] && [[ $1 =~ (^|[^0-9])$3([^0-9]|$) ]]' _ "$T_OUT" "${pids[0]}" "${pids[1]}"
check "twice: no attempt started while the dead controller's agent lived" [ ! -s "$CH/early" ]
check "twice: no two agents ever held one story's tree" [ ! -s "$CH/overlap" ]
check "twice: d1 and d2 are done" \
	[ "$(sql "SELECT group_concat(status, ' ') FROM (SELECT status FROM stories ORDER BY id)")" = "done done" ]
check "twice: nothing of the batch lives afterwards" wait_for 5 nothing_of_project
check "twice: no worktree is left" [ "$(git -C "$P" worktree list | wc -l)" = 1 ]

# ---- the same with the agents confined (docs/sandbox.md) ----
# bubblewrap's --die-with-parent ends a confined agent with its
# controller; what it cannot cover is a bwrap killed in the instant
# after its spawn, before it has set that up.  Kills of both from
# outside and from inside the controller right after a spawn; the agent
# sees only its own pid namespace, so here this script checks from
# outside, when the next start's first agent begins, that nothing the
# dead controller started lives.  Skipped where bubblewrap cannot run.
if bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid true 2>/dev/null; then
	SANDBOX_JSON='{"enabled": true, "writable": ["'"$T_TMP/ch-sandbox"'"]}' \
		chaos_project_r sandbox '{"max_attempts": 10}'
	for i in 1 2 3 4 5 6; do
		new_story "$P" "c$i" 2 '<!-- sim *: sleep 0.3; check 1; sleep 0.2; checkall -->'
	done
	commit_all
	sb_kills=0
	sb_early=()
	first_agent_or_gone() {
		n_started
		[ "$N_STARTED" -gt "$before" ] || ! alive "$BG"
	}
	for round in 1 2 3 4 5 6 7; do
		n_started
		before=$N_STARTED
		if [ "$round" -le 6 ] && [ $((round % 2)) = 0 ] && [ "$nmodes" = 3 ]; then
			LD_PRELOAD=$SPAWNSHIM SPAWNKILL_NTH=$((1 + RANDOM % 2)) SPAWNKILL_MS=0 \
				SPAWNKILL_DONE="$CH/spawnkill.done" start_bg run -j 2
		else
			start_bg run -j 2
		fi
		# the first agent of this start: whatever the last kill left must
		# be gone by now
		wait_for 20 first_agent_or_gone
		left=$(still_alive "$CH/orphans")
		[ -z "$left" ] || sb_early+=("round $round: $(printf '%s' "$left" | cut -c1-60 | tr '\n' ';')")
		[ "$round" -le 6 ] || break
		if [ $((round % 2)) = 1 ] || [ "$nmodes" != 3 ]; then
			nap_ms $((RANDOM % 101))
			alive "$BG" && kill_both "$BG"
		fi
		wait_bg 20
		[ "$BG_RC" = 137 ] && sb_kills=$((sb_kills + 1))
		note_orphans
	done
	wait_bg 60
	check "sandbox: the kills of both at a spawn killed the controller ($sb_kills of 6)" [ "$sb_kills" -ge 4 ]
	check "sandbox: the next run finishes the batch (exit $BG_RC)" test "$BG_RC" = 0 -o "$BG_RC" = 3
	check "sandbox: nothing a dead controller started lived when the next start's first agent began (${sb_early[*]:-})" \
		[ "${#sb_early[@]}" -eq 0 ]
	check "sandbox: no two agents ever held one story's tree" [ ! -s "$CH/overlap" ]
	check "sandbox: nothing of the batch lives afterwards" wait_for 5 nothing_of_project
	check "sandbox: no worktree is left" [ "$(git -C "$P" worktree list | wc -l)" = 1 ]
else
	echo "# sandbox: bubblewrap cannot run here, the confined kills are skipped"
fi

# ======== (b) SIGTERM / SIGINT in the first 100 ms of start-up ========
declare -A tries=() zero=()
bad_exit=()
bad_status=()
attempt_running_or_gone() {
	[ "$(sqlite3 -cmd '.timeout 5000' "$P/.storyctl/state.db" "SELECT count(*) FROM attempts WHERE outcome = 'running'" 2>/dev/null)" -gt 0 ] 2>/dev/null || ! alive "$BG"
}
sig_tries() {
	local j=$1 n=$2 t d sig want args st
	new_project
	PROJS+=("$P")
	new_story "$P" s1 2 '<!-- sim *: sleep 0.3; checkall -->'
	new_story "$P" s2 2 '<!-- sim *: sleep 0.3; checkall -->'
	new_story "$P" s3 1 '<!-- sim *: sleep 0.3; checkall -->'
	commit_all
	for t in $(seq 1 "$n"); do
		args=(run)
		if [ "$("$STORYCTL" -C "$P" status --json 2>/dev/null | jq -r '.batch // empty')" != "" ] &&
			[ $((RANDOM % 2)) = 0 ]; then
			args=(resume)
		fi
		# half of them in the first 20 ms, where start-up is
		if [ $((t % 2)) = 0 ]; then d=$((RANDOM % 21)); else d=$((RANDOM % 101)); fi
		if [ $((RANDOM % 2)) = 0 ]; then sig=TERM want=143; else sig=INT want=130; fi
		start_bg "${args[@]}" -j "$j"
		# from storyctl's first instruction: a signal before the exec
		# would hit this script's fork
		bg_execd
		# the last one stops a batch at work, however slow the machine:
		# so the batch is there to resume (the test, not the clock, says
		# an attempt has started)
		[ "$t" = "$n" ] && wait_for 60 attempt_running_or_gone
		nap_ms "$d"
		kill -s "$sig" "$BG"
		wait_bg 20
		tries[$sig]=$((${tries[$sig]:-0} + 1))
		st=$("$STORYCTL" -C "$P" status --json 2>/dev/null)
		if ! printf '%s' "$st" | jq -e '.counts' >/dev/null 2>&1; then
			bad_status+=("-j $j ${args[*]} SIG$sig at $d ms")
		fi
		[ "$BG_RC" = "$want" ] && continue
		case $BG_RC in
		0 | 3)
			zero[$sig]=$((${zero[$sig]:-0} + 1))
			# only a batch with nothing left may end so
			printf '%s' "$st" | jq -e '.state == "finished" and .counts.pending == 0 and .counts.running == 0' >/dev/null 2>&1 && continue
			bad_exit+=("-j $j ${args[*]} SIG$sig at $d ms: exit $BG_RC, $(printf '%s' "$st" | jq -r '.counts.pending') pending")
			;;
		*) bad_exit+=("-j $j ${args[*]} SIG$sig at $d ms: exit $BG_RC ($(tail -n 1 "$T_TMP/bg.err" | cut -c1-100))") ;;
		esac
	done
	T_OUT=$("$STORYCTL" -C "$P" status --json 2>/dev/null)
	expect_json "(b) -j $j: after the signals the batch is there to resume, stories pending" \
		'.batch != null and .state != "finished" and .counts.pending > 0'
	run_sc -C "$P" resume -j "$j"
	expect_rc "(b) -j $j: resume then finishes the batch" 0
	run_sc -C "$P" list --json
	expect_json "(b) -j $j: every story is done" 'length == 3 and all(.[]; .status == "done")'
	check "(b) -j $j: no attempt row is left running, none counted twice" \
		[ "$(sql "SELECT count(*) FROM attempts WHERE outcome = 'running'") $(sql "SELECT count(*) FROM (SELECT 1 FROM attempts WHERE counted = 1 GROUP BY story_id, attempt HAVING count(*) > 1)")" = "0 0" ]
}
half=$(((KILLS + 1) / 2))
sig_tries 1 "$half"
sig_tries 3 "$half"
n_sig=$((${tries[TERM]:-0} + ${tries[INT]:-0}))
echo "# (b) $n_sig signals: SIGTERM ${tries[TERM]:-0} (exit 0/3 in ${zero[TERM]:-0}), SIGINT ${tries[INT]:-0} (exit 0/3 in ${zero[INT]:-0})"
check "(b) at least $KILLS signals in the first 100 ms (got $n_sig)" [ "$n_sig" -ge "$KILLS" ]
check "(b) every signal in start-up gave 143/130, never 0 or 3 with stories pending (${#bad_exit[@]} wrong: ${bad_exit[*]:0:4})" \
	[ "${#bad_exit[@]}" -eq 0 ]
check "(b) status --json worked after each (${bad_status[*]:-})" [ "${#bad_status[@]}" -eq 0 ]

# ======== (c) a second start on a still-full disk ========
SHIM="$T_TMP/faultshim.so"
if cc -shared -fPIC -O1 -o "$SHIM" "$STORYCTL_SRC/tests/fault/faultshim.c" -ldl; then
	ok "(c) the fault shim compiles"
	ARM="$T_TMP/arm-c"
	cmd=$(jq -cn --arg a "$FAULT_AGENT" --arg d "$ARM" '[$a, $d, "{role}", "{attempt}", "{story_file}"]')
	new_project '{"max_attempts": 4}' "$(jq -cn --argjson c "$cmd" \
		'{primary: {name: "fa-p", command: $c, timeout_s: 60},
		  fallback: {name: "fa-f", command: $c, timeout_s: 60}}')"
	PROJS+=("$P")
	# the agent fills the disk as it starts (the shim in the controller
	# fails every write to the database from then on): its heartbeats
	# fail, which the controller lets pass, and the end of the attempt
	# cannot be recorded: the controller stops with 74, the attempt's row
	# left running
	new_story "$P" s1 3 '<!-- fault a1: start -->' '<!-- sim a1: check 1; sleep 0.3; checkall -->' \
		'<!-- sim *: checkall -->'
	new_story "$P" s2 2 '<!-- sim *: checkall -->'
	commit_all
	# full_start ARGS...: storyctl -C $P ARGS with the shim, while $ARM
	# exists; C_PID and C_RC
	full_start() {
		env LD_PRELOAD="$SHIM" FAULT_COMM=storyctl FAULT_PATH=.storyctl/state.db \
			FAULT_ARM="$ARM" FAULT_LOG="$T_TMP/fault.log" \
			"$STORYCTL" -C "$P" "$@" >"$T_TMP/out" 2>"$T_TMP/err" &
		C_PID=$!
		BG_PIDS+=("$C_PID")
		wait "$C_PID"
		C_RC=$?
	}
	note() { tail -c +65 "$P/.storyctl/lock" 2>/dev/null | tr -d '\0'; }
	full_start run
	first=$C_PID
	check "(c) the first controller stops with 74 on the full disk (got $C_RC)" [ "$C_RC" = 74 ]
	sed 's/^/# stderr: /' "$T_TMP/err" | tail -n 2
	check "(c) it left s1's attempt 1 running" \
		[ "$(sql "SELECT attempt || ' ' || outcome || ' ' || controller_pid FROM attempts WHERE story_id = 's1'")" = "1 running $first" ]
	T_OUT=$(note)
	expect_match "(c) it left a stop note naming itself in .storyctl/lock" "$T_OUT" "^stopped $first "
	n=1
	for cmd in resume run; do
		n=$((n + 1))
		full_start "$cmd"
		check "(c) start $n ($cmd) on the still-full disk fails with 74 (got $C_RC)" [ "$C_RC" = 74 ]
		check "(c) start $n ($cmd) did not close s1's attempt" \
			[ "$(sql "SELECT outcome FROM attempts WHERE story_id = 's1'")" = running ]
		T_OUT=$(note)
		expect_match "(c) start $n ($cmd) kept the first controller's stop note" "$T_OUT" "(^|\n)stopped $first "
	done
	rm -f "$ARM"
	run_sc -C "$P" resume
	expect_rc "(c) with space freed, resume finishes the batch" 0
	T_OUT=$(sql "SELECT attempt || ':' || outcome || ':' || counted || ':' || tasks_completed FROM attempts WHERE story_id = 's1' ORDER BY seq" | tr '\n' ' ')
	expect_match "(c) the first controller's attempt is interrupted (not counted, 3/3 as its agent left the file), attempt 1 runs again" \
		"$T_OUT" '^1:interrupted:0:3 1:success:1:3 $'
	T_OUT=$(sql "SELECT controller_pid || ' ' || stopped FROM controller_deaths" 2>&1)
	expect_match "(c) the stop is recorded as that controller's, stopped on an error (controller_deaths)" \
		"$T_OUT" "^$first 1\$"
	T_OUT=$(sql "SELECT error_code || ' ' || error_message FROM attempts WHERE story_id = 's1' ORDER BY seq LIMIT 1")
	expect_match "(c) its message says that controller (pid $first) stopped on an error" \
		"$T_OUT" "^INTERRUPTED .*pid $first\\b.*stopped on an error"
	check "(c) both stories are done" \
		[ "$(sql "SELECT group_concat(status, ' ') FROM (SELECT status FROM stories ORDER BY id)")" = "done done" ]
	check "(c) the note is gone once a reconcile used it" [ -z "$(note | grep stopped)" ]
	check "(c) integrity_check passes" [ "$(sql 'PRAGMA integrity_check')" = ok ]
else
	not_ok "(c) the fault shim compiles"
fi

finish
