# t_newcomer.sh: a new user's first hour, replayed: the mistakes that cost a deadline or said the wrong thing, each now seconds and the right words.
#
# Each test is one thing a newcomer tried (launch like mpirun, a typo'd port,
# ranks at different barriers, help, info) and checks what they see: the exit
# code, the line that names the cause, and that no wait lasts its deadline.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/redis.sh"

oneTimeSetUp() { redis_start; }
oneTimeTearDown() { redis_stop; }

# "accelctl help" and "accelctl help barrier", as git has them: they said
# "unknown command 'help'; did you mean 'helper'?".
testHelp() {
	run -- help
	assertRc 0 "accelctl help"
	assertContains "$out" "usage: accelctl COMMAND"
	assertContains "$out" "Exit codes:"
	run -- help barrier
	assertRc 0 "accelctl help barrier"
	assertEquals "the same as barrier --help" "$(env -i "$ACCELCTL" barrier --help)" "$out"
	run -- help barier
	assertRc 2 "a typo"
	assertErrMatches "unknown command 'barier'; did you mean 'barrier'?"
	# A command's own word, as the table shows "trace merge".
	run -- help trace merge
	assertRc 0 "accelctl help trace merge"
	assertEquals "the same as trace --help" "$(env -i "$ACCELCTL" trace --help)" "$out"
	run -- help barrier foo
	assertRc 2 "not a word of barrier"
	assertErrMatches "accelctl: help: 'foo' is not a word of 'barrier'"
}

# A signal to launch alone (a wrapper's, a batch system's), from a shell
# that started it in the background: every rank stops, launch exits 130 and
# names each rank's end. Before: both ranks ran on and launch exited 0.
testInterruptReachesEveryRank() {
	interrupt INT 2 "Interrupt"
	# One that does not stop launch itself (a batch system's warning
	# signal), sent on: the ranks' end says so too.
	interrupt USR1 10 "User defined signal 1"
}

# interrupt SIG N NAME: launch of 2 ranks sent SIG: both end, launch exits
# 128+N, and says the signal was sent on.
interrupt() {
	local d; d=$(scratch)/int.$1; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" D="$d" bash -c '
		accelctl launch -n 2 --tag -- bash -c "touch \$D/up.\$ACCELCTL_RANK; sleep 30; echo after" \
			>"$D/out" 2>"$D/err" &
		echo $! >"$D/pid"; wait $!; echo $? >"$D/rc"' &
	local sh=$!
	eventually 20 eval '[ -e "$d/up.0" ] && [ -e "$d/up.1" ]'
	kill -"$1" "$(cat "$d/pid")"
	timeout 20 tail --pid="$sh" -f /dev/null
	assertEquals "launch exits 128+SIG$1" $((128 + $2)) "$(cat "$d/rc")"
	assertEquals "no rank ran on" "" "$(cat "$d/out")"
	assertContains "$(cat "$d/err")" "accelctl: launch: ranks 0-1: killed by signal $2 ($3), sent on by launch"
}

# A rank that exits while the others wait for it: they exit 4 at once, naming
# it and its exit, and launch ends with a line per failed rank. Before: the
# others waited to their deadline saying rank 3 "never connected".
testRankThatExitsFailsTheOthersAtOnce() {
	local t0; t0=$(date +%s)
	run -- launch -n 4 -- bash -c '[ $ACCELCTL_RANK = 3 ] && exit 7; accelctl barrier --timeout 60s x'
	assertRc 7 "launch: the first failure"
	assertTrue "long before the deadline ($(($(date +%s) - t0)) s)" "[ $(($(date +%s) - t0)) -lt 50 ]"
	assertEquals "three waiters lost" 3 "$(printf '%s\n' "$err" | grep -c "accelctl: barrier: 'x': lost: rank 3 (node 0) exited with 7")"
	assertContains "$err" "accelctl: launch: rank 3 (node 0): exited with 7"
	assertContains "$err" "accelctl: launch: ranks 0-2: exited with 4"
	# srun -K: the others are stopped; which rank failed is said.
	run -- launch -K -n 4 -- bash -c '[ $ACCELCTL_RANK = 3 ] && exit 7; sleep 30'
	assertRc 7 "launch -K"
	assertContains "$err" "accelctl: launch: rank 3 (node 0): exited with 7"
	assertContains "$err" "ranks 0-2: killed by signal 15 (Terminated), sent by --kill-on-bad-exit"
}

