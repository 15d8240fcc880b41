# t_state.sh: faults g, o and p of issue 10, what Redis holds of a job: FLUSHALL
# in the middle of a loop (completes, none early), SCRIPT FLUSH likewise (issue
# 14: scripts go by hash), keys with a 2 s TTL while a
# node is 4 s late (the waiting nodes keep them alive) and after the job (none
# outlives its TTL), and a second run with the job id of a finished one (it
# never passes on the first run's state), and a FLUSHALL while node 0 idles and
# before another node's helper first runs (the wake; an earlier launch's idle
# node 0 does not answer it). Over a Unix socket.
. "$(dirname "$0")/lib.sh"

tearDown() { faults_teardown; }

job_keys() { redis_cli --scan --pattern "accelctl:{$JOB}:*"; }

# b36 N: run N as its keys name it (base 36).
b36() {
	local n=${1:-0} s="" c=0123456789abcdefghijklmnopqrstuvwxyz
	while :; do s=${c:n % 36:1}$s; n=$((n / 36)); [ "$n" = 0 ] && break; done
	echo "$s"
}

# g. FLUSHALL while a 4-node x 2-rank loop of 40 runs, at generation 10 while
# nodes 0-2 wait there and node 3 is held back: the helpers post again what
# Redis lost; the loop completes and no generation passes early.
testFlushallMidLoop() {
	local d; d=$(scratch)/flush
	redis_start
	RDV=unix://$REDIS_SOCK job_start "$d" 4 2 "loop 40 10s 10 3 flushed"
	if at_gen "$d" 10; then
		wait_node_posted "$d" 4 2 0 loop 10 || echo "warning: node 0 not seen waiting at loop" >&2
		[ "$(redis_cli flushall)" = OK ] && fault "$d" flushall
	fi
	touch "$d/flushed"
	job_wait
	assertAllRc 0 "$d" 8 "FLUSHALL mid-loop"
	assertMidLoop "$d" 40 flushall
	assertNoEarly "$d"
	assertOneHelperPerNode "$d" 4
}

# A FLUSHALL after each of 16 broadcasts of 1 MiB from node 0: the reading
# node posts each value again as its name's latest (a node may still wait for
# it), but keeps no copy of its own: that is the source's to keep. Before, the
# reader kept one more 1 MiB copy a FLUSHALL, up to the 16 MiB bound (seen as
# a reader's helper growing by 16 MiB in the chaos suite's late half).
# Measured by RSS with glibc's mmap threshold fixed, so that a freed value
# leaves the process (as the chaos suite does).
testReaderKeepsNoCopies() {
	local d; d=$(scratch)/copies
	redis_start
	mkdir -p "$d"
	head -c 1048576 /dev/urandom >"$d/blob"
	JOB_ENV="GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072 REDIS_SOCK=$REDIS_SOCK" \
	RDV=unix://$REDIS_SOCK job_run "$d" 2 1 '
	for i in $(seq 1 16); do
		if [ "$ACCELCTL_RANK" = 0 ]; then accelctl broadcast v <"$FDIR/blob" >/dev/null
		else accelctl broadcast v </dev/null | cmp -s - "$FDIR/blob" || exit 3; fi || exit
		bar b || exit
		[ "$ACCELCTL_RANK" = 0 ] && { redis-cli -s "$REDIS_SOCK" flushall >/dev/null || exit 4; }
		# Both nodes find the run gone here: each posts again what it has.
		bar f || exit
		if [ "$ACCELCTL_RANK" = 1 ]; then
			echo "$i $(awk "/^VmRSS:/ { print \$2 }" "/proc/$(cat "$ACCELCTL_RUNTIME_DIR/$ACCELCTL_JOB_ID.node1.pid")/status")" >>"$FDIR/rss"
		fi
	done'
	assertAllRc 0 "$d" 2 "16 broadcasts of 1 MiB, a FLUSHALL after each"
	# A sanitizer's allocator keeps what is freed (its quarantine): RSS
	# says nothing there (the chaos suite skips its RSS check so too).
	if [ "${ACCELCTL_SANITIZED:-0}" = 1 ]; then
		echo "sanitized build: the reader's RSS not checked"
		return 0
	fi
	local at3 at16
	at3=$(awk '$1 == 3 { print $2 }' "$d/rss")
	at16=$(awk '$1 == 16 { print $2 }' "$d/rss")
	assertTrue "the reader's helper grew from $at3 KiB (round 3) to $at16 KiB (round 16): $(tr '\n' ' ' <"$d/rss")" \
		"[ $((at16 - at3)) -lt 4096 ]"
}

