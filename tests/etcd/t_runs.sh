# t_runs.sh: run identity over etcd (ctest etcd.runs): a second launch under the same ACCELCTL_JOB_ID
# never passes on the first one's state, even when the first was SIGKILLed
# with an arrival in etcd (nothing withdrew it, and its lease lives a day);
# a node that starts before its node 0 still joins its own launch; a node that
# moves to its node 0's run takes the results it wrote with it; a node of a
# bigger launch is never counted as a reader of another's results.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; skip_suite; }
	etcd_start 1
}
oneTimeTearDown() { stop_helpers; etcd_stop; }

# node and node_env: pair_node and pair_env of tests/sh/lib.sh, through etcd.
node() { PAIR_RDV=$ETCD_URL pair_node "$@"; }
node_env() { PAIR_RDV=$ETCD_URL pair_env "$@"; }

# helper_pids LAUNCH: the helpers of that launch.
helper_pids() { cat "$(scratch)/$1"/n*/*.pid 2>/dev/null; }
stop_helpers() {
	local p
	for p in $(cat "$(scratch)"/*/n*/*.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
}

# Launch 1's node 0 waits at x (its arrival in etcd) and is SIGKILLed with its
# helper; node 1 never ran. Launch 2's node 1 comes first: the newest run is
# launch 1's, its place there is free, but that run's node 0 does not answer:
# it must not pass x on the dead arrival. Launch 2's node 0 then opens a run
# of its own, and both pass.
testRerunAfterSigkill() {
	JOB=sigkilled
	# Its pid is accelctl's own (the subshell execs it).
	(node_env l1 0 "$ACCELCTL" barrier --timeout 30s x 2>/dev/null) &
	local c=$!
	eventually 30 eval '[ -n "$(etcdctl_ get --prefix "accelctl/$JOB/r1/arr/" --keys-only)" ]'
	assertNotEquals "launch 1's arrival is in etcd" "" "$(etcdctl_ get --prefix "accelctl/$JOB/r1/arr/" --keys-only)"
	# The rank first: it cannot see its helper die and start another.
	kill -9 "$c" $(helper_pids l1) 2>/dev/null
	wait "$c" 2>/dev/null

	# Node 1 probes launch 1's run (3 s, again after each wait of
	# 250 ms): status says so, over every store (only etcd's did).
	local t0 t1; t0=${EPOCHREALTIME/[.,]/}000
	(node l2 1 barrier --timeout 5s x; echo "$rc" >"$(scratch)/l2.x.rc") &
	local w=$!
	probe_status node_env l2 1 "$(scratch)/l2.x.rc"
	wait "$w"; rc=$(cat "$(scratch)/l2.x.rc"); err=$(cat "$(scratch)/l2.err.1")
	t1=${EPOCHREALTIME/[.,]/}000
	assertContains "status while node 1 probes: $PROBE_ST" "$PROBE_ST" "joining run"
	assertContains "$PROBE_ST" "is its node 0 alive?"
	# The wait is said once, not at each probe no node 0 answers (it
	# was, every 3.25 s: review of issue 19). Node 1's helper goes on
	# probing: until status has shown a second probe end in a wait.
	probes_end_in_wait node_env l2 1
	assertTrue "status showed two probes end in a wait ($PROBES_SEEN)" "[ $PROBES_SEEN -ge 2 ]"
	assertEquals "one wait logged after $PROBES_SEEN probes" 1 \
		"$(cat "$(scratch)"/l2/n1/*.log | grep -c 'waiting for node 0')"
	assertEquals "launch 2's node 1 alone does not pass x ($err $(cat "$(scratch)"/l2/n1/*.log))" 124 "$rc"
	assertTrue "it waited its deadline ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -ge 5000 ]"
	assertContains "$(cat "$(scratch)"/l2/n1/*.log)" "did not answer"

	# The whole of launch 2, node 1 first again (its rank that timed out at
	# x counts as arrived there, as a barrier counts every rank that came).
	(node l2 1 barrier --timeout 20s y; echo "$rc" >"$(scratch)/l2.rc.1") &
	sleep 1
	node l2 0 barrier --timeout 20s x && node l2 0 barrier --timeout 20s y
	echo "$rc" >"$(scratch)/l2.rc.0"
	wait
	assertEquals "launch 2: both nodes pass" "0 0" "$(cat "$(scratch)"/l2.rc.0 "$(scratch)"/l2.rc.1 | tr '\n' ' ' | sed 's/ $//')"
}

# member1_posted: node 1 is a member of a run of $JOB in etcd.
member1_posted() { etcdctl_ get --prefix "accelctl/$JOB/r" --keys-only | grep -q '/members/1$'; }

# Launch 2's node 1 helper starts before its rank comes and before launch 2's
# node 0 (a prolog, helper start): launch 1's run is the newest, node 1's
# place there is free and launch 1's node 0 helper (idle, alive) answers, so
# it joins it. Launch 2's node 0 then opens a run and closes launch 1's while
# no rank of node 1 waits: node 1 must still move when its rank arrives.
testClosedBeforeTheRankArrives() {
	JOB=closedearly
	node c1 0 barrier --timeout 2s x
	assertEquals "launch 1's node 0 alone times out" 124 "$rc"
	(node_env c2 1 "$ACCELCTL" helper start >/dev/null 2>&1)
	eventually 30 member1_posted
	assertTrue "launch 2's node 1 helper joined launch 1's run" \
		"etcdctl_ get --prefix accelctl/$JOB/r --keys-only | grep -q /members/1\$"
	(node c2 0 barrier --timeout 20s x; echo "$rc" >"$(scratch)/c2.rc.0") &
	sleep 2		# node 1's helper has read "closed" with no rank waiting
	node c2 1 barrier --timeout 12s x
	wait
	assertEquals "launch 2 passes x on both nodes ($err)" "0 0" "$(cat "$(scratch)/c2.rc.0") $rc"
}

# Launch 1 completes x on both nodes and its helpers exit; launch 2's node 0
# alone must not pass x on launch 1's arrivals (as Redis' testRerunSameJobId).
testRerunSameJobId() {
	JOB=rerun
	(node r1 1 barrier --timeout 20s x; echo "$rc" >"$(scratch)/r1.rc.1") &
	node r1 0 barrier --timeout 20s x
	wait
	assertEquals "launch 1 passed" "0 0" "$rc $(cat "$(scratch)/r1.rc.1")"
	node r1 0 helper stop
	node r1 1 helper stop
	node r2 0 barrier --timeout 3s x
	assertEquals "launch 2's node 0 alone does not pass ($err)" 124 "$rc"
}

# A fresh job whose node 1 starts 2 s before node 0: it waits for node 0's run
# (no run yet), then joins it once node 0 answers.
testNodeOneFirst() {
	JOB=late0
	(node a 1 barrier --timeout 20s x; echo "$rc" >"$(scratch)/a.rc.1") &
	sleep 2
	node a 0 barrier --timeout 20s x
	wait
	assertEquals "both pass" "0 0" "$rc $(cat "$(scratch)/a.rc.1")"
}

# A node whose node 0 never came times out saying so, not "waiting for
# other nodes": its arrival was never posted.
testNodeZeroNeverCame() {
	JOB=never0
	node a 1 barrier --timeout 2s x
	assertEquals "node 1 alone ($err)" 124 "$rc"
	assertContains "$err" "all 1 ranks of node 1 arrived; not posted: waiting for node 0 to open this launch's run"
	node a 1 helper stop
}

# A node told to wait for node 0's run asks again 10 ms later: etcd's answer
# came inside libcurl's timer, after the protocol's timers were read, and
# the helper slept until a client woke it; the node waited for node 0 until
# its deadline (1 launch in 12 of 4 nodes x 8 ranks: tests/bench/etcd). Not
# every launch meets the race: 48 of them met it in each of 2 runs. "At once"
# is a launch under 60 s, against the barrier's 120 s deadline: a 10 s deadline
# was the start of 32 ranks under ASan on a busy machine as much as the race.
testWaitForNodeZeroWakes() {
	local i ok=0 slow="" t0
	for i in $(seq 1 48); do
		t0=$SECONDS
		RUN_LIMIT=300 run ACCELCTL_RENDEZVOUS="$ETCD_URL" -- launch --nnodes 4 -n 8 -- \
			accelctl barrier --timeout 120s wake
		if [ "$rc" = 0 ] && [ $((SECONDS - t0)) -lt 60 ]; then ok=$((ok + 1))
		else slow="$slow launch $i: rc $rc after $((SECONDS - t0)) s: $err;"; fi
	done
	assertEquals "every launch met at once ($slow)" 48 "$ok"
}

# A helper that exits withdraws its arrivals at barriers that did not
# complete (as over Redis). Nodes 0 and 1 of 3 arrive at x; node 1's rank is
# killed and its helper stopped; then node 2 arrives. Node 0 (which saw node
# 1's arrival come) and node 2 (which reads it gone) must agree: neither
# passes. The watch brings no deletes, so the withdrawal is announced by a
# put (wd/); without it node 0 passed and node 2 timed out. Node 0's 20 s
# deadline outlasts the steps until node 2 has timed out (8 s was near them on
# a busy machine: node 0 gone first, node 2 met nobody).
testWithdrawnArrivalSeenByWaiters() {
	JOB=withdrawn
	w() {	# NODE ARGS...: exec as rank NODE of a 3-node job, one rank a node
		local n=$1 d; shift
		d=$(scratch)/wd/n$n; mkdir -p "$d"; chmod 700 "$d"
		exec env -i PATH="/usr/bin:/bin" HOME="${HOME:-/}" ACCELCTL_RENDEZVOUS="$ETCD_URL" \
			ACCELCTL_JOB_ID="$JOB" ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_RANK="$n" \
			ACCELCTL_WORLD_SIZE=3 ACCELCTL_NNODES=3 ACCELCTL_LOCAL_RANK=0 \
			ACCELCTL_LOCAL_WORLD_SIZE=1 ACCELCTL_NODE_RANK="$n" "$@"
	}
	( (w 0 timeout 60 "$ACCELCTL" barrier --timeout 20s x 2>/dev/null); echo $? >"$(scratch)/wd.rc.0") &
	(w 1 "$ACCELCTL" barrier --timeout 60s x 2>/dev/null) &
	local c1=$! i
	eventually 30 eval '[ "$(etcdctl_ get --prefix "accelctl/$JOB/r1/arr/b:x/0/" --keys-only | grep -c .)" = 2 ]'
	sleep 0.5	# node 0 has had node 1's arrival from its watch
	assertTrue "node 1's rank waits" "kill -0 $c1"
	kill -9 "$c1"; wait "$c1" 2>/dev/null
	(w 1 "$ACCELCTL" helper stop >/dev/null 2>&1)
	assertEquals "node 1's arrival withdrawn" "" "$(etcdctl_ get --prefix "accelctl/$JOB/r1/arr/b:x/0/1" --keys-only)"
	(w 2 timeout 30 "$ACCELCTL" barrier --timeout 4s x 2>/dev/null)
	local rc2=$?
	wait
	assertEquals "node 2 does not pass on a withdrawn arrival" 124 "$rc2"
	assertEquals "node 0 does not pass either" 124 "$(cat "$(scratch)/wd.rc.0")"
	for i in 0 2; do (w "$i" "$ACCELCTL" helper stop >/dev/null 2>&1); done
}

# node0_idle: launch wl's node 0 holds nothing in flight.
node0_idle() { (node_env wl 0 timeout 5 "$ACCELCTL" status 2>/dev/null) | grep -q "nothing in flight"; }

# faults.restart testWithdrawalTooLate over etcd: node 0's rank waits at y
# (its arrival in etcd), its helper is stopped, node 1 arrives and passes;
# node 0's rank is killed and its helper continued, which withdraws the
# arrival after the barrier had passed. By the revisions node 0 decides as
# node 1 did (y passed), so its rank stays past y: a rerun under the same job
# id finds both nodes at the same generations and passes y and z.
testWithdrawalTooLate() {
	JOB=toolate
	local c0 p
	# Both nodes in the run first (a fresh node joins only when node 0
	# answers: testRerunAfterSigkill).
	(node wl 1 barrier --timeout 20s start; echo "$rc" >"$(scratch)/wl.start") &
	node wl 0 barrier --timeout 20s start
	wait
	assertEquals "both passed start" "0 0" "$rc $(cat "$(scratch)/wl.start")"
	(node_env wl 0 "$ACCELCTL" barrier --timeout 40s y 2>/dev/null) &
	c0=$!
	eventually 30 eval '[ -n "$(etcdctl_ get --prefix "accelctl/$JOB/r1/arr/b:y/0/0" --keys-only)" ]'
	assertNotEquals "node 0's arrival is in etcd" "" "$(etcdctl_ get --prefix "accelctl/$JOB/r1/arr/b:y/0/0" --keys-only)"
	p=$(cat "$(scratch)"/wl/n0/*.pid)
	kill -STOP "$p"
	node wl 1 barrier --timeout 20s y
	assertEquals "node 1 passes y ($err)" 0 "$rc"
	kill -9 "$c0"; wait "$c0" 2>/dev/null
	kill -CONT "$p"
	eventually 60 node0_idle || fail "node 0 still holds y: $(node_env wl 0 "$ACCELCTL" status 2>&1)"
	( { (node_env wl 1 timeout 60 "$ACCELCTL" barrier --timeout 30s y) &&
		(node_env wl 1 timeout 60 "$ACCELCTL" barrier --timeout 30s z); } \
		2>"$(scratch)/wl.err.1"; echo $? >"$(scratch)/wl.rc.1") &
	( { (node_env wl 0 timeout 60 "$ACCELCTL" barrier --timeout 30s y) &&
		(node_env wl 0 timeout 60 "$ACCELCTL" barrier --timeout 30s z); } \
		2>"$(scratch)/wl.err.0"; echo $? >"$(scratch)/wl.rc.0") &
	wait
	assertEquals "the rerun: y and z pass on both nodes ($(cat "$(scratch)"/wl.err.*))" "0 0" \
		"$(cat "$(scratch)"/wl.rc.0 "$(scratch)"/wl.rc.1 | tr '\n' ' ' | sed 's/ $//')"
}

# As testClosedBeforeTheRankArrives, but node 1 (joined launch 1's run) is
# the source of a result (on-process --wait 1) before launch 2's node 0 opens
# its run. Node 1 then moves to node 0's run: the result must follow it.
testSourceMovesRun() {
	JOB=srcmoves
	node c1 0 barrier --timeout 2s x
	assertEquals "launch 1's node 0 alone times out" 124 "$rc"
	(node_env c2 1 "$ACCELCTL" helper start >/dev/null 2>&1)
	eventually 30 member1_posted
	node c2 1 on-process --wait --timeout 20s 1 -- true
	assertEquals "source ran" 0 "$rc"
	(node c2 0 on-process --wait --timeout 60s 1 -- true; echo "$rc" >"$(scratch)/c2.rc.0") &
	local w0=$!
	sleep 2
	# Node 1's rank comes (and moves to node 0's run) and stays until node 0
	# got its result: not for a fixed 5 s that a busy machine could outlast.
	(node_env c2 1 "$ACCELCTL" barrier --timeout 60s y 2>/dev/null) &
	local y1=$!
	wait "$w0"
	kill "$y1" 2>/dev/null; wait "$y1" 2>/dev/null
	assertEquals "node 0 got node 1's result" 0 "$(cat "$(scratch)/c2.rc.0")"
}

# penv LAUNCH NODE RANK WORLD LRANK LWORLD NNODES CMD...: one rank's environment.
penv() {
	local l=$1 n=$2 r=$3 w=$4 lr=$5 lw=$6 nn=$7 d; shift 7
	d=$(scratch)/$l/n$n; mkdir -p "$d"; chmod 700 "$d"
	exec env -i PATH="/usr/bin:/bin" HOME="${HOME:-/}" ACCELCTL_RENDEZVOUS="$ETCD_URL" \
		ACCELCTL_JOB_ID="$JOB" ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_RANK="$r" \
		ACCELCTL_WORLD_SIZE="$w" ACCELCTL_LOCAL_RANK="$lr" ACCELCTL_LOCAL_WORLD_SIZE="$lw" \
		ACCELCTL_NODE_RANK="$n" ACCELCTL_NNODES="$nn" "$@"
}

# Launch A (2 nodes; node 0 has ranks 0 and 1, node 1 has rank 2) is running
# when launch B (3 nodes, same job id) starts its node 2 first: its place in
# A's run is free and A's node 0 answers the ping, so it joins A's run, reads
# A's broadcast and says so (s/KEY/2). A's node 0 then says it read it: the
# seen keys are {0, 2}, count 2 == A's nnodes: deleted before A's node 1
# read it.
testIntruderCounted() {
	JOB=intruder
	(penv A 0 0 3 0 2 2 timeout 30 "$ACCELCTL" broadcast --timeout 20s v hello >"$(scratch)/A0.out" 2>&1) &
	eventually 30 eval 'etcdctl_ get --prefix "accelctl/$JOB/r1/done/" --keys-only | grep -q .'
	(penv B 2 2 3 0 1 3 timeout 30 "$ACCELCTL" broadcast --timeout 10s v >"$(scratch)/B2.out" 2>&1)
	sleep 1
	(penv A 0 1 3 1 2 2 timeout 30 "$ACCELCTL" broadcast --timeout 20s v >"$(scratch)/A1.out" 2>&1)
	sleep 1
	(penv A 1 2 3 0 1 2 timeout 30 "$ACCELCTL" broadcast --timeout 8s v >"$(scratch)/A2.out" 2>&1)
	rc=$?
	wait
	assertEquals "A's node 1 reads A's broadcast ($(cat "$(scratch)/A2.out"))" "0 hello" "$rc $(cat "$(scratch)/A2.out")"
}

load_shunit2
