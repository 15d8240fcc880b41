# t_moves.sh: launches under one job id that meet in etcd (ctest etcd.moves):
# a node that moves to its node 0's run takes the results it wrote with it,
# and a node of a bigger launch is never counted as a reader of another's
# results (found by the review of the range-read acks).
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; exit "$SKIP"; }
	etcd_start 1
}
oneTimeTearDown() { stop_helpers; etcd_stop; }

node() {
	local l=$1 n=$2; shift 2
	(node_env "$l" "$n" timeout 30 "$ACCELCTL" "$@" 2>"$(scratch)/$l.err.$n")
	rc=$?
	err=$(cat "$(scratch)/$l.err.$n")
}
node_env() {
	local l=$1 n=$2 d; shift 2
	d=$(scratch)/$l/n$n; mkdir -p "$d"; chmod 700 "$d"
	exec env -i PATH="/usr/bin:/bin" HOME="${HOME:-/}" ACCELCTL_RENDEZVOUS="$ETCD_URL" \
		ACCELCTL_JOB_ID="$JOB" ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_RANK="$n" \
		ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=1 \
		ACCELCTL_NODE_RANK="$n" ACCELCTL_NNODES=2 "$@"
}
helper_pids() { cat "$(scratch)/$1"/n*/*.pid 2>/dev/null; }
stop_helpers() {
	local p
	for p in $(cat "$(scratch)"/*/n*/*.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
}

# As testClosedBeforeTheRankArrives, but node 1 (joined launch 1's run) is
# the source of a result (on-process --wait 1) before launch 2's node 0 opens
# its run. Node 1 then moves to node 0's run: the result must follow it.
testSourceMovesRun() {
	JOB=srcmoves
	node c1 0 barrier --timeout 2s x
	assertEquals "launch 1's node 0 alone times out" 124 "$rc"
	(node_env c2 1 "$ACCELCTL" helper start >/dev/null 2>&1)
	local i=0
	until etcdctl_ get --prefix "accelctl/$JOB/r" --keys-only | grep -q '/members/1$' || [ $i -gt 200 ]; do
		sleep 0.05; i=$((i + 1)); done
	node c2 1 on-process --wait --timeout 20s 1 -- true
	assertEquals "source ran" 0 "$rc"
	(node c2 0 on-process --wait --timeout 12s 1 -- true; echo "$rc" >"$(scratch)/c2.rc.0") &
	sleep 2
	node c2 1 barrier --timeout 5s y
	local rc1=$rc
	wait
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
	local i=0
	until etcdctl_ get --prefix "accelctl/$JOB/r1/done/" --keys-only | grep -q . || [ $i -gt 200 ]; do
		sleep 0.05; i=$((i + 1)); done
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
