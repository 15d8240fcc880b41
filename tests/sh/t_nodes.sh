# t_nodes.sh: node liveness (lib/proto/rdvlive.c): a node that dies whole (its helper
# and its ranks SIGKILLed together) is named within ACCELCTL_NODE_TIMEOUT and every
# rank that waits for it, then or later, exits 4; a slow node, a stalled store and a
# replaced helper are not dead nodes. Over Redis (ctest sh.nodes) or etcd
# (sh.nodes_etcd: NODES_STORE=etcd). Most tests shorten the bound to a few seconds;
# testDefaultBound waits the default 30 s once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/redis.sh"
. "$(dirname "$0")/etcd.sh"
. "$(dirname "$0")/store.sh"

STORE=${NODES_STORE:-redis}
case $STORE in
redis | etcd) ;;
ha) . "$(dirname "$0")/sentinel.sh"; . "$(dirname "$0")/cluster.sh" ;;
*) echo "NODES_STORE: expected redis, etcd or ha" >&2; exit 1 ;;
esac

oneTimeSetUp() {
	if [ "$STORE" = ha ]; then
		ha_start || { echo "no Sentinel set-up" >&2; exit 1; }
		cl_start || { echo "no Cluster" >&2; exit 1; }
		RDV=$RDV_SENTINEL
	else
		store_start
	fi
}
oneTimeTearDown() { if [ "$STORE" = ha ]; then ha_stop; cl_stop; else store_stop; fi; }

# In a rank's script: until this node's helper says it waits for another node
# (60 s at most, by the clock).
WAITING='until accelctl status 2>/dev/null | grep -q "waiting for" || [ $SECONDS -gt 60 ]; do sleep 0.1; done'

# nodes NODES RANKS BOUND CMD...: launch across NODES simulated nodes through the
# store, with ACCELCTL_NODE_TIMEOUT=BOUND ("" for the default).
nodes() {
	local n=$1 r=$2 bound=$3 vars=(); shift 3
	[ -n "$bound" ] && vars+=("ACCELCTL_NODE_TIMEOUT=$bound")
	RUN_LIMIT=${RUN_LIMIT:-240} run ACCELCTL_RENDEZVOUS="$RDV" "${vars[@]}" -- \
		launch --nnodes "$n" -n "$r" --tag -- "$@"
}

