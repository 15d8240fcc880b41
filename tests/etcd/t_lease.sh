# t_lease.sh: etcd loses a helper's lease mid-job (ctest etcd.lease): its
# keys go with it, also those other nodes have not read yet. Here the lease
# is short (ACCELCTL_ETCD_TTL=3) and node 0's helper is SIGSTOPped past it,
# as a node frozen (swapping, a paused VM) or cut off from etcd for a TTL.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; exit "$SKIP"; }
	etcd_start 1
}
oneTimeTearDown() { etcd_stop; }

# short NODES RANKS ARGS...: accelctl launch across nodes with a 3 s lease.
short() {
	local nodes=$1 ranks=$2; shift 2
	run ACCELCTL_RENDEZVOUS="$ETCD_URL" ACCELCTL_ETCD_TTL=3 -- launch --nnodes "$nodes" -n "$ranks" --tag -- "$@"
}

# Node 0 arrives at b, then its helper stops for 7 s; node 1 arrives at 5 s,
# after etcd dropped node 0's arrival with the lease. Node 0's helper, woken,
# sees node 1's arrival and completes b; it must put its own back (the lease
# is granted again), or node 1 waits at b until its deadline: it only
# reposted barriers still in flight here.
testLeaseExpiredUnderBarrier() {
	short 2 1 bash -c '
		accelctl barrier --timeout 20s warm || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			hp=$(cat $ACCELCTL_RUNTIME_DIR/*.pid)
			( sleep 0.5; kill -STOP $hp; sleep 7; kill -CONT $hp ) &
		else
			sleep 5
		fi
		accelctl barrier --timeout 20s b; echo "rc=$?"'
	assertEquals "both nodes passed ($err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertNotContains "$err" "timed out"
}

# The same for results: rank 0 broadcasts 3 generations (its source never
# waits), then its helper stops past the lease; node 1 reads them after.
# The helper holds only a name's last result to write again: generations 0
# and 1 went with the lease. NOT FIXED (review 13b): node 1 waits at
# generation 0 until its deadline (124). Results written would have to be
# kept until every node said it read them.
testLeaseExpiredUnderResults() {
	short 2 1 bash -c '
		accelctl barrier --timeout 20s warm || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			hp=$(cat $ACCELCTL_RUNTIME_DIR/*.pid)
			for i in 1 2 3; do accelctl broadcast --timeout 20s v "$i" >/dev/null || exit; done
			kill -STOP $hp; sleep 7; kill -CONT $hp
		else
			sleep 5
			for i in 1 2 3; do
				[ "$(accelctl broadcast --timeout 10s v)" = "$i" ] || { echo "generation $i lost"; exit 1; }
			done
		fi
		accelctl barrier --timeout 20s end; echo "rc=$?"'
	assertEquals "both nodes read every generation ($out $err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
}

load_shunit2
