# t_wait.sh: on-* --wait and main-first: statuses passed to every rank, order, failures.
. "$(dirname "$0")/lib.sh"

testOnMainWaitStatuses() {
	local s
	for s in 0 1 137; do
		run -- launch -n 4 --tag -- bash -c 'accelctl on-main --wait -- sh -c "sleep 0.2; [ '"$s"' = 137 ] && kill -9 \$\$; exit '"$s"'"; echo "rc=$?"'
		assertEquals "every rank exits $s" 4 "$(printf '%s\n' "$out" | grep -c "rc=$s\$")"
	done
}

testOthersWaitForCmd() {
	local d; d=$(scratch)/w; mkdir -p "$d"
	run -- launch -n 4 -- bash -c 'accelctl on-process 2 --wait -- sh -c "sleep 0.5; date +%s%N >'"$d"'/done"; date +%s%N >'"$d"'/left.$ACCELCTL_RANK'
	assertRc 0 "on-process 2 --wait"
	local done_at l
	done_at=$(cat "$d/done")
	for l in "$d"/left.*; do
		assertTrue "$(basename "$l") left after CMD finished" "[ $(cat "$l") -ge $done_at ]"
	done
}

testLocalWaitPerNode() {
	run -- launch -n 3 --nnodes 2 --tag -- bash -c 'accelctl on-local-process 1 --wait -- sh -c "echo ran; exit $ACCELCTL_NODE_RANK"; echo "rc=$?"'
	assertEquals "CMD ran once per node" 2 "$(printf '%s\n' "$out" | grep -c ': ran$')"
	assertEquals "node 0's ranks get node 0's status" "0: rc=0
1: rc=0
2: rc=0
3: rc=1
4: rc=1
5: rc=1" "$(printf '%s\n' "$out" | grep rc= | sort)"
}

testTimeoutNeedsWait() {
	run -- on-main --timeout 1s -- true
	assertRc 2 "--timeout without --wait"
	assertErrMatches "accelctl: on-main: --timeout needs --wait"
}

testSingleProcessWaitRunsCmd() {
	run -- on-process 3 --wait -- sh -c 'exit 4'
	assertRc 4 "one process runs CMD and exits with its status"
}

testMainFirstOrder() {
	local d; d=$(scratch)/mf; mkdir -p "$d"
	run -- launch -n 4 -- accelctl main-first -- sh -c 'date +%s%N >'"$d"'/start.$ACCELCTL_RANK; sleep 0.3; date +%s%N >'"$d"'/end.$ACCELCTL_RANK'
	assertRc 0 "main-first"
	local r main_end; main_end=$(cat "$d/end.0")
	for r in 1 2 3; do
		assertTrue "rank $r started after main finished" "[ $(cat "$d/start.$r") -ge $main_end ]"
	done
}

testMainFirstMainFails() {
	run -- launch -n 3 --tag -- bash -c 'accelctl main-first -- sh -c "echo ran; exit 6"; echo "rc=$?"'
	assertEquals "only main ran CMD" "0: ran" "$(printf '%s\n' "$out" | grep ran)"
	assertEquals "all exit with main's status" 3 "$(printf '%s\n' "$out" | grep -c 'rc=6$')"
	assertContains "$err" "accelctl: main-first: the main process failed (exit 6): not running CMD"
}

testMainFirstLocal() {
	run -- launch -n 2 --nnodes 2 --tag -- accelctl main-first --local -- sh -c 'echo "ran $ACCELCTL_RANK"'
	assertRc 0 "main-first --local"
	assertEquals "every rank ran" 4 "$(printf '%s\n' "$out" | grep -c ran)"
}

# The process others wait for dies: they exit 3 at once, not at the deadline.
testWaitRankDies() {
	local d; d=$(scratch)/die; mkdir -p "$d"
	local t0 t1
	t0=$(date +%s)
	run -- launch -n 3 --tag -- bash -c "$(source_dies "$d" 60s)"
	t1=$(date +%s)
	assertEquals "the waiters exit 3" 2 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
	assertContains "$err" "rank 0 (node 0) died"
	assertTrue "at once ($((t1 - t0))s)" "[ $((t1 - t0)) -lt 10 ]"
}

load_shunit2
