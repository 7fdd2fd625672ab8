#!/bin/bash
# The remote executor through real srun on the one-node cluster
# (docs/cluster.md#the-tests): a -j 3 batch gives the records of the same
# batch run locally; a timeout cancels the job (squeue empty after); a
# kill -9 of the controller followed by resume leaves no job running and
# loses no attempt.
. "$(dirname "$0")/../e2e/lib.sh"
. "$STORYCTL_SRC/tests/e2e/lib_remote.sh"
. "$STORYCTL_SRC/tests/e2e/lib_proc.sh"
: "${SLURM_CONF:?run through scripts/check-cluster}"
PATH="$(dirname "$STORYCTL"):$PATH"
export PATH
scratch="$T_TMP/scratch"
mkdir -p "$scratch"
LAUNCH='["srun", "--job-name", "storyctl-{story_id}-{attempt}", "--chdir", "/tmp", "--"]'
CANCEL='["scancel", "--name", "storyctl-{story_id}-{attempt}"]'

# no_jobs: squeue shows no job, waiting up to 30 s for ending ones
no_jobs() {
	local q
	for _ in $(seq 1 120); do
		q=$(squeue -h -o '%j %T')
		[ -z "$q" ] && return 0
		sleep 0.25
	done
	echo "# squeue: $q"
	return 1
}

# --- the same batch, locally and through srun with -j 3 ----------------------
remote_batch
run_sc -C "$P" run -j 3
expect_rc "the local run ends with stories deferred and escalated (exit 3)" 3
remote_records >"$T_TMP/local.json"

remote_batch
git init -q --bare "$T_TMP/remote.git"
remote_config "$T_TMP/remote.git" "$LAUNCH" "$CANCEL"
start=$(date +%s)
TMPDIR=$scratch run_sc -C "$P" run -j 3
echo "# the -j 3 batch through srun took $(($(date +%s) - start)) s"
expect_rc "the srun run ends the same way (exit 3)" 3
remote_records >"$T_TMP/remote.json"
remote_compare "a -j 3 batch through srun gives the records of the local run" \
	"$T_TMP/local.json" "$T_TMP/remote.json"
log=$(ls "$P"/.storyctl/logs/r-esc.a1.*.log)
check "the agent's output came back through srun" grep -q boom "$log"
check "the attempts ran as Slurm jobs (srun's own line in the log)" grep -q '^srun: ' "$log"
check "the scratch clones are gone" bash -c '[ -z "$(ls -A "$1")" ]' _ "$scratch"
check "no job is left in squeue" no_jobs

# --- a timeout cancels the job -------------------------------------------------
new_project '{"kill_grace_s": 4, "max_attempts": 1}'
new_story "$P" slow 3 '<!-- sim *: check 1; hang -->'
commit_all
jq '.agents.primary.timeout_s = 4' "$P/storyctl.json" >"$P/x" && mv "$P/x" "$P/storyctl.json"
git init -q --bare "$T_TMP/slow.git"
remote_config "$T_TMP/slow.git" "$LAUNCH" "$CANCEL"
TMPDIR=$scratch run_sc -C "$P" run
expect_rc "the timed-out story ends escalated (exit 3)" 3
run_sc -C "$P" show slow --json
expect_json "the attempt is a timeout" '.attempts[0].outcome == "timeout"'
# srun answers SIGTERM by killing the step at once (SIGKILL, "forcing job
# termination"): the job cannot push, so the last pushed commit counts
expect_json "with the progress of the last pushed commit (0/3)" '.attempts[0].tasks_completed == 0'
check "squeue is empty after the timeout" no_jobs

# --- kill -9 of the controller, then resume -------------------------------------
new_project '{"kill_grace_s": 2}'
# "once": attempt 1 runs again after the controller's death (not
# counted, docs/reliability.md#controller-deaths) and then does not wait;
# the marks live in SIM_STATE, which srun passes to the job
export SIM_STATE=$T_TMP/simstate
mkdir -p "$SIM_STATE"
new_story "$P" k1 2 '<!-- sim a1: check 1; once sleep 300 -->' '<!-- sim *: checkall -->'
new_story "$P" k2 2 '<!-- sim a1: once sleep 300 -->' '<!-- sim *: checkall -->'
commit_all
git init -q --bare "$T_TMP/kill.git"
remote_config "$T_TMP/kill.git" "$LAUNCH" "$CANCEL"
TMPDIR=$scratch "$STORYCTL" -C "$P" run -j 2 >"$T_TMP/kill.out" 2>&1 &
ctl=$!
BG_PIDS+=("$ctl")
running=
for _ in $(seq 1 240); do
	running=$(squeue -h -o '%j' -t RUNNING | sort | tr '\n' ' ')
	[ "$running" = "storyctl-k1-1 storyctl-k2-1 " ] && break
	sleep 0.25
done
check "both attempts run as Slurm jobs (squeue: $running)" test "$running" = "storyctl-k1-1 storyctl-k2-1 "
sleep 1
kill -9 "$ctl"
wait "$ctl" 2>/dev/null
check "the controller's death alone ends both jobs (its watchdog stops srun)" no_jobs
TMPDIR=$scratch run_sc -C "$P" resume -j 2
expect_rc "resume finishes the batch (exit 0)" 0
check "no job is left in squeue after resume" no_jobs
for s in k1 k2; do
	run_sc -C "$P" show "$s" --json
	expect_json "$s: the killed attempt is recorded as interrupted, not counted (the controller died, not the story)" '.attempts[0].outcome == "interrupted" and .attempts[0].attempt == 1 and .attempts[0].counted == false'
	expect_json "$s: attempt 1 ran again, then attempt 2 finished it" '.status == "done" and (.attempts | length) == 3 and .attempts[1].attempt == 1 and .attempts[2].attempt == 2'
done
run_sc -C "$P" show k1 --json
expect_json "k1's interrupted attempt keeps the last pushed progress (0/2: the job never pushed)" '.attempts[0].tasks_completed == 0'
for s in k1 k2; do
	got=$(sql "SELECT group_concat(attempt, ' ') FROM (SELECT attempt FROM attempts WHERE story_id = '$s' AND counted = 1 ORDER BY seq)")
	check "$s: no attempt lost or counted twice (counted: $got)" test "$got" = "1 2"
done
finish
