#!/bin/bash
# The failure-record and requeue routes of storyctl serve
# (docs/api.md#failure-records, docs/api.md#requeue): GET of a story's
# failed attempts as reference 003's records (resolved_at once a later
# attempt succeeds); POST of a failure found outside storyctl, which
# reopens a done story, shows in show, the event log and on the state
# branch, and is quoted in the story's next prompt; 400, 401, 403, 404,
# 405, 409 and 422 with the database unchanged; requeue over HTTP as the
# CLI does it; and a running controller that picks a reopened story up.
# Each of reference 003's six error codes answers 201 and reopens a done
# story.  curl on 127.0.0.1 only, every wait bounded.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

SRV_PID=
SRV_PORT=
RUN_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; [ -n "$RUN_PID" ] && kill "$RUN_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT

# post PATH KEY JSON
post() { req POST "$1" "$2" -H 'Content-Type: application/json' --data-binary "$3"; }
# dump: the database's content, to show that a refused request left it alone
dump() { sqlite3 "$P/.storyctl/state.db" .dump; }

# --- a night with failures --------------------------------------------------
# s1 crashes once, then succeeds; s2 is done at once; s3 and s4 always
# fail (the same way, so that they end alike).  Each saves its prompts.
new_project '{"max_attempts": 2}'
new_story "$P" s1 2 '<!-- sim a1: check 1; exit 1 -->' '<!-- sim *: saveprompt; checkall -->'
new_story "$P" s2 2 '<!-- sim *: saveprompt; checkall -->'
new_story "$P" s3 2 '<!-- sim *: saveprompt; exit 1 -->'
new_story "$P" s4 2 '<!-- sim *: saveprompt; exit 1 -->'
commit_all
GITDIR=$(git -C "$P" rev-parse --absolute-git-dir)
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
serve_up || not_ok "serve started"

post /v1/stories/s2/failures "$WKEY" '{"error_code": "CRASH"}'
expect_http "POST before the first batch: 409" 409 '.error.code == "conflict"'
req GET /v1/stories/s1/failures "$RKEY"
expect_http "GET before the first batch: an empty list" 200 '. == []'

run_sc -C "$P" run
S3=$(sql "SELECT status FROM stories WHERE id = 's3'")
S4=$(sql "SELECT status FROM stories WHERE id = 's4'")
check "the night: s1 and s2 done, s3 and s4 ended alike ($S3, $S4)" \
	[ "$(sql "SELECT group_concat(status) FROM stories WHERE id IN ('s1', 's2')")" = "done,done" ] &&
	[ "$S3" = "$S4" ] && [ "$S3" != "done" ]

