# accelctl.bash: bash completion for accelctl.
#
# Works with bash-completion (then the child command after "--" is completed
# by its own completion, as bash-completion's timeout does) and without it
# (then the child's command word comes from compgen -c and its arguments are
# file names). The word lists are copies of "accelctl --list-commands" and
# "accelctl CMD --help": tests/sh/t_docs.sh fails when they drift apart.

_accelctl_commands='is-main is-local-main on-main on-local-main on-process
on-local-process print barrier main-first broadcast abort status info check
launch helper rendezvous trace help'
_accelctl_helper_actions='run start stop status'
_accelctl_rendezvous_actions='start stop status'
_accelctl_global_opts='-h --help --version --list-commands'

# _accelctl_opts CMD: the options of CMD, as its --help lists them.
_accelctl_opts()
{
	case $1 in
	info) echo '--json --shell -h --help' ;;
	check) echo '--min-busbw --iters --max-size -t --timeout -h --help' ;;
	launch) echo '-n --nproc -N --nnodes -l --tag -K --kill-on-bad-exit -r --rendezvous -h --help' ;;
	helper) echo '-r --rendezvous -h --help' ;;
	rendezvous) echo '--bind --port --dir --redis-server --shell --json -h --help' ;;
	trace) echo '-o --output --svg -j --job -h --help' ;;
	# print parses no options: only a lone --help (and a leading --) mean something.
	print) echo '-- --help' ;;
	on-main | on-local-main | on-process | on-local-process)
		echo '-- -w --wait -t --timeout -h --help' ;;
	barrier) echo '-t --timeout -s --status -h --help' ;;
	main-first) echo '-- -l --local -t --timeout -h --help' ;;
	broadcast) echo '-t --timeout -h --help' ;;
	status) echo '-H --history -j --json -h --help' ;;
	*) echo '-h --help' ;;
	esac
}

# _accelctl_child OFFSET: complete COMP_WORDS[OFFSET...] as a command line of its own.
_accelctl_child()
{
	if declare -F _command_offset >/dev/null; then
		_command_offset "$1"
	elif declare -F _comp_command_offset >/dev/null; then
		_comp_command_offset "$1"
	elif ((COMP_CWORD == $1)); then
		mapfile -t COMPREPLY < <(compgen -c -- "${COMP_WORDS[COMP_CWORD]}" | sort -u)
	else
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "${COMP_WORDS[COMP_CWORD]}")
	fi
}

# _accelctl_helper_action_due: true when the current word of "accelctl helper"
# may be its action or an option: no action typed yet, and the current word is
# not the URL of -r/--rendezvous. Without bash-completion's word joining,
# COMP_WORDBREAKS splits a URL at ':' (and --rendezvous=URL at '='): the
# pieces joined by those are skipped as one word.
_accelctl_helper_action_due()
{
	local i w
	for ((i = 2; i <= COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		[[ $w == [:=] || ${COMP_WORDS[i-1]} == [:=] ]] && continue
		((i == COMP_CWORD)) && return 0
		case $w in
		-r | --rendezvous) ((i++)) ;;
		-*) ;;
		*) return 1 ;;
		esac
	done
	return 1
}

_accelctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local cmd=${COMP_WORDS[1]} i
	COMPREPLY=()

	if ((COMP_CWORD == 1)); then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$_accelctl_global_opts" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$_accelctl_commands" -- "$cur")
		fi
		return 0
	fi

	# print takes free text: offer its -- and --help only as the first word.
	if [[ $cmd == print ]]; then
		((COMP_CWORD == 2)) && [[ $cur == -* ]] &&
			mapfile -t COMPREPLY < <(compgen -W "$(_accelctl_opts print)" -- "$cur")
		return 0
	fi

	# After "--" comes the child command of the commands that run one:
	# complete it as if typed alone.
	case $cmd in
	on-main | on-local-main | on-process | on-local-process | main-first | launch)
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [[ ${COMP_WORDS[i]} == -- ]]; then
				_accelctl_child $((i + 1))
				return 0
			fi
		done
		;;
	esac

	# helper's options come before its action, and nothing after it.
	if [[ $cmd == helper ]]; then
		_accelctl_helper_action_due || return 0
	fi

	# rendezvous: the values of its options, then one action.
	if [[ $cmd == rendezvous && $cur != -* ]]; then
		case ${COMP_WORDS[COMP_CWORD-1]} in
		--shell) mapfile -t COMPREPLY < <(compgen -W 'sh fish' -- "$cur") ;;
		--dir) compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
		--redis-server) compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
		--bind | --port) ;;
		*)
			for ((i = 2; i < COMP_CWORD; i++)); do
				[[ " $_accelctl_rendezvous_actions " == *" ${COMP_WORDS[i]} "* ]] && return 0
			done
			mapfile -t COMPREPLY < <(compgen -W "$_accelctl_rendezvous_actions" -- "$cur") ;;
		esac
		return 0
	fi

	# help: one command name, whose help it prints.
	if [[ $cmd == help && $cur != -* ]]; then
		((COMP_CWORD == 2)) &&
			mapfile -t COMPREPLY < <(compgen -W "$_accelctl_commands" -- "$cur")
		return 0
	fi

	# trace: its action, then a file or the directory.
	if [[ $cmd == trace && $cur != -* ]]; then
		if ((COMP_CWORD == 2)); then
			mapfile -t COMPREPLY < <(compgen -W 'merge' -- "$cur")
		else
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return 0
	fi

	# Only options are offered: positionals (N, K, M) are numbers, NAME,
	# VALUE, REASON and URL are free text; the actions of helper and
	# rendezvous are the exceptions.
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_accelctl_opts "$cmd")" -- "$cur")
	elif [[ $cmd == helper ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$_accelctl_helper_actions" -- "$cur")
	fi
	return 0
}

complete -F _accelctl accelctl
