#!/bin/bash
# Stories whose task list is not the only checklist (issue 32,
# docs/stories.md#the-tasks-section): `run` never calls a story done from
# a checked list while its work list is open, `check` says which section
# it counted and which it passed over, and a Tasks section pasted twice
# reaches done when the agent ticks either copy.
. "$(dirname "$0")/lib.sh"

# The agent ticks every box after the last "## Tasks / Subtasks" line
# (the copy, in a story pasted twice), or every box in the file.
AGENT="$T_TMP/tick-agent"
cat >"$AGENT" <<'SH'
#!/bin/sh
story=$1
if [ "$(grep -c '^## Tasks / Subtasks' "$story")" -gt 1 ]; then
	last=$(grep -n '^## Tasks / Subtasks' "$story" | tail -n1 | cut -d: -f1)
	awk -v from="$last" 'NR > from { sub(/\[ \]/, "[x]") } { print }' \
		"$story" >"$story.tmp"
else
	sed 's/\[ \]/[x]/' "$story" >"$story.tmp"
fi
mv "$story.tmp" "$story"
echo "ticked"
SH
chmod +x "$AGENT"
new_project '{"max_attempts": 2}' '{"primary": {"name": "tick",
	"command": ["'"$AGENT"'", "{story_file}"], "timeout_s": 30}}'
S="$P/docs/stories"
mkdir -p "$S"

# the work list under an emoji heading; an acceptance checklist whose
# heading says "Task" is all checked
cat >"$S/zh.md" <<'MD'
# 用户故事 3.1

## 📝 Task 分解

- [ ] 建立数据模型
- [ ] 实现接口

## ✅ 验收标准

### 功能验收 - Task 模块

- [x] 可以创建任务
- [x] 可以删除任务
MD

# two task lists that disagree: the first all checked
cat >"$S/two.md" <<'MD'
# Story 2

## Tasks

- [x] scaffold

## Notes

later

## More tasks

- [ ] wire it up
MD

# the whole story pasted twice
story_once='## Tasks / Subtasks:

- [ ] Task 1
  - [ ] 1.1 sub
- [ ] Task 2

## Dev Notes

notes
'
printf '# Story 4\n\n%s\n%s' "$story_once" "$story_once" >"$S/twice.md"
commit_all

run_sc -C "$P" check --json
expect_json "check: the emoji work list is the section, 0/2" \
	'.stories[] | select(.id == "zh") | .tasks_total == 2 and .tasks_completed == 0 and .heading == "📝 task 分解"'
expect_json "check: two disagreeing lists warn, naming both headings" \
	'[.stories[] | select(.id == "two") | .warnings[] | select(test("two task lists disagree: ## Tasks \\(line 3\\) is all checked but ## More tasks \\(line 11\\)"))] | length == 1'
expect_json "check: the open list is counted" \
	'.stories[] | select(.id == "two") | .tasks_total == 1 and .tasks_completed == 0'
expect_json "check: a section pasted twice counts once, and says so" \
	'.stories[] | select(.id == "twice") | .tasks_total == 2 and .subtasks_total == 1 and (.warnings | map(select(test("written again with the same tasks \\(line 13\\)"))) | length == 1)'

run_sc -C "$P" tasks zh
expect_match "tasks: names the checklist passed over" "$T_OUT" \
	'passed over: ### 功能验收 - Task 模块 \(line 10\): a checklist of acceptance criteria'

run_sc -C "$P" run
expect_rc "run: the batch ends" 0
if printf '%s\n%s\n' "$T_OUT" "$T_ERR" | grep -q 'already checked'; then
	not_ok "run: a story was called done from a checked list"
	printf '%s\n' "$T_OUT" | grep 'already checked' | sed 's/^/# /'
else
	ok "run: no story was called done from a checked list"
fi
for id in zh two twice; do
	check "run: $id done after one attempt" test \
		"$(sql "SELECT s.status || ' ' || (SELECT count(*) FROM attempts a WHERE a.story_id = s.id) FROM stories s WHERE s.id = '$id'")" = "done 1"
done
# the agent ticked only the copy: the original's boxes are still open
check "twice: the first copy was left open by the agent" \
	grep -q '^- \[ \] Task 1' "$S/twice.md"
run_sc -C "$P" tasks twice --json
expect_json "twice: done from the copy, 2/2" \
	'.tasks_total == 2 and .tasks_completed == 2 and .copies == 1'

finish
