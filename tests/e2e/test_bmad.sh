#!/bin/bash
# BMAD repositories as their authors lay them out (issue 13,
# docs/stories.md "Discovery", "Ids", "Drafts"): `storyctl init` finds
# the stories of a BMAD v4 repository (docs/stories/N.M.story.md, the
# id N.M) and of a BMAD v6 one (sprint-status.yaml: its story entries in
# its order, never the retrospectives and tech specs beside them);
# `check` then succeeds with those ids in that order, and `run` leaves
# out the drafts, one line each, unless --include-drafts.
. "$(dirname "$0")/lib.sh"

SIM="$STORYCTL_SRC/scripts/sim-agent"
FIX="$STORYCTL_SRC/tests/fixtures/bmad"

# use_sim DIR: the starter config's agents become the simulated agent
# (the real CLIs are not installed here); everything else init wrote
# stays as it was.
use_sim() {
	local cfg="$1/storyctl.json"
	jq --arg sim "$SIM" '.agents = {
	    "primary": {"name": "sim-p", "command": [$sim, "{role}", "{attempt}", "{story_file}", "{prompt}"], "timeout_s": 30},
	    "fallback": {"name": "sim-f", "command": [$sim, "{role}", "{attempt}", "{story_file}", "{prompt}"], "timeout_s": 30}}
	  | .policy = {"network_sleep_s": 0.2, "poll_interval_s": 0.2, "kill_grace_s": 1}' \
		"$cfg" >"$cfg.new" && mv "$cfg.new" "$cfg"
}

# json_true NAME JQ_EXPR: the expression is true of $P/storyctl.json.
json_true() {
	if jq -e "$2" "$P/storyctl.json" >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1 (jq: $2)"
		sed 's/^/# storyctl.json: /' "$P/storyctl.json" | head -20
	fi
}

# in_order NAME TEXT ID...: each id appears (as a word) in TEXT, each on
# a later line than the one before.
in_order() {
	local name=$1 text=$2 prev=0 n id
	shift 2
	for id in "$@"; do
		n=$(printf '%s\n' "$text" | grep -nw -F -m1 -- "$id" | cut -d: -f1)
		if [ -z "$n" ] || [ "$n" -le "$prev" ]; then
			not_ok "$name ($id not after line $prev)"
			printf '%s\n' "$text" | head -30 | sed 's/^/# got: /'
			return
		fi
		prev=$n
	done
	ok "$name"
}

# v4_story DIR N.M STATUS NTASKS: a story as BMAD v4's create-next-story
# writes it (the status under its own heading).
v4_story() {
	local f="$1/docs/stories/$2.story.md" i
	{
		printf '# Story %s: Something useful\n\n## Status\n\n%s\n\n' "$2" "$3"
		printf '## Story\n\n**As a** user,\n**I want** it,\n**so that** it works.\n\n'
		printf '## Acceptance Criteria\n\n1. it works\n\n## Tasks / Subtasks\n\n'
		for i in $(seq 1 "$4"); do
			printf -- '- [ ] Task %d (AC: 1)\n  - [ ] Subtask %d.1\n' "$i" "$i"
		done
		printf '\n## Dev Notes\n\n### Testing\n\n- [ ] not a task\n\n## QA Results\n'
	} >"$f"
}

# v6_story FILE STATUS NTASKS DONE: a story as BMAD v6's create-story
# writes it (a Status: line under the title).
v6_story() {
	local i box
	mkdir -p "$(dirname "$1")"
	{
		printf '# Story: %s\n\nStatus: %s\n\n## Story\n\nAs a user, I want it.\n\n' "$(basename "$1" .md)" "$2"
		printf '## Acceptance Criteria\n\n1. it works\n\n## Tasks / Subtasks\n\n'
		for i in $(seq 1 "$3"); do
			box=' '
			[ "$i" -le "$4" ] && box=x
			printf -- '- [%s] Task %d (AC: #1)\n  - [%s] Subtask %d.1\n' "$box" "$i" "$box" "$i"
		done
		printf '\n## Dev Notes\n\n## Dev Agent Record\n\n### File List\n'
	} >"$1"
}

# --- BMAD v4 ---------------------------------------------------------------
P=$(new_repo)
mkdir -p "$P/.bmad-core" "$P/docs/stories"
cat >"$P/.bmad-core/core-config.yaml" <<'YAML'
markdownExploder: true
prd:
  prdFile: docs/prd.md
  prdVersion: v4
  prdSharded: true
  prdShardedLocation: docs/prd
  epicFilePattern: epic-{n}*.md