# FLUSHALL while node 0 is idle (its rank broadcast and went on to work of its
# own) and before node 1's helper has ever run: node 1's first call starts a
# fresh helper, which finds no run to join and waits for node 0 to open one.
# Node 0, waiting for nothing, read only its run's stream and never learnt that
# Redis had lost it: the reader waited to its deadline. A fresh node that
# finds no run now wakes node 0 (the job's wake stream), which posts again.
# flush_idle0 DIR WRAP [STATUS]: that job, node 0's call run as "WRAP accelctl
# ..." (WRAP: a command that runs the rest, or ""); with STATUS, an operator's
# one-off `accelctl status` on node 0 before the FLUSHALL.
flush_idle0() {
	local d=$1 wrap=$2 status=${3:-}
	redis_start
	RDV=unix://$REDIS_SOCK job_start "$d" 2 1 '
		if [ "$ACCELCTL_RANK" = 0 ]; then
			'"$wrap"' accelctl broadcast seed v1 && touch "$FDIR/sent" && waitfor read 60
		else
			waitfor flushed 60
			v=$(accelctl broadcast --timeout 20s seed) && echo "$v" >"$FDIR/v1"
			rc=$?; touch "$FDIR/read"; exit $rc
		fi'
	eventually 30 test -e "$d/sent"
	# The result is in Redis (node 0 registered and posted it): the
	# FLUSHALL takes it away.
	eventually 30 sh -c "[ -n \"\$(timeout 10 redis-cli -s '$REDIS_SOCK' --scan --pattern 'accelctl:{$JOB}:*:done:c:seed:0')\" ]"
	if [ -n "$status" ]; then
		rank_env "$d" 2 1 0 0
		env -i "${ENVV[@]}" bash -c 'accelctl status; true' </dev/null >/dev/null 2>&1
	fi
	assertEquals "FLUSHALL" OK "$(redis_cli flushall)"
	touch "$d/flushed"
	job_wait
	assertAllRc 0 "$d" 2 "a fresh node after a FLUSHALL, node 0 idle (${wrap:-no wrapper}${status:+, after a status})"
	assertEquals "what node 1 read" v1 "$(cat "$d/v1" 2>/dev/null)"
	assertOneHelperPerNode "$d" 2
}
testFlushallWhileNodeZeroIdle() { flush_idle0 "$(scratch)/idle0" ""; }

# SCRIPT FLUSH while a 4-node x 2-rank loop of 40 runs, at generation 10 while
# nodes 0-2 wait there and node 3 is held back (issue 14): the helpers send
# scripts by hash (EVALSHA); Redis answers NOSCRIPT, and each such call is sent
# again with the script's text. The loop completes, none early.
testScriptFlushMidLoop() {
	local d; d=$(scratch)/sflush
	redis_start
	RDV=unix://$REDIS_SOCK job_start "$d" 4 2 "loop 40 10s 10 3 flushed"
	if at_gen "$d" 10; then
		wait_node_posted "$d" 4 2 0 loop 10 || echo "warning: node 0 not seen waiting at loop" >&2
		[ "$(redis_cli script flush)" = OK ] && fault "$d" scriptflush
	fi
	touch "$d/flushed"
	job_wait
	assertAllRc 0 "$d" 8 "SCRIPT FLUSH mid-loop"
	assertMidLoop "$d" 40 scriptflush
	assertNoEarly "$d"
	assertOneHelperPerNode "$d" 4
	assertTrue "scripts were sent by hash" "redis_cli info commandstats | grep -q '^cmdstat_evalsha:'"
}

# o. ACCELCTL_REDIS_TTL=3 and node 1 arrives 6 s after node 0: node 0's arrival
# must still be there, so the barrier completes. (A 2 s TTL, refreshed every
# 667 ms, left an ASan helper on a busy machine no slack for one late refresh;
# the same test at 3 s and 6 s leaves a second.)
testTtlKeptAliveWhileWaiting() {
	local d; d=$(scratch)/ttl
	redis_start
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=3" job_run "$d" 2 2 '
		bar warm --timeout 30s || exit
		[ $ACCELCTL_NODE_RANK = 1 ] && sleep 6
		bar t --timeout 30s'
	assertAllRc 0 "$d" 4 "a node 6 s late with a 3 s TTL"
	assertTrue "node 0 waited longer than the TTL ($(bar_ms "$d" t) ms)" "[ $(bar_ms "$d" t) -ge 5000 ]"
	assertNoEarly "$d"
}

