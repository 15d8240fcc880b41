# t_abort.sh: abort releases every waiter, now and later, with exit 3; status shows
# the waits in flight.
. "$(dirname "$0")/lib.sh"

# The order is made, not slept for (a fixed 0.5 s and 1 s were an order a busy
# machine could lose): rank 0 aborts once ranks 1 and 2 are about to wait at
# 'now', and rank 3 calls 'later' only after the abort returned.
testAbortReleasesNowAndLater() {
	local d; d=$(scratch)/nl; mkdir -p "$d"
	run -- launch -n 4 --tag -- bash -c '
		d='"$d"'
		until_there() { local end=$((SECONDS + 60)); until [ -e "$1" ] || [ $SECONDS -ge $end ]; do sleep 0.05; done; }
		case $ACCELCTL_RANK in
		0) until_there "$d/in.1"; until_there "$d/in.2"
		   accelctl abort disk full; echo "abort rc=$?"; touch "$d/aborted" ;;
		3) until_there "$d/aborted"; accelctl barrier later; echo "rc=$?" ;;
		*) touch "$d/in.$ACCELCTL_RANK"; accelctl barrier now; echo "rc=$?" ;;
		esac'
	assertContains "$out" "0: abort rc=0"
	assertEquals "waiters and latecomers exit 3: $out $err" 3 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
	assertContains "$err" "accelctl: barrier: 'now': aborted: rank 0: disk full"
	assertContains "$err" "accelctl: barrier: 'later': aborted: rank 0: disk full"
}

testAbortReachesWaitAndBroadcast() {
	local d; d=$(scratch)/wb; mkdir -p "$d"
	run -- launch -n 3 --tag -- bash -c '
		d='"$d"'
		until_there() { local end=$((SECONDS + 60)); until [ -e "$1" ] || [ $SECONDS -ge $end ]; do sleep 0.05; done; }
		case $ACCELCTL_RANK in
		0) until_there "$d/in.1"; until_there "$d/in.2"; accelctl abort ;;
		1) touch "$d/in.1"; accelctl on-process 2 --wait -- true; echo "rc=$?" ;;
		2) touch "$d/in.2"; accelctl broadcast never; echo "rc=$?" ;;
		esac'
	assertEquals "both exit 3" 2 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
	assertContains "$err" "aborted: rank 0: no reason given"
}

testStatusShowsWaitsInFlight() {
	local d; d=$(scratch)/st; mkdir -p "$d"
	run -- launch -n 4 -- bash -c '
		accelctl barrier ready
		[ $ACCELCTL_RANK = 3 ] && accelctl status >'"$d"'/status; exit 0'
	assertRc 0 "barrier"
	assertContains "$(cat "$d/status")" "nothing in flight"
	# Rank 3 asks its node's helper; rank 0 asks its own while it waits.
	# Each asks until the answer is complete (a deadline, not a sleep): a
	# store may look for the missing nodes a while after it posted (Redis
	# when status asks, NCCL's post to the rendezvous 200 ms later).
	run -- launch -n 4 -- bash -c '
		d='"$d"'
		asks() { # asks FILE TEXT: status into FILE until it has TEXT (60 s by the clock)
			local end=$((SECONDS + 60))
			while accelctl status >"$1.tmp"; ! grep -q "$2" "$1.tmp" &&
			    [ $SECONDS -lt $end ]; do sleep 0.1; done
			mv "$1.tmp" "$1"
		}
		if [ "$ACCELCTL_NNODES" -gt 1 ]; then w0="waiting for node $((ACCELCTL_NNODES - 1))"; else w0="3/4 arrived"; fi
		if [ "$ACCELCTL_NNODES" -gt 2 ]; then w3="nothing in flight"; else w3="missing: rank 3"; fi
		if [ $ACCELCTL_RANK = 3 ]; then
			end=$((SECONDS + 60)); until [ -e "$d/status0" ] || [ $SECONDS -ge $end ]; do sleep 0.1; done
			asks "$d/status" "$w3"; accelctl barrier ready
		else
			[ $ACCELCTL_RANK = 0 ] && asks "$d/status0" "$w0" &
			accelctl barrier ready
		fi'
	assertRc 0 "barrier"
	# Across nodes (ACCELCTL_TEST_NNODES, tests/etcd/suite.sh) rank 3's node
	# names its own ranks, and rank 0's node the node it waits for.
	local nn=${ACCELCTL_TEST_NNODES:-1} s=$d/status
	case $nn in
	1) assertContains "$(cat "$s")" "3/4 arrived; missing: rank 3 (node 0)" ;;
	2) assertContains "$(cat "$s")" "1/2 arrived; missing: rank 3 (node 1)" ;;
	*)	# Rank 3 is alone on its node: nothing is in flight there yet.
		assertContains "$(cat "$s")" "nothing in flight"; s=$d/status0 ;;
	esac
	assertContains "$(cat "$s")" "barrier    ready"
	assertContains "$(cat "$s")" "generation 0"
	[ "$nn" = 1 ] || assertContains "$(cat "$d/status0")" "waiting for node $((nn - 1))"
}

