# t_on.sh: on-main, on-local-main, on-process N, on-local-process N: who runs CMD,
# exit codes passed through (126, 127, 128+N included), and every usage error.
. "$(dirname "$0")/lib.sh"

W4="ACCELCTL_WORLD_SIZE=4 ACCELCTL_LOCAL_WORLD_SIZE=2"
# rank R of a 4-process, 2-node explicit job.
rank() { echo "ACCELCTL_RANK=$1 ACCELCTL_LOCAL_RANK=$(($1 % 2)) $W4"; }

# ran RANK ARGS...: run accelctl ARGS as RANK with CMD writing a marker; $ran is 1 if CMD ran.
ran() {
	local r=$1; shift
	local m; m="$(scratch)/marker"
	rm -f "$m"
	# shellcheck disable=SC2046
	run $(rank "$r") -- "$@" -- sh -c "echo ran >'$m'; echo out"
	ran=0; [ -f "$m" ] && ran=1
}

# expect_runs "RANKS THAT RUN" ARGS...
expect_runs() {
	local want=$1; shift
	local r got=""
	for r in 0 1 2 3; do
		ran "$r" "$@"
		assertRc 0 "$* on rank $r"
		[ "$ran" = 1 ] && got="$got$r"
		if [ "$ran" = 1 ]; then assertEquals "CMD output" out "$out"; else assertEquals "" "$out"; fi
	done
	assertEquals "ranks that ran $*" "$want" "$got"
}

testOnMain() { expect_runs 0 on-main; }
testOnLocalMain() { expect_runs 02 on-local-main; }
testOnProcess() { expect_runs 3 on-process 3; expect_runs 1 on-process 1; }
testOnLocalProcess() { expect_runs 13 on-local-process 1; }

testSingleProcessRunsWhateverN() {
	local c
	for c in "on-process 7" "on-local-process 99" "on-main" "on-local-main"; do
		# shellcheck disable=SC2086
		run -- $c -- echo yes
		assertRc 0 "$c without launcher"
		assertEquals "$c without launcher runs CMD" yes "$out"
	done
}

# The selected process becomes CMD (exec): same pid, no accelctl left behind.
testExecReplacesProcess() {
	local pids comm
	pids=$(env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" sh -c 'echo $$; exec "$0" on-main -- sh -c "echo \$\$"' "$ACCELCTL" | sort -u | wc -l)
	assertEquals "CMD runs in accelctl's own process" 1 "$pids"
	comm=$(env -i PATH=/usr/bin:/bin "$ACCELCTL" on-main -- cat /proc/self/comm)
	assertEquals "cat" "$comm"
}

testExitStatusPassedThrough() {
	# shellcheck disable=SC2046
	run $(rank 0) -- on-main -- sh -c 'exit 42'
	assertRc 42 "CMD's status"
	# shellcheck disable=SC2046
	run $(rank 1) -- on-main -- sh -c 'exit 42'
	assertRc 0 "others exit 0"
}

testNotFoundIs127() {
	run -- on-main -- /nonexistent/cmd
	assertRc 127 "not found"
	assertErrMatches "accelctl: on-main: cannot run '/nonexistent/cmd': No such file or directory"
	run -- on-main -- no-such-command-anywhere
	assertRc 127 "not in PATH"
}

testNotExecutableIs126() {
	local f; f="$(scratch)/noexec"
	echo 'echo hi' >"$f"; chmod 644 "$f"
	run -- on-main -- "$f"
	assertRc 126 "not executable"
	assertErrMatches "Permission denied"
	run -- on-main -- "$(scratch)"
	assertRc 126 "a directory"
}

testKilledBySignalIs128PlusN() {
	run -- on-main -- sh -c 'kill -9 $$'
	assertRc 137 "SIGKILL"
	run -- on-process 0 -- sh -c 'kill -TERM $$'
	assertRc 143 "SIGTERM"
}

# expect_usage MESSAGE ARGS...: exit 2, the message, the usage line, CMD not run.
expect_usage() {
	local msg=$1; shift
	local m; m="$(scratch)/marker"; rm -f "$m"
	# shellcheck disable=SC2046
	run $(rank 0) -- "$@"
	assertRc 2 "$*"
	assertErrMatches "$msg"
	assertErrMatches "usage: accelctl $1"
	assertFalse "CMD did not run" "[ -f '$m' ]"
}

testIndexErrors() {
	local m; m="$(scratch)/marker"
	expect_usage "accelctl: on-process: invalid process index '-1': not a non-negative integer" on-process -1 -- touch "$m"
	expect_usage "invalid process index '1x': not a non-negative integer" on-process 1x -- touch "$m"
	expect_usage "invalid process index '99999999999999999999': too large" on-process 99999999999999999999 -- touch "$m"
	expect_usage "invalid process index '': empty" on-local-process "" -- touch "$m"
	expect_usage "missing argument" on-process -- touch "$m"
	expect_usage "unexpected argument '2'" on-process 1 2 -- touch "$m"
}

testDashDashRequired() {
	expect_usage "accelctl: on-main: missing '--' before CMD" on-main echo hi
	expect_usage "missing CMD after '--'" on-main --
	expect_usage "missing '--' before CMD" on-process 1
	expect_usage "unknown option '--bogus'" on-main --bogus -- true
}

# Out of range is an error on every rank, the selected one included.
testIndexOutOfRangeOnEveryRank() {
	local r
	for r in 0 1 2 3; do
		# shellcheck disable=SC2046
		run $(rank "$r") -- on-process 4 -- true
		assertRc 2 "on-process 4 of 4 on rank $r"
		assertErrMatches "accelctl: on-process: process index 4 is out of range: the job has 4 processes (0-3)"
		# shellcheck disable=SC2046
		run $(rank "$r") -- on-local-process 2 -- true
		assertRc 2 "on-local-process 2 of 2 on rank $r"
		assertErrMatches "local process index 2 is out of range: this node has 2 processes (0-1)"
	done
}

testBadEnvironmentIsUsageError() {
	run RANK=abc WORLD_SIZE=2 -- on-main -- true
	assertRc 2 "bad RANK"
	assertErrMatches "accelctl: on-main: invalid RANK='abc'"
	run RANK=1 WORLD_SIZE=2 -- on-local-main -- true
	assertRc 2 "no local rank"
}

# CMD's own arguments are never parsed, even ones that look like ours.
testChildArgumentsUntouched() {
	run -- on-main -- echo --help -- -n 3
	assertRc 0 "child args"
	assertEquals "--help -- -n 3" "$out"
}

load_shunit2
