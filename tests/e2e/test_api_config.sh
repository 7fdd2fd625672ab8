#!/bin/bash
# The server keeps the loaded config between requests and loads it again
# when it may have changed (docs/api.md#what-a-request-costs): before
# the first batch a story file added or removed shows in the next
# /v1/stories; after a batch a storyctl.json written again (by rename,
# or in place with the same size within the same second) shows in the
# next /v1/retry-policy, without a restart.  Under strace, twenty GETs
# open storyctl.json and look at a story file at most twice (the
# command's own load and the server's first), not once a request
# (skipped without strace or ptrace).
# curl on 127.0.0.1 only, every wait bounded.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SRV_PID=
TR_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$TR_PID" ] && kill "$TR_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

new_project
new_story "$P" s1 1 '<!-- sim *: checkall -->'
new_story "$P" s2 1 '<!-- sim *: checkall -->'
commit_all
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
serve_up || not_ok "serve started"

# --- before the first batch: the config's stories, as they stand --------
req GET /v1/stories "$RKEY"
expect_http "before the first batch: the config's two stories" 200 '[.[].id] == ["s1", "s2"]'
new_story "$P" s3 1 '<!-- sim *: checkall -->'
req GET /v1/stories "$RKEY"
expect_http "a story file added shows in the next request" 200 '[.[].id] == ["s1", "s2", "s3"]'
rm "$P/docs/stories/s2.md"
req GET /v1/stories/s2 "$RKEY"
expect_http "a story file removed is gone from the next request" 404 '.error.code == "not_found"'
commit_all

# --- after a batch: storyctl.json's identity ----------------------------
"$STORYCTL" -C "$P" run >"$T_TMP/run.out" 2>&1
check "the batch ran" grep -q "batch 1" "$T_TMP/run.out"
req GET /v1/retry-policy "$RKEY"
expect_http "the config's fallback agent" 200 '.fallback_agent_id == "sim-f"'
jq '.agents.fallback.name = "sim-renamed"' "$P/storyctl.json" >"$T_TMP/new.json" &&
	mv "$T_TMP/new.json" "$P/storyctl.json"
req GET /v1/retry-policy "$RKEY"
expect_http "storyctl.json replaced: the next request sees the renamed agent" 200 \
	'.fallback_agent_id == "sim-renamed"'
# the same size, the same inode, written at once: the time alone differs,
# maybe not at all within one clock tick
text=$(cat "$P/storyctl.json")
printf '%s\n' "${text//sim-renamed/sim-renamex}" >"$P/storyctl.json"
req GET /v1/retry-policy "$RKEY"
expect_http "written in place, the same size, at once: seen too" 200 \
	'.fallback_agent_id == "sim-renamex"'
req GET /v1/stories "$RKEY"
expect_http "the batch's stories" 200 '[.[].id] == ["s1", "s3"]'
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
SRV_PID=

# --- not loaded on every request ----------------------------------------
if ! command -v strace >/dev/null || ! strace -qq -o /dev/null true 2>/dev/null; then
	ok "# skip the config is not read on every request (no strace, or no ptrace)"
	finish
fi
# old enough to be trusted at once (serve_config.c's racy rule)
touch -d '1 hour ago' "$P/storyctl.json"
strace -f -qq -e trace=%file -o "$T_TMP/trace" \
	"$STORYCTL" -C "$P" serve --listen 127.0.0.1:0 >"$T_TMP/srv.out" 2>"$T_TMP/srv.err" &
TR_PID=$!
SRV_PORT=
for _ in $(seq 1 300); do
	SRV_PORT=$(sed -n 's/^serving on port \([0-9]*\) .*/\1/p' "$T_TMP/srv.out")
	[ -n "$SRV_PORT" ] && break
	sleep 0.1
done
bad=0
for _ in $(seq 1 10); do
	req GET /v1/status "$RKEY"
	[ "$H_CODE" = 200 ] || bad=$((bad + 1))
	req GET /v1/stories "$RKEY"
	[ "$H_CODE" = 200 ] || bad=$((bad + 1))
done
check "twenty GETs under strace answered 200" test "$bad" = 0
SRV_PID=$(pgrep -P "$TR_PID")
[ -n "$SRV_PID" ] && kill "$SRV_PID"
wait "$TR_PID" 2>/dev/null
SRV_PID=
TR_PID=
opens=$(grep -c 'openat(.*storyctl\.json"' "$T_TMP/trace")
stories=$(grep -c 'docs/stories/s1\.md"' "$T_TMP/trace")
check "twenty GETs opened storyctl.json at most twice (got $opens)" test "$opens" -ge 1 -a "$opens" -le 2
check "and looked at a story file at most twice (got $stories)" test "$stories" -ge 1 -a "$stories" -le 2
finish
