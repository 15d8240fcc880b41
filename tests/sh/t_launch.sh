# t_launch.sh: accelctl launch: the environment of each process, --tag, exit statuses,
# --kill-on-bad-exit, signal forwarding, stdin, clean-up, and bad input.
. "$(dirname "$0")/lib.sh"

testEnvironmentOfEachProcess() {
	run -- launch -n 2 --nnodes 2 -- sh -c 'echo "$ACCELCTL_RANK $ACCELCTL_WORLD_SIZE $ACCELCTL_LOCAL_RANK $ACCELCTL_LOCAL_WORLD_SIZE $ACCELCTL_NODE_RANK $ACCELCTL_NNODES"'
	assertRc 0 launch
	assertEquals "0 4 0 2 0 2
1 4 1 2 0 2
2 4 0 2 1 2
3 4 1 2 1 2" "$(printf '%s\n' "$out" | sort)"
}

testJobIdSharedAndFresh() {
	run -- launch -n 3 -- sh -c 'echo $ACCELCTL_JOB_ID'
	assertEquals "one job id in one launch" 1 "$(printf '%s\n' "$out" | sort -u | wc -l)"
	local first=$out
	run -- launch -n 3 -- sh -c 'echo $ACCELCTL_JOB_ID'
	assertNotEquals "a fresh job id per launch" "$(printf '%s\n' "$first" | head -1)" "$(printf '%s\n' "$out" | head -1)"
}

testRuntimeDirPerNodeAndRemoved() {
	run -- launch -n 2 -N 3 -- sh -c 'test -d "$ACCELCTL_RUNTIME_DIR" && stat -c "%a $ACCELCTL_NODE_RANK %n" "$ACCELCTL_RUNTIME_DIR"'
	assertRc 0 "dirs exist"
	assertEquals "one directory per simulated node" 3 "$(printf '%s\n' "$out" | awk '{print $3}' | sort -u | wc -l)"
	assertEquals "mode 0700" "700" "$(printf '%s\n' "$out" | awk '{print $1}' | sort -u)"
	local d; d=$(printf '%s\n' "$out" | head -1 | awk '{print $3}')
	assertFalse "removed after the launch" "[ -e '$d' ]"
	assertFalse "parent removed too" "[ -e '$(dirname "$d")' ]"
}

testDetectionInsideLaunch() {
	run -- launch -n 2 -N 2 -- sh -c 'accelctl is-main && echo main; accelctl on-local-main -- echo "lm$ACCELCTL_NODE_RANK"; accelctl on-process 3 -- echo p3'
	assertRc 0 "launch"
	assertEquals "lm0
lm1
main
p3" "$(printf '%s\n' "$out" | sort)"
}

testTagPrefixesWholeLines() {
	run -- launch -n 12 --tag -- sh -c 'i=0; while [ $i -lt 50 ]; do echo "line from $ACCELCTL_RANK"; i=$((i+1)); done; echo "err $ACCELCTL_RANK" >&2; printf "tail"'
	assertRc 0 "launch --tag"
	assertEquals "12 x 51 lines" 612 "$(printf '%s\n' "$out" | wc -l)"
	# Every line is "R: line from R" with R right-aligned to two digits, or the tail.
	assertEquals "no torn or mislabelled lines" "" "$(printf '%s\n' "$out" | grep -vE '^ ?([0-9]+): (line from \1|tail)$')"
	assertContains "$out" " 0: line from 0"
	assertContains "$out" "11: tail"
	assertContains "$err" " 7: err 7"
	run -- launch -n 2 -l -- echo x
	assertEquals "0: x
1: x" "$(printf '%s\n' "$out" | sort)"
}