# o. After the job, nothing of it outlives its TTL (its helpers still run, idle):
# every key of the job has an expiry of at most the TTL, they all go (the
# helpers' last refresh may come a moment after the ranks left: waited for,
# not a fixed 3.5 s), and none comes back.
testNothingOutlivesTtl() {
	local d k ttl bad=""; d=$(scratch)/ttl2
	redis_start
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=2" job_run "$d" 2 2 'loop 5 10s'
	assertAllRc 0 "$d" 4 "5 barriers with a 2 s TTL"
	assertNotEquals "the job's keys are in Redis after it" "" "$(job_keys)"
	for k in $(job_keys); do
		ttl=$(redis_cli pttl "$k")
		# -2: expired meanwhile; -1 (no expiry) or more than 2 s is wrong.
		[ "$ttl" = -2 ] || { [ "$ttl" -gt 0 ] && [ "$ttl" -le 2000 ]; } || bad="$bad $k=$ttl"
	done
	assertEquals "every key expires within the TTL (key=ms)" "" "$bad"
	eventually 30 eval '[ -z "$(job_keys)" ]'
	assertEquals "none left once the TTL passed" "" "$(job_keys)"
	sleep 3	# longer than the TTL: an idle helper that wrote again would show
	assertEquals "none came back" "" "$(job_keys)"
}

# stop_helpers DIR NODES: the job is over: its helpers stopped (SIGTERM, as
# launch does) and gone (30 s at most, a guard).
stop_helpers() {
	local n p
	for n in $(seq 0 $(($2 - 1))); do
		p=$(helper_pid "$1" "$n")
		[ -n "$p" ] || continue
		kill -TERM "$p" 2>/dev/null
		wait_gone "$p" 30
	done
}

# p. A job id used again (ACCELCTL_JOB_ID=rerun, new runtime directories, Redis
# not flushed): node 0 alone must not pass barrier x on the first run's result.
# It waits and times out (124), or refuses clearly (2 or 125, with a message).
# A whole second run then passes.
testRerunSameJobId() {
	redis_start
	JOB=rerun
	RDV=unix://$REDIS_SOCK job_run "$(scratch)/run1" 2 1 'bar x --timeout 10s'
	assertAllRc 0 "$(scratch)/run1" 2 "the first run"
	stop_helpers "$(scratch)/run1" 2
	assertNotEquals "the first run's keys are still in Redis" "" "$(job_keys)"

	local d; d=$(scratch)/run2
	RDV=unix://$REDIS_SOCK ONLY_NODES=0 job_run "$d" 2 1 'bar x --timeout 3s'
	local rc; rc=$(rcs "$d")
	case $rc in
	124) ;;
	2 | 125) assertNotEquals "a refusal says why" "" "$(cat "$d/err.0")" ;;
	*) fail "node 0 alone, second run: exit $rc after $(bar_ms "$d" x) ms, expected 124 (or a refusal, 2/125) (stderr: $(cat "$d/err.0"))" ;;
	esac
	assertEquals "node 0 alone never passed" "" "$(grep leave "$d/g0" 2>/dev/null)"
	stop_helpers "$d" 2

	RDV=unix://$REDIS_SOCK job_run "$(scratch)/run3" 2 1 'bar x --timeout 10s && bar y --timeout 10s'
	assertAllRc 0 "$(scratch)/run3" 2 "a whole second run with the same job id"
	assertNoEarly "$(scratch)/run3"
}