# --- GET ------------------------------------------------------------------
A1=$(sql "SELECT id FROM attempts WHERE story_id = 's1' AND attempt = 1")
req GET /v1/stories/s1/failures "$RKEY"
expect_http "GET s1's failures: its crashed attempt as an RFC record" 200 \
	"length == 1 and .[0].id == \"attempt-$A1\" and .[0].intent_id == \"s1\"
	 and .[0].agent_id == \"sim-p\" and .[0].attempt_number == 1
	 and .[0].error_code == \"CRASH\" and (.[0].error_message | type) == \"string\"
	 and .[0].metadata == {\"outcome\": \"crash\", \"exit_code\": 1, \"signal\": null,
	   \"http_status\": null, \"tasks_completed\": 1, \"tasks_total\": 2,
	   \"source\": \"storyctl\", \"decision\": \"retry\",
	   \"recorded_at\": .[0].metadata.recorded_at, \"reported_by\": null}"
FIRST=$H_BODY
expect_http "a retry decision sets retry_scheduled_at; the later success sets resolved_at" 200 \
	'(.[0].retry_scheduled_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"))
	 and (.[0].resolved_at | test("Z$"))'
req GET /v1/stories/s1/failures "$RKEY"
check "the records and their ids are the same on a second GET" [ "$H_BODY" = "$FIRST" ]
req GET /v1/stories/s2/failures "$RKEY"
expect_http "a story that never failed: an empty list" 200 '. == []'
req GET /v1/stories/s3/failures "$RKEY"
expect_http "s3: every attempt failed, none resolved" 200 \
	'length == 2 and all(.[]; .resolved_at == null and .metadata.source == "storyctl")'

# --- refused requests leave the database alone --------------------------------
BEFORE=$(dump)
req GET /v1/stories/s1/failures ""
expect_http "no key: 401" 401 '.error.code == "unauthorized"'
req GET /v1/stories/s1/failures "sc_wrong"
expect_http "a wrong key: 401" 401 '.error.code == "unauthorized"'
post /v1/stories/s2/failures "$RKEY" '{"error_code": "CRASH"}'
expect_http "POST with a read key: 403" 403 '.error.code == "forbidden"'
post /v1/stories/s2/requeue "$RKEY" ''
expect_http "requeue with a read key: 403" 403 '.error.code == "forbidden"'
post /v1/stories/nope/failures "$WKEY" '{"error_code": "CRASH"}'
expect_http "POST on an unknown story: 404 with show's message" 404 '.error.code == "not_found" and (.error.message | test("nope"))'
req GET /v1/stories/nope/failures "$RKEY"
expect_http "GET of an unknown story: 404" 404 '.error.code == "not_found"'
post /v1/stories/s2/failures "$WKEY" '{"error_code": '
expect_http "malformed JSON: 400" 400 '.error.code == "bad_json"'
post /v1/stories/s2/failures "$WKEY" '{"error_code": "CRASH", "eror_message": "x"}'
expect_http "an unknown key: 422 naming it, with a did-you-mean" 422 \
	'.error.code == "invalid" and (.error.message | test("unknown key eror_message \\(did you mean error_message\\?\\)"))'
post /v1/stories/s2/failures "$WKEY" '{"error_code": "CRASH", "attempt_number": "1"}'
expect_http "a wrong type: 422" 422 '.error.message == "failure: attempt_number: expected an integer or null, got a string"'
post /v1/stories/s2/failures "$WKEY" '{"error_code": "BROKEN"}'
expect_http "an error code storyctl does not have: 422" 422 '(.error.message | test("BROKEN is not an error code"))'
post /v1/stories/s2/failures "$WKEY" '[]'
expect_http "a body that is not an object: 422" 422 '.error.code == "invalid"'
# a leap second on the last day of 9999 is the year 10000 in UTC: a time
# no answer could show (issue 33)
post /v1/stories/s2/failures "$WKEY" '{"error_code": "CRASH", "retry_scheduled_at": "9999-12-31T23:59:60Z"}'
expect_http "a time past the year 9999: 422" 422 '(.error.message | test("retry_scheduled_at: 9999-12-31T23:59:60Z is not an RFC 3339"))'
req PUT /v1/stories/s2/failures "$WKEY" --data-binary '{}'
expect_http "PUT on failures: 405" 405 '.error.code == "method_not_allowed"'
check "... with Allow: GET, POST" grep -qi '^Allow: GET, POST' <<<"$H_HEAD"
req GET /v1/stories/s3/requeue "$WKEY"
expect_http "GET on requeue: 405" 405 '.error.code == "method_not_allowed"'
check "... with Allow: POST" grep -qi '^Allow: POST' <<<"$H_HEAD"
req GET /v1/stories/../failures "$RKEY" --path-as-is
expect_http "a bad id: 400" 400 '.error.code == "bad_id"'
post /v1/stories/s1/requeue "$WKEY" ''
expect_http "requeue of a done story: 409 with the command's message" 409 \
	'.error.code == "conflict" and (.error.message | test("story s1 is done; only a deferred, escalated or blocked story can be requeued"))'
AFTER=$(dump)
check "the database is unchanged by every refused request" [ "$BEFORE" = "$AFTER" ]

# --- POST on a done story -------------------------------------------------------
post /v1/stories/s2/failures "$WKEY" '{"agent_id": "ci", "error_code": "GATE_FAILED",
  "error_message": "CI run 812: test_login failed\nexpected 200, got 500",
  "retry_scheduled_at": "2026-02-15T10:05:00Z", "metadata": {"exit_code": 1}}'
expect_http "POST on done s2: 201 with the record, source external" 201 \
	'(.id | test("^external-[0-9]+$")) and .intent_id == "s2" and .agent_id == "ci"
	 and .error_code == "GATE_FAILED" and .attempt_number == null
	 and .retry_scheduled_at == "2026-02-15T10:05:00Z" and .resolved_at == null
	 and .metadata.source == "external" and .metadata.exit_code == 1
	 and .metadata.outcome == "gate_failed" and .metadata.reported_by == "ci"'