# The first failure in time: rank 1 fails only once the launcher has reaped
# rank 2 (its pid gone), not after a sleep that a busy machine may outlast.
testFirstNonZeroStatus() {
	local d; d=$(scratch)/first; mkdir -p "$d"
	run -- launch -n 3 -- sh -c 'case $ACCELCTL_RANK in 0) exit 0;;
		1) i=0; until [ -s '"$d"'/pid2 ] && ! kill -0 "$(cat '"$d"'/pid2)" 2>/dev/null || [ $i -ge 1000 ]; do
			sleep 0.01; i=$((i + 1)); done; exit 4;;
		2) echo $$ >'"$d"'/pid2; exit 5;; esac'
	assertRc 5 "first failure in time"
	run -- launch -n 2 -- sh -c 'exit 0'
	assertRc 0 "all succeed"
	run -- launch -n 2 -- sh -c '[ $ACCELCTL_RANK = 1 ] && kill -9 $$; exit 0'
	assertRc 137 "killed by SIGKILL is 128+9"
}

testNotFound() {
	run -- launch -n 2 -- /no/such/thing
	assertRc 127 "not found"
	assertErrMatches "accelctl: launch: cannot run '/no/such/thing'"
}

testKillOnBadExit() {
	local t0 t1
	t0=$(date +%s)
	run -- launch -n 3 --kill-on-bad-exit -- sh -c '[ $ACCELCTL_RANK = 1 ] && exit 9; exec sleep 30'
	t1=$(date +%s)
	assertRc 9 "status of the failing rank"
	assertTrue "the others were stopped at once ($((t1 - t0))s)" "[ $((t1 - t0)) -lt 5 ]"
}

# A process that ignores SIGTERM is killed after the grace period.
testKillOnBadExitEscalates() {
	local t0 t1
	t0=$(date +%s)
	run -- launch -n 2 -K -- sh -c '[ $ACCELCTL_RANK = 1 ] && exit 3; trap "" TERM; sleep 30 & wait; wait'
	t1=$(date +%s)
	assertRc 3 "status"
	assertTrue "SIGKILL after the grace period ($((t1 - t0))s)" "[ $((t1 - t0)) -le 9 ]"
}

