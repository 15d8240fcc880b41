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

# The process others wait for dies: they exit 3 at once, not at the deadline
# (120 s; "at once" is under half of it: the time is a whole launch on a busy
# machine).
testWaitRankDies() {
	local d; d=$(scratch)/die; mkdir -p "$d"
	local t0 t1
	t0=$SECONDS
	RUN_LIMIT=300 run -- launch -n 3 --tag -- bash -c "$(source_dies "$d" 120s)"
	t1=$SECONDS
	assertEquals "the waiters exit 3" 2 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
	assertContains "$err" "rank 0 (node 0) died"
	assertTrue "at once ($((t1 - t0))s)" "[ $((t1 - t0)) -lt 60 ]"
}

# The source itself is killed (kill -9, as the OOM killer does): CMD goes with
# it, not on as an orphan whose status nobody would report (the others are
# told the source died). Without PR_SET_PDEATHSIG the sleep lived its 60 s.
testSourceKilledTakesCmd() {
	local d; d=$(scratch)/srckill; mkdir -p "$d"
	run -- launch -n 2 --tag -- bash -c '
		alive() { [ -r /proc/$1/stat ] && read -r _ _ st _ </proc/$1/stat && [ "$st" != Z ]; }
		if [ $ACCELCTL_RANK = 0 ]; then
			accelctl on-main --wait -- sh -c "echo \$PPID \$\$ >'"$d"'/pid; exec sleep 60" &
			while [ ! -s '"$d"'/pid ]; do sleep 0.02; done
			set -- $(cat '"$d"'/pid); kill -9 $1; wait
			# At once, against its 60 s: 30 s by the clock.
			end=$((SECONDS + 30)); while alive $2 && [ $SECONDS -lt $end ]; do sleep 0.1; done
			if alive $2; then echo "CMD orphaned"; kill $2; else echo "CMD gone"; fi
			exit 0
		fi
		accelctl on-main --wait --timeout 120s -- true; echo "rc=$?"'
	assertContains "CMD died with its accelctl: $out" "$out" "0: CMD gone"
	assertContains "the waiter was told: $out" "$out" "1: rc=3"
}

# CMD runs longer than the progress interval: the source is sent no PROGRESS
# (it took any frame for a lost helper and gave up its role: "rank 0 died").
testWaitLongerThanProgress() {
	run ACCELCTL_PROGRESS_INTERVAL=1s -- launch -n 3 --tag -- bash -c 'accelctl on-main --wait -- sh -c "sleep 3; exit 5"; echo "rc=$?"'
	assertEquals "every rank gets CMD's status: $err" 3 "$(printf '%s\n' "$out" | grep -c 'rc=5$')"
	assertNotContains "$err" "died"
}

testMainFirstLongerThanProgress() {
	run ACCELCTL_PROGRESS_INTERVAL=1s -- launch -n 3 --tag -- bash -c 'accelctl main-first -- sh -c "[ \$ACCELCTL_RANK = 0 ] && sleep 3; echo ran"; echo "rc=$?"'
	assertEquals "every rank ran CMD after main: $err" 3 "$(printf '%s\n' "$out" | grep -c ': ran$')"
	assertEquals "every rank exits 0" 3 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
}

# orphan_job DIR ACCELCTL-ARGS: run "accelctl ARGS" as rank 0 of 2 under a
# shell, kill -9 that shell once accelctl waits (torchrun kills only the
# shells it started), and wait up to 40 s for the orphaned accelctl to leave;
# sets LEFT (the milliseconds it took, by bash's clock; 40 s and more if it did
# not). The waits' deadlines are 60 s: "at once" is under 30 s.
# orphan_waits DIR: the helper of orphan_job's job has something in flight.
orphan_waits() {
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" ACCELCTL_RUNTIME_DIR="$1/rt" \
		ACCELCTL_JOB_ID=orphan ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 "$ACCELCTL" status 2>/dev/null | grep -q ' generation 0 '
}

orphan_job() {
	local d=$1; shift
	mkdir -p -m 700 "$d/rt"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" ACCELCTL_RUNTIME_DIR="$d/rt" \
		ACCELCTL_JOB_ID=orphan ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 \
		bash -c 'accelctl "$@" 2>"$0/err"; echo "not reached"' "$d" "$@" &
	local sh=$! pid t0
	# Waiting: its helper lists it (30 s at most, a guard; a fixed second was a guess).
	eventually 30 orphan_waits "$d"
	pid=$(pgrep -P "$sh")
	[ -n "$pid" ] || fail "no accelctl under the job's shell"
	t0=${EPOCHREALTIME/[.,]/}
	kill -9 "$sh"
	# Gone, or a zombie: it has exited, whenever its new parent reaps it.
	[ -n "$pid" ] && wait_gone "$pid" 40
	LEFT=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" ACCELCTL_RUNTIME_DIR="$d/rt" \
		ACCELCTL_JOB_ID=orphan ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 "$ACCELCTL" helper stop
}

# A waiter whose parent (the job script's shell) is killed leaves at once: an
# orphan must not wait on (and keep a launcher waiting) until its deadline.
testWaiterLeavesWithItsParent() {
	local d; d=$(scratch)/orphan-wait
	orphan_job "$d" barrier --timeout 60s never
	assertTrue "the orphaned waiter left at once ($LEFT ms after its shell)" "[ $LEFT -lt 30000 ]"
	assertContains "$(cat "$d"/err)" "'never': the process that ran accelctl (pid"
}

# The same for the rank that runs CMD under --wait: CMD is stopped (SIGTERM).
testSourceLeavesWithItsParent() {
	local d; d=$(scratch)/orphan-src
	orphan_job "$d" on-main --wait -- sleep 60
	assertTrue "the orphaned source left at once ($LEFT ms after its shell)" "[ $LEFT -lt 30000 ]"
	assertContains "$(cat "$d"/err)" "exited: stopping CMD"
}

load_shunit2