# What the ranks of the last node run to die with it, whole: its helper SIGKILLed
# first (by local rank 0, which records when in D/killed.us), then every rank,
# so that nobody tells the others (launch's news of the ranks' ends goes to
# that node's helper, dead).
mark_and_die() {
	printf '%s' '
		if [ $ACCELCTL_NODE_RANK = $((ACCELCTL_NNODES - 1)) ]; then
			if [ $ACCELCTL_LOCAL_RANK = 0 ]; then
				echo ${EPOCHREALTIME/[.,]/} >'"$1"'/killed.us
				kill -9 $(cat $ACCELCTL_RUNTIME_DIR/*.pid)
				touch '"$1"'/helper.killed
			else
				until [ -e '"$1"'/helper.killed ] || [ $SECONDS -gt 60 ]; do sleep 0.05; done
			fi
			kill -9 $$
		fi'
}

# A node dies whole after a first barrier: the others, at a second one, exit 4
# within the bound (6 s here), naming the node, its host and its silence; a
# third barrier later in the run ends at once the same way.
testDeadNodeNamed() {
	local d; d=$(mktemp -d "$(scratch)/dead.XXXXXX")
	nodes 3 2 6s bash -c '
		accelctl barrier one || exit
		'"$(mark_and_die "$d")"'
		accelctl barrier --timeout 120s two; r=$?
		echo "two=$r $(( (${EPOCHREALTIME/[.,]/} - $(cat '"$d"'/killed.us)) / 1000 ))ms"
		s=${EPOCHREALTIME/[.,]/}
		accelctl barrier --timeout 120s three; r=$?
		echo "three=$r $(( (${EPOCHREALTIME/[.,]/} - s) / 1000 ))ms"'
	assertEquals "the 4 ranks of nodes 0 and 1 exit 4 at two (out: $out; err: $err)" 4 \
		"$(printf '%s\n' "$out" | grep -c 'two=4 ')"
	assertEquals "and at three" 4 "$(printf '%s\n' "$out" | grep -c 'three=4 ')"
	assertContains "$err" "'two': lost: node 2 (host $(hostname)"
	assertContains "$err" "is gone: no sign of life for"
	assertNotContains "$err" "never connected"
	[ -z "${NODES_DEBUG:-}" ] || echo "$err" >&2
	echo "death to exit (ms), bound 6 s: $(printf '%s\n' "$out" | sed -n 's/.*two=4 //p' | tr '\n' ' ')" >&2
}

# A node that arrived at a barrier and then died is in it: the barrier passes
# for the others, who come after its loss is known; the next one ends with 4.
testArrivedThenDiedPasses() {
	local d; d=$(scratch)/arr; mkdir -p "$d"
	nodes 3 1 4s bash -c '
		accelctl barrier one || exit
		if [ $ACCELCTL_NODE_RANK = 2 ]; then
			accelctl barrier --timeout 120s two &
			'"$WAITING"'
			kill -9 $(cat $ACCELCTL_RUNTIME_DIR/*.pid) $! $$
		fi
		# Nodes 0 and 1 come once node 2 is known lost (its log says so).
		until grep -q "node 2 .* is gone" $ACCELCTL_RUNTIME_DIR/*.log 2>/dev/null || [ $SECONDS -gt 90 ]; do sleep 0.2; done
		accelctl barrier --timeout 120s two; echo "two=$?"
		accelctl barrier --timeout 120s three; echo "three=$?"'
	assertEquals "two passes on node 2's arrival (out: $out; err: $err)" 2 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertEquals "three ends with 4" 2 "$(printf '%s\n' "$out" | grep -c 'three=4$')"
}

# The result of a rank on a node that died whole (on-process --wait): its
# waiters on the other nodes exit 4, naming the node.
testResultSourceNodeDies() {
	local d; d=$(scratch)/res; mkdir -p "$d"
	nodes 3 1 4s bash -c '
		accelctl barrier one || exit
		if [ $ACCELCTL_NODE_RANK = 2 ]; then kill -9 $(cat $ACCELCTL_RUNTIME_DIR/*.pid) $$; fi
		accelctl on-process 2 --wait --timeout 120s -- true; echo "wait=$?"'
	assertEquals "the waiters exit 4 (out: $out; err: $err)" 2 "$(printf '%s\n' "$out" | grep -c 'wait=4$')"
	assertContains "$err" "node 2 (host"
}

# Dead is not slow: a node whose helper lives but whose rank comes four bounds
# late (12 s at a bound of 3 s) is waited for, and everyone passes.
testSlowIsNotDead() {
	nodes 3 1 3s bash -c '
		accelctl barrier one || exit
		[ $ACCELCTL_NODE_RANK = 2 ] && sleep 12
		accelctl barrier --timeout 120s two; echo "two=$?"'
	assertEquals "every rank passes (err: $err)" 3 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertNotContains "$err" "is gone"
}

# A replaced helper is not a dead node: node 1's helper SIGKILLed while its
# rank waits (as the OOM killer does it) comes back through its rank, within
# the bound (6 s: a restart under ASan on a busy machine has room); nobody is
# lost, and the barrier passes once node 2 arrives, two bounds later.
testReplacedHelperKeepsPlace() {
	local d; d=$(scratch)/oom; mkdir -p "$d"
	nodes 3 1 6s bash -c '
		accelctl barrier one || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			( '"$WAITING"'
			  kill -9 $(cat $ACCELCTL_RUNTIME_DIR/*.pid); touch '"$d"'/killed ) &
		fi
		if [ $ACCELCTL_NODE_RANK = 2 ]; then
			until [ -e '"$d"'/killed ] || [ $SECONDS -gt 60 ]; do sleep 0.1; done
			sleep 12
		fi
		accelctl barrier --timeout 120s two; echo "two=$?"'
	assertEquals "every rank passes (err: $err)" 3 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertNotContains "$err" "is gone"
}

# An idle helper keeps its node alive while its job runs: node 1's rank works
# for 12 s between two barriers, four bounds and six idle periods
# (ACCELCTL_HELPER_IDLE=2s); its helper stays (its rank's process runs) and
# beats, so node 0, waiting, passes when node 1 comes.
testIdleHelperStaysWhileRankRuns() {
	nodes 2 1 3s env ACCELCTL_HELPER_IDLE=2s bash -c '
		accelctl barrier one || exit
		[ $ACCELCTL_NODE_RANK = 1 ] && sleep 12
		accelctl barrier --timeout 120s two; echo "two=$?"'
	assertEquals "both pass (err: $err)" 2 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertNotContains "$err" "is gone"
}

# stopped_arrival LATE: 3 nodes at a bound of 4 s; node 1 arrives at 'two', then
# its helper is stopped for 2.5 bounds (declared lost meanwhile) and resumed;
# node 0 arrives at once, node 2 LATE seconds in. Every rank must pass: node 1
# arrived, so nobody leaves on its account.
stopped_arrival() {
	nodes 3 1 4s bash -c '
		accelctl barrier one || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			accelctl barrier --timeout 120s two & b=$!
			'"$WAITING"'
			h=$(cat $ACCELCTL_RUNTIME_DIR/*.pid); kill -STOP $h; sleep 10; kill -CONT $h
			wait $b; echo "two=$?"; exit
		fi
		[ $ACCELCTL_NODE_RANK = 2 ] && sleep '"$1"'
		accelctl barrier --timeout 120s two; echo "two=$?"'
	assertEquals "every rank passes, node 1 too (out: $out; err: $err)" 3 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
}

# Node 2 comes after node 1's loss, before its resume, and completes the
# barrier on node 1's arrival: node 1's rank, its helper resumed, passes as
# well (it gives the store a bound before it believes its own loss): no split.
testStoppedAfterArrivalPasses() { stopped_arrival 7; }

# Node 2 merely slow, 25 s late (after node 1's resume and a bound more):
# node 0's arrival stands, so node 1 does not leave, and nobody fails (second
# review: node 1 left on "another node missing", and its withdrawal then
# failed node 0 as well).
testStoppedWithSlowPeerPasses() { stopped_arrival 25; }

# Two helpers that claim one node (two hosts given one node rank): node 1's
# rank waits at 'two' when a second helper for node 1 (another runtime
# directory: another host, as far as accelctl can tell) comes with a rank of
# its own. Before, the newcomer waited for "node 0 to open this launch's
# run", to its deadline. Now both fail with 125 at once, each naming the
# other's host and helper pid; node 0, whose node 1 is gone, exits 4.
testTwoHelpersClaimOneNode() {
	local d; d=$(scratch)/claim; mkdir -p "$d"; mkdir -m 700 "$d/y"
	nodes 2 1 6s bash -c '
		accelctl barrier one || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			accelctl barrier --timeout 120s two & b=$!
			'"$WAITING"'
			cat $ACCELCTL_RUNTIME_DIR/*.pid >'"$d"'/x.pid
			ACCELCTL_RUNTIME_DIR='"$d"'/y accelctl barrier --timeout 60s two 2>'"$d"'/y.err
			echo $? >'"$d"'/y.rc
			wait $b; echo "x=$?"
		else
			until [ -e '"$d"'/y.rc ] || [ $SECONDS -gt 90 ]; do sleep 0.1; done
			accelctl barrier --timeout 120s two; echo "n0=$?"
		fi'
	local ypid; ypid=$(cat "$d"/y/*.pid 2>/dev/null)
	assertEquals "the newcomer fails at once (its err: $(cat "$d/y.err"))" 125 "$(cat "$d/y.rc")"
	assertContains "it names the holder" "$(cat "$d/y.err")" \
		"is claimed by two helpers: this one and pid $(cat "$d/x.pid") on host $(hostname)"
	assertContains "the holder's rank fails too (out: $out; err: $err)" "$out" "x=125"
	assertContains "naming the newcomer" "$err" "this one and pid $ypid on host $(hostname), which joins now"
	assertContains "node 0 finds node 1 gone (out: $out; err: $err)" "$out" "n0=4"
}

# rank_on JOB NODE DIR CMD...: rank NODE of a 2-node job JOB (one rank a node),
# its helper in runtime directory DIR (a "host" of its own).
rank_on() {
	local job=$1 node=$2 dir=$3; shift 3
	mkdir -p -m 700 "$dir"
	env ACCELCTL_JOB_ID="$job" ACCELCTL_NNODES=2 ACCELCTL_NODE_RANK="$node" ACCELCTL_LOCAL_RANK=0 \
		ACCELCTL_LOCAL_WORLD_SIZE=1 ACCELCTL_RANK="$node" ACCELCTL_WORLD_SIZE=2 \
		ACCELCTL_RUNTIME_DIR="$dir" ACCELCTL_RENDEZVOUS="$RDV" ACCELCTL_NODE_TIMEOUT=6s \
		PATH="$ACCELCTL_BIN_DIR:$PATH" "$@"
}

# Not two helpers for one node: a job id used again, the earlier launch's
# helpers idle while the driver that ran their ranks lives on (a per-host
# script with more to do), and the new launch's node 1, on another host,
# starts 8 s before its node 0. It waits for node 0 to open this launch's
# run, and both pass (second review: the idle holder counted its rank's
# launcher as its ranks running, refused, and node 1 exited 125).
testEarlierLaunchIdleHelperGivesPlaceUp() {
	local d job=again$$x$RANDOM g0 g1 p; d=$(scratch)/again; mkdir -p "$d"
	rank_on "$job" 0 "$d/a0" bash -c 'bash -c "accelctl barrier --timeout 60s one"; touch '"$d"'/a0.done; sleep 120' &
	g0=$!
	rank_on "$job" 1 "$d/a1" bash -c 'bash -c "accelctl barrier --timeout 60s one"; touch '"$d"'/a1.done; sleep 120' &
	g1=$!
	eventually 60 test -e "$d/a0.done" -a -e "$d/a1.done"
	rank_on "$job" 1 "$d/b1" bash -c 'accelctl barrier --timeout 90s one; echo "n1=$?"' >"$d/n1" 2>&1 &
	p=$!
	sleep 8	# the scenario: node 0 of the new launch is late
	rank_on "$job" 0 "$d/b0" bash -c 'accelctl barrier --timeout 90s one; echo "n0=$?"' >"$d/n0" 2>&1
	wait "$p"
	pkill -P "$g0" 2>/dev/null; pkill -P "$g1" 2>/dev/null
	kill "$g0" "$g1" 2>/dev/null
	# shellcheck disable=SC2046
	kill $(cat "$d"/*/*.pid 2>/dev/null) 2>/dev/null
	assertContains "the new node 1 passes ($(cat "$d/n1"))" "$(cat "$d/n1")" "n1=0"
	assertContains "the new node 0 passes ($(cat "$d/n0"))" "$(cat "$d/n0")" "n0=0"
}