testSignalsForwarded() {
	local d; d=$(scratch)/sig; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" "$ACCELCTL" launch -n 3 -- \
		sh -c "trap 'echo got >$d/\$ACCELCTL_RANK; exit 7' TERM; touch $d/up.\$ACCELCTL_RANK; while :; do sleep 0.05; done" &
	local pid=$! i=0
	while [ "$(ls "$d" | grep -c up)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	kill -TERM "$pid"
	timeout 10 tail --pid="$pid" -f /dev/null
	wait "$pid"
	assertEquals "launch exits 128+SIGTERM, as the process it stands for" 143 $?
	assertEquals "every process got SIGTERM" "0 1 2" "$(ls "$d" | grep -v up | sort | tr '\n' ' ' | sed 's/ $//')"
}

# A shell without job control starts "accelctl launch ... &" with SIGINT
# ignored, as a wrapper or a batch script does; a "kill -INT" of launch alone
# still stops every rank: launch exits 130 and says what ended each rank.
# Before, the ranks ran on to their end and launch exited 0.
testInterruptOfABackgroundLaunch() {
	local d; d=$(scratch)/int; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" D="$d" bash -c '
		accelctl launch -n 2 --tag -- bash -c "touch \$D/up.\$ACCELCTL_RANK; sleep 60; echo after" \
			>"$D/out" 2>"$D/err" &
		echo $! >"$D/launch"
		wait $!; echo $? >"$D/rc"' &
	local sh=$! i=0
	until [ -e "$d/up.0" ] && [ -e "$d/up.1" ] || [ $i -gt 400 ]; do sleep 0.05; i=$((i + 1)); done
	kill -INT "$(cat "$d/launch")"
	timeout 20 tail --pid="$sh" -f /dev/null
	assertFalse "the shell ended" "kill -0 $sh 2>/dev/null"
	assertEquals "launch exits 130" 130 "$(cat "$d/rc")"
	assertEquals "no rank ran on: $(cat "$d/out")" "" "$(grep after "$d/out")"
	assertContains "$(cat "$d/err")" "ranks 0-1: killed by signal 2 (Interrupt), sent on by launch"
}

# A signal reaches all of a rank, its process group: a rank's shell that
# ignores SIGTERM and waits for a child it started ends with that child.
# Sent to the rank's process alone, the child lived on and launch waited.
testSignalReachesTheRanksGroup() {
	local d; d=$(scratch)/grp; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" "$ACCELCTL" launch -n 2 -- \
		bash -c "sleep 60 & echo \$! >$d/gc.\$ACCELCTL_RANK; trap '' TERM; wait" &
	local pid=$! i=0
	until [ -s "$d/gc.0" ] && [ -s "$d/gc.1" ] || [ $i -gt 400 ]; do sleep 0.05; i=$((i + 1)); done
	kill -TERM "$pid"
	timeout 20 tail --pid="$pid" -f /dev/null
	assertFalse "launch ended" "kill -0 $pid 2>/dev/null"
	wait "$pid"
	assertEquals "launch exits 143" 143 $?
	assertFalse "the ranks' children got it" "kill -0 $(cat "$d/gc.0") 2>/dev/null || kill -0 $(cat "$d/gc.1") 2>/dev/null"
}

testInterruptExitStatus() {
	local d; d=$(scratch)/int2; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" "$ACCELCTL" launch -n 2 -- \
		sh -c "touch $d/up.\$ACCELCTL_RANK; exec sleep 60" &
	local pid=$! i=0
	while [ "$(ls "$d" | grep -c up)" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	kill -INT "$pid"
	timeout 20 tail --pid="$pid" -f /dev/null
	wait "$pid"
	assertEquals "launch exits 128+SIGINT" 130 $?
}

# ended PID: wait for launch PID to end, 20 s at most; its status in RC, or a
# failure (and launch killed) where it did not end.
ended() {
	timeout 20 tail --pid="$1" -f /dev/null
	if kill -0 "$1" 2>/dev/null; then
		fail "launch did not end"
		kill -KILL "$1"
	fi
	wait "$1"
	RC=$?
}

# Ranks that trap ^C (a cleanup that hangs) stop at a second one: SIGKILL,
# as Open MPI's mpirun does (before, launch could be stopped by kill -9
# only); after the first alone, 30 s later (not waited for here).
testSecondInterruptKills() {
	local d; d=$(scratch)/int3; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" "$ACCELCTL" launch -n 2 -- \
		bash -c "trap 'touch $d/got.\$ACCELCTL_RANK' INT; touch $d/up.\$ACCELCTL_RANK; while :; do sleep 0.05; done" \
		2>"$d/err" &
	local pid=$!
	eventually 20 test -e "$d/up.0" -a -e "$d/up.1"
	kill -INT "$pid"
	eventually 20 test -e "$d/got.0" -a -e "$d/got.1"
	assertTrue "launch runs on after one ^C the ranks trap" "kill -0 $pid"
	kill -INT "$pid"
	ended "$pid"
	assertEquals "launch exits 130" 130 "$RC"
	assertContains "$(cat "$d/err")" "ranks 0-1: killed by signal 9 (Killed), sent by launch at a second signal"
}

# looping_ranks DIR: launch 2 ranks that loop until killed, each writing its
# pid to DIR/pid.RANK; LPID is launch's, once both ranks run.
looping_ranks() {
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" BASH_ENV="${BASH_ENV:-}" "$ACCELCTL" launch -n 2 -- \
		bash -c "echo \$\$ >$1/pid.\$ACCELCTL_RANK; while :; do sleep 0.05; done" &
	LPID=$!
	eventually 20 test -s "$1/pid.0" -a -s "$1/pid.1"
}

# A launch killed for good (kill -9, the OOM killer) takes its ranks with it:
# they run in sessions of their own, where nothing else would end them.
testRanksEndWithLaunch() {
	local d; d=$(scratch)/die; mkdir -p "$d"
	looping_ranks "$d"
	local pid=$LPID
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	eventually 20 eval "! kill -0 $(cat "$d/pid.0") 2>/dev/null && ! kill -0 $(cat "$d/pid.1") 2>/dev/null"
	assertFalse "no rank outlived launch" "kill -0 $(cat "$d/pid.0") 2>/dev/null || kill -0 $(cat "$d/pid.1") 2>/dev/null"
	kill -KILL "$(cat "$d/pid.0")" "$(cat "$d/pid.1")" 2>/dev/null || :
}

# ^Z (SIGTSTP) stops the ranks too: in sessions of their own their groups are
# orphaned, where the kernel drops SIGTSTP (they ran on, printing). SIGCONT
# continues them.
testStopStopsTheRanks() {
	local d; d=$(scratch)/tstp; mkdir -p "$d"
	looping_ranks "$d"
	local pid=$LPID
	kill -TSTP "$pid"
	stopped() { [ "$(ps -o stat= -p "$1" | cut -c1)" = T ]; }
	eventually 20 eval "stopped $(cat "$d/pid.0") && stopped $(cat "$d/pid.1")"
	assertTrue "rank 0 stopped" "stopped $(cat "$d/pid.0")"
	assertTrue "rank 1 stopped" "stopped $(cat "$d/pid.1")"
	kill -CONT "$pid"
	eventually 20 eval "! stopped $(cat "$d/pid.0") && ! stopped $(cat "$d/pid.1")"
	assertFalse "rank 0 continued" "stopped $(cat "$d/pid.0")"
	kill -CONT "$(cat "$d/pid.0")" "$(cat "$d/pid.1")"
	kill -TERM "$pid"
	ended "$pid"
	assertEquals "then ends at SIGTERM" 143 "$RC"
}

# --tag into a reader that leaves (| head): the ranks get SIGPIPE, as without
# --tag, where they write to the pipe themselves (before, they ran for ever).
testTaggedOutputReaderGone() {
	local rc
	timeout 30 env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" "$ACCELCTL" launch -n 2 --tag -- \
		bash -c 'while :; do echo x; sleep 0.01; done' 2>/dev/null | head -n 3 >/dev/null
	rc=${PIPESTATUS[0]}
	assertEquals "launch exits 128+SIGPIPE" 141 "$rc"
}

# A rank that writes without pause (yes) does not keep launch from its
# signals: a ^C ends it (before, launch read that pipe for ever).
testInterruptWithAFastWriter() {
	local d; d=$(scratch)/fast; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" "$ACCELCTL" launch -n 2 --tag -- \
		bash -c "touch $d/up.\$ACCELCTL_RANK; exec yes" >/dev/null 2>&1 &
	local pid=$!
	eventually 20 test -e "$d/up.0" -a -e "$d/up.1"
	kill -INT "$pid"
	ended "$pid"
	assertEquals "launch exits 130" 130 "$RC"
}

testStdinToRankZeroOnly() {
	local out
	out=$(echo hello | env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" timeout 10 "$ACCELCTL" launch -n 3 -- sh -c 'read -r x; echo "$ACCELCTL_RANK:$x"')
	assertEquals "0:hello
1:
2:" "$(printf '%s\n' "$out" | sort)"
}

# A rank that exits while a process it started in the background keeps its
# output open: launch stops reading when its ranks are gone, and the last line,
# without a newline, is printed all the same (it was lost, and its buffer too).
testLastLineWhileAGrandchildHoldsThePipe() {
	local t0 t1; t0=$(date +%s%N)
	run -- launch -n 2 --tag -- sh -c '(sleep 4 &); printf "partial-$ACCELCTL_RANK"'
	t1=$(date +%s%N)
	assertRc 0 "launch"
	assertContains "$out" "0: partial-0"
	assertContains "$out" "1: partial-1"
	assertTrue "did not wait for the grandchild ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -lt 3500 ]"
}

testBadInput() {
	local a
	for a in "-n 0" "-n -1" "-n x" "-n 4097" "-n 2 --nnodes 0" "-n 2 -N 1025" "-n 1x"; do
		# shellcheck disable=SC2086
		run -- launch $a -- true
		assertRc 2 "launch $a"
		assertErrMatches "accelctl: launch: invalid"
	done
	run -- launch -- true
	assertRc 2 "missing -n"
	assertErrMatches "missing -n K"
	run -- launch -n 2 true
	assertRc 2 "missing --"
	run -- launch -n 2 --
	assertRc 2 "missing CMD"
	run -- launch -n 2 -N
	assertRc 2 "missing value"
	assertErrMatches "option '--nnodes' needs a value M"
	run -- launch -n 256 -N 257 -- true
	assertRc 2 "too many"
}

load_shunit2
