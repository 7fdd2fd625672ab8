# tests/e2e/lib_remote.sh - the remote executor's test batch, shared by
# tests/e2e/test_remote.sh (a fake launcher) and tests/cluster/*.sh (real
# srun), sourced after lib.sh: one batch of stories that end done,
# deferred and escalated, run once locally and once remotely, and their
# records compared (docs/cluster.md#the-tests).

# remote_batch: a project in $P with the batch's stories, committed.
remote_batch() {
	new_project
	new_story "$P" r-done 3 '<!-- sim a1: check 1; exit 1 -->' '<!-- sim *: checkall; say all done -->'
	new_story "$P" r-defer 4 '<!-- sim *: check 2 -->'
	new_story "$P" r-esc 2 '<!-- sim *: err boom; exit 2 -->'
	new_story "$P" r-first 2 '<!-- sim *: checkall -->'
	commit_all
}

# remote_config BARE LAUNCH-JSON CANCEL-JSON: $P runs through the remote
# executor with the bare repository BARE as its remote.
remote_config() {
	jq --arg r "$1" --argjson l "$2" --argjson c "$3" \
		'. + {executor: {kind: "remote", remote: $r, launch: $l, cancel: $c}}' \
		"$P/storyctl.json" >"$P/storyctl.json.new" &&
		mv "$P/storyctl.json.new" "$P/storyctl.json" &&
		git -C "$P" commit -q -am "remote executor"
}

# remote_records: what must be the same wherever the attempts ran: every
# story's status, reason and progress, and each attempt's number, agent,
# outcome, codes, progress and decision (no times, no pids, no paths).
remote_records() {
	local id
	for id in r-done r-defer r-esc r-first; do
		"$STORYCTL" -C "$P" show "$id" --json | jq -c '{id, status, reason,
			tasks_completed, tasks_total, attempts: [.attempts[] |
			{attempt, counted, role, agent, outcome, error_code,
			 exit_code, signal, tasks_completed, tasks_total,
			 stalled_task, decision, reason}]}'
	done
}

# remote_compare NAME LOCAL-FILE REMOTE-FILE: the two records are equal.
remote_compare() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1"
		diff "$2" "$3" | head -20 | sed 's/^/# /'
	fi
}