# Nodes that set different bounds watch each other with the longer: node 1
# (12 s, a beat every 4 s) works 8 s between two barriers; node 0 (3 s) does
# not take its beats' spacing for silence.
testDifferentBounds() {
	nodes 2 1 "" bash -c '
		if [ $ACCELCTL_NODE_RANK = 1 ]; then export ACCELCTL_NODE_TIMEOUT=12s; else export ACCELCTL_NODE_TIMEOUT=3s; fi
		accelctl barrier one || exit
		[ $ACCELCTL_NODE_RANK = 1 ] && sleep 8
		accelctl barrier --timeout 120s two; echo "two=$?"'
	assertEquals "both pass (err: $err)" 2 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertNotContains "$err" "is gone"
}

# A store that stalls for longer than the bound (SIGSTOP, 3 bounds) is not a
# dead node: once it answers, every node has a whole bound again, and the
# barrier passes.
testStalledStoreIsNotDeath() {
	local d; d=$(scratch)/stall; mkdir -p "$d"
	( eventually 60 test -e "$d/waiting" &&
	  if [ "$STORE" = etcd ]; then p=$(etcd_member_pid 0); else p=$(redis_pid); fi &&
	  kill -STOP "$p" && sleep 9 && kill -CONT "$p"; touch "$d/resumed" ) &
	nodes 3 1 3s bash -c '
		accelctl barrier one || exit
		if [ $ACCELCTL_NODE_RANK = 2 ]; then
			until [ -e '"$d"'/resumed ] || [ $SECONDS -gt 90 ]; do sleep 0.1; done
		elif [ $ACCELCTL_NODE_RANK = 0 ]; then
			( '"$WAITING"'
			  touch '"$d"'/waiting ) &
		fi
		accelctl barrier --timeout 120s two; echo "two=$?"'
	wait
	assertEquals "every rank passes (err: $err)" 3 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertNotContains "$err" "is gone"
}

