#!/bin/bash
# storyctl report (docs/report.md) without a browser: the markdown and
# the page agree with the record (status, list, show --json), the
# markdown renders as GitHub does (cmark-gfm: one table row per story),
# the page is one file written whole, and bad command lines and
# unwritable files exit 64 and 74 naming the problem.  The page in a
# real browser is tests/browser/test_report.sh (make check-browser).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

run_sc -C "$T_TMP" report
expect_rc "no storyctl.json: 64" 64

new_project '{"max_attempts": 2, "poll_interval_s": 1}'
new_story "$P" m-done 2 '<!-- sim *: checkall -->'
new_story "$P" m-esc 2 '<!-- sim *: err Segmentation fault (core dumped); exit 139 -->'
commit_all

run_sc -C "$P" report
expect_rc "before the first batch the report says so" 0
expect_match "no batch yet" "$T_OUT" '^# storyctl: no batch yet'

run_sc -C "$P" run
expect_rc "the night" 3
(umask 022 && "$STORYCTL" -C "$P" report --md "$T_TMP/r.md" --html "$T_TMP/r.html") >/dev/null 2>&1
T_RC=$?
expect_rc "both formats at once" 0
# it may hold agent output: the owner's alone, whatever the umask (issue 33)
check "the html report is 0600" [ "$(stat -c %a "$T_TMP/r.html")" = 600 ]
check "the markdown report is 0600" [ "$(stat -c %a "$T_TMP/r.md")" = 600 ]
MD=$(cat "$T_TMP/r.md")
expect_match "the markdown names the batch and its state" "$MD" '^# storyctl: batch 1'
expect_match "the escalated story needs you, with its reason" "$MD" \
	'- \*\*m-esc\*\* \(escalated, 0/2 tasks, 2 attempts\): D6: zero progress'
expect_match "and the commands to act" "$MD" '`storyctl show m-esc` · `storyctl log m-esc` · `storyctl requeue m-esc`'
REASON=$("$STORYCTL" -C "$P" show m-esc --json | jq -r '.reason')
check "the reason is show's, word for word" grep -qF -- "$REASON" "$T_TMP/r.md"
ROWS=$(cmark-gfm -e table "$T_TMP/r.md" | grep -c '<td>m-')
check "cmark-gfm reads one story table row per story ($ROWS)" [ "$ROWS" = 2 ]
DONE=$("$STORYCTL" -C "$P" status --json | jq '.counts.done')
expect_match "the counts are status's" "$MD" "^\| done \| $DONE \|$"
NATT=$(sql 'SELECT count(*) FROM attempts')
BARS=$(grep -o '<g class="bar ' "$T_TMP/r.html" | wc -l)
check "the page draws one bar per attempt ($BARS of $NATT)" [ "$BARS" = "$NATT" ]
check "the page's rows are list's stories" \
	[ "$(grep -o '<g class="row st-[a-z]*" data-story="[^"]*"' "$T_TMP/r.html" | sed 's/.*data-story="//; s/"$//' | paste -sd,)" = \
	"$("$STORYCTL" -C "$P" list --json | jq -r '[.[].id] | join(",")')" ]
check "the page is a whole HTML document" \
	bash -c "head -c 15 '$T_TMP/r.html' | grep -q '<!doctype html>' && tail -n 1 '$T_TMP/r.html' | grep -q '</html>'"
check "no temporary file is left beside it" [ -z "$(find "$T_TMP" -maxdepth 1 -name 'r.html.tmp*')" ]

run_sc -C "$P" report --html
expect_rc "--html without a file: 64" 64
run_sc -C "$P" report --pdf x
expect_rc "an unknown option: 64" 64
expect_match "naming it" "$T_ERR" "unknown option '--pdf'"
run_sc -C "$P" report --html - --md -
expect_rc "both to standard output: 64" 64
run_sc -C "$P" report --html "$T_TMP/no/such/dir/r.html"
expect_rc "a file that cannot be written: 74" 74
expect_match "naming it" "$T_ERR" "cannot write $T_TMP/no/such/dir/r.html"
run_sc -C "$P" report --html -
expect_rc "--html - prints the page" 0
expect_match "to standard output" "$T_OUT" '^<!doctype html>'
finish
