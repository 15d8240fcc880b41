# t_lease.sh: etcd loses a helper's lease mid-job (ctest etcd.lease): its
# keys go with it, also those other nodes have not read yet. Here the lease
# is short (ACCELCTL_ETCD_TTL=3) and node 0's helper is SIGSTOPped past it,
# as a node frozen (swapping, a paused VM) or cut off from etcd for a TTL;
# or an operator revokes the helpers' leases (etcdctl lease revoke) while
# they are idle, with the default lease (a day).
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"
. "$(dirname "$0")/keywait.sh"

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; skip_suite; }
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
# The helper used to hold only a name's last result to write again:
# generations 0 and 1 went with the lease, and node 1 waited at generation 0
# until its deadline. It now keeps what it wrote (AC_KEEP_MAX, rdvkeep.c).
testLeaseExpiredUnderResults() {
	local d; d=$(scratch)/lr; mkdir -p "$d"
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
		accelctl barrier --timeout 20s end; echo "rc=$?"
		cat $ACCELCTL_RUNTIME_DIR/*.log >'"$d"'/log.$ACCELCTL_NODE_RANK'
	assertEquals "both nodes read every generation ($out $err; node 0's helper: $(cat "$d/log.0"); node 1's: $(cat "$d/log.1"))" \
		2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
}

# A result older than the lease's TTL is still kept to write again: node 0
# writes v twice, 4 s apart (the lease kept alive), then its helper stops
# past the lease. The helper used to drop what it wrote more than a TTL ago
# when it wrote the next: v's first went with the lease and was never
# written again (coll.c keeps only a name's last), and node 1, reading late,
# waited for it until its deadline.
testLeaseExpiredUnderOldResults() {
	local d; d=$(scratch)/lo; mkdir -p "$d"
	short 2 1 bash -c '
		accelctl barrier --timeout 20s warm || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			hp=$(cat $ACCELCTL_RUNTIME_DIR/*.pid)
			accelctl broadcast --timeout 20s v old >/dev/null || exit
			sleep 4
			accelctl broadcast --timeout 20s v new >/dev/null || exit
			sleep 0.5	# written: the first is then a TTL old
			kill -STOP $hp; sleep 5; kill -CONT $hp
		else
			sleep 9
			[ "$(accelctl broadcast --timeout 10s v)" = old ] || { echo "the first v lost"; exit 1; }
			[ "$(accelctl broadcast --timeout 10s v)" = new ] || { echo "the second v lost"; exit 1; }
		fi
		accelctl barrier --timeout 20s end; echo "rc=$?"
		cat $ACCELCTL_RUNTIME_DIR/*.log >'"$d"'/log.$ACCELCTL_NODE_RANK'
	assertEquals "node 1 read both ($out $err; node 0's helper: $(cat "$d/log.0"))" \
		2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
}

# What every node has read is not written again after a lost lease: nobody
# would read it, nor delete it (its key stayed for the lease's lifetime, a
# day by default). Node 1 reads v three times, then node 0's helper stops
# past the lease; after it is back, etcd holds no result of v.
testLeaseLostAfterResultsRead() {
	local d; d=$(scratch)/lr2; mkdir -p "$d"
	run ACCELCTL_RENDEZVOUS="$ETCD_URL" ACCELCTL_ETCD_TTL=3 EP="http://${ETCD_ENDPOINTS}" -- \
		launch --nnodes 2 -n 1 --tag -- bash -c '
		for i in 1 2 3; do accelctl broadcast --timeout 20s v "$i" >/dev/null || exit; done
		accelctl barrier --timeout 20s read || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			hp=$(cat $ACCELCTL_RUNTIME_DIR/*.pid)
			sleep 0.5; kill -STOP $hp; sleep 5; kill -CONT $hp
		fi
		accelctl barrier --timeout 20s end || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			sleep 1.5
			ETCDCTL_API=3 etcdctl --endpoints "$EP" get --prefix accelctl/ --keys-only >'"$d"'/keys
		fi; echo "rc=$?"'
	assertEquals "both went on ($err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertTrue "etcd was read ($(cat "$d/keys"))" "grep -q /r1/ '$d/keys'"
	assertEquals "no result of v in etcd" "" "$(grep '/done/c:v/' "$d/keys")"
}

# Every helper's lease revoked (etcdctl lease revoke) after node 0 wrote a
# 700 KB broadcast, an on-main --wait status and a small broadcast and went
# idle: etcd deletes every key of those leases. An idle helper keeps its
# lease alive only every TTL/3 (8 h here), so it never learned, and node 1's
# readers waited until their deadline (2 of 2 each). The helper sees its
# registration deleted, takes a new lease and writes its results again. (The
# readers' deadlines are 30 s: a reader that found nothing waits them out,
# one served reads at once; 5 s was tight for a busy machine's rewrite.)
testLeaseRevokedUnderIdleSource() {
	local d; d=$(scratch)/rv; mkdir -p "$d"
	head -c $((700 * 1000)) /dev/urandom >"$d/big"
	{ run ACCELCTL_RENDEZVOUS="$ETCD_URL" -- launch --nnodes 2 -n 1 --tag -- bash -c '
		accelctl barrier --timeout 60s warm || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			accelctl broadcast --timeout 60s big <'"$d"'/big >/dev/null || exit
			accelctl on-main --wait --timeout 60s -- true || exit
			accelctl broadcast --timeout 60s v small >/dev/null || exit
			echo >'"$d"'/written
			until [ -e '\"$d\"'/read ] || [ $SECONDS -gt 120 ]; do sleep 0.05; done
			echo "rc=0"; exit
		fi
		until [ -e '\"$d\"'/go ] || [ $SECONDS -gt 120 ]; do sleep 0.05; done
		accelctl broadcast --timeout 30s big </dev/null | cmp -s - '"$d"'/big || { echo "big lost"; exit 1; }
		accelctl on-main --wait --timeout 30s -- true || { echo "status lost"; exit 1; }
		[ "$(accelctl broadcast --timeout 30s v)" = small ] || { echo "small lost"; exit 1; }
		echo >'"$d"'/read; echo "rc=0"'
	printf '%s\n' "$out" >"$d/out"; printf '%s\n' "$err" >"$d/err"; } &
	etcd_wait_file "$d/written"
	etcd_wait_key '/r1/done/c:v/'
	local l n=0
	for l in $(etcdctl_ lease list | tail -n +2); do etcdctl_ lease revoke "$l" >/dev/null && n=$((n + 1)); done
	assertTrue "both helpers' leases revoked ($n)" "[ $n -ge 2 ]"
	# The source writes them again (or never does, unfixed).
	etcd_wait_key '/r1/done/c:v/'
	echo >"$d/go"
	wait
	out=$(cat "$d/out")
	assertEquals "node 1 read all three ($(cat "$d/err"))" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
}

# Two generations of one name whose writes end out of order: node 0
# broadcasts 4 MiB (written in parts) then a small one; the small one is in
# etcd first. Every lease is then revoked while node 0 idles. The kept list
# (rdvkeep.c) took the big one, written last, as older than what it had and
# did not keep it: node 0 wrote only the small one again, and node 1 waited
# for the big one until its deadline (review of issue 19).
testOutOfOrderWritesKept() {
	local d; d=$(scratch)/oo; mkdir -p "$d"
	head -c $((4 << 20)) /dev/urandom >"$d/big"
	{ run ACCELCTL_RENDEZVOUS="$ETCD_URL" -- launch --nnodes 2 -n 1 --tag -- bash -c '
		accelctl barrier --timeout 60s warm || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			accelctl broadcast --timeout 60s v <'"$d"'/big >/dev/null || exit
			accelctl broadcast --timeout 60s v small >/dev/null || exit
			echo >'"$d"'/written
			until [ -e '\"$d\"'/read ] || [ $SECONDS -gt 120 ]; do sleep 0.05; done
			echo "rc=0"; exit
		fi
		until [ -e '\"$d\"'/go ] || [ $SECONDS -gt 120 ]; do sleep 0.05; done
		accelctl broadcast --timeout 30s v </dev/null | cmp -s - '"$d"'/big || { echo "big lost"; exit 1; }
		[ "$(accelctl broadcast --timeout 30s v)" = small ] || { echo "small lost"; exit 1; }
		echo >'"$d"'/read; echo "rc=0"'
	printf '%s\n' "$out" >"$d/out"; printf '%s\n' "$err" >"$d/err"; } &
	etcd_wait_file "$d/written"
	etcd_wait_key '/r1/done/c:v/0*0$' 15
	etcd_wait_key '/r1/done/c:v/0*1$' 15
	# The helper counts each as written at etcd's answer, a moment on: a
	# revoke before that restarts the upload, which proves less here but
	# never fails (this pause cannot make the test fail on a busy machine).
	sleep 0.5
	local l n=0
	for l in $(etcdctl_ lease list | tail -n +2); do etcdctl_ lease revoke "$l" >/dev/null && n=$((n + 1)); done
	assertTrue "both helpers' leases revoked ($n)" "[ $n -ge 2 ]"
	etcd_wait_key '/r1/done/c:v/0*0$' 15
	echo >"$d/go"
	wait
	out=$(cat "$d/out")
	assertEquals "node 1 read both ($(cat "$d/err"))" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertNotContains "$out" "lost"
}

load_shunit2
