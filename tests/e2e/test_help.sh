#!/bin/bash
# Help in git's style, did-you-mean for commands, the man page against the
# help, bash and zsh completion, and make install of all of them
# (docs/commands.md#help-man-page-completion).
. "$(dirname "$0")/lib.sh"
man_page="$STORYCTL_SRC/man/storyctl.1"
bash_comp="$STORYCTL_SRC/scripts/completion/storyctl.bash"
zsh_dir="$STORYCTL_SRC/scripts/completion"
commands=$("$STORYCTL" __complete commands)

# --- help ------------------------------------------------------------------
run_sc help
expect_rc "help lists the commands (exit 0)" 0
for c in $commands; do
	expect_match "help lists $c" "$T_OUT" "^    $c "
done
expect_match "help lists the exit codes" "$T_OUT" '^    75 +stopped'
check "help lists no hidden command" bash -c '! printf "%s" "$1" | grep -q __complete' _ "$T_OUT"
run_sc help run
expect_rc "help run (exit 0)" 0
expect_match "help run gives the synopsis" "$T_OUT" '^usage: storyctl .*run \[-j N\]'
expect_match "help run says what N means" "$T_OUT" 'run up to N stories at once, N from 1 to 64'
expect_match "help run gives the exit codes" "$T_OUT" '^    3 +the batch finished'
expect_match "help run gives examples" "$T_OUT" '^    storyctl run -j 3$'
help_run=$T_OUT
run_sc run --help
check "run --help prints the same as help run" test "$T_OUT" = "$help_run"
run_sc list -h
expect_match "list -h lists the statuses of --status" "$T_OUT" 'pending, running, done,'
run_sc help list
expect_match "help list has an example with --status" "$T_OUT" 'storyctl list --status escalated'
for c in $commands; do
	run_sc "$c" --help
	if [ "$T_RC" -eq 0 ] && printf '%s' "$T_OUT" | grep -q '^options:' &&
		printf '%s' "$T_OUT" | grep -q '^exit codes:' &&
		printf '%s' "$T_OUT" | grep -q '^examples:'; then
		ok "$c --help has options, exit codes and examples"
	else
		not_ok "$c --help has options, exit codes and examples (exit $T_RC)"
	fi
done
run_sc stauts
expect_rc "a misspelt command is a usage error" 64
expect_match "stauts: did you mean status?" "$T_ERR" "unknown command 'stauts'; did you mean status\?"
run_sc lsit
expect_match "lsit: did you mean list? (a swap beats another word as near)" "$T_ERR" 'did you mean list\?'
run_sc help shwo
expect_rc "help of a misspelt command is a usage error" 64
expect_match "help shwo: did you mean show?" "$T_ERR" 'did you mean show\?'
run_sc xyzzy
check "no suggestion when nothing is close" bash -c '! printf "%s" "$1" | grep -q "did you mean"' _ "$T_ERR"
run_sc
expect_rc "no command: usage (64)" 64
expect_match "no command prints the commands on stderr" "$T_ERR" '^commands:'

# --- the man page -----------------------------------------------------------
"$STORYCTL" __man >"$T_TMP/storyctl.1"
check "man/storyctl.1 is what the help table gives (make man)" cmp -s "$T_TMP/storyctl.1" "$man_page"
for c in $commands; do
	check "the man page has a section for $c" grep -qx "\\.SS \"$c\"" "$man_page"
	# every flag in the options section of its --help
	opts=$("$STORYCTL" "$c" --help | sed -n '/^options:/,/^$/p' |
		grep -oE '(^    |, )--?[a-z][a-z-]*' | sed 's/^[ ,]*//')
	check "$c --help lists options" test -n "$opts"
	for o in $opts; do
		# roff writes each '-' as '\-'
		check "the man page has $c's option $o" grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$man_page"
	done
done
if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -P-cbou "$man_page" >"$T_TMP/man.txt" 2>"$T_TMP/man.err"
	check "groff renders the man page without warnings" test ! -s "$T_TMP/man.err"
	expect_match "the rendered page has the run section" "$(cat "$T_TMP/man.txt")" 'storyctl +run +\[-j N\]'
else
	ok "# SKIP groff is not installed (scripts/deps installs groff-base)"
fi

