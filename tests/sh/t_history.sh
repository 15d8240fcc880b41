# t_history.sh: "status --history" names who everyone waited for (issue 22): the slow rank
# as last, its lateness within 10% of what the ranks' own clocks say, the CMD of a --wait,
# the rank-seconds as the sum of the waits, the count, the JSON, bad input, and the line
# a wait of over a minute ends with, and the spread across 4 nodes counted from barriers
# only. Transport-independent: etcd.history runs it across nodes (tests/etcd/suite.sh),
# where the last rank is on another node than rank 0; run alone, the 4-node test starts
# a Redis of its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/redis.sh"

NN=${ACCELCTL_TEST_NNODES:-1}

# node_of R N: the node of rank R in "launch -n N" (lib.sh's launch_across).
node_of() {
	if [ $(($2 % NN)) = 0 ] && [ "$2" -ge "$NN" ]; then echo $(($1 / ($2 / NN))); else echo 0; fi
}

# /usr/bin/python3, not whatever python3 comes first on PATH (a pyenv shim
# costs a second a start, and these run some thirty times a suite).
PY=$(command -v /usr/bin/python3 python3 | head -1)

# json FILE PYTHON-EXPR: EXPR of the JSON object in FILE (as h), printed.
json() {
	"$PY" -c 'import json, sys; h = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# within ACTUAL EXPECTED PERCENT: |ACTUAL - EXPECTED| <= PERCENT% of EXPECTED,
# or a second (ACTUAL and EXPECTED in us): what the ranks' clocks say includes
# their accelctl's start and its arrival at the helper, which a busy machine
# (ASan, 4 etcd nodes) delays by more than 10% of 5 s; a wrong measure is off
# by the whole lateness.
within() {
	"$PY" -c 'import sys; a, e, p = map(float, sys.argv[1:]); sys.exit(abs(a - e) > max(e * p / 100, 1e6))' "$@"
}

# A job of 4 ranks where rank 3 comes 5 s late to barrier 'slow'; every rank
# notes the time just before it calls the barrier; each node's local main then
# writes its history as JSON (DIR/h.NODE.json) and as text (DIR/h.NODE.txt).
# The job runs once a suite (three tests read it; each paid its 5 s and
# launch before), each test gets a copy of its files.
slow_job() {
	local d=$1 s; s=$(scratch)/slow-job
	if [ ! -e "$s/rc" ]; then
		mkdir -p "$s"
		RUN_LIMIT=300 run -- launch -n 4 --tag -- bash -c '
			accelctl barrier start
			[ $ACCELCTL_RANK = 3 ] && sleep 5
			date +%s%N >'"$s"'/t.$ACCELCTL_RANK
			accelctl barrier slow
			if [ $ACCELCTL_LOCAL_RANK = 0 ]; then
				accelctl status --history 1 --json >'"$s"'/h.$ACCELCTL_NODE_RANK.json
				accelctl status --history >'"$s"'/h.$ACCELCTL_NODE_RANK.txt
			fi
			accelctl barrier end'
		printf '%s\n' "$rc" >"$s/rc"
		printf '%s\n' "$err" >"$s/err"
	fi
	rm -rf "$d"; cp -a "$s" "$d"
	rc=$(<"$s/rc") err=$(<"$s/err")
}

testSlowRankNamedLast() {
	local d; d=$(scratch)/slow; mkdir -p "$d"
	slow_job "$d"
	assertRc 0 "the slow job"
	local node3 n nodes=$NN
	node3=$(node_of 3 4)
	[ $((4 % NN)) = 0 ] || nodes=1
	for ((n = 0; n < nodes; n++)); do
		assertEquals "node $n names rank 3 last: $(cat "$d/h.$n.json")" \
			"{'rank': 3, 'node': $node3, 'source': False}" "$(json "$d/h.$n.json" 'h["collectives"][0]["last"]')"
		assertContains "node $n's text" "$(tr -s ' ' <"$d/h.$n.txt")" " slow 0 rank 3 (node $node3) "
	done
	# Rank 0 waited for rank 3 as long as rank 3 was late by the ranks'
	# own clocks (one host here), within 10% (or a second: within).
	local late waited
	late=$(( ($(cat "$d/t.3") - $(cat "$d/t.0")) / 1000 ))
	waited=$(json "$d/h.0.json" 'int(h["collectives"][0]["ranks"][0]["waited_s"] * 1e6)')
	assertTrue "rank 0 waited ${waited}us for rank 3, late by ${late}us" "within $waited $late 10"
	# A wait of 5 s ends without the line of a wait of over a minute.
	assertNotContains "$err" "passed 'slow'"
}

# The sums: rank-seconds are the waits added up, and the spread here is from
# the first to the last arrival of this node's ranks.
testRankSecondsAreTheSumOfWaits() {
	local d; d=$(scratch)/sums; mkdir -p "$d"
	slow_job "$d"
	assertRc 0 "the slow job"
	local f=$d/h.0.json
	assertEquals "sum of waits" "True" "$(json "$f" 'abs(sum(r["waited_s"] for r in h["collectives"][0]["ranks"]) - h["collectives"][0]["rank_seconds_waited"]) < 1e-5')"
	assertEquals "spread" "True" "$(json "$f" 'abs(max(r["arrived_s"] for r in h["collectives"][0]["ranks"]) - h["collectives"][0]["spread_here_s"]) < 1e-5')"
	if [ "$NN" = 1 ]; then
		assertEquals "one node: nothing waited across" "None" "$(json "$f" 'h["collectives"][0]["waited_across_s"]')"
	else
		assertTrue "node 0 waited across for node of rank 3" \
			"[ $(json "$f" 'int(h["collectives"][0]["waited_across_s"] * 1000)') -ge 4500 ]"
	fi
}

# Across nodes, every node's history has the spread of the nodes' posts,
# from each node's own interval since the release of 'start' (no clocks
# compared): the slow node's lateness within 10% (or a second), the first
# node another one, the nodes' waits their sum. One node: nothing across.
testSpreadAcrossNodes() {
	local d; d=$(scratch)/across; mkdir -p "$d"
	slow_job "$d"
	assertRc 0 "the slow job"
	local n nodes=$NN node3 late
	node3=$(node_of 3 4)
	[ $((4 % NN)) = 0 ] || nodes=1
	if [ "$nodes" = 1 ]; then
		assertEquals "one node: no spread across" "None" "$(json "$d/h.0.json" 'h["collectives"][0]["spread_across_s"]')"
		assertContains "one node: ACROSS -" "$(tr -s ' ' <"$d/h.0.txt")" " slow 0 rank 3 (node 0) "
		return
	fi
	# Node 3's lateness: rank 3's call after the latest other node's.
	late=$("$PY" -c 'import sys
t = [int(open("%s/t.%d" % (sys.argv[1], r)).read()) for r in range(4)]
per = 4 // int(sys.argv[2]); mine = 3 // per
print((t[3] - max(t[r] for r in range(4) if r // per != mine)) // 1000)' "$d" "$NN")
	for ((n = 0; n < nodes; n++)); do
		assertEquals "node $n: spread across ~${late}us: $(cat "$d/h.$n.json")" "True" \
			"$(json "$d/h.$n.json" "abs(h['collectives'][0]['spread_across_s'] * 1e6 - $late) <= max($late * 0.1, 1e6)")"
		assertEquals "node $n: first" "True" "$(json "$d/h.$n.json" "h['collectives'][0]['first_node'] != $node3")"
		assertEquals "node $n: node-seconds" "True" \
			"$(json "$d/h.$n.json" "abs(h['collectives'][0]['node_seconds_waited'] - $((NN - 1)) * h['collectives'][0]['spread_across_s']) <= max(0.1 * h['collectives'][0]['spread_across_s'], 1.0)")"
	done
	# The first collective of a helper has no previous release: '?'.
	assertContains "start's ACROSS: $(cat "$d/h.0.txt")" "$(tr -s ' ' <"$d/h.0.txt")" " ? "
}

# A broadcast (a --wait, a main-first) releases a node that comes after its
# source finished at that node's own arrival: not a moment the nodes share.
# Node 2 comes 5 s late to one; then every node goes on to 'data-ready',
# whose ACROSS counts from the last barrier's release ('warm'): node 2's 5 s,
# and node 2 not the first. Counted from each node's release of the
# broadcast, ACROSS was ~10 ms and node 2 could be named first. On 4 nodes
# always: over the suite's rendezvous (etcd.history), else a private Redis.
testAcrossCountsFromBarriersOnly() {
	[ "${ACCELCTL_TEST_TRANSPORT:-}" != nccl ] || { echo "NCCL carries no spread: left out" >&2; return; }
	local d rdv=(); d=$(scratch)/shared; mkdir -p "$d"
	if [ -z "${ACCELCTL_TEST_RENDEZVOUS:-}" ]; then
		command -v redis-server >/dev/null || { echo "redis-server not installed: left out" >&2; return; }
		redis_start
		rdv=("ACCELCTL_RENDEZVOUS=unix://$REDIS_SOCK")
	fi
	RUN_LIMIT=300 run "${rdv[@]}" -- launch --nnodes 4 -n 1 --tag -- bash -c '
		accelctl barrier up
		accelctl barrier warm
		[ $ACCELCTL_NODE_RANK = 2 ] && sleep 5
		date +%s%N >'"$d"'/t.$ACCELCTL_NODE_RANK
		accelctl broadcast cfg v >/dev/null
		accelctl barrier data-ready
		accelctl status --history 0 --json >'"$d"'/h.$ACCELCTL_NODE_RANK.json
		accelctl barrier done'
	[ ${#rdv[@]} = 0 ] || redis_stop
	assertRc 0 "4 nodes, node 2 late to a broadcast"
	# Node 2's lateness by the nodes' own clocks (one host here).
	local n late c='[c for c in h["collectives"] if c["name"] == "data-ready"][0]'
	late=$("$PY" -c 'import sys; t = [int(open("%s/t.%d" % (sys.argv[1], n)).read()) for n in range(4)]
print((t[2] - max(t[0], t[1], t[3])) // 1000)' "$d")
	for n in 0 1 2 3; do
		assertEquals "node $n: data-ready's spread across ~${late}us: $(cat "$d/h.$n.json")" "True" \
			"$(json "$d/h.$n.json" "abs($c['spread_across_s'] * 1e6 - $late) <= max($late * 0.1, 1e6)")"
		assertEquals "node $n: the first is not node 2" "True" "$(json "$d/h.$n.json" "$c['first_node'] in (0, 1, 3)")"
		assertEquals "node $n: node-seconds" "True" \
			"$(json "$d/h.$n.json" "abs($c['node_seconds_waited'] - 3 * $c['spread_across_s']) <= max(0.1 * $c['spread_across_s'], 1.0)")"
	done
}

# --wait: the source's CMD time on its node; the others waited about as long.
testWaitRecordsCmd() {
	local d; d=$(scratch)/wait; mkdir -p "$d"
	RUN_LIMIT=300 run -- launch -n 2 --tag -- bash -c '
		accelctl on-main --wait -- sh -c "date +%s%N >'"$d"'/s; sleep 3; date +%s%N >'"$d"'/e"
		[ $ACCELCTL_RANK = 0 ] && accelctl status --history 1 --json >'"$d"'/h.json
		accelctl barrier end'
	assertRc 0 "the job"
	assertEquals "kind" "wait" "$(json "$d/h.json" 'h["collectives"][0]["kind"]')"
	# As long as CMD ran by its own clock (a busy machine may stretch the
	# sleep), within 10% (or a second: within).
	local ran; ran=$(( ($(cat "$d/e") - $(cat "$d/s")) / 1000 ))
	assertTrue "CMD ran ${ran} us by its clock" \
		"within $(json "$d/h.json" 'int(h["collectives"][0]["cmd_s"] * 1e6)') $ran 10"
	assertEquals "the source waits for nobody" "None" "$(json "$d/h.json" 'h["collectives"][0]["ranks"][0]["waited_s"]')"
}

# For a --wait of a node-scoped source (on-local-process), who everyone
# waited for is the source, named by its global rank (it was named by its
# local rank, which is another rank's number on every node but the first).
testNodeScopedSourceNamedByGlobalRank() {
	# Local rank 1 needs two ranks a node.
	[ $((4 % NN)) != 0 ] || [ $((4 / NN)) -ge 2 ] ||
		{ echo "one rank a node: left out at $NN nodes" >&2; return; }
	local d; d=$(scratch)/local; mkdir -p "$d"
	RUN_LIMIT=300 run -- launch -n 4 --tag -- bash -c '
		accelctl on-local-process 1 --wait -- sleep 0.3
		[ $ACCELCTL_LOCAL_RANK = 0 ] && accelctl status --history 1 --json >'"$d"'/h.$ACCELCTL_NODE_RANK.json
		accelctl barrier end'
	assertRc 0 "the job"
	local n per=$((4 / NN)) nodes=$NN
	[ $((4 % NN)) = 0 ] || { per=4; nodes=1; }
	for ((n = 0; n < nodes; n++)); do
		assertEquals "node $n: the source is rank $((n * per + 1))" \
			"$((n * per + 1)) {'rank': $((n * per + 1)), 'node': $n, 'source': True}" \
			"$(json "$d/h.$n.json" '"%s %s" % (h["collectives"][0]["source"], h["collectives"][0]["last"])')"
	done
}

# The count: the last N, oldest first; 0 is all; the ring holds them all here.
testLastN() {
	local d; d=$(scratch)/n; mkdir -p "$d"
	run -- launch -n 2 --tag -- bash -c '
		for i in 0 1 2 3 4; do accelctl barrier "b$i"; done
		if [ $ACCELCTL_RANK = 0 ]; then
			accelctl status --history 2 >'"$d"'/two
			accelctl status --history 0 >'"$d"'/all
			accelctl status -H --json >'"$d"'/json
		fi
		accelctl barrier end'
	assertRc 0 "the job"
	assertEquals "two rows and the headers" 4 "$(wc -l <"$d/two")"
	assertContains "the newest two, oldest first" "$(sed -n 3p "$d/two")" " b3 "
	assertContains "$(sed -n 4p "$d/two")" " b4 "
	assertContains "$(head -1 "$d/all")" "the last 5 of 5 collectives released here"
	assertEquals "valid JSON, 5 records" 5 "$(json "$d/json" 'len(h["collectives"])')"
	assertEquals "nothing left out" 0 "$(json "$d/json" 'h["left_out"]')"
}

testBadInput() {
	local rt; rt=$(scratch)/bad-rt; mkdir -p -m 700 "$rt"
	local env="ACCELCTL_RUNTIME_DIR=$rt ACCELCTL_JOB_ID=bad ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0"
	# shellcheck disable=SC2086
	run $env -- status --history abc
	assertRc 2 "a count that is not one"
	assertContains "$err" "accelctl: status: invalid count 'abc'"
	# shellcheck disable=SC2086
	run $env -- status --history 10001
	assertRc 2 "more than are kept"
	assertContains "$err" "accelctl: status: invalid count '10001'"
	# shellcheck disable=SC2086
	run $env -- status 5
	assertRc 2 "a count without --history"
	assertContains "$err" "a count goes with --history"
	# shellcheck disable=SC2086
	run $env -- status --json
	assertRc 2 "--json without --history"
	assertContains "$err" "--json goes with --history"
	# No helper: nothing recorded, and no helper started by asking.
	# shellcheck disable=SC2086
	run $env -- status --history
	assertRc 0 "no helper"
	assertContains "$out" "no helper runs on this node: nothing recorded"
	# shellcheck disable=SC2086
	run $env -- status --history --json
	assertEquals "JSON without a helper" '{"job":"bad","helper":false,"kept":0,"left_out":0,"collectives":[]}' "$out"
	assertEquals "no helper was started" "" "$(ls "$rt")"
}

# The helper is killed (kill -9, as the OOM killer does) while rank 0 waits
# at 'k': its replacement replays 'k' from the journal, did not see its
# arrivals, and keeps no record of it (it named rank 0, timed from its
# reconnection, as last); what comes after is recorded as usual.
testReplacedHelperKeepsNoRecordOfTheReplayed() {
	# Rank 1 watches the helper that rank 0 waits at: one node.
	[ "$NN" = 1 ] || { echo "one node only: left out at $NN" >&2; return; }
	local d; d=$(scratch)/killed; mkdir -p "$d"
	RUN_LIMIT=300 run -- launch -n 2 --tag -- bash -c '
		accelctl barrier first
		if [ $ACCELCTL_RANK = 1 ]; then
			end=$((SECONDS + 60))
			until accelctl status | grep -q "^barrier  *k  "; do sleep 0.05; [ $SECONDS -lt $end ] || exit 9; done
			# Gone, not dying, when rank 1 arrives.
			p=$(cat $ACCELCTL_RUNTIME_DIR/*.pid); kill -9 $p
			while kill -0 $p 2>/dev/null; do sleep 0.02; done
		fi
		accelctl barrier --timeout 30s k || exit
		accelctl barrier after
		[ $ACCELCTL_RANK = 0 ] && accelctl status --history 0 --json >'"$d"'/h.json
		accelctl barrier end'
	assertRc 0 "the job, its helper killed"
	assertEquals "what the new helper recorded: $(cat "$d/h.json")" "['after']" \
		"$(json "$d/h.json" '[c["name"] for c in h["collectives"]]')"
}

# A wait of over a minute (a real one: the note's threshold is not a knob)
# ends with a line on the local main process's stderr: who came last, and how
# much later than this rank (or than this node's ranks, across nodes).
testLongWaitEndsWithWhoCameLast() {
	local node1; node1=$(node_of 1 2)
	RUN_LIMIT=300 run -- launch -n 2 --tag -- bash -c '
		[ $ACCELCTL_RANK = 1 ] && sleep 62
		accelctl barrier --timeout 5m long'
	assertRc 0 "the job"
	assertContains "the line: $err" "$err" "0: accelctl: barrier: passed 'long' (generation 0) after 1m0"
	assertContains "$err" "the last to arrive was rank 1 (node $node1), 1m0"
	assertNotContains "rank 1 itself did not wait" "$err" "1: accelctl: barrier: passed"
}

. shunit2