# p, one order more. A second launch's node 1 helper starts before its rank
# comes and before the new node 0: it joins the first launch's run, where its
# place is free. Node 0 then opens the next run and tells the old one it is
# closed, while node 1 has no rank waiting yet: node 1 must still move to node
# 0's run when its rank arrives, not wait in the closed one.
testClosedBeforeTheRankArrives() {
	redis_start
	JOB=closedearly
	RDV=unix://$REDIS_SOCK ONLY_NODES=0 job_run "$(scratch)/a" 2 1 'bar x --timeout 2s'
	stop_helpers "$(scratch)/a" 2
	local run; run=$(b36 "$(redis_cli get "accelctl:{$JOB}:run")")
	local d; d=$(scratch)/b; mkdir -p -m 700 "$d" "$d/n1"
	RDV=unix://$REDIS_SOCK rank_env "$d" 2 1 1 0
	env -i "${ENVV[@]}" accelctl helper start
	eventually 30 eval '[ "$(redis_cli hexists "accelctl:{$JOB}:r$run:members" 1)" = 1 ]'
	assertEquals "node 1's helper joined the first run ($run)" 1 \
		"$(redis_cli hexists "accelctl:{$JOB}:r$run:members" 1)"
	RDV=unix://$REDIS_SOCK ONLY_NODES=0 job_start "$d" 2 1 'bar x --timeout 15s'
	local first=$JOB_PIDS
	eventually 30 eval '[ "$(b36 "$(redis_cli get "accelctl:{$JOB}:run")")" != "$run" ]'
	# Node 1's helper has read "closed" with no rank waiting. It logs
	# nothing then, so this is a pause, not a condition: lost on a busy
	# machine, the test passes through the path of a rank already there.
	sleep 1
	RDV=unix://$REDIS_SOCK ONLY_NODES=1 job_start "$d" 2 1 'bar x --timeout 10s'
	JOB_PIDS="$JOB_PIDS $first"
	job_wait
	assertAllRc 0 "$d" 2 "node 1 moved to node 0's run when its rank came"
	stop_helpers "$d" 2
}

