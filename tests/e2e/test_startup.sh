#!/bin/bash
# Process start (docs/design.md#libraries-loaded-when-needed): libcurl
# and libmicrohttpd are not linked, so a command that needs neither
# (status, list, a run without notify) never opens them; checking a
# configuration with a webhook opens libcurl, and a batch with one
# delivers through it (test_notify has the rest).  The opens are seen
# with strace (skipped without it).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
trap 'rm -rf "$T_TMP"' EXIT

check "storyctl is not linked against libcurl or libmicrohttpd" \
	bash -c "! ldd '$STORYCTL' | grep -Eq 'libcurl|libmicrohttpd'"

if ! command -v strace >/dev/null || ! strace -qq -o /dev/null true 2>/dev/null; then
	ok "# skip the libraries opened (no strace, or no ptrace)"
	finish
fi

# opened FILE: the optional libraries FILE's trace shows opened
opened() {
	grep -oE 'lib(curl|microhttpd)\.so[.0-9]*' "$1" | sort -u | tr '\n' ' '
}

new_project '{}'
new_story "$P" s1 1 '<!-- sim *: checkall -->'
commit_all
(cd "$P" && strace -qq -f -e trace=openat -o "$T_TMP/run.trace" "$STORYCTL" run >/dev/null 2>&1)
check "a run without notify opens neither ($(opened "$T_TMP/run.trace"))" \
	test -z "$(opened "$T_TMP/run.trace")"
(cd "$P" && strace -qq -e trace=openat -o "$T_TMP/status.trace" "$STORYCTL" status >/dev/null 2>&1)
check "status opens neither ($(opened "$T_TMP/status.trace"))" \
	test -z "$(opened "$T_TMP/status.trace")"

jq '.notify = [{"on": ["batch_end"], "webhook": "http://127.0.0.1:9/hook"}]' \
	"$P/storyctl.json" >"$T_TMP/c.json" && mv "$T_TMP/c.json" "$P/storyctl.json"
(cd "$P" && strace -qq -e trace=openat -o "$T_TMP/check.trace" "$STORYCTL" check >/dev/null 2>&1)
expect_match "check with a webhook opens libcurl" \
	"$(opened "$T_TMP/check.trace")" 'libcurl\.so'
check "and not libmicrohttpd" \
	bash -c "! grep -q libmicrohttpd '$T_TMP/check.trace'"

finish