# --- a project for the story ids ---------------------------------------------
new_project
new_story "$P" 1.1-login 2
new_story "$P" 1.2-logout 2
new_story "$P" 2.1-report 2
commit_all
for c in show tasks; do
	run_sc -C "$P" "$c" 1.1-logn
	expect_match "$c of a misspelt story id: did you mean 1.1-login?" "$T_ERR" "no story '1.1-logn'.*; did you mean 1\.1-login\?"
done
ids=$("$STORYCTL" -C "$P" __complete args show | sort | tr '\n' ' ')
check "__complete args show gives the config's ids before a batch" test "$ids" = "1.1-login 1.2-logout 2.1-report "
ids=$(cd "$P" && "$STORYCTL" __complete values list --status | tr '\n' ' ')
expect_match "__complete values list --status gives the statuses" "$ids" '^pending running done deferred escalated blocked invalid $'
run_sc -C "$P" run 1.1-login
run_sc -C "$P" requeue 1.1-logn
expect_match "requeue of a misspelt story id: did you mean 1.1-login?" "$T_ERR" "no story '1.1-logn'.*; did you mean 1\.1-login\?"
ids=$("$STORYCTL" -C "$P" __complete args show | tr '\n' ' ')
check "after a batch, the ids are the batch's" test "$ids" = "1.1-login "
rm -f "$P/.storyctl/state.db"*
ids=$(cd "$T_TMP" && "$STORYCTL" __complete args show 2>&1)
check "outside a project, __complete prints nothing and no error" test -z "$ids"

