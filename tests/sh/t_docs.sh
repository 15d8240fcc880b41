# t_docs.sh: --help, the man page, the three completions and the README name the binary's subcommands (and the man page and bash completion its options).
. "$(dirname "$0")/lib.sh"

MAN=$ACCELCTL_SRC/man/accelctl.1
COMPL=$ACCELCTL_SRC/completions

# sorted: the words of stdin, one a line, sorted and unique; the form every
# list is compared in, so a name gained or lost in any source shows in the diff.
sorted() { tr -s ' \t' '\n\n' | grep . | LC_ALL=C sort -u; }

oneTimeSetUp() {
	run -- --list-commands
	COMMANDS=$(printf '%s\n' "$out" | sorted)
	[ -n "$COMMANDS" ] || { echo "accelctl --list-commands printed nothing" >&2; exit 1; }
}

# bash_offers LINE: the candidates of completions/accelctl.bash for LINE (the
# cursor at its end), without bash-completion: what the file itself offers.
bash_offers() {
	bash --norc --noprofile -c '
		. "$1"
		COMP_LINE=$2 COMP_POINT=${#2}
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_accelctl accelctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPL/accelctl.bash" "$1" 2>/dev/null
}

# man_text: the man page as rendered, without overstrike, in ASCII.
man_text() {
	if command -v mandoc >/dev/null; then
		mandoc -T ascii "$MAN"
	else
		MANWIDTH=80 LC_ALL=C MANPAGER=cat man -l "$MAN"
	fi | sed 's/.\x08//g'
}

testHelpListsEveryCommand() {
	run -- --help
	assertRc 0 "accelctl --help"
	# The command lines of --help: two spaces, a name; up to the exit codes.
	local names
	names=$(printf '%s\n' "$out" | awk '/^Exit codes:/ { exit }
		/^  [a-z][a-z0-9-]*( |$)/ { print $1 }')
	assertEquals "commands in accelctl --help" "$COMMANDS" "$(printf '%s\n' "$names" | sorted)"
}

testManCommandsSection() {
	# ".It Cm NAME" at the top level of the COMMANDS list (the options of a
	# command are a nested list).
	local names
	names=$(awk '/^\.Sh / { in_sec = ($2 == "COMMANDS"); next }
		!in_sec { next }
		/^\.Bl/ { depth++ } /^\.El/ { depth-- }
		depth == 1 && /^\.It Cm / { print $3 }' "$MAN")
	assertEquals "commands in man/accelctl.1 COMMANDS" "$COMMANDS" "$(printf '%s\n' "$names" | sorted)"
}

testBashCompletionCommands() {
	assertEquals "commands completed by accelctl.bash" "$COMMANDS" \
		"$(bash_offers 'accelctl ' | sorted)"
}

testZshCompletionCommands() {
	# The entries 'NAME:description' of the commands=( ... ) array.
	local names
	names=$(awk '/^commands=\(/ { on = 1; next } on && /^\)/ { exit }
		on { sub(/^[\t ]*'\''/, ""); sub(/:.*/, ""); print }' "$COMPL/_accelctl")
	assertEquals "commands in _accelctl" "$COMMANDS" "$(printf '%s\n' "$names" | sorted)"
}

testFishCompletionCommands() {
	# The subcommands offered (-a NAME) and those that end the command list
	# ("set -l commands"): both must be complete.
	local offered listed
	offered=$(sed -n 's/.*subcommand_from \$commands" -a \([^ ]*\) .*/\1/p' "$COMPL/accelctl.fish")
	listed=$(sed -n 's/^set -l commands //p' "$COMPL/accelctl.fish")
	assertEquals "commands offered by accelctl.fish" "$COMMANDS" "$(printf '%s\n' "$offered" | sorted)"
	assertEquals "set -l commands of accelctl.fish" "$COMMANDS" "$(printf '%s\n' "$listed" | sorted)"
}

# The detection rows, in order: the last paragraph of --help (printed from
# detection's own table), the ENVIRONMENT list of the man page (".Li NAME" after
# each ".It") and the detection table of docs/launchers.md (its `info` column).
testLaunchersAgree() {
	local help man readme
	run -- --help
	help=$(printf '%s\n' "$out" | awk '/^The launcher is detected/ { on = 1 } on' | tr '\n' ' ' |
		sed 's/.*in this order: //; s/;.*//; s/,/ /g' | tr -s ' ' '\n' | grep .)
	man=$(awk '/^\.Sh / { on = ($2 == "ENVIRONMENT"); next }
		on && /^\.Bl -enum/ { inlist = 1; next } inlist && /^\.El/ { exit }
		inlist && /^\.It/ { item = 1; next }
		item == 2 && /^\.Pq Li / { print $3 } item == 2 { item = 0 }
		item == 1 && /^\.Li / { print $2; item = 2 }' "$MAN")
	readme=$(awk '/^\| order \| `info` \|/ { on = 1; next } on && !/^\|/ { exit }
		on && /^\| [0-9]/ { n = split($0, c, "|"); print c[3] }' "$ACCELCTL_SRC/docs/launchers.md" |
		tr -d '`()' | tr -s ' ' '\n' | grep .)
	assertContains "help names flux" "$help" flux
	assertEquals "launchers: man/accelctl.1 ENVIRONMENT against --help" "$help" "$man"
	assertEquals "launchers: docs/launchers.md's detection table against --help" "$help" "$readme"
}

# The README's command table names every command of --list-commands, and nothing
# else. The table is the one whose header row starts "| command | does |". Each row's
# first cell is read so: backticks dropped, its first word is the command
# (`barrier --status RC NAME` is barrier, `trace merge DIR` is trace, `help [COMMAND]`
# is help); a row whose first word holds a "*" speaks of a family of commands
# (`on-* --wait -- CMD...`) and is skipped. A command missing from the table, or a row
# whose first word is no command, fails.
readme_commands() {
	awk '/^\| command \| does \|/ { on = 1; next } on && !/^\|/ { exit }
		on && !/^\|[-|: ]*$/ { split($0, c, "|"); cell = c[2]; gsub(/`/, "", cell)
			split(cell, w, " "); if (w[1] !~ /\*/) print w[1] }' "$1"
}

testReadmeCommandTable() {
	local names
	names=$(readme_commands "$ACCELCTL_SRC/README.md")
	assertNotNull "README.md has a command table (| command | does | ...)" "$names"
	assertEquals "commands in README.md's command table" "$COMMANDS" "$(printf '%s\n' "$names" | sorted)"
	# The check itself: a table without one command must not pass.
	local f
	f=$(scratch)/README.md
	grep -v '^| `broadcast ' "$ACCELCTL_SRC/README.md" >"$f"
	assertNotEquals "a README without broadcast in its table" "$COMMANDS" \
		"$(readme_commands "$f" | sorted)"
}

# --help's usages wrap between options, never inside one (not "[--timeo").
testHelpUsagesWhole() {
	run -- --help
	local bad
	bad=$(printf '%s\n' "$out" | awk '/^Exit codes:/ { exit } {
		d = 0; for (i = 1; i <= length($0); i++) { ch = substr($0, i, 1)
			if (ch == "[") d++; else if (ch == "]") d-- }
		if (d != 0) print }')
	assertEquals "usage lines cut inside a bracket" "" "$bad"
	assertContains "exit code 129 listed" "$out" "  129  "
}

# --help fits a terminal of 80 columns: summaries wrap under themselves too (print,
# main-first and status ran to 85, 81 and 89 columns), and its exit codes say who
# passes CMD's own status through (DESIGN.md section 3), as the README does.
testHelpFits80Columns() {
	run -- --help
	assertEquals "lines of --help over 80 columns" "" "$(printf '%s\n' "$out" | awk 'length($0) > 80')"
	assertContains "a wrapped summary continues under itself" "$out" \
		"$(printf '%-31s%s' '' 'node only')"
	assertContains "who passes CMD's status through" "$out" \
		"  other    CMD's own exit status (on-*, main-first, --wait, --status)"
}

testManLint() {
	command -v mandoc >/dev/null || startSkipping
	local lint
	lint=$(mandoc -T lint -W warning "$MAN" 2>&1)
	assertEquals "mandoc -T lint -W warning" "" "$lint"
}

testEveryCommandHelp() {
	local c
	for c in $COMMANDS; do
		run -- "$c" --help
		assertRc 0 "accelctl $c --help"
		case ${out%%$'\n'*} in
		"usage: accelctl $c" | "usage: accelctl $c "*) ;;
		*) fail "accelctl $c --help: usage line is '${out%%$'\n'*}'" ;;
		esac
	done
}

# help_options CMD: the options in the Options: list of "accelctl CMD --help".
help_options() {
	run -- "$1" --help
	printf '%s\n' "$out" | awk '/^Options:/ { on = 1; next }
		on { for (i = 1; i <= NF; i++) { w = $i; sub(/,$/, "", w)
			if (w !~ /^-/) break; print w } }'
}

testOptionsDocumented() {
	local c o offers block where page
	page=$(man_text)
	for c in $COMMANDS; do
		offers=$(bash_offers "accelctl $c -")
		# The man entry of c: from its ".It" line to the next entry.
		block=$(printf '%s\n' "$page" | awk -v c="$c" '
			/^     [^ ]/ { on = ($1 == c) } on')
		for o in $(help_options "$c"); do
			where=$block
			case $o in
			-h | --help)
				# Skip a help spelling the command does not take (print
				# parses no options: its -h is a word to print).
				run -- "$c" "$o"
				case $out in "usage: accelctl $c"*) ;; *) continue ;; esac
				where=$page ;; # the man page documents help once, for all
			esac
			printf '%s\n' "$offers" | grep -qxF -- "$o" ||
				fail "accelctl.bash does not offer $o for $c"
			printf '%s\n' "$where" | grep -qE -- "(^|[^-[:alnum:]])$o([^-[:alnum:]]|\$)" ||
				fail "man/accelctl.1 does not document $o of $c"
		done
	done
}

# An Indexed Job has no identity in its environment: the docs that tell a user to set its
# count also tell them to set ACCELCTL_JOB_ID (else two Jobs on one Redis meet as "default").
testIndexedJobIdentity() {
	run JOB_COMPLETION_INDEX=1 ACCELCTL_WORLD_SIZE=3 -- info
	assertContains "no identity of its own" "$out" "job_id            default  (default)"
	assertContains "README: the count and the id" "$(tr '\n' ' ' <"$ACCELCTL_SRC/README.md")" \
		"in an Indexed Job's pod template (with \`ACCELCTL_JOB_ID\`"
	assertContains "man page: the count and the id" \
		"$(awk '/^\.Li k8s-indexed-job/ { on = 1 } on && /^\.It/ { exit } on' "$MAN")" "ACCELCTL_JOB_ID"
}

load_shunit2