# rk_node, rk_env: pair_node and pair_env of tests/sh/lib.sh, through Redis.
rk_node() { PAIR_RDV=unix://$REDIS_SOCK pair_node "$@"; }
rk_env() { PAIR_RDV=unix://$REDIS_SOCK pair_env "$@"; }

# A node whose node 0 never came times out saying so, as over etcd
# (etcd.runs testNodeZeroNeverCame).
testNodeZeroNeverCame() {
	redis_start
	JOB=never0$RANDOM
	rk_node a 1 barrier --timeout 2s x
	assertEquals "node 1 alone ($err)" 124 "$rc"
	assertContains "$err" "all 1 ranks of node 1 arrived; not posted: waiting for node 0 to open this launch's run"
	rk_node a 1 helper stop
}

# Node 0's liveness, as over etcd (etcd.runs testRerunAfterSigkill): launch
# 1's node 0 waits at x (its bit in Redis) and is SIGKILLed with its helper;
# node 1 never ran. Launch 2's node 1 comes first: the newest run is launch
# 1's, of 2 nodes, and its place there is free, but that run's node 0 does
# not answer: it must not pass x on the dead arrival (it did, in 11 ms,
# before the probe). Launch 2's node 0 then opens its own run; both pass.
testRerunAfterSigkill() {
	redis_start
	JOB=sigkilled$RANDOM
	# Its pid is accelctl's own (the subshell execs it).
	(rk_env l1 0 "$ACCELCTL" barrier --timeout 30s x 2>/dev/null) &
	local c=$!
	eventually 30 eval '[ -n "$(job_keys | grep ":arr:b:x:0$")" ]'
	assertNotEquals "launch 1's arrival is in Redis" "" "$(job_keys | grep ':arr:b:x:0$')"
	# The rank first: it cannot see its helper die and start another.
	# (This job's pid file: the directory is shared with other tests' jobs.)
	kill -9 "$c" "$(<"$(scratch)/l1/n0/$JOB.node0.pid")"
	wait "$c" 2>/dev/null

	# Node 1 probes launch 1's run (3 s, again after each wait of
	# 250 ms): status says so, over every store (only etcd's did).
	local t0 t1; t0=${EPOCHREALTIME/[.,]/}000
	(rk_node l2 1 barrier --timeout 5s x; echo "$rc" >"$(scratch)/l2.x.rc") &
	local w=$!
	probe_status rk_env l2 1 "$(scratch)/l2.x.rc"
	wait "$w"; rc=$(cat "$(scratch)/l2.x.rc"); err=$(cat "$(scratch)/l2.err.1")
	t1=${EPOCHREALTIME/[.,]/}000
	assertContains "status while node 1 probes: $PROBE_ST" "$PROBE_ST" "joining run"
	assertContains "$PROBE_ST" "is its node 0 alive?"
	# The wait is said once, not at each probe no node 0 answers (it
	# was, every 3.25 s: review of issue 19). Node 1's helper goes on
	# probing: until status has shown a second probe end in a wait.
	probes_end_in_wait rk_env l2 1
	assertTrue "status showed two probes end in a wait ($PROBES_SEEN)" "[ $PROBES_SEEN -ge 2 ]"
	assertEquals "one wait logged after $PROBES_SEEN probes" 1 \
		"$(grep -c 'waiting for node 0' "$(scratch)/l2/n1/$JOB.node1.log")"
	assertEquals "launch 2's node 1 alone does not pass x ($err)" 124 "$rc"
	assertTrue "it waited its deadline ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -ge 5000 ]"
	assertContains "$(cat "$(scratch)/l2/n1/$JOB.node1.log")" "did not answer"

	(rk_node l2 1 barrier --timeout 20s y; echo "$rc" >"$(scratch)/l2.rc.1") &
	local b=$!
	rk_node l2 0 barrier --timeout 20s x && rk_node l2 0 barrier --timeout 20s y
	echo "$rc" >"$(scratch)/l2.rc.0"
	wait "$b"
	assertEquals "launch 2: both nodes pass" "0 0" "$(cat "$(scratch)"/l2.rc.0 "$(scratch)"/l2.rc.1 | tr '\n' ' ' | sed 's/ $//')"
	local p
	for p in $(cat "$(scratch)"/l2/n*/"$JOB".node*.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
}

# A reconnect while node 1 asks node 0 whether it is alive (review of issue
# 19): node 0's helper is SIGSTOPped once it opened the run, node 1 joins it
# fresh and probes, Redis drops every client (CLIENT KILL) mid-probe, and
# node 0 is let go 4 s later. Node 1 registers again and finds its place
# holding its own nonce (its first registration's): that is its place, it
# asks again. Taken as another's, node 1 waited for node 0 to open a run it
# had opened, and both ranks waited until their deadline.
testReconnectMidProbe() {
	redis_start
	JOB=midprobe$RANDOM
	rk_node l1 0 helper start
	assertEquals "node 0's helper started ($err)" 0 "$rc"
	# This job's pid file: the directory is shared with other tests' jobs (a
	# glob took testRerunAfterSigkill's too, and the STOP below failed).
	local p0; p0=$(<"$(scratch)/l1/n0/$JOB.node0.pid")
	eventually 30 eval '[ -n "$(redis_cli --scan --pattern "accelctl:{$JOB}:r*:members")" ]'
	kill -STOP "$p0"
	assertEquals "node 0's helper stopped" 0 $?
	(rk_node l1 1 barrier --timeout 30s x; echo "$rc" >"$(scratch)/mp.rc.1") &
	local b=$!
	# Node 1 probes: its ping is in Redis.
	eventually 30 eval '[ -n "$(redis_cli --scan --pattern "accelctl:{$JOB}:r*:ping:1")" ]'
	assertNotEquals "node 1 asked node 0" "" "$(redis_cli --scan --pattern "accelctl:{$JOB}:r*:ping:1")"
	redis_cli client kill type normal >/dev/null
	sleep 4		# past the probe's 3 s: node 0 is silent that long
	kill -CONT "$p0"
	rk_node l1 0 barrier --timeout 30s x
	assertEquals "node 0 passed x ($err)" 0 "$rc"
	wait "$b"
	assertEquals "node 1 passed x ($(cat "$(scratch)/l1/n1/$JOB.node1.log"))" 0 "$(cat "$(scratch)/mp.rc.1")"
	local p
	for p in $(cat "$(scratch)"/l1/n*/"$JOB".node*.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
}

# Kept results under valgrind (issue 19: kept by size only, their keys
# renewed by a pass of EXPIREs): with ACCELCTL_REDIS_TTL=2 (a pass every
# 667 ms) node 0 writes 40 broadcasts, Redis is emptied (FLUSHALL: each
# renewal then finds its key gone and writes the result again, with nobody
# waiting), and node 1 reads them once they are back. Then node 0 writes 18 of 1 MiB, past the
# 16 MiB it keeps: the oldest are trimmed while the pump may hold them (no
# node reads those: a trimmed result lives a TTL, 2 s here). Both helpers
# exit 0 with no valgrind error (leaks included).
testKeptResultsUnderValgrind() {
	if vg_unavailable; then startSkipping; fail "valgrind unavailable"; return; fi
	redis_start
	local d; d=$(scratch)/vgkeep
	JOB=vgkeep$RANDOM
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=2" vg_helpers_start "$d" 2 1 || return
	head -c 1048576 /dev/zero | tr '\0' x >"$d/big"
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=2" job_start "$d" 2 1 '
		if [ $ACCELCTL_NODE_RANK = 0 ]; then
			for i in $(seq 1 40); do accelctl broadcast --timeout 60s v "$i" >/dev/null || exit; done
			touch $FDIR/written
			waitfor read 60
			for i in $(seq 1 18); do accelctl broadcast --timeout 60s b <$FDIR/big >/dev/null || exit; done
		else
			waitfor rewritten 60
			for i in $(seq 1 40); do
				[ "$(accelctl broadcast --timeout 60s v)" = "$i" ] || { echo "v $i lost" >&2; exit 1; }
			done
			touch $FDIR/read
		fi
		bar end --timeout 60s'
	eventually 120 test -e "$d/written"
	assertEquals FLUSHALL OK "$(redis_cli flushall)"
	# Nobody waits anywhere: only node 0's renewal can write them again.
	eventually 60 eval '[ "$(redis_cli --scan --pattern "accelctl:{$JOB}:r*:done:c:v:*" | wc -l)" -ge 40 ]'
	assertEquals "node 0's renewal wrote its 40 results again" 40 \
		"$(redis_cli --scan --pattern "accelctl:{$JOB}:r*:done:c:v:*" | wc -l)"
	touch "$d/rewritten"
	job_wait
	assertAllRc 0 "$d" 2 "node 1 read every result after the flush"
	vg_helpers_stop "$d" 2 1
}

# A job id used again by a launch with more nodes (ACCELCTL_JOB_ID=rerun, 2
# nodes, then 3): the first run had every one of its nodes, but node 2 has no
# place in it, so a fresh node 2 joins it before the new node 0 opens the new
# run. It must not pass barrier x on the first run's result (nor read it from
# the first run's stream): it waits for node 0's run and times out alone.
testRerunWithMoreNodes() {
	redis_start
	JOB=rerun3
	RDV=unix://$REDIS_SOCK job_run "$(scratch)/more1" 2 1 'bar x --timeout 10s'
	assertAllRc 0 "$(scratch)/more1" 2 "the first run"
	stop_helpers "$(scratch)/more1" 2

	local d; d=$(scratch)/more2
	RDV=unix://$REDIS_SOCK ONLY_NODES=2 job_run "$d" 3 1 'bar x --timeout 3s'
	local rc; rc=$(rcs "$d")
	case $rc in
	124) ;;
	2 | 125) assertNotEquals "a refusal says why" "" "$(cat "$d/err.2")" ;;
	*) fail "node 2 alone, second run of 3 nodes: exit $rc after $(bar_ms "$d" x) ms, expected 124 (or a refusal, 2/125) (stderr: $(cat "$d/err.2"))" ;;
	esac
	assertEquals "node 2 alone never passed" "" "$(grep leave "$d/g2" 2>/dev/null)"
	stop_helpers "$d" 3

	RDV=unix://$REDIS_SOCK job_run "$(scratch)/more3" 3 1 'bar x --timeout 10s && bar y --timeout 10s'
	assertAllRc 0 "$(scratch)/more3" 3 "a whole second run of 3 nodes with the same job id"
	assertNoEarly "$(scratch)/more3"
}

# A job id used again after the first run's counter and members expired but
# its last results had not (they were written after its helpers' last
# registration, which is what refreshes those two): node 0 of the second run
# opens "the next run" from an empty counter, the first run's number again,
# and must not pass barrier x alone on the first run's result (a run number
# is never used twice: without a counter, node 0 opens the time in ms). A 9 s TTL
# (refresh every 3 s, while something waits): x passes 2.5 s after the
# registration, so its result outlives the counter by about 2.5 s.
testRerunAfterTheCounterExpired() {
	redis_start
	JOB=stale
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=9" job_run "$(scratch)/st1" 2 1 '
		bar up --timeout 10s && sleep 2.5 && bar x --timeout 10s'
	assertAllRc 0 "$(scratch)/st1" 2 "the first run"
	stop_helpers "$(scratch)/st1" 2
	# Until the counter or the result of x is gone, whichever goes first
	# (a TTL: 9 s).
	eventually 60 eval '[ "$(redis_cli exists "accelctl:{$JOB}:run")" = 0 ] ||
	    [ -z "$(redis_cli --scan --pattern "accelctl:{$JOB}:*:done:b:x:*")" ]'

	local d; d=$(scratch)/st2
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=9" ONLY_NODES=0 job_run "$d" 2 1 \
		'bar x --timeout 3s'
	local rc; rc=$(rcs "$d")
	case $rc in
	124) ;;
	2 | 125) assertNotEquals "a refusal says why" "" "$(cat "$d/err.0")" ;;
	*) fail "node 0 alone, second run: exit $rc after $(bar_ms "$d" x) ms, expected 124 (or a refusal, 2/125) (stderr: $(cat "$d/err.0"))" ;;
	esac
	assertEquals "node 0 alone never passed" "" "$(grep leave "$d/g0" 2>/dev/null)"
}

