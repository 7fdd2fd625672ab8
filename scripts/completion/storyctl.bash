# bash completion for storyctl: commands, each command's options and
# their values, and story ids from the current batch.  The words come
# from storyctl itself (`storyctl __complete ...`), so they follow the
# installed version (docs/commands.md#help-man-page-completion).
# Installed as $(PREFIX)/share/bash-completion/completions/storyctl.

_storyctl()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion -n : || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	local sc=${words[0]} cmd="" ci=0 i vals
	local -a global=()
	# The global options come before the command; -C and -c are passed on
	# so that the story ids are those of that project.
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-C | -c)
			global+=("${words[i]}" "${words[i + 1]}")
			i=$((i + 1))
			;;
		-*) ;;
		*)
			cmd=${words[i]}
			ci=$i
			break
			;;
		esac
	done
	if [[ -z $cmd ]]; then
		case $prev in
		-C)
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
			return
			;;
		-c)
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			vals='-C -c -h --help --version'
		else
			vals=$("$sc" __complete commands 2>/dev/null)
		fi
		mapfile -t COMPREPLY < <(compgen -W "$vals" -- "$cur")
		return
	fi
	if [[ $prev == -* ]] && ((cword > ci + 1)); then
		vals=$("$sc" "${global[@]}" __complete values "$cmd" "$prev" 2>/dev/null)
		if [[ -n $vals ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$vals" -- "$cur")
			return
		fi
	fi
	if [[ $cur == -* ]]; then
		vals=$("$sc" __complete options "$cmd" 2>/dev/null)
	else
		vals=$("$sc" "${global[@]}" __complete args "$cmd" 2>/dev/null)
	fi
	mapfile -t COMPREPLY < <(compgen -W "$vals" -- "$cur")
}
complete -F _storyctl storyctl