# The same on a real launcher's ranks (not launch's): a rank whose shell the
# helper has seen (it ran accelctl before) and that is gone while another
# waits for it. Before: the deadline. (A rank whose own process started only
# after the other was gone belongs to a later attempt of the job, torchrun's
# restart or the script run again: for it the other rank comes back.)
testRankWhoseShellIsGone() {
	local d; d=$(scratch)/shell; mkdir -p -m 700 "$d"
	local env="ACCELCTL_JOB_ID=shell$$ ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_RUNTIME_DIR=$d"
	# shellcheck disable=SC2086
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" $env ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 \
		bash -c 'accelctl barrier --timeout 60s warm; exit 5' &
	local r1=$!
	# shellcheck disable=SC2086
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" $env ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 D="$d" \
		bash -c 'accelctl barrier --timeout 60s warm || exit
			until [ -e $D/go ]; do sleep 0.05; done
			accelctl barrier --timeout 60s two; echo "rc=$?"' >"$d/out" 2>"$d/err" &
	local r0=$!
	wait $r1
	touch "$d/go"
	wait $r0
	assertEquals "rank 1 is gone: $(cat "$d"/*.log)" "rc=4" "$(cat "$d/out")"
	assertContains "$(cat "$d/err")" "accelctl: barrier: 'two': lost: rank 1 (node 0) is gone: its process bash (pid "
	# shellcheck disable=SC2086
	run $env ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- helper stop
}

# The same across nodes: rank 1's node tells the rendezvous, and rank 0 on
# node 0 exits 4 naming it.
testRankWhoseShellIsGoneAcrossNodes() {
	local d; d=$(scratch)/across; mkdir -p -m 700 "$d" "$d/n0" "$d/n1"; chmod 700 "$d/n0" "$d/n1"
	local env="ACCELCTL_JOB_ID=across$$ ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=1 ACCELCTL_LOCAL_RANK=0 ACCELCTL_NNODES=2 ACCELCTL_RENDEZVOUS=unix://$REDIS_SOCK"
	# shellcheck disable=SC2086
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" $env ACCELCTL_RANK=1 ACCELCTL_NODE_RANK=1 \
		ACCELCTL_RUNTIME_DIR="$d/n1" bash -c 'accelctl barrier --timeout 60s warm; exit 5' &
	local r1=$!
	# shellcheck disable=SC2086
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" $env ACCELCTL_RANK=0 ACCELCTL_NODE_RANK=0 \
		ACCELCTL_RUNTIME_DIR="$d/n0" D="$d" bash -c 'accelctl barrier --timeout 60s warm || exit
			until [ -e $D/go ]; do sleep 0.05; done
			accelctl barrier --timeout 60s two; echo "rc=$?"' >"$d/out" 2>"$d/err" &
	local r0=$!
	wait $r1
	touch "$d/go"
	wait $r0
	assertEquals "rank 1 is gone: $(cat "$d/err")" "rc=4" "$(cat "$d/out")"
	assertContains "$(cat "$d/err")" "accelctl: barrier: 'two': lost: rank 1 (node 1) is gone: its process bash (pid "
	local n
	for n in 0 1; do
		# shellcheck disable=SC2086
		run $env ACCELCTL_RANK=$n ACCELCTL_NODE_RANK=$n ACCELCTL_RUNTIME_DIR="$d/n$n" -- helper stop
	done
}

