# t_keys.sh: what a job leaves in etcd (ctest etcd.keys): a long loop of barriers, broadcasts (parts
# included) and --wait keeps the job's keys flat, not one per generation, also
# across a helper killed mid-loop; a node that is behind still reads every
# result; a helper replaced after results were read puts none back, leaves
# none in flight, and gives a rank asking again no wrong data; a full
# database (NOSPACE alarm) fails at once, naming the alarm, not
# "unreachable".
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; skip_suite; }
}
# Each test has an etcd of its own: the keys counted are that test's.
setUp() { etcd_start 1; }
tearDown() { etcd_stop; }

# across NODES RANKS ARGS...: a launch through this test's etcd. RUN_LIMIT is
# a hang guard: a launch moving megabytes through etcd, with helpers killed and
# replaced, under ASan on a busy machine took past run's old 20 s.
across() {
	local nodes=$1 ranks=$2; shift 2
	RUN_LIMIT=300 run ACCELCTL_RENDEZVOUS="$ETCD_URL" -- launch --nnodes "$nodes" -n "$ranks" --tag -- "$@"
}

# long_across NODES RANKS ARGS...: the same, bounded by 300 s (a hang guard).
long_across() {
	local nodes=$1 ranks=$2 d; d=$(scratch); shift 2
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/local/bin:/usr/bin:/bin" HOME="${HOME:-/}" \
		TMPDIR="$d" ACCELCTL_RENDEZVOUS="$ETCD_URL" timeout 300 "$ACCELCTL" \
		launch --nnodes "$nodes" -n "$ranks" --tag -- "$@" >"$d/out" 2>"$d/err"
	rc=$?
	out=$(cat "$d/out")
	err=$(cat "$d/err")
}

# keys: how many keys etcd holds under accelctl/ (every job's).
keys() { etcdctl_ get --prefix accelctl/ --keys-only | grep -c .; }

# results: the keys of results and their parts in etcd; no_results: none.
results() { etcdctl_ get --prefix accelctl/ --keys-only | grep -E '/(done|p[0-9]+)/'; }
no_results() { [ -z "$(results)" ]; }
# $SETTLED, put before a job's script, defines settled FILE: status into FILE
# until it says "nothing in flight" (a replacement helper's sweep of etcd may
# outlast any fixed sleep under ASan), 60 s at most (a guard: 8 s was a verdict
# on a busy machine's speed); status's exit code. And killed PID: kill -9 PID,
# then until it is gone (not dying) when the rank connects again (a fixed
# 0.3 s was an order a busy machine could lose). And deleted: until etcd holds
# no result of the job (every node said it read them; a fixed second was an
# order a busy machine could lose), 60 s at most.
SETTLED='settled() { local end=$((SECONDS + 60)) r; until accelctl status >"$1"; r=$?; grep -q "nothing in flight" "$1" || [ $SECONDS -ge $end ]; do sleep 0.1; done; return $r; }
killed() { local end=$((SECONDS + 30)); kill -9 "$1"; while kill -0 "$1" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.02; done; }
deleted() { local end=$((SECONDS + 60)); while [ $SECONDS -lt $end ] && ETCDCTL_API=3 timeout 10 etcdctl --endpoints "http://${ACCELCTL_RENDEZVOUS#etcd://}" get --prefix accelctl/ --keys-only | grep -qE "/(done|p[0-9]+)/"; do sleep 0.1; done; }
'
# few_keys N: etcd holds at most N keys under accelctl/.
few_keys() { [ "$(keys)" -le "$1" ]; }

# 2 nodes x 2 ranks, 300 turns of a barrier, a broadcast and an on-main
# --wait, and 4 broadcasts of 600 KiB (two parts each): a handful of keys per
# name remain, not one or more per generation (about 1,500 before). Under a
# sanitizer 100 turns: 300 are 3,600 starts of an ASan accelctl, past any
# guard on 2 busy cores (killed at 200 s there), and 100 turns still leave
# about 500 keys to a regression against the 30 allowed.
testLoopKeepsKeysFlat() {
	local d; d=$(scratch)/loop; mkdir -p "$d"
	local turns=300; [ "${ACCELCTL_SANITIZED:-0}" = 1 ] && turns=100
	head -c $((600 * 1024)) /dev/urandom >"$d/big"
	local t0 t1; t0=$(date +%s%N)
	long_across 2 2 bash -c '
		for i in $(seq '"$turns"'); do
			accelctl barrier --timeout 60s b || exit
			[ "$(accelctl broadcast --timeout 60s v "$i")" = "$i" ] || exit
			accelctl on-main --wait --timeout 60s -- true || exit
		done
		for i in 1 2 3 4; do
			if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast --timeout 60s big <'"$d"'/big
			else accelctl broadcast --timeout 60s big </dev/null; fi | cmp -s - '"$d"'/big || exit
		done; echo "rc=$?"'
	t1=$(date +%s%N)
	assertEquals "every rank went round ($err)" 4 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	# The last generation's acknowledgements, and the deletes they allow.
	eventually 20 few_keys 30
	local n; n=$(keys)
	echo "keys after $((turns * 3 + 4)) collectives on 2 nodes: $n ($(((t1 - t0) / 1000000)) ms)" >&2
	assertTrue "the job's keys stay few: $n ($(etcdctl_ get --prefix accelctl/ --keys-only | grep . | head -40 | tr '\n' ' '))" "[ $n -le 30 ]"
}