# A job id used again while the first run's helpers still idle (srun leaves
# them for ACCELCTL_HELPER_IDLE), with Redis emptied in between (FLUSHALL, or a
# restart without persistence): node 0 of the second run opens run 1 again
# from an empty counter. The first run's helpers then reconnect (CLIENT KILL:
# a proxy or network blip) and register again in "their" run 1, posting the
# last results they saw. Node 0, alone at barrier x, must not pass on them.
testRerunAfterFlushWithOldHelpersAlive() {
	redis_start
	JOB=flushed
	RDV=unix://$REDIS_SOCK job_run "$(scratch)/fl1" 2 1 'bar x --timeout 10s'
	assertAllRc 0 "$(scratch)/fl1" 2 "the first run"
	redis_cli flushall >/dev/null

	local d; d=$(scratch)/fl2
	RDV=unix://$REDIS_SOCK ONLY_NODES=0 job_start "$d" 2 1 'bar x --timeout 5s'
	eventually 30 eval '[ -n "$(redis_cli --scan --pattern "accelctl:{$JOB}:*:arr:b:x:*")" ]'
	redis_cli client kill type normal >/dev/null
	job_wait
	local rc; rc=$(rcs "$d")
	case $rc in
	124) ;;
	2 | 125) assertNotEquals "a refusal says why" "" "$(cat "$d/err.0")" ;;
	*) fail "node 0 alone, second run: exit $rc after $(bar_ms "$d" x) ms, expected 124 (or a refusal, 2/125) (stderr: $(cat "$d/err.0"))" ;;
	esac
	assertEquals "node 0 alone never passed" "" "$(grep leave "$d/g0" 2>/dev/null)"
}

