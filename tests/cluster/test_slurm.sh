#!/bin/bash
# The one-node cluster scripts/slurm-up started answers: srun runs a task
# on localhost, passes its exit status and output back, squeue lists a
# running job by name and is empty once scancel ended it
# (docs/cluster.md#slurm).
. "$(dirname "$0")/../e2e/lib.sh"
: "${SLURM_CONF:?run through scripts/check-cluster}"

out=$(timeout 60 srun hostname 2>&1)
check "srun hostname runs a task (got: $out)" test -n "$out"
echo "# srun hostname: $out"

timeout 60 srun --job-name storyctl-t-1 -- sh -c 'echo from-task; exit 3' \
	>"$T_TMP/o" 2>"$T_TMP/e"
rc=$?
check "srun passes the task's exit status" test "$rc" -eq 3
check "srun streams the task's output" grep -qx from-task "$T_TMP/o"

timeout 120 srun --job-name storyctl-t-2 -- sleep 300 &
pid=$!
seen=
for _ in $(seq 1 120); do
	seen=$(squeue -h -n storyctl-t-2 -o '%j %T')
	[ "$seen" = "storyctl-t-2 RUNNING" ] && break
	sleep 0.25
done
echo "# squeue: $seen"
expect_match "squeue lists the running job by name" "$seen" '^storyctl-t-2 RUNNING'
scancel --name storyctl-t-2
wait "$pid"
left=x
for _ in $(seq 1 120); do
	left=$(squeue -h -n storyctl-t-2)
	[ -z "$left" ] && break
	sleep 0.25
done
check "scancel by name leaves squeue empty" test -z "$left"
finish