# Node 1 is behind: rank 0 broadcasts 20 generations (some in parts) before
# node 1 reads any. Node 0's acknowledgements must delete nothing node 1 has
# yet to read; once it has, they go.
testNodeBehindReadsEverything() {
	local d; d=$(scratch)/behind; mkdir -p "$d"
	head -c $((700 * 1024)) /dev/urandom >"$d/big"
	across 2 1 bash -c '
		for i in $(seq 20); do
			if [ $ACCELCTL_NODE_RANK = 0 ]; then
				if [ $((i % 5)) = 0 ]; then accelctl broadcast --timeout 60s s <'"$d"'/big >/dev/null
				else accelctl broadcast --timeout 60s s "v$i" >/dev/null; fi || exit
			else
				[ $i = 1 ] && sleep 3
				if [ $((i % 5)) = 0 ]; then accelctl broadcast --timeout 60s s | cmp -s - '"$d"'/big
				else [ "$(accelctl broadcast --timeout 60s s)" = "v$i" ]; fi || { echo "generation $i wrong"; exit 1; }
			fi
		done; echo "rc=$?"'
	assertEquals "both nodes read all 20 ($out $err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	# The last reader deletes the last result, as its helper exits at the
	# latest (50 to 200 ms after the job; it stayed, 1 in 10 under load, when
	# the exit cut that delete off): waited for, not a fixed second.
	local t0; t0=$(date +%s%N)
	eventually 20 no_results
	echo "results gone $((($(date +%s%N) - t0) / 1000000)) ms after the job"
	eventually 10 no_results
	assertEquals "no result or part left" "" "$(results)"
}

# The last reader's rank exits as soon as it has read, and launch stops the
# helpers at once: the delete its ack found due is still to be sent (or not
# answered) then. It is sent as the helper exits, not left for the source's
# lease (a day): each of 10 launches leaves no result in etcd.
testLastReadJustBeforeTheHelpersStop() {
	local i job left=""
	for i in $(seq 10); do
		across 2 1 bash -c '
			if [ $ACCELCTL_NODE_RANK = 0 ]; then accelctl broadcast --timeout 20s last "v'"$i"'" >/dev/null
			else sleep 0.2; [ "$(accelctl broadcast --timeout 20s last)" = "v'"$i"'" ]; fi
			echo "rc=$? job=$ACCELCTL_JOB_ID"'
		assertEquals "launch $i: both ranks ($err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0 ')"
		job=$(printf '%s\n' "$out" | sed -n 's/.* job=//p' | head -1)
		assertNotEquals "launch $i: its job id" "" "$job"
		# At once as the helpers exit, against the lease's day: 30 s tells
		# those apart on any machine (5 s was tight on a busy one).
		eventually 30 eval '! results | grep -q "/$job/"' || left="$left $i"
	done
	assertEquals "launches whose result stayed in etcd" "" "$left"
}