# 300 local ranks under "ulimit -n 128": the helper serves 96; the ranks it
# turns away say how to raise the limit, and the others exit 4 naming one of
# them at once. Before: 204 exited 125 and the other 96 waited their deadline.
testRanksTurnedAway() {
	local d; d=$(scratch)/many; mkdir -p "$d"
	(ulimit -n 128; env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" TMPDIR="$d" \
		timeout 120 "$ACCELCTL" launch -n 300 -- bash -c 'accelctl barrier --timeout 100s x; echo "rc=$?"' \
		>"$d/out" 2>"$d/err")
	assertEquals "no rank waited its deadline" 0 "$(grep -c 'rc=124' "$d/out")"
	assertEquals "every rank ended" 300 "$(grep -c 'rc=' "$d/out")"
	assertTrue "most lost ($(sort "$d/out" | uniq -c))" "[ $(grep -c 'rc=4' "$d/out") -ge 200 ]"
	assertContains "$(cat "$d/err")" "was turned away by its node's helper: the helper serves its maximum of 96 clients"
	assertContains "$(cat "$d/err")" "raise ulimit -n for the job"
}

# "launch -n 4 bash -c ..." and "launch -n 4 echo hi" say the same: CMD
# needs "--" before it. Before: "unknown option '-c'" for the first.
testCommandWithoutDashDash() {
	run -- launch -n 4 bash -c 'echo hi'
	assertRc 2 "no --"
	assertErrMatches "accelctl: launch: missing '--' before CMD 'bash'"
	run -- launch -n 4 echo hi
	assertRc 2 "no --"
	assertErrMatches "accelctl: launch: missing '--' before CMD 'echo'"
	run -- on-process 1 2 -- true
	assertRc 2 "one positional too many, with --"
	assertErrMatches "unexpected argument '2'"
}

# A rendezvous never reached (a typo'd port) fails within 30 s naming the
# address and the error: exit 125. Before: the deadline (30 min by default).
testRendezvousNeverReached() {
	local t0; t0=$(date +%s)
	run -- launch --nnodes 2 -n 1 --rendezvous redis://127.0.0.1:1 -- accelctl barrier x
	assertRc 125 "never reached"
	assertTrue "within 30 s and a little ($(($(date +%s) - t0)) s)" "[ $(($(date +%s) - t0)) -lt 90 ]"
	assertErrMatches "accelctl: barrier: 'x': rendezvous never reached in 30s since the job began: 127.0.0.1:1: Connection refused"
}

# Ranks at different barriers (the classic collective bug): each timeout
# says where the missing rank waits instead, on one node and across nodes.
# Before: "missing: rank 1 (node 0)", as if rank 1 were not there.
testRanksAtDifferentBarriers() {
	run -- launch -n 2 -- bash -c 'accelctl barrier --timeout 3s step-$ACCELCTL_RANK'
	assertRc 124 "a timeout"
	# Whichever times out second says where the first was (it left), or,
	# where the first one's exit came before its own deadline, that it is
	# lost (a rank gone for good: exit 4).
	local me other
	for me in 0 1; do
		other=$((1 - me))
		case $err in
		*"at 'step-$me' (generation 0): 1/2 arrived; missing: rank $other (node 0); rank $other (node 0) waits at barrier 'step-$other' (generation 0)"*) ;;
		*"at 'step-$me' (generation 0): 1/2 arrived; missing: rank $other (node 0); rank $other (node 0) timed out at barrier 'step-$other' (generation 0)"*) ;;
		*"'step-$me': lost: rank $other (node 0) exited with 124"*) ;;
		*) fail "rank $me's line does not say where rank $other waited: $err" ;;
		esac
	done
	# Across nodes a node tells where its ranks wait once a wait has lasted
	# 10 s: a deadline of 25 s sees it.
	RUN_LIMIT=120 run ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" -- launch --nnodes 2 -n 1 -- \
		bash -c 'accelctl barrier --timeout 25s step-$ACCELCTL_RANK'
	assertRc 124 "a timeout across nodes"
	for me in 0 1; do
		other=$((1 - me))
		case $err in
		*"at 'step-$me' (generation 0): all 1 ranks of node $me arrived; waiting for node $other"*"; rank $other (node $other) waits at barrier 'step-$other' (generation 0)"*) ;;
		*"'step-$me': lost: rank $other (node $other) exited with 124"*) ;;
		*) fail "rank $me's line does not say where rank $other waited: $err" ;;
		esac
	done
	assertContains "one of them timed out saying where the other waits" "$err" "waits at barrier 'step-"
}

# The rank that timed out first exits; the other's wait then fails at once
# (exit 4), and says that the lost rank had timed out, and where: ranks at
# different names are the script's bug, not a machine's fault (review of
# issue 37: "lost: rank 0 exited with 0" alone read as lost hardware).
testLostAfterItsOwnTimeout() {
	local nodes
	for nodes in 1 2; do
		RUN_LIMIT=120 run ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" -- launch --nnodes "$nodes" -n $((2 / nodes)) -- \
			bash -c 't=60s; [ $ACCELCTL_RANK = 0 ] && t=2s; accelctl barrier --timeout $t step-$ACCELCTL_RANK; exit 0'
		assertErrMatches "accelctl: barrier: 'step-1': lost: rank 0 (node 0) exited with 0, after its wait at barrier 'step-0' (generation 0) timed out"
	done
}

