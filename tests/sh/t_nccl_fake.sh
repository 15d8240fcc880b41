# t_nccl_fake.sh: the NCCL transport's own code (lib/nccl/xnccl.c, cmd/check.c) against a
# fake CUDA runtime and NCCL (tests/fake/fakecuda.c) where no GPU is: one-rank and
# multi-node communicators of the simulated nodes' helpers, barriers, --status,
# broadcasts, the uniqueId exchange through the rendezvous (Redis, or etcd),
# disagreement, deadlines, init failures and restarts falling back to it, and
# accelctl check. The fake is not a GPU: what only a GPU shows is in
# tests/gpu/run.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/redis.sh"
. "$(dirname "$0")/etcd.sh"
. "$(dirname "$0")/store.sh"

# NCCL_FAKE_STORE=etcd (ctest sh.nccl_fake_etcd): the same over etcd, whose
# rendezvous NCCL rides on as on Redis' (lib/proto/rdvproto.c).
STORE=${NCCL_FAKE_STORE:-redis}
case $STORE in
redis) SHOWN=Redis ;;
etcd) SHOWN=etcd ;;
*) echo "NCCL_FAKE_STORE: expected redis or etcd" >&2; exit 1 ;;
esac

[ -n "${FAKE_CUDA:-}" ] && [ -f "$FAKE_CUDA" ] || { echo "built without NCCL: no fake to load, skipped" >&2; skip_suite; }

oneTimeSetUp() { store_start; }
oneTimeTearDown() { store_stop; }

FAKE="ACCELCTL_CUDART_LIBRARY=$FAKE_CUDA ACCELCTL_NCCL_LIBRARY=$FAKE_CUDA"

# fake NODES RANKS VAR=VALUE... -- CMD...: launch with the fake, through the store.
fake() {
	local nodes=$1 ranks=$2 vars=(); shift 2
	while [ "$1" != "--" ]; do vars+=("$1"); shift; done
	shift
	# shellcheck disable=SC2086
	run $FAKE ACCELCTL_RENDEZVOUS="$RDV" "${vars[@]}" -- \
		launch --nnodes "$nodes" -n "$ranks" --tag -- "$@"
}

generations() { # generations DIR: 20 barriers, timestamps into DIR
	printf '%s' 'for g in $(seq 0 19); do
		sleep 0.00$((RANDOM % 10))
		echo "$g enter $(date +%s%N)" >>'"$1"'/r$ACCELCTL_RANK
		accelctl barrier --timeout 30s gen || exit
		echo "$g leave $(date +%s%N)" >>'"$1"'/r$ACCELCTL_RANK
	done'
}

