#!/bin/bash
# The morning report in a real browser (docs/report.md): a night of four
# stories (done first time, done after a network drop, deferred on a
# plateau, escalated after crashes) is reported with `storyctl report
# --html`, and headless Chromium loads the file: the stories that need a
# person come first (escalated, then deferred) with their commands, the
# timeline has one row per story in the batch's order and one bar per
# attempt, every bar names its agent, nothing is fetched from the
# network, and at a phone's width the page does not overflow.
# Screenshots at 1280 and 390 px go to BUILD/screenshots/.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_browser.sh"
cd "$T_TMP" || exit 1
trap 'wd_stop; rm -rf "$T_TMP"' EXIT
SHOTS=$(dirname "$STORYCTL")/screenshots
mkdir -p "$SHOTS"

# png_width FILE: the width in a PNG's IHDR
png_width() {
	od -An -tu1 -j16 -N4 "$1" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}'
}

new_project '{"max_attempts": 3, "network_sleep_s": 1, "poll_interval_s": 1,
  "backoff": {"strategy": "fixed", "base_delay_ms": 200, "max_delay_ms": 200, "jitter": 0}}'
new_story "$P" r-ok 3 '<!-- sim *: checkall; work -->'
new_story "$P" r-net 2 '<!-- sim a1: check 1; network -->' '<!-- sim *: checkall -->'
new_story "$P" r-stall 5 '<!-- sim *: check 2 -->'
new_story "$P" r-crash 2 '<!-- sim *: err Segmentation fault (core dumped); exit 139 -->'
commit_all
run_sc -C "$P" run
expect_rc "the night ends with stories that need a person" 3

run_sc -C "$P" report --html "$T_TMP/r.html"
expect_rc "report --html writes the page" 0
run_sc -C "$P" report --md "$T_TMP/r.md"
expect_rc "report --md writes markdown" 0
sleep 1; run_sc -C "$P" report
# The two reports are made at different moments: their 'generated' times
# may be a second apart (it failed so once in CI), so that time is blanked.
unstamp() { sed -E 's/generated [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/generated T/'; }
check "report alone prints the markdown" \
	[ "$(printf '%s\n' "$T_OUT" | unstamp)" = "$(unstamp <"$T_TMP/r.md")" ]
check "and it says when it was generated" grep -Eq 'generated [0-9]{4}-' "$T_TMP/r.md"
check "the page has no script, no link, no src: one self-contained file" \
	bash -c "! grep -Eq '<script|<link| src=|url\\(' '$T_TMP/r.html'"
IDS=$("$STORYCTL" -C "$P" list --json | jq -c '[.[].id]')
NATT=$(sql 'SELECT count(*) FROM attempts')

if ! wd_start 1280 900; then
	not_ok "chromium and chromedriver start (see $T_TMP/chromedriver.log)"
	finish
fi
ok "chromium and chromedriver started"
wd_get "file://$T_TMP/r.html"

V=$(wd_js "return [...document.querySelectorAll('#needs-you li.story')].map(e => e.dataset.story)")
check "needs you: the escalated story, then the deferred one ($V)" \
	[ "$V" = '["r-crash","r-stall"]' ]
V=$(wd_js "return document.getElementById('needs-you').compareDocumentPosition(document.querySelector('svg.timeline')) & Node.DOCUMENT_POSITION_FOLLOWING")
check "the stories that need a person come before the timeline" [ "$V" != 0 ]
V=$(wd_js "return [...document.querySelectorAll('#needs-you code.act')].map(e => e.textContent).join('|')")
expect_match "each with the storyctl commands to act" "$V" \
	'storyctl show r-crash\|storyctl log r-crash\|storyctl requeue r-crash\|storyctl show r-stall\|storyctl requeue r-stall'
V=$(wd_js "return [...document.querySelectorAll('svg.timeline g.row')].map(e => e.dataset.story)")
check "one timeline row per story, in the batch's order ($V)" [ "$V" = "$IDS" ]
V=$(wd_js "return document.querySelectorAll('svg.timeline g.bar').length")
check "one bar per attempt ($V bars, $NATT attempts)" [ "$V" = "$NATT" ]
V=$(wd_js "return [...document.querySelectorAll('svg.timeline g.bar')].filter(b => !b.querySelector('title').textContent.includes(' ' + b.dataset.agent + ' (') || b.getBBox().width < 3).length")
check "every bar is drawn and its title names its agent" [ "$V" = 0 ]
V=$(wd_js "return [...document.querySelectorAll('svg.timeline g.bar')].map(b => b.dataset.story + ':' + b.dataset.outcome).join(' ')")
expect_match "the bars are labelled by outcome: the network drop, the crashes, the plateau" \
	"$V" 'r-crash:crash.*r-net:network r-net:success.*r-stall:incomplete'
V=$(wd_js "return document.querySelectorAll('svg.timeline g.wait').length")
check "the waits after retried attempts are drawn ($V)" [ "$V" -ge 1 ]
V=$(wd_js "return performance.getEntriesByType('resource').length")
check "nothing was loaded besides the file ($V resources)" [ "$V" = 0 ]
V=$(wd_js "return document.documentElement.scrollWidth <= window.innerWidth")
check "no horizontal scroll at 1280 px" [ "$V" = true ]
# each attempt links to its transcript and its diff, both in the file
# (docs/report.md#attempts)
# follow CSS: click the link, then the target's id and its text
follow() {
	wd_js "document.querySelector(\"$1\").click(); return 1" >/dev/null
	wd_js "var p = document.getElementById(location.hash.slice(1)); return location.hash + ' ' + (p ? p.querySelector('pre').textContent : '')"
}
V=$(follow "tr[data-story=r-crash] a.att[href^='#t']")
expect_match "r-crash's transcript link leads to what the agent printed" "$V" '^"#t-[0-9]+-0 .*Segmentation fault'
V=$(follow "tr[data-story=r-ok] a.att[href^='#d']")
expect_match "r-ok's diff link leads to the change it made" "$V" '^"#d-[0-9]+-0 diff --git a/src/r-ok.txt b/src/r-ok.txt.*\+'
V=$(wd_js "return document.querySelectorAll('a.att').length + ' ' + document.querySelectorAll('section.part').length")
check "two links and two parts per attempt ($V, $NATT attempts)" [ "$V" = "\"$((NATT * 2)) $((NATT * 2))\"" ]
wd_shot "$SHOTS/report-1280.png"
check "a screenshot at 1280 px ($SHOTS/report-1280.png)" \
	[ "$(png_width "$SHOTS/report-1280.png")" = 1280 ]

wd_size 390 2400
wd_get "file://$T_TMP/r.html"
V=$(wd_js "return window.innerWidth")
check "the window is a phone's width ($V)" [ "$V" -le 390 ]
V=$(wd_js "return document.documentElement.scrollWidth <= window.innerWidth")
check "at 390 px the page does not overflow (only the timeline scrolls)" [ "$V" = true ]
V=$(wd_js "return [...document.querySelectorAll('#needs-you li.story, table.stories td')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).length")
check "the needs-you cards and the story table fit the width" [ "$V" = 0 ]
V=$(wd_js "return parseFloat(getComputedStyle(document.querySelector('#needs-you .reason')).fontSize)")
check "the reasons are readable at 390 px (font ${V}px)" [ "${V%.*}" -ge 14 ]
wd_shot "$SHOTS/report-390.png"
check "a screenshot at 390 px ($SHOTS/report-390.png)" \
	[ "$(png_width "$SHOTS/report-390.png")" -le 390 ]
finish