# stop_node_helper DIR NODE: that node's helper stopped (SIGTERM), and gone
# (30 s at most, a guard).
stop_node_helper() {
	local p
	p=$(helper_pid "$1" "$2")
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null
	wait_gone "$p" 30
}

# rerun_alone DIR: node 1 alone timed out (124) and never passed.
rerun_alone() {
	local d=$1 rc; rc=$(rcs "$d")
	assertEquals "node 1 alone, second launch: exit $rc (stderr: $(cat "$d/err.1")) (helper log: $(cat "$d"/n1/*.log 2>/dev/null | tail -5))" 124 "$rc"
	assertEquals "node 1 alone never passed" "" "$(grep leave "$d/g1" 2>/dev/null)"
}

# A job id used again while the first launch's node 0 helper still idles
# (srun leaves it; ACCELCTL_HELPER_IDLE) and its node 1 helper is gone (idled
# out first), after Redis lost the job's keys (FLUSHALL here; the TTL in the
# next test). The second launch's node 1 comes first: its registration finds
# no run and wakes "node 0" through the job's wake stream, which is the first
# launch's idle node 0. That one must not bring its run back (it did, in the
# review of issue 18: node 1 joined it fresh and passed x alone): no process
# of its ranks runs any more. Node 1 alone never passes x (124).
# rerun_after_flush JOB [STATUS]: that test under job id JOB; with STATUS, an
# operator's `accelctl status` on the old node 0 first, from a shell that
# stays open until the second launch is over (its `sleep 40` stands for the
# shell's life, and is ended below).
rerun_after_flush() {
	local opsh=""
	redis_start
	JOB=$1$RANDOM
	RDV=unix://$REDIS_SOCK job_run "$(scratch)/w1" 2 1 'bar x --timeout 10s'
	assertAllRc 0 "$(scratch)/w1" 2 "the first launch"
	stop_node_helper "$(scratch)/w1" 1
	if [ -n "${2:-}" ]; then
		rank_env "$(scratch)/w1" 2 1 0 0
		env -i "${ENVV[@]}" bash -c 'accelctl status >/dev/null 2>&1; sleep 40' </dev/null >/dev/null 2>&1 &
		opsh=$!
		eventually 10 sh -c "ps -o args= --ppid $opsh | grep -q '^sleep 40'"
	fi
	assertEquals FLUSHALL OK "$(redis_cli flushall)"
	local d; d=$(scratch)/w2
	RDV=unix://$REDIS_SOCK ONLY_NODES=1 job_run "$d" 2 1 'bar x --timeout 5s'
	[ -n "$opsh" ] && { kill "$opsh" 2>/dev/null; wait "$opsh" 2>/dev/null; }
	rerun_alone "$d"
}
testRerunNodeOneFirstAfterFlushOldNodeZeroIdle() { rerun_after_flush wakeold; }

