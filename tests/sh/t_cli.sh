# t_cli.sh: the command line itself: --help, --version, --list-commands, unknown words.
. "$(dirname "$0")/lib.sh"

testNoArguments() {
	run --
	assertRc 2 "no arguments"
	assertErrMatches "usage: accelctl COMMAND"
}

testHelp() {
	local c
	for c in --help -h; do
		run -- $c
		assertRc 0 "accelctl $c"
		assertContains "$out" "usage: accelctl COMMAND"
		assertContains "$out" "Exit codes:"
	done
}

testVersion() {
	run -- --version
	assertRc 0 "--version"
	assertContains "$out" "accelctl 0."
	assertContains "$out" "features:"
	assertContains "$out" "hiredis: "
}

testListCommands() {
	run -- --list-commands
	assertRc 0 "--list-commands"
	assertContains "$out" "is-main"
	assertContains "$out" "launch"
	assertEquals "one name a line, no blanks" "" "$(printf '%s\n' "$out" | grep -v '^[a-z-]*$')"
}

testUnknownCommandSuggests() {
	run -- is-mian
	assertRc 2 "typo"
	assertEquals "accelctl: unknown command 'is-mian'; did you mean 'is-main'?" "$err"
	run -- on-proces 1 -- true
	assertErrMatches "did you mean 'on-process'?"
	run -- frobnicate
	assertRc 2 "unknown"
	assertEquals "accelctl: unknown command 'frobnicate'; see 'accelctl --help'" "$err"
}

# Names are matched exactly: a prefix is not a command.
testNoPrefixMatching() {
	run -- is -- true
	assertRc 2 "prefix"
	run -- info2
	assertRc 2 "suffix"
}

testUnknownGlobalOption() {
	run -- --frob
	assertRc 2 "--frob"
	assertErrMatches "accelctl: unknown option '--frob'"
}

testEveryCommandHasHelp() {
	local c
	for c in $("$ACCELCTL" --list-commands); do
		run -- "$c" --help
		assertRc 0 "$c --help"
		case $out in "usage: accelctl $c"*) ;; *) fail "$c --help starts with its usage: $out" ;; esac
		run -- "$c" -h
		assertRc 0 "$c -h"
	done
}

testHelpWriteError() {
	if [ ! -w /dev/full ]; then startSkipping; fi
	"$ACCELCTL" --help >/dev/full 2>/dev/null
	assertEquals 125 $?
}

# A closed stdout pipe is a write error (125, with a message), not death by
# SIGPIPE (141); CMD still gets SIGPIPE's default action.
testClosedPipe() {
	local d; d=$(scratch)
	# info writes only once the reader has closed its end (a sleep here
	# lost the race on a busy machine: info filled the pipe and exited 0).
	{ eventually 30 test -e "$d/closed"
	  "$ACCELCTL" info 2>"$d/pipe.err"; echo $? >"$d/pipe.rc"; } | { exec 0<&-; : >"$d/closed"; }
	assertEquals "info into a closed pipe" 125 "$(cat "$d/pipe.rc")"
	assertContains "$(cat "$d/pipe.err")" "accelctl: info:"
	# (No pause first: yes gets SIGPIPE whether true has exited or not yet.)
	{ "$ACCELCTL" on-main -- yes 2>/dev/null; echo $? >"$d/cmd.rc"; } | true
	assertEquals "CMD dies of SIGPIPE as usual" 141 "$(cat "$d/cmd.rc")"
}

load_shunit2