# --- bash completion -----------------------------------------------------------
bc=/usr/share/bash-completion/bash_completion
if [ -r "$bc" ]; then
	# complete LINE: the words bash would offer at the end of LINE, run in $P.
	bash_complete() {
		(cd "$P" && bash --norc -c '
			. "$1" && . "$2" || exit 1
			line=$3
			read -ra COMP_WORDS <<<"$line"
			[ "${line: -1}" = " " ] && COMP_WORDS+=("")
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
			COMP_LINE=$line COMP_POINT=${#line}
			_storyctl "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
			printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
		' _ "$bc" "$bash_comp" "$1")
	}
	out=$(cd "$P" && bash --norc -c '. "$1" && . "$2" && complete -p storyctl' _ "$bc" "$bash_comp" 2>&1)
	expect_match "the bash script loads and registers _storyctl" "$out" '^complete -F _storyctl storyctl$'
	out=$(bash_complete "$STORYCTL statu")
	check "bash completes a command (statu: status)" test "$out" = "status "
	out=$(bash_complete "$STORYCTL st")
	check "bash offers every command of a prefix (st: stats, status)" test "$out" = "stats status "
	out=$(bash_complete "$STORYCTL run --")
	check "bash completes run's options" test "$out" = "--help --include-drafts --jobs --serve --tls-cert --tls-key "
	out=$(bash_complete "$STORYCTL list --status e")
	check "bash completes --status's values" test "$out" = "escalated "
	out=$(bash_complete "$STORYCTL show 1.")
	check "bash completes story ids (show 1.)" test "$out" = "1.1-login 1.2-logout "
	out=$(cd "$T_TMP" && bash_complete "$STORYCTL -C $P requeue 2")
	check "bash completes the ids of -C DIR's project" test "$out" = "2.1-report "
else
	not_ok "bash-completion is not installed (scripts/deps installs it)"
fi

# --- zsh completion --------------------------------------------------------------
if command -v zsh >/dev/null 2>&1; then
	# zsh_complete WORD...: the words _storyctl offers for the last word,
	# compadd replaced by a function that prints them (a function comes
	# before the builtin), in $P.
	zsh_complete() {
		(cd "$P" && zsh -f -c '
			fpath=("$1" $fpath)
			autoload -Uz compinit && compinit -u -d "$2/zcompdump" || exit 1
			[[ $_comps[storyctl] == _storyctl ]] || { print "not registered"; exit 1; }
			compadd() { while [[ $1 != -- ]]; do shift; done; shift; reply+=("$@"); }
			_directories() { reply+=(DIRS); }
			_files() { reply+=(FILES); }
			shift 2
			words=("$@") CURRENT=$# PREFIX=${@[-1]} reply=()
			_storyctl
			print -r -- ${(j: :)${(o)${(M)reply:#${PREFIX}*}}}
		' _ "$zsh_dir" "$T_TMP" "$@")
	}
	out=$(zsh_complete "$STORYCTL" statu)
	check "zsh loads _storyctl (compinit) and completes a command" test "$out" = "status"
	out=$(zsh_complete "$STORYCTL" st)
	check "zsh offers every command of a prefix (st: stats, status)" test "$out" = "stats status"
	out=$(zsh_complete "$STORYCTL" show 1.)
	check "zsh completes story ids (show 1.)" test "$out" = "1.1-login 1.2-logout"
	out=$(zsh_complete "$STORYCTL" list --)
	check "zsh completes list's options" test "$out" = "--help --json --status"
else
	not_ok "zsh is not installed (scripts/deps installs it)"
fi

# --- the options help lists are the options parsed --------------------------------
# One table per command drives both (controller/cli/opts.h): every option a
# command's help (and so the completion and the man page) lists is one its
# parser takes, and one it does not list is refused.
empty="$T_TMP/no-config"
for c in $commands; do
	[ "$c" = key ] && continue # its options follow a subcommand: below
	bad=""
	for w in $("$STORYCTL" __complete options "$c"); do
		case $w in -h | --help) continue ;; esac
		rm -rf "$empty" && mkdir -p "$empty"
		timeout 20 "$STORYCTL" -C "$empty" "$c" "$w" </dev/null >/dev/null 2>"$T_TMP/opt.err"
		grep -q "unknown option" "$T_TMP/opt.err" && bad="$bad $w"
	done
	check "$c takes every option its help lists${bad:+ (not:$bad)}" test -z "$bad"
	rm -rf "$empty" && mkdir -p "$empty"
	run_sc -C "$empty" "$c" --no-such-option
	expect_match "$c refuses an option its help does not list" "$T_ERR" "unknown option '--no-such-option'"
done
# ... and the usage line names each of them (by one of its names)
for c in $commands; do
	run_sc help "$c"
	usage=$(printf '%s\n' "$T_OUT" | grep '^usage:')
	missing=$(printf '%s\n' "$T_OUT" | sed -n '/^options:/,/^$/p' |
		sed -n 's/^    \(-[^ ].*\)$/\1/p' | while read -r term; do
		hit=""
		for n in $(printf '%s' "$term" | tr ',' '\n' | awk '{print $1}'); do
			case $n in -h | --help) hit=1 ;; esac
			case "$usage" in *"$n"*) hit=1 ;; esac
		done
		[ -n "$hit" ] || printf ' %s' "$term"
	done)
	check "$c's usage line names every option${missing:+ (not:$missing)}" test -z "$missing"
done
rm -rf "$empty" && mkdir -p "$empty"
run_sc -C "$empty" key add --no-such-option
expect_match "key add refuses an option its help does not list" "$T_ERR" "unknown option '--no-such-option'"

# --- make install / uninstall ------------------------------------------------------
build=$(dirname "$STORYCTL")
dest="$T_TMP/dest"
make -s -C "$STORYCTL_SRC" BUILD="$build" install PREFIX=/opt/sc DESTDIR="$dest" >/dev/null 2>&1
check "make install: the binary" test -x "$dest/opt/sc/bin/storyctl"
check "make install: the man page" cmp -s "$man_page" "$dest/opt/sc/share/man/man1/storyctl.1"
check "make install: the bash completion" cmp -s "$bash_comp" "$dest/opt/sc/share/bash-completion/completions/storyctl"
check "make install: the zsh completion" cmp -s "$zsh_dir/_storyctl" "$dest/opt/sc/share/zsh/site-functions/_storyctl"
if command -v man >/dev/null 2>&1; then
	out=$(MANPATH="$dest/opt/sc/share/man" MANPAGER=cat man storyctl 2>/dev/null)
	expect_match "man storyctl finds the installed page" "$out" 'storyctl \[-C DIR\]'
fi
make -s -C "$STORYCTL_SRC" BUILD="$build" uninstall PREFIX=/opt/sc DESTDIR="$dest" >/dev/null 2>&1
left=$(find "$dest" -type f | wc -l)
check "make uninstall removes all four" test "$left" -eq 0
finish