EXT=$(jq -r .id <<<"$H_BODY")
run_sc -C "$P" show s2 --json
expect_json "show --json: s2 is pending again, its attempt kept, the failure listed" \
	".status == \"pending\" and (.attempts | length) == 1 and (.external_failures | length) == 1
	 and .external_failures[0].id == \"$EXT\" and .external_failures[0].resolved_at == null"
req GET /v1/stories/s2 "$RKEY"
check "GET /v1/stories/s2 is show --json" [ "$H_BODY" = "$T_OUT" ]
run_sc -C "$P" show s2
expect_match "show prints the failure" "$T_OUT" "external failure GATE_FAILED reported .* by key ci \(open\): CI run 812"
run_sc -C "$P" log s2
expect_match "the event log has the failure" "$T_OUT" "external failure GATE_FAILED reported by key ci"
expect_match "... and the reopening" "$T_OUT" "reopened by an external failure \(GATE_FAILED: CI run 812: test_login failed \.\.\.\)"
check "... each on one line (the message's first)" [ "$(grep -c 'expected 200' <<<"$T_OUT")" = 0 ]
check "the finished batch is stopped again, so that resume runs it" \
	[ "$(sql 'SELECT status FROM batches ORDER BY id DESC LIMIT 1')" = stopped ]
req GET /v1/stories/s2/failures "$RKEY"
expect_http "GET s2's failures lists the external one" 200 \
	"length == 1 and .[0].id == \"$EXT\" and .[0].metadata.source == \"external\""

# --- POST on a story that is not done; requeue over HTTP and with the CLI -------
post /v1/stories/s3/failures "$WKEY" '{"error_code": "NETWORK_ERROR", "error_message": "CI could not fetch deps"}'
expect_http "POST on $S3 s3: 201" 201 '.error_code == "NETWORK_ERROR"'
check "... s3 stays $S3 (only a done story is reopened)" \
	[ "$(sql "SELECT status FROM stories WHERE id = 's3'")" = "$S3" ]
post /v1/stories/s3/requeue "$WKEY" ''
expect_http "requeue s3 over HTTP: 200 with its show JSON" 200 '.id == "s3" and .status == "pending"'
RQ_BODY=$H_BODY
run_sc -C "$P" requeue s4
expect_rc "requeue s4 with the CLI" 0
run_sc -C "$P" show s3 --json
check "the 200's body is show s3 --json" [ "$RQ_BODY" = "$T_OUT" ]
row() { sql "SELECT status, reason, seq_base, attempt_base, attempts FROM stories WHERE id = '$1'"; }
ev() { sql "SELECT kind || ': ' || message FROM events WHERE story_id = '$1' AND kind = 'requeued'"; }
check "requeue over HTTP leaves s3 as the CLI leaves s4" [ "$(row s3)" = "$(row s4)" ] && [ -n "$(row s3)" ]
check "... with the same event" [ "$(ev s3)" = "$(ev s4)" ] && [ -n "$(ev s3)" ]

# --- the next night: the failures are quoted ------------------------------------
# ({attempt} counts again from 1 after a requeue: the agent writes
# prompt.ID.a1 again)
cp "$GITDIR/prompt.s2.a1" "$T_TMP/s2.first"
run_sc -C "$P" resume
check "resume ran s2 again and it is done" \
	[ "$(sql "SELECT status || '/' || count(*) FROM stories s JOIN attempts a ON a.story_id = s.id WHERE s.id = 's2'")" = "done/2" ]