# Node 0's helper is SIGKILLed at barrier 40 of 60 (its ranks start another,
# which replays the journal: every arrival since the start). The barriers
# that are over must not be posted again: they would put back arrivals etcd
# had deleted, never complete, and stay in status for good.
testHelperKilledMidLoop() {
	local d; d=$(scratch)/hk; mkdir -p "$d"
	long_across 2 2 bash -c "$SETTLED"'
		for g in $(seq 0 59); do
			if [ $ACCELCTL_RANK = 0 ] && [ $g = 40 ]; then
				until accelctl status | grep -q "1/2 arrived"; do sleep 0.05; done
				killed $(cat $ACCELCTL_RUNTIME_DIR/*.pid)	# gone, not dying, when rank 0 connects
			fi
			accelctl barrier --timeout 60s hk || exit
		done
		accelctl barrier --timeout 60s end || exit
		if [ $ACCELCTL_RANK = 0 ]; then accelctl status >'"$d"'/status; fi; echo "rc=$?"'
	assertEquals "every rank went round ($err)" 4 "$(printf '%s
' "$out" | grep -c 'rc=0$')"
	assertContains "node 0's helper has nothing in flight" "$(cat "$d/status")" "nothing in flight"
	local n; n=$(keys)
	assertTrue "the job's keys stay few: $n ($(etcdctl_ get --prefix accelctl/ --keys-only | grep . | head -40 | tr '\n' ' '))" "[ $n -le 30 ]"
}

# The same after results: node 1's helper is SIGKILLed once every node has
# read 5 broadcasts (and they were deleted). The helper its rank starts
# again replays them from the journal; the last one is gone from etcd, but
# this node said it had read it: it is over, not in flight for good.
testHelperKilledAfterResults() {
	local d; d=$(scratch)/hr; mkdir -p "$d"
	across 2 1 bash -c "$SETTLED"'
		for i in 1 2 3 4 5; do accelctl broadcast --timeout 20s v "$i" >/dev/null || exit; done
		accelctl barrier --timeout 20s read || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			deleted	# the acknowledgements, and the deletes
			killed $(cat $ACCELCTL_RUNTIME_DIR/*.pid)
		fi
		accelctl barrier --timeout 20s end || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then settled '"$d"'/status; rc=$?
			cat $ACCELCTL_RUNTIME_DIR/*.log >'"$d"'/log 2>&1; fi; echo "rc=${rc:-0}"'
	assertEquals "both ranks went on ($err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertContains "node 1's new helper has nothing in flight: $(cat "$d/status"); its log: $(cat "$d/log")" \
		"$(cat "$d/status")" "nothing in flight"
}

results() { etcdctl_ get --prefix accelctl/ --keys-only | grep -E '/(done|p[0-9]+)/'; }

# Node 0 (the source) has its helper SIGKILLed after every node read two
# 700 KiB results (so deleted). Its replacement publishes its journal's
# results again: they are not put back (they stayed for the lease's life).
testSourceKilledAfterBigResults() {
	local d; d=$(scratch)/sk; mkdir -p "$d"
	head -c $((700 * 1024)) /dev/urandom >"$d/big"
	across 2 1 bash -c "$SETTLED"'
		for i in 1 2; do
			if [ $ACCELCTL_NODE_RANK = 0 ]; then accelctl broadcast --timeout 20s s <'"$d"'/big >/dev/null || exit
			else accelctl broadcast --timeout 20s s | cmp -s - '"$d"'/big || exit; fi
		done
		accelctl barrier --timeout 20s read || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			deleted; killed $(cat $ACCELCTL_RUNTIME_DIR/*.pid)
		fi
		accelctl barrier --timeout 20s end || exit
		sleep 1.5; echo "rc=$?"'
	assertEquals "both went on ($err)" 2 "$(printf '%s\n' "$out" | grep -c ': rc=0$')"
	eventually 10 no_results
	assertEquals "no result or part left" "" "$(results)"
}

# 3 nodes; node 1's helper is SIGKILLed twice in a row after every node
# read 5 broadcasts; node 2 reads them late. Nothing stays in flight, and
# nothing in etcd.
testKilledTwice3Nodes() {
	local d; d=$(scratch)/k3; mkdir -p "$d"
	across 3 1 bash -c "$SETTLED"'
		[ $ACCELCTL_NODE_RANK = 2 ] && sleep 1
		for i in 1 2 3 4 5; do [ "$(accelctl broadcast --timeout 20s v "$i")" = "$i" ] || exit; done
		accelctl barrier --timeout 20s read || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then deleted; killed $(cat $ACCELCTL_RUNTIME_DIR/*.pid); fi
		accelctl barrier --timeout 20s mid || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then sleep 0.5; killed $(cat $ACCELCTL_RUNTIME_DIR/*.pid); fi
		accelctl barrier --timeout 20s end || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then settled '"$d"'/status; fi; echo "rc=$?"'
	assertEquals "all went on ($err)" 3 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertContains "nothing in flight" "$(cat "$d/status")" "nothing in flight"
	eventually 10 no_results
	assertEquals "no result left" "" "$(results)"
}

# Node 1 read an 8 MiB result (16 parts) and said so; node 0 has not (its
# second rank reads late). Node 1's helper is SIGKILLed; its replacement
# finds the result and fetches its parts while node 0's late reader says
# it read it, which deletes them. A part gone used to end the fetch and
# nothing asked again: the collective stayed in flight for good.
testReplacementFetchRace() {
	local d; d=$(scratch)/fr; mkdir -p "$d"
	head -c $((8 * 1024 * 1024)) /dev/urandom >"$d/big"
	across 2 2 bash -c "$SETTLED"'
		n=$ACCELCTL_NODE_RANK l=$ACCELCTL_LOCAL_RANK
		if [ $n = 0 ] && [ $l = 0 ]; then accelctl broadcast --timeout 30s v <'"$d"'/big >/dev/null || exit
		elif [ $n = 0 ]; then
			until [ -e '"$d"'/go ]; do sleep 0.02; done; sleep 0.3
			accelctl broadcast --timeout 30s v | cmp -s - '"$d"'/big || exit
		else
			accelctl broadcast --timeout 30s v | cmp -s - '"$d"'/big || exit
			if [ $l = 0 ]; then
				sleep 1; killed $(cat $ACCELCTL_RUNTIME_DIR/*.pid)
				touch '"$d"'/go
			fi
		fi
		accelctl barrier --timeout 30s end || exit
		if [ $n = 1 ] && [ $l = 0 ]; then settled '"$d"'/status; fi; echo "rc=$?"'
	assertEquals "all went on ($err)" 4 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertContains "nothing in flight" "$(cat "$d/status")" "nothing in flight"
}

# Node 1's helper has a 1 MiB result queued to its rank's client (stopped)
# when it says it read it; both nodes said so, so it is deleted; then the
# helper is SIGKILLed and the client, let go, asks its replacement again.
# It used to get an empty result with exit 0; the value is gone from etcd,
# so it fails (125) and says why, never wrong data.
testKilledMidReply() {
	local d; d=$(scratch)/mr; mkdir -p "$d"
	head -c $((1024 * 1024)) /dev/urandom >"$d/big"
	across 2 1 bash -c "$SETTLED"'
		accelctl barrier --timeout 20s warm || exit
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			accelctl barrier --timeout 20s go || exit
			accelctl broadcast --timeout 20s v <'"$d"'/big >/dev/null || exit
		else
			accelctl broadcast --timeout 20s v >'"$d"'/got 2>'"$d"'/client & cp=$!
			until accelctl status | grep -q "generation 0 "; do sleep 0.05; done
			kill -STOP $cp
			accelctl barrier --timeout 20s go || exit
			sleep 1; accelctl status >/dev/null; sleep 1	# another client comes and goes
			killed $(cat $ACCELCTL_RUNTIME_DIR/*.pid)
			kill -CONT $cp; wait $cp; c=$?; echo "client rc=$c"
			if [ $c = 0 ]; then cmp -s '"$d"'/got '"$d"'/big && echo SAME || echo "DIFFERENT: got $(wc -c <'"$d"'/got) bytes"; fi
		fi
		accelctl barrier --timeout 20s end; echo "rc=$?"'
	assertEquals "both went on ($err)" 2 "$(printf '%s\n' "$out" | grep -c ': rc=0$')"
	assertNotContains "never wrong data ($out; $(cat "$d/client"))" "$out" DIFFERENT
	case $out in
	*"client rc=0"*) assertContains "$out" SAME ;;
	*) assertContains "$out" "client rc=125"
	   assertContains "$(cat "$d/client")" "accelctl: broadcast: 'v': its result (generation 0) was read by every node and deleted from etcd" ;;
	esac
}

# etcd refuses a txn of more operations than its --max-txn-ops (128 by
# default). Reading what every node has read was a compare a node in each
# ack and each put of a result: from 130 nodes on, every one was refused,
# and every result waited until its deadline. Scaled down: a limit of 4
# and 8 nodes.
testManyNodesFewTxnOps() {
	etcd_stop
	etcd_start 1 --max-txn-ops 4
	across 8 1 bash -c '
		for i in 1 2 3; do [ "$(accelctl broadcast --timeout 15s v "$i")" = "$i" ] || exit; done
		accelctl barrier --timeout 15s end || exit
		sleep 1; echo "rc=$?"'
	assertEquals "all read every value ($err)" 8 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	eventually 10 no_results
	assertEquals "no result left" "" "$(results)"
}

# etcd's NOSPACE alarm (a tiny quota, filled here): every rank exits 125 at
# once with etcd's words and a sentence naming the alarm. "At once" is under
# half the 120 s deadline (the launch's start and exit on a busy machine are in it).
testDatabaseFull() {
	etcd_stop
	etcd_start 1 --quota-backend-bytes 300000
	local i
	for i in 1 2 3 4 5 6 7 8; do head -c 100000 /dev/urandom | etcdctl_ put "fill/$i" >/dev/null 2>&1; done
	assertContains "the alarm is raised" "$(etcdctl_ alarm list)" NOSPACE
	local t0 t1; t0=${EPOCHREALTIME/[.,]/}000
	across 2 1 bash -c 'accelctl barrier --timeout 120s full; echo "rc=$?"'
	t1=${EPOCHREALTIME/[.,]/}000
	assertEquals "both ranks exit 125" 2 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	assertContains "$err" "rendezvous failed: 127.0.0.1:"
	assertContains "$err" "NOSPACE alarm"
	assertContains "$err" "database space exceeded"
	assertNotContains "$err" "unreachable"
	assertTrue "at once, not at the deadline ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -lt 60000 ]"
}

load_shunit2
