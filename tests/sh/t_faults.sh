# t_faults.sh: processes killed at the worst moment, each 20 times (FAULT_REPS):
# a waiting rank, the --wait rank, and the helper in the middle of a barrier.
. "$(dirname "$0")/lib.sh"

REPS=${FAULT_REPS:-20}

# A rank killed while it waits has arrived: the barrier completes for the
# others, and the helper goes on serving.
testKillWaitingRank() {
	local i d
	for i in $(seq 1 "$REPS"); do
		d=$(scratch)/kw$i; mkdir -p "$d"
		run -- launch -n 4 --tag -- bash -c '
			if [ $ACCELCTL_RANK = 3 ]; then
				accelctl barrier --timeout 20s k & p=$!
				# Until rank 3 itself is no longer missing at k.
				until accelctl status | grep " k " | grep -qv "rank 3 "; do sleep 0.01; done
				kill -9 $p; wait $p; echo "killed rc=$?"
			else
				sleep 0.$((5 + RANDOM % 3)); accelctl barrier --timeout 20s k || exit
			fi
			accelctl barrier --timeout 20s after; echo "rc=$?"'
		assertEquals "round $i: rank 3 was killed" "3: killed rc=137" "$(printf '%s\n' "$out" | grep killed)"
		assertEquals "round $i: everyone passed the next barrier" 4 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	done
}

# The rank running CMD for --wait is killed: the others exit 3 at once.
testKillWaitRank() {
	local i d t0 t1
	for i in $(seq 1 "$REPS"); do
		d=$(scratch)/kr$i; mkdir -p "$d"
		t0=$(date +%s%N)
		run -- launch -n 3 --tag -- bash -c "$(source_dies "$d" 20s)"
		t1=$(date +%s%N)
		assertEquals "round $i: both waiters exit 3" 2 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
		assertTrue "round $i: at once ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -lt 5000 ]"
	done
}

# The helper is killed while three ranks wait: they notice, start a new one and
# arrive again; nobody leaves before the fourth rank arrives, and nobody hangs.
testKillHelperMidBarrier() {
	local i d
	for i in $(seq 1 "$REPS"); do
		d=$(scratch)/kh$i; mkdir -p "$d"
		run -- launch -n 4 --tag -- bash -c '
			if [ $ACCELCTL_RANK = 3 ]; then
				until accelctl status | grep -q "3/4 arrived"; do sleep 0.01; done
				kill -9 $(cat $ACCELCTL_RUNTIME_DIR/*.pid)
				sleep 0.3
				date +%s%N >'"$d"'/arrive
				accelctl barrier --timeout 20s h; echo "rc=$?"
			else
				accelctl barrier --timeout 20s h; r=$?; date +%s%N >'"$d"'/left.$ACCELCTL_RANK; echo "rc=$r"
			fi'
		assertEquals "round $i: all four passed" 4 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
		local l arrive; arrive=$(cat "$d/arrive")
		for l in "$d"/left.*; do
			assertTrue "round $i: $(basename "$l") waited for the last arrival" "[ $(cat "$l") -ge $arrive ]"
		done
	done
}

# A journal kept small by compaction still lets no barrier pass early when
# the helper is killed: 4 ranks x 60 generations, the helper killed twice.
testJournalCompactedAcrossHelperKills() {
	local d; d=$(scratch)/jc; mkdir -p "$d"
	run ACCELCTL_JOURNAL_MAX=1024 -- launch -n 4 -- bash -c '
		for g in $(seq 0 59); do
			if [ $ACCELCTL_RANK = 0 ] && { [ $g = 20 ] || [ $g = 40 ]; }; then
				until accelctl status | grep -q "3/4 arrived"; do sleep 0.01; done
				kill -9 $(cat $ACCELCTL_RUNTIME_DIR/*.pid)
			fi
			echo "$g enter $(date +%s%N)" >>'"$d"'/r$ACCELCTL_RANK
			accelctl barrier --timeout 30s jc || exit
			echo "$g leave $(date +%s%N)" >>'"$d"'/r$ACCELCTL_RANK
		done
		[ $ACCELCTL_RANK = 0 ] && stat -c %s $ACCELCTL_RUNTIME_DIR/*.state >'"$d"'/size; exit 0'
	assertRc 0 "60 barriers, two helper kills"
	assertEquals "no early release" "" "$(early_releases "$d"/r*)"
	assertTrue "journal compacted ($(cat "$d/size") bytes)" "[ $(cat "$d/size") -lt 2048 ]"
}

load_shunit2