PROMPT2=$(cat "$GITDIR/prompt.s2.a1" 2>/dev/null)
expect_match "s2's next prompt has the marked section" "$PROMPT2" '\[Failures reported from outside storyctl\]'
expect_match "... quoting the failure" "$PROMPT2" 'GATE_FAILED, reported .* \(agent ci\), exit code 1:'
expect_match "... and its message, every line" "$PROMPT2" '  expected 200, got 500'
PROMPT1=$(cat "$T_TMP/s2.first")
check "the first prompt had no such section" [ -n "$PROMPT1" ] && ! grep -q 'Failures reported' <<<"$PROMPT1"
PROMPT3=$(cat "$GITDIR/prompt.s3.a1" 2>/dev/null)
expect_match "s3's next prompt quotes the failure posted while it was $S3" "$PROMPT3" 'NETWORK_ERROR, reported .*:'
PROMPT4=$(cat "$GITDIR/prompt.s4.a1" 2>/dev/null)
check "s4 (nothing posted) has no such section" [ -n "$PROMPT4" ] && ! grep -q 'Failures reported' <<<"$PROMPT4"
req GET /v1/stories/s2/failures "$RKEY"
expect_http "the success resolved the external failure" 200 '.[0].resolved_at != null'
BRANCH=$(git -C "$P" show storyctl/state:stories/s2.json 2>/dev/null)
check "stories/s2.json on the state branch lists it" \
	jq -e ".external_failures[0].id == \"$EXT\" and .external_failures[0].resolved_at != null" <<<"$BRANCH"
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
SRV_PID=
# (under make asan, a leak or a memory error of a handler shows here)
check "the server wrote nothing on standard error" [ ! -s "$T_TMP/srv.err" ]