devLoadAlwaysFiles:
  - docs/architecture/coding-standards.md
devDebugLog: .ai/debug-log.md
devStoryLocation: docs/stories
slashPrefix: BMad
YAML
v4_story "$P" 1.1 Approved 2
v4_story "$P" 1.2 Draft 2
v4_story "$P" 1.10 Approved 1
v4_story "$P" 2.1 InProgress 3
printf '# Stories\n\nThe index of the stories.\n' >"$P/docs/stories/README.md"
commit_all

run_sc -C "$P" init
expect_rc "v4: init exits 0" 0
expect_match "v4: init says what it found" "$T_OUT" \
	'found a BMAD v4 project: stories from \.bmad-core/core-config\.yaml \(devStoryLocation\)'
expect_match "v4: init counts the stories" "$T_OUT" 'wrote storyctl\.json \(4 stories;'
json_true "v4: the config globs the N.M.story.md files" \
	'.stories_glob == "docs/stories/*.story.md" and (has("stories") | not)'
use_sim "$P"
git -C "$P" add -A && git -C "$P" commit -q -m storyctl

run_sc -C "$P" check
expect_rc "v4: check succeeds" 0
in_order "v4: check lists the ids N.M in version order" "$T_OUT" 1.1 1.2 1.10 2.1
expect_match "v4: check shows the draft as skipped, as run will" "$T_OUT" \
	'1\.2 .*DRAFT: skipped$'
expect_match "v4: check says 3 stories are ready (the draft left out)" "$T_OUT" \
	'^ok: 3 stories ready'
run_sc -C "$P" check --json
expect_json "v4: check --json marks the draft and warns of it" \
	'([.stories[] | select(.id == "1.2") | .draft] == [true]) and
	 ([.warnings[] | select(.story == "1.2") | .message | test("Draft")] == [true])'
run_sc -C "$P" list --json
expect_json "v4: before the first batch the ids are N.M, not N.M.story" \
	'[.[].id] == ["1.1", "1.2", "1.10", "2.1"]'

run_sc -C "$P" show 1.1.story
expect_rc "v4: show of a file name exits 64" 64
expect_match "v4: show suggests the id" "$T_ERR" "no story '1\.1\.story' in the config; did you mean 1\.1\?"
run_sc -C "$P" show 1.1
expect_rc "v4: show 1.1 finds the story" 0

run_sc -C "$P" run
expect_rc "v4: run exits 0" 0
expect_match "v4: the draft is skipped with its reason" "$T_OUT" \
	'^skipping 1\.2: Status: Draft \(run --include-drafts to run it\)$'
check "v4: nothing else is skipped" test "$(printf '%s\n' "$T_OUT" | grep -c '^skipping')" -eq 1
run_sc -C "$P" list --json
expect_json "v4: the batch is the three stories that are not drafts, done" \
	'[.[].id] == ["1.1", "1.10", "2.1"] and all(.[]; .status == "done")'
check "v4: the draft was not touched" grep -q '^- \[ \] Task 1' "$P/docs/stories/1.2.story.md"

run_sc -C "$P" run 1.2.story.md
expect_rc "v4: run of a file name exits 64" 64
expect_match "v4: run suggests the id" "$T_ERR" "did you mean 1\.2\?"
run_sc -C "$P" requeue 1-1
expect_rc "v4: requeue of an unknown id exits 64" 64
expect_match "v4: requeue suggests the id" "$T_ERR" "no story '1-1' in the latest batch; did you mean 1\.1\?"

run_sc -C "$P" run --include-drafts 1.2
expect_rc "v4: run --include-drafts runs the draft" 0
expect_match "v4: no skip line with --include-drafts" "$T_OUT" '^batch 2: 1 done'
check "v4: the draft's tasks are checked" grep -q '^- \[x\] Task 1' "$P/docs/stories/1.2.story.md"
run_sc -C "$P" resume --include-drafts
expect_rc "v4: resume takes no --include-drafts" 64