# (A whole layout: where the local rank is unknown, status exits 2 naming
# what to set, as every wait does there: sh.unknown.)
testStatusWithoutHelper() {
	run ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_JOB_ID=nohelper ACCELCTL_RUNTIME_DIR="$(scratch)/none" -- status
	assertRc 0 "status without helper"
	assertContains "$out" "no helper runs on this node: nothing in flight"
	assertFalse "status did not create the directory" "[ -e '$(scratch)/none' ]"
}

testSingleProcessAbort() {
	run -- abort whatever
	assertRc 0 "one process"
}

# A hand-run job (job id "default": no launcher identity) has no end the helper
# could see, so its abort ends with its helper (helper stop, idle exit): later,
# unrelated runs are not aborted. A helper killed meanwhile replays it.
testHandRunAbortEndsWithHelper() {
	local rt; rt=$(scratch)/hand; mkdir -m 700 "$rt"
	local J="ACCELCTL_RUNTIME_DIR=$rt ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- abort gave up
	assertRc 0 "abort"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- barrier --timeout 5s b
	assertRc 3 "the same run is aborted"
	# Gone before the next call: a client that reaches the dying helper's
	# socket sees it close (125), as on a loaded machine.
	local pid; pid=$(cat "$rt/default.pid")
	kill -9 "$pid"
	wait_gone "$pid" 30
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- barrier --timeout 5s b
	assertRc 3 "still aborted after the helper was killed (replayed)"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- helper stop
	assertContains "$(cat "$rt/default.log")" "the abort of this hand-run job ends with this helper"
	# shellcheck disable=SC2086
	(run $J ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- barrier --timeout 10s b; echo "$rc" >"$rt/rc0") &
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- barrier --timeout 10s b
	wait
	assertEquals "a later run is not aborted (rank 1: $err)" 0 "$rc"
	assertEquals "a later run is not aborted (rank 0)" 0 "$(cat "$rt/rc0")"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- helper stop
}

# The same after the idle exit of the helper that knew of the abort.
testHandRunAbortEndsWithIdleExit() {
	local rt; rt=$(scratch)/hand-idle; mkdir -m 700 "$rt"
	local J="ACCELCTL_RUNTIME_DIR=$rt ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_HELPER_IDLE=1s"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- abort
	local pid; pid=$(cat "$rt/default.pid")
	# Its idle second, then its exit: 30 s tells "exits" from "stays" on any
	# machine (5 s counted in tries did not). Had it not exited, the barrier
	# below would join the aborted run and exit 3.
	wait_gone "$pid" 30
	assertTrue "the helper that knew of the abort exited idle" "proc_gone $pid"
	# shellcheck disable=SC2086
	(run $J ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- barrier --timeout 10s b; echo "$rc" >"$rt/rc0") &
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- barrier --timeout 10s b
	wait
	assertEquals "a run after the idle exit is not aborted ($err)" 0 "$rc"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- helper stop
}

load_shunit2