# The default bound (30 s), really waited for once: a node that dies whole is
# named within it, not at the deadline.
testDefaultBound() {
	local d; d=$(scratch)/def; mkdir -p "$d"
	nodes 2 1 "" bash -c '
		accelctl barrier one || exit
		'"$(mark_and_die "$d")"'
		accelctl barrier --timeout 300s two; r=$?
		echo "two=$r $(( (${EPOCHREALTIME/[.,]/} - $(cat '"$d"'/killed.us)) / 1000 ))ms"'
	assertEquals "node 0 exits 4 (out: $out; err: $err)" 1 "$(printf '%s\n' "$out" | grep -c 'two=4 ')"
	assertContains "$err" "(ACCELCTL_NODE_TIMEOUT 30s)"
	local ms; ms=$(printf '%s\n' "$out" | sed -n 's/.*two=4 \([0-9]*\)ms/\1/p')
	echo "death to exit at the default bound: ${ms} ms" >&2
	# The bound applied: silent for 22.5 s of the watcher's clock (the bound
	# less two reads) since its last beat was first read, which came up to
	# 10 s before the kill; not the deadline (300 s) either. No verdict on
	# speed: a busy machine only adds to the first figure.
	assertTrue "named 12.5 s after the kill at the soonest (${ms} ms)" "[ ${ms:-0} -ge 12000 ]"
	assertTrue "named well before the deadline (${ms} ms)" "[ ${ms:-999999} -lt 200000 ]"
}

