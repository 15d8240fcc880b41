# t_completion.sh: bash, fish and zsh complete accelctl's words, and the child command after "--".
. "$(dirname "$0")/lib.sh"

COMPL=$ACCELCTL_SRC/completions
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

# bash_complete with|without LINE: the candidates of _accelctl for LINE (the
# cursor at its end), sorted, one a line; "with" sources bash-completion first
# (when installed), "without" checks that the file degrades on its own.
bash_complete() {
	timeout 20 bash --norc --noprofile -c '
		[ "$1" = with ] && [ -r "$2" ] && . "$2"
		. "$3"
		COMP_LINE=$4 COMP_POINT=${#4}
		read -ra COMP_WORDS <<<"$4"
		[[ $4 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_accelctl accelctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$1" "$BASH_COMPLETION" "$COMPL/accelctl.bash" "$2" 2>/dev/null |
		grep . | LC_ALL=C sort -u
}

# joined: the lines of stdin on one line, separated by spaces.
joined() { paste -sd' ' -; }

# assertOffers MSG OFFERS WORD: WORD is one of the lines of OFFERS;
# assertNotOffers: it is not. The failure shows everything that was offered.
assertOffers() {
	printf '%s\n' "$2" | grep -qxF -- "$3" || fail "$1: '$3' not offered; got: $(printf '%s\n' "$2" | joined)"
}
assertNotOffers() {
	! printf '%s\n' "$2" | grep -qxF -- "$3" || fail "$1: '$3' offered; got: $(printf '%s\n' "$2" | joined)"
}

testBashIsPrefix() {
	local m
	for m in with without; do
		assertEquals "$m bash-completion: accelctl is-" \
			"is-local-main is-main" "$(bash_complete $m 'accelctl is-' | joined)"
	done
}

testBashOnPrefix() {
	local m
	for m in with without; do
		assertEquals "$m bash-completion: accelctl on-" \
			"on-local-main on-local-process on-main on-process" \
			"$(bash_complete $m 'accelctl on-' | joined)"
	done
}

testBashInfoOptions() {
	local m got
	for m in with without; do
		got=$(bash_complete $m 'accelctl info --')
		assertOffers "$m: accelctl info --" "$got" --json
		assertOffers "$m: accelctl info --" "$got" --shell
		assertNotOffers "$m: accelctl info --" "$got" --nnodes
	done
}

testBashLaunchOptions() {
	local m got o
	for m in with without; do
		got=$(bash_complete $m 'accelctl launch -')
		for o in -n --nproc --nnodes --tag -K --kill-on-bad-exit -r --rendezvous; do
			assertOffers "$m: accelctl launch -" "$got" "$o"
		done
		# The value of -n is a number: nothing to offer.
		assertEquals "$m: accelctl launch -n " "" "$(bash_complete $m 'accelctl launch -n ')"
	done
}

testBashDashDash() {
	local m
	for m in with without; do
		# "--" comes before CMD, and only where a CMD follows.
		assertOffers "$m: accelctl on-main -" "$(bash_complete $m 'accelctl on-main -')" --
		assertOffers "$m: accelctl main-first -" "$(bash_complete $m 'accelctl main-first -')" --
		assertNotOffers "$m: accelctl is-main -" "$(bash_complete $m 'accelctl is-main -')" --
		assertNotOffers "$m: accelctl barrier -" "$(bash_complete $m 'accelctl barrier -')" --
	done
}

testBashChildCommandWord() {
	local m line
	for m in with without; do
		for line in 'accelctl on-main -- ech' 'accelctl on-process 1 -- ech' \
			'accelctl on-main --wait -t 5m -- ech' 'accelctl main-first --local -- ech' \
			'accelctl launch -n 2 --tag -- ech'; do
			assertOffers "$m: $line" "$(bash_complete $m "$line")" echo
		done
	done
}

testBashHelperActions() {
	local m
	for m in with without; do
		assertEquals "$m: accelctl helper " "run start status stop" \
			"$(bash_complete $m 'accelctl helper ' | joined)"
		assertEquals "$m: accelctl helper run " "" "$(bash_complete $m 'accelctl helper run ')"
		# --rendezvous URL comes before the action; its URL is free text.
		assertOffers "$m: accelctl helper -" "$(bash_complete $m 'accelctl helper -')" --rendezvous
		assertEquals "$m: accelctl helper -r " "" "$(bash_complete $m 'accelctl helper -r ')"
		assertEquals "$m: accelctl helper -r redis://h:6379 " "run start status stop" \
			"$(bash_complete $m 'accelctl helper -r redis://h:6379 ' | joined)"
		# A barrier's NAME is not a command line, even after "--".
		assertEquals "$m: accelctl barrier -- ech" "" "$(bash_complete $m 'accelctl barrier -- ech')"
	done
}

testBashRendezvous() {
	local m
	for m in with without; do
		assertEquals "$m: accelctl rendezvous " "start status stop" \
			"$(bash_complete $m 'accelctl rendezvous ' | joined)"
		assertEquals "$m: accelctl rendezvous start " "" "$(bash_complete $m 'accelctl rendezvous start ')"
		assertOffers "$m: accelctl rendezvous -" "$(bash_complete $m 'accelctl rendezvous -')" --bind
		assertOffers "$m: accelctl rendezvous start --" "$(bash_complete $m 'accelctl rendezvous start --')" --redis-server
		assertEquals "$m: accelctl rendezvous --shell " "fish sh" "$(bash_complete $m 'accelctl rendezvous --shell ' | joined)"
		assertEquals "$m: accelctl rendezvous --port " "" "$(bash_complete $m 'accelctl rendezvous --port ')"
		assertEquals "$m: accelctl rendezvous --port 7 " "start status stop" \
			"$(bash_complete $m 'accelctl rendezvous --port 7 ' | joined)"
	done
}

testBashChildArguments() {
	local m got
	for m in with without; do
		got=$(bash_complete $m 'accelctl on-main -- ls --')
		assertNotOffers "$m: accelctl on-main -- ls --" "$got" --json
		printf '%s\n' "$got" | grep -q -e '-main' -e '--kill-on-bad-exit' &&
			fail "$m: accelctl on-main -- ls -- offers accelctl's words: $(printf '%s\n' "$got" | joined)"
	done
	# With bash-completion, ls's own completion answers (it reads ls --help).
	[ -r "$BASH_COMPLETION" ] || return 0
	assertOffers "with: accelctl on-main -- ls --" \
		"$(bash_complete with 'accelctl on-main -- ls --')" --all
}

# fish_complete LINE: fish's candidates for LINE, sorted, descriptions cut.
fish_complete() {
	timeout 20 fish --no-config -c "source '$COMPL/accelctl.fish'; complete -C'$1'" |
		cut -f1 | LC_ALL=C sort -u
}

testFish() {
	command -v fish >/dev/null || startSkipping
	assertEquals "fish: accelctl is-" "is-local-main is-main" \
		"$(fish_complete 'accelctl is-' | joined)"
	assertEquals "fish: accelctl on-" \
		"on-local-main on-local-process on-main on-process" \
		"$(fish_complete 'accelctl on-' | joined)"
	assertOffers "fish: accelctl info --" "$(fish_complete 'accelctl info --')" --json
	assertOffers "fish: accelctl launch -" "$(fish_complete 'accelctl launch -')" --nnodes
	assertOffers "fish: accelctl on-main -- ech" "$(fish_complete 'accelctl on-main -- ech')" echo
	assertNotOffers "fish: accelctl on-main -- ech" "$(fish_complete 'accelctl on-main -- ')" is-main
	assertOffers "fish: accelctl on-main -" "$(fish_complete 'accelctl on-main -')" --wait
	assertOffers "fish: accelctl barrier -" "$(fish_complete 'accelctl barrier -')" --status
	assertOffers "fish: accelctl main-first -- ech" "$(fish_complete 'accelctl main-first -- ech')" echo
	assertEquals "fish: accelctl helper " "run start status stop" \
		"$(fish_complete 'accelctl helper ' | joined)"
	assertOffers "fish: accelctl launch -" "$(fish_complete 'accelctl launch -')" --rendezvous
	assertOffers "fish: accelctl helper -" "$(fish_complete 'accelctl helper -')" --rendezvous
	assertEquals "fish: accelctl helper -r redis://h:6379 " "run start status stop" \
		"$(fish_complete 'accelctl helper -r redis://h:6379 ' | joined)"
	assertEquals "fish: accelctl rendezvous " "start status stop" \
		"$(fish_complete 'accelctl rendezvous ' | joined)"
	assertOffers "fish: accelctl rendezvous start --" "$(fish_complete 'accelctl rendezvous start --')" --shell
	assertEquals "fish: accelctl rendezvous start --shell " "fish sh" \
		"$(fish_complete 'accelctl rendezvous start --shell ' | joined)"
}

# zsh_complete LINE: zsh's candidates for LINE, typed with a TAB into an
# interactive zsh on a pseudo-terminal (zsh/zpty), where compinit loads
# completions/_accelctl; compadd is wrapped to print each candidate it adds.
zsh_complete() {
	timeout 20 zsh -f -c '
		zmodload zsh/zpty || exit 77
		zpty z zsh -f -i
		zpty -w z "PS1=; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
		zpty -w z '\''compadd() { local -a h; builtin compadd -O h "$@";
			(( $#h )) && print -rl -- "<<"${^h}">>"; builtin compadd "$@"; }'\''
		zpty -w z "print -r -- @@start@@"
		zpty -w z "$2"$'\''\t'\''
		zpty -w z $'\''\C-u'\''"print -r -- @@end@@"
		local line on=0
		while zpty -r z line; do
			[[ $line == *@@end@@* && $line != *print* ]] && break
			[[ $line == *@@start@@* && $line != *print* ]] && { on=1; continue }
			(( on )) && [[ $line == *"<<"*">>"* ]] && print -r -- ${${line#*<<}%%>>*}
		done
		zpty -d z' _ "$COMPL" "$1" | LC_ALL=C sort -u
}

testZsh() {
	command -v zsh >/dev/null || startSkipping
	zsh -n "$COMPL/_accelctl"
	assertTrue "zsh -n completions/_accelctl" $?
	assertEquals "zsh: accelctl is-" "is-local-main is-main" \
		"$(zsh_complete 'accelctl is-' | joined)"
	assertOffers "zsh: accelctl info --" "$(zsh_complete 'accelctl info --')" --shell
	assertOffers "zsh: accelctl launch -" "$(zsh_complete 'accelctl launch -')" --tag
	assertOffers "zsh: accelctl on-main -- ech" "$(zsh_complete 'accelctl on-main -- ech')" echo
	assertOffers "zsh: accelctl on-main -" "$(zsh_complete 'accelctl on-main -')" --wait
	assertOffers "zsh: accelctl barrier -" "$(zsh_complete 'accelctl barrier -')" --status
	assertOffers "zsh: accelctl main-first -- ech" "$(zsh_complete 'accelctl main-first -- ech')" echo
	assertEquals "zsh: accelctl helper " "run start status stop" \
		"$(zsh_complete 'accelctl helper ' | joined)"
	assertOffers "zsh: accelctl launch -" "$(zsh_complete 'accelctl launch -')" --rendezvous
	assertOffers "zsh: accelctl helper -" "$(zsh_complete 'accelctl helper -')" --rendezvous
	assertEquals "zsh: accelctl helper -r redis://h:6379 " "run start status stop" \
		"$(zsh_complete 'accelctl helper -r redis://h:6379 ' | joined)"
	assertEquals "zsh: accelctl rendezvous " "start status stop" \
		"$(zsh_complete 'accelctl rendezvous ' | joined)"
	assertOffers "zsh: accelctl rendezvous --" "$(zsh_complete 'accelctl rendezvous --')" --redis-server
}

load_shunit2