testOneNodeForced() {
	local d; d=$(scratch)/one; mkdir -p "$d"
	head -c 1048576 /dev/urandom >"$d/in"
	fake 1 3 ACCELCTL_TRANSPORT=nccl -- bash -c "$(generations "$d")"'
		accelctl barrier --status $((ACCELCTL_RANK == 2 ? 6 : 0)) st; echo "rc=$?"
		if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast big <'"$d"'/in; else accelctl broadcast big; fi >'"$d"'/out.$ACCELCTL_RANK
		[ $ACCELCTL_RANK = 0 ] && { accelctl status; cat "$ACCELCTL_RUNTIME_DIR"/*.log; } >'"$d"'/status; true'
	assertEquals "no generation released early" "" "$(early_releases "$d"/r*)"
	assertEquals "60 timestamps" 120 "$(cat "$d"/r* | wc -l)"
	assertEquals "--status on every rank" 3 "$(printf '%s\n' "$out" | grep -c 'rc=6$')"
	assertContains "$err" "st: rank 2 (exit 6) failed"
	assertTrue "1 MiB intact on rank 2" "cmp -s '$d/in' '$d/out.2'"
	assertContains "$(cat "$d/status")" "transport: nccl (a communicator of 1 node helper on GPU 0"
	assertContains "$(cat "$d/status")" "NCCL communicator of 1 node up on GPU 0"
}

testAcrossNodes() {
	local d; d=$(scratch)/across; mkdir -p "$d"
	head -c 1048576 /dev/urandom >"$d/in"
	fake 3 2 ACCELCTL_TRANSPORT=nccl -- bash -c "$(generations "$d")"'
		accelctl barrier --status $((ACCELCTL_RANK % 2 ? ACCELCTL_RANK : 0)) st; echo "rc=$?"
		if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast big <'"$d"'/in; else accelctl broadcast big; fi >'"$d"'/out.$ACCELCTL_RANK
		v=$(accelctl broadcast small "s$ACCELCTL_RANK"); echo "v=$v"
		accelctl on-process 4 --wait -- sh -c "exit 9"; echo "wait=$?"
		accelctl main-first -- true; echo "mf=$?"
		[ $ACCELCTL_RANK = 5 ] && accelctl status >'"$d"'/status; true'
	assertEquals "no generation released early" "" "$(early_releases "$d"/r*)"
	assertEquals "120 timestamps" 240 "$(cat "$d"/r* | wc -l)"
	assertEquals "--status: the lowest failing rank's status everywhere" 6 "$(printf '%s\n' "$out" | grep -c 'rc=1$')"
	assertContains "every failing rank named (through Redis)" "$err" "st: ranks 1 (exit 1), 3 (exit 3), 5 (exit 5) failed"
	local r
	for r in 1 2 3 4 5; do
		assertTrue "1 MiB intact on rank $r" "cmp -s '$d/in' '$d/out.$r'"
	done
	assertEquals "small broadcast" 6 "$(printf '%s\n' "$out" | grep -c 'v=s0$')"
	assertEquals "--wait over Redis beside NCCL" 6 "$(printf '%s\n' "$out" | grep -c 'wait=9$')"
	assertEquals "main-first" 6 "$(printf '%s\n' "$out" | grep -c 'mf=0$')"
	assertContains "$(cat "$d/status")" "transport: nccl (a communicator of 3 node helpers on GPU 0"
	local k bad=""
	if [ "$STORE" = etcd ]; then
		for k in $(etcdctl_ get --prefix accelctl/ --keys-only | grep /nccl/); do
			etcdctl_ get "$k" -w json | grep -q '"lease":' || bad="$bad $k"
		done
		assertEquals "the id and join keys have a lease" "" "$bad"
		assertNotEquals "an id was posted" "" "$(etcdctl_ get --prefix accelctl/ --keys-only | grep '/nccl/id$')"
		return
	fi
	for k in $(redis_cli --scan --pattern 'accelctl:*:nccl:*'); do
		[ "$(redis_cli ttl "$k")" -gt 0 ] || bad="$bad $k"
	done
	assertEquals "the id and join keys have a TTL" "" "$bad"
	assertNotEquals "an id was posted" "" "$(redis_cli --scan --pattern 'accelctl:*:nccl:id')"
}

testAutoTakesNcclWhereAGpuIs() {
	fake 2 1 -- bash -c 'accelctl barrier a && accelctl status | tail -n 1'
	assertRc 0 "barrier"
	assertContains "$out" "transport: nccl (a communicator of 2 node helpers"
	run $FAKE ACCELCTL_WORLD_SIZE=4 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		ACCELCTL_NODE_RANK=0 ACCELCTL_NNODES=2 -- info --json
	assertContains "$out" '"transport":"nccl"'
}

testDisagreementFailsClearly() {
	fake 2 2 ACCELCTL_TRANSPORT=nccl -- bash -c '
		accelctl barrier first
		if [ $ACCELCTL_NODE_RANK = 0 ]; then accelctl barrier --timeout 10s a; else accelctl barrier --timeout 10s b; fi
		echo "rc=$?"
		accelctl barrier --timeout 10s after; echo "after=$?"
		[ $ACCELCTL_RANK = 0 ] && accelctl status | tail -n 1; true'
	assertEquals "every rank fails with 125" 4 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	assertContains "$err" "accelctl: barrier: 'a': the nodes' helpers disagree on the order of collectives: this node is at barrier 'a' generation 0, another node at a different one"
	assertContains "$err" "accelctl: barrier: 'b': the nodes' helpers disagree"
	assertEquals "the job goes on over Redis" 4 "$(printf '%s\n' "$out" | grep -c 'after=0$')"
	assertContains "$out" "transport: $STORE (NCCL off: helpers disagreed on the order of collectives)"
}

# Node 1 comes to 'late' once node 0 timed out there (a file; a fixed 2 s
# against node 0's 1 s deadline was an order a busy machine could lose).
testDeadlineFallsBackToRedis() {
	local d; d=$(scratch)/late; mkdir -p "$d"
	fake 2 1 ACCELCTL_TRANSPORT=nccl -- bash -c '
		accelctl barrier first
		if [ $ACCELCTL_NODE_RANK = 0 ]; then accelctl barrier --timeout 1s late; echo "late=$?"; touch '"$d"'/late0
		else
			until [ -e '"$d"'/late0 ] || [ $SECONDS -gt 60 ]; do sleep 0.05; done
			accelctl barrier --timeout 10s late; echo "late=$?"
		fi
		accelctl barrier --timeout 10s next; echo "next=$?"
		accelctl status | tail -n 1'
	assertContains "node 0 times out" "$out" "0: late=124"
	assertContains "the late node passes, over Redis" "$out" "1: late=0"
	assertEquals "later barriers pass" 2 "$(printf '%s\n' "$out" | grep -c 'next=0$')"
	assertContains "$out" "transport: $STORE (NCCL off: a deadline passed at barrier 'late' generation 0 while it waited in NCCL)"
	assertContains "the missing node named (through Redis)" "$err" "all 1 ranks of node 0 arrived; waiting for node 1 ($(hostname): rank 1)"
}

# One GPU, two simulated nodes: NCCL refuses the communicator; Redis carries on.
testInitFailureFallsBack() {
	fake 2 2 ACCELCTL_TRANSPORT=nccl FAKE_NCCL_FAIL_INIT=1 -- bash -c '
		for g in 1 2 3; do accelctl barrier --timeout 10s x || exit; done
		v=$(accelctl broadcast --timeout 10s v "r$ACCELCTL_RANK"); echo "v=$v"
		[ $ACCELCTL_LOCAL_RANK = 0 ] && cat "$ACCELCTL_RUNTIME_DIR"/*.log >&2; true'
	assertEquals "broadcast over Redis" 4 "$(printf '%s\n' "$out" | grep -c 'v=r0$')"
	assertContains "$err" "NCCL off (ncclCommInitRankConfig: invalid usage (fake): Duplicate GPU detected"
	assertContains "$err" "the rest of the job goes over $SHOWN"
}

# A node's helper killed and restarted cannot rejoin: NCCL off, the job goes on.
testRestartedHelperTurnsNcclOff() {
	fake 2 2 ACCELCTL_TRANSPORT=nccl -- bash -c '
		accelctl barrier --timeout 30s one || exit
		if [ $ACCELCTL_RANK = 2 ]; then kill -9 "$(cat "$ACCELCTL_RUNTIME_DIR"/*.pid)"; fi
		accelctl barrier --timeout 30s one2 || exit
		accelctl barrier --timeout 30s two; echo "two=$?"
		[ $ACCELCTL_RANK = 0 ] && accelctl status | tail -n 1; true'
	assertEquals "every rank passes (stderr: $err)" 4 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertContains "$out" "transport: $STORE (NCCL off: node 1 joined before (its helper restarted))"
}

# store_empty_restart: the store killed and started again with nothing.
store_empty_restart() {
	if [ "$STORE" = etcd ]; then
		etcd_kill 0; rm -rf "$ETCD_DIR/m0"; etcd_member_restart 0 new
	else
		redis_kill; redis_restart
	fi
}
# store_has_id: node 0 posted the communicator's id (to the store as it is now).
store_has_id() {
	if [ "$STORE" = etcd ]; then
		etcdctl_ get --prefix accelctl/ --keys-only 2>/dev/null | grep -q '/nccl/id$'
	else
		[ -n "$(redis_cli --scan --pattern 'accelctl:*:nccl:id' 2>/dev/null)" ]
	fi
}
# until_ok SECONDS CMD...: until CMD succeeds, or SECONDS pass by the clock
# (then false; tries counted were no time on a busy machine).
until_ok() { eventually "$@"; }

# Node 1 asked for the id before node 0 posted it; then the store restarted
# empty, and node 0 posted the id there while node 1's helper was away
# (stopped, so that it comes back after the put: its watch or stream then
# resumes past the id's event). Node 1 must read the id again when it is
# back, not wait in NCCL to its deadline (review: over etcd it did).
testStoreRestartedEmptyWhileANodeJoins() {
	local d; d=$(scratch)/empty; mkdir -p "$d"
	(
		until_ok 30 test -s "$d/h1pid" || exit
		h1=$(cat "$d/h1pid")
		until_ok 30 grep -q "waiting for node 0 to post the communicator's id" "$(cat "$d/h1log")" || exit
		kill -STOP "$h1"
		store_empty_restart
		touch "$d/restarted"
		until_ok 30 store_has_id
		kill -CONT "$h1"
	) &
	local fault=$!
	RUN_LIMIT=300 fake 2 2 ACCELCTL_TRANSPORT=nccl ACCELCTL_JOB_ID=empty$RANDOM -- bash -c '
		d='"$d"'
		accelctl main-first --local -- true
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			[ $ACCELCTL_LOCAL_RANK = 0 ] && { ls "$ACCELCTL_RUNTIME_DIR"/*.log >$d/h1log; cat "$ACCELCTL_RUNTIME_DIR"/*.pid >$d/h1pid; }
		else
			until [ -e $d/restarted ] || [ $SECONDS -gt 60 ]; do sleep 0.05; done
		fi
		accelctl barrier --timeout 30s x; echo "x=$?"
		[ $ACCELCTL_RANK = 0 ] && accelctl status | tail -n 1; true'
	wait "$fault"
	assertEquals "every rank passes (stderr: $err)" 4 "$(printf '%s\n' "$out" | grep -c 'x=0$')"
	assertContains "NCCL stayed up" "$out" "transport: nccl (a communicator of 2 node helpers"
}

testAbortAcrossNodes() {
	fake 2 2 ACCELCTL_TRANSPORT=nccl -- bash -c '
		accelctl barrier first
		if [ $ACCELCTL_RANK = 3 ]; then sleep 0.5; accelctl abort disk full; exit 0; fi
		accelctl barrier --timeout 10s never; echo "rc=$?"'
	assertEquals "the waiters on both nodes exit 3" 3 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
	assertContains "$err" "aborted: rank 3: disk full"
}

testNoDevice() {
	fake 2 1 ACCELCTL_TRANSPORT=nccl FAKE_CUDA_DEVICES=0 -- bash -c 'accelctl barrier --timeout 10s x; echo "rc=$?"'
	assertEquals "forced: 125" 2 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	assertContains "$err" "NCCL transport (ACCELCTL_TRANSPORT=nccl) unavailable: no GPU visible: cudaGetDeviceCount: no CUDA-capable device is detected (fake)"
	fake 2 1 FAKE_CUDA_DEVICES=0 -- bash -c 'accelctl barrier --timeout 10s x; echo "rc=$?"; accelctl status | tail -n 1'
	assertEquals "auto: Redis" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertContains "$out" "transport: $STORE (NCCL off: no GPU visible"
	fake 2 1 ACCELCTL_TRANSPORT=nccl ACCELCTL_HELPER_GPU=3 -- bash -c 'accelctl barrier --timeout 10s x; echo "rc=$?"'
	assertContains "$err" "invalid ACCELCTL_HELPER_GPU '3': 1 GPU visible (0-0)"
}

testCheck() {
	run $FAKE -- check --max-size 1M --iters 3
	assertRc 0 "check, one process"
	assertContains "$out" "all-reduce (sum, float, out of place) of a 1-rank communicator on GPU 0"
	assertContains "$out" "a device-to-device copy, no transport"
	assertEquals "1K to 1M: 6 rows" 6 "$(printf '%s\n' "$out" | grep -cE '^ +[0-9]+ (KiB|MiB) ')"
	assertContains "$out" "       1 MiB"
	run $FAKE -- check --max-size 16K --iters 2 --min-busbw 1000000
	assertRc 1 "slower than --min-busbw"
	assertContains "$err" "accelctl: check: node 0: bus bandwidth"
	assertContains "$err" "is below --min-busbw 1000000.00"
	fake 2 2 -- accelctl check --max-size 64K --iters 2 --min-busbw 0.000001
	assertRc 0 "2 nodes x 2 ranks"
	assertEquals "one table, from node 0" 1 "$(printf '%s\n' "$out" | grep -c 'all-reduce (sum')"
	assertContains "$out" "among 2 node helper GPUs"
	fake 2 1 -- bash -c 'accelctl check --max-size 4K --iters 1 --min-busbw 1000000; echo "rc=$?"'
	assertEquals "every rank exits 1" 2 "$(printf '%s\n' "$out" | grep -c 'rc=1$')"
	fake 2 1 FAKE_CUDA_DEVICES=0 -- bash -c 'accelctl check; echo "rc=$?"'
	assertEquals "no GPU: every rank exits 2" 2 "$(printf '%s\n' "$out" | grep -c 'rc=2$')"
	assertContains "$err" "accelctl: check: no GPU visible"
}

# NCCL's one-rank all-reduce in place does nothing (the fake's too): timed,
# it took 0 ms, and --min-busbw failed a healthy GPU. One rank times a copy.
testCheckOneRankTimesSomething() {
	run $FAKE -- check --max-size 64K --iters 3 --min-busbw 0.000001
	assertRc 0 "one rank, --min-busbw 0.000001"
	assertNotContains "$out" " 0.00 "
}

# check is the first client on each node, so it starts the helper: fork()ed
# after CUDA was initialised, that helper could not use CUDA (the fake fails
# as the real driver does) and forced NCCL failed the barriers with 125.
testCheckStartsHelperBeforeCuda() {
	fake 2 1 ACCELCTL_TRANSPORT=nccl -- bash -c 'accelctl check --max-size 4K --iters 1 --timeout 30s; echo "rc=$?"
		accelctl barrier --timeout 30s after; echo "b=$?"
		accelctl status | tail -n 1'
	assertEquals "check: every rank exits 0" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertEquals "a barrier over NCCL after it" 2 "$(printf '%s\n' "$out" | grep -c 'b=0$')"
	assertContains "$out" "transport: nccl (a communicator of 2 node helpers"
	assertNotContains "$err" "initialization error"
}

# A CUDA runtime newer than the driver: said so, not "no GPU".
testOldDriver() {
	run $FAKE FAKE_CUDA_OLD_DRIVER=1 -- check --max-size 4K
	assertRc 2 "check, driver too old"
	# Where no driver is installed at all, "no GPU visible" is the truth.
	case $err in
	*"the NVIDIA driver is too old for $FAKE_CUDA"* | *"no GPU visible"*) ;;
	*) fail "unexpected message: $err" ;;
	esac
}

# A deadline passed is 124 (DESIGN §3), in check as everywhere.
testCheckTimeout() {
	run $FAKE FAKE_NCCL_DELAY_MS=300 -- check --max-size 4K --iters 10 --timeout 1s
	assertRc 124 "one process, past --timeout"
	assertContains "$err" "deadline passed"
	fake 2 1 FAKE_NCCL_DELAY_MS=300 -- bash -c 'accelctl check --max-size 4K --iters 10 --timeout 2s; echo "rc=$?"'
	assertEquals "2 nodes: every rank exits 124" 2 "$(printf '%s\n' "$out" | grep -c 'rc=124$')"
}

load_shunit2
