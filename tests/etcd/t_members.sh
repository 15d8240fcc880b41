# t_members.sh: a member of a 3-member cluster that hangs (ctest etcd.members): SIGSTOPped, as a
# frozen machine, while a node's helper waits on its watch there. The kernel
# still answers TCP keepalives for it, so the watch stayed open and silent:
# the other node passed through the two members left and this one waited
# until its deadline (124). A node that waits checks its member every 3 s
# (the lease's keepalive, 5 s to answer) and moves to the next endpoint.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; skip_suite; }
	etcd_start 3
}
oneTimeTearDown() {
	local p
	for p in $(cat "$(scratch)"/n*/*.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
	kill -CONT "$(etcd_member_pid 0)" 2>/dev/null
	etcd_stop
}

# node NODE URL ARGS...: accelctl ARGS as the one rank of node NODE of a
# 2-node job, through URL (each node its own endpoint order). Sets $rc.
node() {
	local n=$1 url=$2 d; d=$(scratch)/n$n; shift 2
	mkdir -p "$d"; chmod 700 "$d"
	env -i PATH="/usr/bin:/bin" HOME="${HOME:-/}" ACCELCTL_RENDEZVOUS="$url" \
		ACCELCTL_JOB_ID=hung ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_RANK="$n" \
		ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=1 \
		ACCELCTL_NODE_RANK="$n" ACCELCTL_NNODES=2 timeout 40 "$ACCELCTL" "$@" 2>>"$d/err"
	rc=$?
}

# Node 0 talks to member 0 first, node 1 to member 1. Node 0 arrives at x;
# member 0 is frozen; node 1 arrives through member 1 and passes: node 0
# must pass too, long before its deadline (under 40 s of 60), not wait on the
# frozen member. The freeze comes once node 0's status says it waits for node
# 1, and node 1 comes once member 0 is frozen (conditions: fixed 0.5 s and
# 1.5 s pauses were orders a busy machine could lose).
testMemberHangsUnderWatch() {
	local e=(127.0.0.1:${ETCD_CPORT[0]} 127.0.0.1:${ETCD_CPORT[1]} 127.0.0.1:${ETCD_CPORT[2]})
	local a="etcd://${e[0]},${e[1]},${e[2]}" b="etcd://${e[1]},${e[2]},${e[0]}" d; d=$(scratch)
	(node 1 "$b" barrier --timeout 60s warm
	 eventually 90 test -e "$d/frozen"
	 node 1 "$b" barrier --timeout 65s x; echo "$rc" >"$d/rc.1") &
	node 0 "$a" barrier --timeout 60s warm
	assertEquals "warm-up" 0 "$rc"
	(eventually 60 node0_waits "$a"; kill -STOP "$(etcd_member_pid 0)"; : >"$d/frozen") &
	local t0 t1; t0=$(date +%s%N)
	node 0 "$a" barrier --timeout 60s x
	t1=$(date +%s%N)
	wait
	kill -CONT "$(etcd_member_pid 0)"
	assertEquals "node 1 passed" 0 "$(cat "$d/rc.1")"
	assertEquals "node 0 passed too ($(cat "$d"/n0/err))" 0 "$rc"
	assertTrue "before its deadline ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -lt 40000 ]"
}

# node0_waits URL: node 0's status says its arrival is posted, node 1 missing.
node0_waits() { node 0 "$1" status 2>/dev/null | grep -q "waiting for node 1"; }

load_shunit2