# --- BMAD v6, the current layout --------------------------------------------
P=$(new_repo)
A="$P/_bmad-output/implementation-artifacts"
mkdir -p "$A" "$P/_bmad-output/planning-artifacts"
cp "$FIX/sprint-status-v6.yaml" "$A/sprint-status.yaml"
v6_story "$A/1-1-project-scaffolding.md" done 2 2
v6_story "$A/1-2-sign-up-with-email.md" done 3 3
v6_story "$A/1-3-sign-in-and-sessions.md" review 2 2
v6_story "$A/2-1-recipe-list.md" in-progress 3 1
v6_story "$A/2-2-add-a-recipe.md" ready-for-dev 2 0
# what else lives there: not stories, though a glob would take them
v6_story "$A/epic-1-retro-2026-01-10.md" done 2 0
v6_story "$A/tech-spec-epic-2.md" draft 3 0
printf '# PRD\n\n- [ ] not a story\n' >"$P/_bmad-output/planning-artifacts/prd.md"
commit_all

run_sc -C "$P" init
expect_rc "v6: init exits 0" 0
expect_match "v6: init says what it found" "$T_OUT" \
	'found a BMAD v6 project: stories from _bmad-output/implementation-artifacts/sprint-status\.yaml'
expect_match "v6: init counts the stories and the ones without a file" "$T_OUT" \
	'wrote storyctl\.json \(5 stories, 2 more in _bmad-output/implementation-artifacts/sprint-status\.yaml without a story file yet;'
json_true "v6: the config names the sprint status" \
	'.stories == {"sprint_status": "_bmad-output/implementation-artifacts/sprint-status.yaml"} and (has("stories_glob") | not)'
use_sim "$P"
git -C "$P" add -A && git -C "$P" commit -q -m storyctl

run_sc -C "$P" check
expect_rc "v6: check succeeds" 0
in_order "v6: check lists the story entries in the file's order" "$T_OUT" \
	1-1-project-scaffolding 1-2-sign-up-with-email 1-3-sign-in-and-sessions \
	2-1-recipe-list 2-2-add-a-recipe
check "v6: no retrospective, tech spec or epic is a story" \
	bash -c '! printf "%s" "$1" | grep -qE "retro|tech-spec|epic-|prd"' _ "$T_OUT"

run_sc -C "$P" show 2-1
expect_rc "v6: show of a key's number exits 64" 64
expect_match "v6: show suggests the key" "$T_ERR" "did you mean 2-1-recipe-list\?"

# --- BMAD v6, an earlier layout with drafts ---------------------------------
P=$(new_repo)
S="$P/docs/sprint-artifacts"
mkdir -p "$S"
cp "$FIX/sprint-status-v6-drafted.yaml" "$S/sprint-status.yaml"
v6_story "$S/1-1-fetch-station-data.md" done 2 2
v6_story "$S/1-2-parse-harmonics.md" in-progress 3 1
v6_story "$S/1-3-predict-high-water.md" drafted 2 0
v6_story "$S/tech-spec-epic-1.md" draft 2 0
commit_all

run_sc -C "$P" init
expect_rc "v6 drafted: init exits 0" 0
json_true "v6 drafted: the config names the sprint status" \
	'.stories.sprint_status == "docs/sprint-artifacts/sprint-status.yaml"'
use_sim "$P"
git -C "$P" add -A && git -C "$P" commit -q -m storyctl
run_sc -C "$P" check
expect_rc "v6 drafted: check succeeds" 0
in_order "v6 drafted: the stories in order" "$T_OUT" \
	1-1-fetch-station-data 1-2-parse-harmonics 1-3-predict-high-water

run_sc -C "$P" run
expect_rc "v6 drafted: run exits 0" 0
expect_match "v6 drafted: the drafted story is skipped with its reason" "$T_OUT" \
	'^skipping 1-3-predict-high-water: Status: drafted \(run --include-drafts to run it\)$'
expect_match "v6 drafted: a backlog entry without a file is named" "$T_OUT" \
	'^skipping 1-4-chart-view: backlog, no story file yet \(docs/sprint-artifacts/1-4-chart-view\.md\)$'
run_sc -C "$P" list --json
expect_json "v6 drafted: the batch holds the other stories, done" \
	'[.[].id] == ["1-1-fetch-station-data", "1-2-parse-harmonics"] and all(.[]; .status == "done")'

# stories.include_drafts in the config does what --include-drafts does
jq '.stories.include_drafts = true' "$P/storyctl.json" >"$P/storyctl.json.new" &&
	mv "$P/storyctl.json.new" "$P/storyctl.json"
run_sc -C "$P" run 1-3-predict-high-water
expect_rc "v6 drafted: stories.include_drafts runs the draft" 0
check "v6 drafted: its tasks are checked" grep -q '^- \[x\] Task 1' "$S/1-3-predict-high-water.md"
finish