# --- a running controller picks up a story reopened meanwhile --------------------
# d1 is done first; g1 then waits for $GO.  While it waits, a failure
# reopens d1 and a requeue of running g1 is refused; the same run then
# runs d1 again.
cat >"$T_TMP/agent" <<SH
#!/bin/sh
case "\$3" in
*g1.md) i=0; while [ ! -e "$T_TMP/go" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done ;;
esac
exec "$STORYCTL_SRC/scripts/sim-agent" "\$@"
SH
chmod +x "$T_TMP/agent"
new_project '{}' '{"primary": {"name": "ag", "command": ["'"$T_TMP/agent"'", "{role}", "{attempt}", "{story_file}", "{prompt}"], "timeout_s": 60}}'
new_story "$P" d1 1 '<!-- sim *: saveprompt; checkall -->'
new_story "$P" g1 1 '<!-- sim *: checkall -->'
commit_all
GITDIR=$(git -C "$P" rev-parse --absolute-git-dir)
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
serve_up || not_ok "serve started (second project)"
"$STORYCTL" -C "$P" run >"$T_TMP/run.out" 2>&1 &
RUN_PID=$!
for _ in $(seq 1 300); do
	[ "$(sql "SELECT count(*) FROM attempts WHERE story_id = 'g1'" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
check "d1 is done and g1 runs" [ "$(sql "SELECT group_concat(status, ',') FROM (SELECT status FROM stories ORDER BY position)")" = "done,running" ]
post /v1/stories/g1/requeue "$WKEY" ''
expect_http "requeue of a running story: 409" 409 '(.error.message | test("story g1 is running"))'
post /v1/stories/d1/failures "$WKEY" '{"error_code": "CRASH", "error_message": "nightly CI broke on d1"}'
expect_http "POST on done d1 while the batch runs: 201" 201 '.intent_id == "d1"'
touch "$T_TMP/go"
for _ in $(seq 1 300); do kill -0 "$RUN_PID" 2>/dev/null || break; sleep 0.1; done
wait "$RUN_PID"
RC=$?
RUN_PID=
check "the run ended well (exit $RC)" [ "$RC" = 0 ]
check "the same run ran d1 again: done after 2 attempts" \
	[ "$(sql "SELECT status || '/' || (SELECT count(*) FROM attempts WHERE story_id = 'd1') FROM stories WHERE id = 'd1'")" = "done/2" ]
check "... and the batch finished" [ "$(sql 'SELECT status FROM batches')" = finished ]
expect_match "d1's second prompt quotes the failure" "$(cat "$GITDIR/prompt.d1.a1" 2>/dev/null)" 'nightly CI broke on d1'
expect_match "the console said d1 was pending again" "$(cat "$T_TMP/run.out")" 'd1: pending again \(reopened by an external failure'
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
SRV_PID=

# --- reference 003's six error codes ---------------------------------------------
# Each code of the reference's table, POSTed as its own example body on a
# done story: 201, the code kept as sent with the outcome it belongs to
# (docs/api.md#error-codes-of-a-post), readable back, the story pending
# again and the reopen counter moved (docs/api.md#while-a-batch-runs).
RFC_CODES=(RATE_LIMIT:rate_limit TIMEOUT:timeout NETWORK_ERROR:network
	INVALID_OUTPUT:gate_failed BUDGET_EXCEEDED:permanent
	PERMISSION_DENIED:permanent)
new_project '{}'
for i in 1 2 3 4 5 6; do
	new_story "$P" "r$i" 1 '<!-- sim *: saveprompt; checkall -->'
done
commit_all
GITDIR=$(git -C "$P" rev-parse --absolute-git-dir)
WKEY=$("$STORYCTL" -C "$P" key add ci --write 2>/dev/null)
RKEY=$("$STORYCTL" -C "$P" key add dash 2>/dev/null)
run_sc -C "$P" run
check "six stories done at once" \
	[ "$(sql "SELECT group_concat(status) FROM (SELECT status FROM stories ORDER BY id)")" = "done,done,done,done,done,done" ]
serve_up || not_ok "serve started (third project)"
i=0
for pair in "${RFC_CODES[@]}"; do
	i=$((i + 1))
	code=${pair%%:*}
	outcome=${pair#*:}
	http=null
	[ "$code" = RATE_LIMIT ] && http=429
	seq0=$(sql "SELECT coalesce((SELECT value FROM meta WHERE key = 'reopen_seq'), 0)")
	post "/v1/stories/r$i/failures" "$WKEY" '{"agent_id": "agent-research", "attempt_number": 1,
	  "error_code": "'"$code"'", "error_message": "reported '"$code"'",
	  "retry_scheduled_at": "2026-02-15T10:05:00Z", "metadata": {"http_status": '"$http"'}}'
	expect_http "POST $code on done r$i: 201, the code as sent, outcome $outcome" 201 \
		".intent_id == \"r$i\" and .error_code == \"$code\" and .agent_id == \"agent-research\"
		 and .attempt_number == 1 and .error_message == \"reported $code\"
		 and .retry_scheduled_at == \"2026-02-15T10:05:00Z\" and .resolved_at == null
		 and .metadata.outcome == \"$outcome\" and .metadata.source == \"external\"
		 and .metadata.http_status == $http and .metadata.reported_by == \"ci\""
	POSTED=$H_BODY
	req GET "/v1/stories/r$i/failures" "$RKEY"
	expect_http "... GET r$i's failures reads the same record back" 200 \
		"length == 1 and .[0] == $POSTED"
	check "... r$i is pending again" \
		[ "$(sql "SELECT status FROM stories WHERE id = 'r$i'")" = pending ]
	check "... and the reopen counter moved by one" \
		[ "$(sql "SELECT value FROM meta WHERE key = 'reopen_seq'")" = $((seq0 + 1)) ]
	check "... the event log names $code" \
		[ "$(sql "SELECT count(*) FROM events WHERE story_id = 'r$i' AND
		   ((kind = 'failure' AND message LIKE 'external failure $code reported by key ci: reported $code')
		    OR (kind = 'requeued' AND message = 'reopened by an external failure ($code: reported $code)'))")" = 2 ]
done
run_sc -C "$P" show r4
expect_match "show prints INVALID_OUTPUT as it was sent" "$T_OUT" \
	"external failure INVALID_OUTPUT reported .* by key ci \(open\): reported INVALID_OUTPUT"
run_sc -C "$P" resume
check "resume ran the six again: each done after 2 attempts" \
	[ "$(sql "SELECT group_concat(st) FROM (SELECT status || '/' || (SELECT count(*) FROM attempts a WHERE a.story_id = s.id) AS st FROM stories s ORDER BY id)")" = "done/2,done/2,done/2,done/2,done/2,done/2" ]
expect_match "r4's next prompt quotes INVALID_OUTPUT" "$(cat "$GITDIR/prompt.r4.a1" 2>/dev/null)" \
	'INVALID_OUTPUT, reported .* \(agent agent-research\):'
req GET /v1/stories/r4/failures "$RKEY"
expect_http "the success resolved r4's INVALID_OUTPUT" 200 \
	'length == 1 and .[0].error_code == "INVALID_OUTPUT" and .[0].resolved_at != null'
kill "$SRV_PID" 2>/dev/null
wait "$SRV_PID" 2>/dev/null
SRV_PID=
check "the server wrote nothing on standard error (third project)" [ ! -s "$T_TMP/srv.err" ]
finish