# Rank 0 of a broadcast cannot read its stdin: it exits 125, and the others
# say that, not that rank 0 died.
testBroadcastWithoutStdin() {
	run -- launch -n 2 -- bash -c 'accelctl broadcast v <&-'
	assertErrMatches "accelctl: broadcast: read error on standard input: Bad file descriptor"
	assertErrMatches "accelctl: broadcast: 'v': aborted: rank 0 has no value to send: read error on standard input: Bad file descriptor"
	assertEquals "no 'died'" "" "$(printf '%s\n' "$err" | grep died)"
}

# info is what one runs to find out what is wrong: it shows what it refused
# and why, and which launcher's variables it saw but did not use.
testInfoExplains() {
	run RANK=1 -- info
	assertRc 2 "half a launcher"
	assertContains "$out" "launcher          torchrun (refused)"
	assertContains "$out" "why               RANK is set but WORLD_SIZE is not"
	assertContains "$out" "seen              RANK=1"
	run SLURM_PROCID=3 SLURM_JOB_ID=5 -- info
	assertRc 0 "a batch script"
	assertContains "$out" "launcher          none"
	assertContains "$out" "SLURM_PROCID=3: slurm not used: no SLURM_STEP_ID"
	# The columns line up: the value column, then its source.
	assertContains "$out" "job_id            5.batch  (SLURM_JOB_ID)"
	assertContains "$out" "rank              0        (default)"
}

# The small things: a bad --timeout prints the usage line as other usage
# errors do; --status outside 0-255 is refused (it exited 255).
testSmallThings() {
	local two="ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_JOB_ID=small$$"
	# shellcheck disable=SC2086
	run $two -- barrier --timeout abc x
	assertRc 2 "--timeout abc"
	assertErrMatches "usage: accelctl barrier"
	# shellcheck disable=SC2086
	run $two -- barrier --status 300 x
	assertRc 2 "--status 300"
	assertErrMatches "invalid --status '300'"
}

# "rendezvous start" run again in a shell that holds a live one says so (it
# started a second server, and a third, without a word).
testRendezvousStartTwice() {
	local d; d=$(scratch)/rs; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/sbin:/usr/bin:/bin" HOME="$d" TMPDIR="$d" bash -c '
		eval "$(accelctl rendezvous start)" || exit 9
		eval "$(accelctl rendezvous start 2>'"$d"'/err2)"; echo "second=$?"
		accelctl rendezvous stop' >"$d/out" 2>"$d/err"
	assertContains "$(cat "$d/out")" "second=2"
	assertContains "$(cat "$d/err2")" "a rendezvous started before serves this shell already"
	# Its lines not evaluated, nothing in the environment tells: the
	# second start says that this script started one that still runs.
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/sbin:/usr/bin:/bin" HOME="$d" TMPDIR="$d" bash -c '
		accelctl rendezvous start >/dev/null 2>'"$d"'/err3 || exit 9
		accelctl rendezvous start >/dev/null 2>'"$d"'/err4; echo "second=$?"
		accelctl rendezvous start >'"$d"'/kept.env 2>'"$d"'/err5' >"$d/out2" 2>&1
	assertContains "$(cat "$d/out2")" "second=0"
	assertEquals "the first start says nothing" "" "$(cat "$d/err3")"
	assertContains "$(cat "$d/err4")" "started one before, which still runs"
	# Lines kept in a file, to be read later: two servers may be meant.
	assertEquals "no word when the lines go to a file" "" "$(cat "$d/err5")"
}

# Runtime files of jobs long over do not pile up: a helper that starts
# removes the files of jobs nothing touched for 14 days, and keeps a job's
# whose journal moved lately.
testOldJobFilesGo() {
	local d; d=$(scratch)/rt; mkdir -p -m 700 "$d"
	touch "$d/old.lock" "$d/old.log" "$d/old.state" "$d/old.gone.3" "$d/recent.lock" "$d/recent.state"
	touch -d '20 days ago' "$d/old.lock" "$d/old.log" "$d/old.state" "$d/old.gone.3" "$d/recent.lock"
	run ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_JOB_ID=new ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 \
		ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 -- helper start
	assertRc 0 "helper start"
	assertEquals "the old job's files went" "" "$(ls "$d" | grep '^old')"
	assertEquals "the recent job's stay" "recent.lock recent.state" "$(ls "$d" | grep '^recent' | tr '\n' ' ' | sed 's/ $//')"
	run ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_JOB_ID=new ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 \
		ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 -- helper stop
}

load_shunit2