# A bad bound is a usage error on every rank, before anything waits.
testBadBound() {
	nodes 2 1 abc accelctl barrier x
	assertContains "$err" "invalid ACCELCTL_NODE_TIMEOUT='abc'"
	assertEquals "exit 2 (err: $err)" 2 "$rc"
	nodes 2 1 1s accelctl barrier x
	assertContains "$err" "too short (at least 3 seconds)"
	nodes 2 1 25h accelctl barrier x
	assertContains "$err" "too long (at most a day)"
}

# NODES_STORE=ha (ctest sh.nodes_ha): Redis behind Sentinel and Redis Cluster, as
# sites run it; these run only then (named ha*, not test*: shunit2 finds tests by
# their names in this file). The same death named within the bound over each, and a failover
# (the master SIGKILLed, a replica promoted) while nodes wait is no dead node.
haDeadNodeNamedSentinel() { RDV=$RDV_SENTINEL testDeadNodeNamed; }
haDeadNodeNamedCluster() { RDV=$RDV_CLUSTER testDeadNodeNamed; }
# The claim goes in the registration's script: its keys declared (one slot).
haTwoHelpersClaimOneNodeCluster() { RDV=$RDV_CLUSTER testTwoHelpersClaimOneNode; }
haSentinelFailoverIsNotDeath() {
	local d old; d=$(scratch)/fo; mkdir -p "$d"
	old=$(ha_master)
	( eventually 60 test -e "$d/waiting" && kill -9 "$(ha_pid "$(ha_name "$old")")" &&
	  ha_wait_master_not "$old" 60 >/dev/null; touch "$d/failed-over" ) &
	RDV=$RDV_SENTINEL nodes 3 1 4s bash -c '
		accelctl barrier one || exit
		if [ $ACCELCTL_NODE_RANK = 2 ]; then
			until [ -e '"$d"'/failed-over ] || [ $SECONDS -gt 90 ]; do sleep 0.1; done
			sleep 5
		elif [ $ACCELCTL_NODE_RANK = 0 ]; then
			( '"$WAITING"'
			  touch '"$d"'/waiting ) &
		fi
		accelctl barrier --timeout 120s two; echo "two=$?"'
	wait
	assertNotEquals "a replica was promoted" "$old" "$(ha_master)"
	assertEquals "every rank passes (err: $err)" 3 "$(printf '%s\n' "$out" | grep -c 'two=0$')"
	assertNotContains "$err" "is gone"
}
if [ "$STORE" = ha ]; then
	suite() {
		suite_addTest haDeadNodeNamedSentinel
		suite_addTest haDeadNodeNamedCluster
		suite_addTest haTwoHelpersClaimOneNodeCluster
		suite_addTest haSentinelFailoverIsNotDeath
	}
fi

. shunit2
