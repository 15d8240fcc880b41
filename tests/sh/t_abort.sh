# t_abort.sh: abort releases every waiter, now and later, with exit 3; status shows
# the waits in flight.
. "$(dirname "$0")/lib.sh"

testAbortReleasesNowAndLater() {
	run -- launch -n 4 --tag -- bash -c '
		case $ACCELCTL_RANK in
		0) sleep 0.5; accelctl abort disk full; echo "abort rc=$?" ;;
		3) sleep 1; accelctl barrier later; echo "rc=$?" ;;
		*) accelctl barrier now; echo "rc=$?" ;;
		esac'
	assertContains "$out" "0: abort rc=0"
	assertEquals "waiters and latecomers exit 3" 3 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
	assertContains "$err" "accelctl: barrier: 'now': aborted: rank 0: disk full"
	assertContains "$err" "accelctl: barrier: 'later': aborted: rank 0: disk full"
}

testAbortReachesWaitAndBroadcast() {
	run -- launch -n 3 --tag -- bash -c '
		case $ACCELCTL_RANK in
		0) sleep 0.3; accelctl abort ;;
		1) accelctl on-process 2 --wait -- true; echo "rc=$?" ;;
		2) accelctl broadcast never; echo "rc=$?" ;;
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
	run -- launch -n 4 -- bash -c '
		if [ $ACCELCTL_RANK = 3 ]; then
			sleep 0.5; accelctl status >'"$d"'/status; accelctl barrier ready
		else
			accelctl barrier ready
		fi'
	assertRc 0 "barrier"
	assertContains "$(cat "$d/status")" "barrier    ready"
	assertContains "$(cat "$d/status")" "generation 0"
	assertContains "$(cat "$d/status")" "3/4 arrived; missing: rank 3 (node 0)"
}

testStatusWithoutHelper() {
	run ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 ACCELCTL_JOB_ID=nohelper ACCELCTL_RUNTIME_DIR="$(scratch)/none" -- status
	assertRc 0 "status without helper"
	assertContains "$out" "no helper runs on this node: nothing in flight"
	assertFalse "status did not create the directory" "[ -e '$(scratch)/none' ]"
}

testSingleProcessAbort() {
	run -- abort whatever
	assertRc 0 "one process"
}

load_shunit2