testRerunNodeOneFirstAfterTtlOldNodeZeroIdle() {
	redis_start
	JOB=wakettl$RANDOM
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=3" job_run "$(scratch)/t1" 2 1 'bar x --timeout 10s'
	assertAllRc 0 "$(scratch)/t1" 2 "the first launch"
	stop_node_helper "$(scratch)/t1" 1
	# Until every key of the first launch has expired (no operator action).
	eventually 30 sh -c "[ -z \"\$(timeout 10 redis-cli -s '$REDIS_SOCK' --scan --pattern 'accelctl:{$JOB}:*')\" ]"
	local d; d=$(scratch)/t2
	RDV=unix://$REDIS_SOCK JOB_ENV="ACCELCTL_REDIS_TTL=3" ONLY_NODES=1 job_run "$d" 2 1 'bar x --timeout 5s'
	rerun_alone "$d"
}

# The same with a broadcast: node 1 of the second launch must not read the
# first launch's value.
testRerunReaderGetsOldValueAfterFlush() {
	redis_start
	JOB=wakebc$RANDOM
	RDV=unix://$REDIS_SOCK job_run "$(scratch)/b1" 2 1 '
		if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast seed FIRST-LAUNCH
		else accelctl broadcast --timeout 10s seed >/dev/null; fi'
	assertAllRc 0 "$(scratch)/b1" 2 "the first launch"
	stop_node_helper "$(scratch)/b1" 1
	assertEquals FLUSHALL OK "$(redis_cli flushall)"
	local d; d=$(scratch)/b2
	RDV=unix://$REDIS_SOCK ONLY_NODES=1 job_run "$d" 2 1 '
		v=$(accelctl broadcast --timeout 5s seed); rc=$?; echo "$v" >"$FDIR/v1"; exit $rc'
	assertEquals "node 1 alone, second launch (read '$(cat "$d/v1")')" 124 "$(rcs "$d")"
	assertEquals "what node 1 read" "" "$(cat "$d/v1")"
}

# The same where an operator ran `accelctl status` on the old node 0, from a
# shell that stays: status is no rank, and must not keep the old launch
# "alive" (it did, in the second review of issue 18: node 1 passed alone).
testRerunAfterFlushOldStatusShellAlive() { rerun_after_flush revst status; }
# testFlushallWhileNodeZeroIdle with node 0's call under timeout(1), a wrapper
# that forks and exits with the call: the rank's shell above it is what runs.
testFlushallWhileNodeZeroIdleUnderTimeout() { flush_idle0 "$(scratch)/idle0t" "timeout 30"; }

# testFlushallWhileNodeZeroIdle with an operator's one-off `accelctl status` on
# node 0 while its rank computes: it must not replace the rank's record.
testFlushallWhileNodeZeroIdleAfterStatus() { flush_idle0 "$(scratch)/idle0s" "" status; }

load_shunit2
