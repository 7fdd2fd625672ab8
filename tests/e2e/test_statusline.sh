#!/bin/bash
# The live status line under a real terminal (docs/commands.md#the-live-status-line):
# storyctl run inside tmux at 60, 80 and 120 columns with -j 1 and -j 3
# and long BMAD-style ids; the pane is captured while the batch runs and
# must never show a wrapped status line.  Then NO_COLOR, and make demo
# into a pipe: no escape code.
. "$(dirname "$0")/lib.sh"

if ! command -v tmux >/dev/null 2>&1; then
	ok "SKIP: tmux is missing (scripts/deps installs it); the status line is not tested under a terminal"
	finish
fi
export LC_ALL=C.UTF-8
# a private tmux server (its own socket, no user config), ended on exit
TM=(tmux -u -L "storyctl-e2e-$$" -f /dev/null)
trap '"${TM[@]}" kill-server >/dev/null 2>&1; rm -rf "$T_TMP"' EXIT

STATUS_RE='^\[([0-9]+ (running|waiting)|breaker)'
IDS=(1.1.sign-up-with-email-and-password-confirmation
	1.2.very-long-story-name-about-payment-reconciliation
	1.3.remember-me-on-this-device-for-thirty-days)

# columns of each line of stdin (characters: the test's text is narrow)
line_cols() {
	while IFS= read -r l; do printf '%s\n' "${#l}"; done
}

# screen rows the raw output's printed lines take at COLS columns: the
# text after the last carriage return of each line (the terminal's own
# one before the newline aside), escapes dropped
rows_of_raw() {
	local cols=$1 n rows=0
	while IFS= read -r l; do
		l=${l%$'\r'}
		l=${l##*$'\r'}
		l=$(printf '%s' "$l" | sed 's/\x1b\[[0-9;]*[A-Za-z]//g')
		n=${#l}
		if [ "$n" -eq 0 ]; then
			rows=$((rows + 1))
		else
			rows=$((rows + (n + cols - 1) / cols))
		fi
	done
	echo "$rows"
}

# session COLS JOBS NAME [ENV...]: run the batch of $P in tmux, capture
# the pane every 0.2 s while it runs, check each capture
session() {
	local cols=$1 jobs=$2 name=$3 raw="$T_TMP/raw.$1.$2" d="$T_TMP/s.$1.$2"
	shift 3
	mkdir -p "$d"
	"${TM[@]}" new-session -d -s t -x "$cols" -y 60 \
		env -u COLUMNS "$@" sh -c 'while [ ! -e "$1/go" ]; do sleep 0.05; done
		"$2" -C "$3" run -j "$4"; echo "$?" >"$1/rc"; exec sleep 60' \
		_ "$d" "$STORYCTL" "$P" "$jobs"
	"${TM[@]}" pipe-pane -t t -o "cat >>'$raw'"
	touch "$d/go"
	local i bad=0 seen=0 cap status last
	for i in $(seq 1 80); do # at most about 20 s
		[ -e "$d/rc" ] && break
		cap=$("${TM[@]}" capture-pane -p -t t -S -)
		# the screen's non-empty lines
		cap=$(printf '%s\n' "$cap" | sed '/^$/d')
		status=$(printf '%s\n' "$cap" | grep -cE "$STATUS_RE")
		last=$(printf '%s\n' "$cap" | tail -n 1)
		[ "$status" -ge 1 ] && seen=$((seen + 1))
		# a wrapped status line leaves its first row behind: a second
		# status row, or a status row that is not the last
		if [ "$bad" = 0 ] && { [ "$status" -gt 1 ] ||
			{ [ "$status" -eq 1 ] && { ! printf '%s\n' "$last" | grep -qE "$STATUS_RE" ||
				[ "$(printf '%s\n' "$last" | line_cols)" -ge "$cols" ]; }; } ||
			[ "$(printf '%s\n' "$cap" | line_cols | sort -n | tail -n 1)" -gt "$cols" ]; }; then
			bad=1
			printf '%s\n' "$cap" | tail -n 8 | sed 's/^/# screen: /'
		fi
		sleep 0.2
	done
	check "$name: the run ends (exit 0)" test "$(cat "$d/rc" 2>/dev/null)" = 0
	check "$name: the status line was on screen ($seen captures)" test "$seen" -ge 3
	check "$name: one status line, the last, narrower than the pane, in every capture" test "$bad" = 0
	# after the run: the screen holds the printed lines and nothing else
	sleep 0.3
	cap=$("${TM[@]}" capture-pane -p -t t -S - | sed '/^$/d')
	local want got
	want=$(grep -v $'^\r*$' "$raw" | rows_of_raw "$cols")
	got=$(printf '%s\n' "$cap" | grep -c .)
	if [ "$got" = "$want" ]; then
		ok "$name: no wrapped leftover on the screen ($got rows for the printed lines)"
	else
		not_ok "$name: $got rows on the screen, the printed lines take $want"
		printf '%s\n' "$cap" | sed 's/^/# screen: /'
	fi
	cp "$raw" "$T_TMP/last.raw"
	"${TM[@]}" kill-session -t t
}

# a project with N stories of long ids, each agent taking 3 s
project() {
	local n=$1 i
	new_project
	for i in $(seq 0 $((n - 1))); do
		new_story "$P" "${IDS[$i]}" 5 "<!-- sim *: sleep 3; checkall -->"
	done
	commit_all
}

for cols in 60 80 120; do
	project 1
	session "$cols" 1 "$cols columns, -j 1"
	project 3
	if [ "$cols" = 60 ]; then
		session "$cols" 3 "$cols columns, -j 3, NO_COLOR" NO_COLOR=1
		check "NO_COLOR: no bold on the status line" bash -c '! grep -q $'"'"'\x1b\[1m'"'"' "$1"' _ "$T_TMP/last.raw"
	else
		session "$cols" 3 "$cols columns, -j 3"
		check "$cols columns: ids in bold without NO_COLOR" grep -q $'\x1b\[1m' "$T_TMP/last.raw"
		check "$cols columns, -j 3: every running story is named" bash -c \
			'for id in 1.1 1.2 1.3; do tr "\r" "\n" <"$1" | sed "s/\x1b\[[0-9;]*[A-Za-z]//g" | grep -E "^\[3 running\]" | grep -q " $id\." || exit 1; done' _ "$T_TMP/last.raw"
	fi
done

# --- make demo into a pipe: no escape code ----------------------------------------
TMPDIR="$T_TMP" "$STORYCTL_SRC/scripts/demo" "$STORYCTL" 2>&1 | cat >"$T_TMP/demo.out"
check "the demo ran (its plan and its morning are printed)" grep -q "== storyctl list" "$T_TMP/demo.out"
check "the demo into a pipe prints no escape code" bash -c '! grep -q $'"'"'\x1b'"'"' "$1"' _ "$T_TMP/demo.out"

finish
