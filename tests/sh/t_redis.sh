# t_redis.sh: every synchronising command across simulated nodes through a private
# redis-server: barrier generations, --status, broadcast (small and 1 MiB), --wait,
# main-first, abort, and two jobs that share one Redis without meeting.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/redis.sh"

oneTimeSetUp() { redis_start; }
oneTimeTearDown() { redis_stop; }

# /usr/bin/python3, not whatever python3 comes first on PATH (a pyenv shim
# costs a second a start).
PY=$(command -v /usr/bin/python3 python3 | head -1)

# across NODES RANKS ARGS...: accelctl launch on simulated nodes through Redis.
across() {
	local nodes=$1 ranks=$2; shift 2
	run ACCELCTL_RENDEZVOUS="${RDV:-unix://$REDIS_SOCK}" -- launch --nnodes "$nodes" -n "$ranks" --tag -- "$@"
}

checkGenerations() {
	local nodes=$1 d; d=$(scratch)/gen$nodes; mkdir -p "$d"
	across "$nodes" 2 bash -c "$(generations "$d" 20 30s)"
	assertRc 0 "$nodes nodes x 2 ranks x 20 barriers"
	assertEquals "no generation released before its last arrival" "" "$(early_releases "$d"/r*)"
}

testGenerationsTwoNodes() { checkGenerations 2; }
testGenerationsFourNodes() { checkGenerations 4; }

testStatusAcrossNodes() {
	across 4 2 bash -c 'accelctl barrier --status $([ $ACCELCTL_RANK = 5 ] && echo 4 || echo 0) st; echo "rc=$?"'
	assertEquals "every rank of every node exits 4" 8 "$(printf '%s\n' "$out" | grep -c 'rc=4$')"
	assertContains "$err" "accelctl: barrier: st: rank 5 (exit 4) failed"
}

testBroadcastAcrossNodes() {
	local d; d=$(scratch)/bc; mkdir -p "$d"
	head -c 1048576 /dev/urandom >"$d/in"
	across 2 2 sh -c 'if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast big <'"$d"'/in; else accelctl broadcast big </dev/null; fi >'"$d"'/out.$ACCELCTL_RANK; accelctl broadcast small "s$ACCELCTL_RANK"'
	assertRc 0 "broadcast"
	local r
	for r in 0 1 2 3; do
		assertTrue "rank $r got 1 MiB intact" "cmp -s '$d/in' '$d/out.$r'"
	done
	assertEquals "small value everywhere" 4 "$(printf '%s\n' "$out" | grep -c ': s0$')"
}

testWaitAndMainFirstAcrossNodes() {
	across 2 2 bash -c 'accelctl on-process 3 --wait -- sh -c "kill -9 \$\$"; echo "rc=$?"'
	assertEquals "137 from a rank of node 1 to all" 4 "$(printf '%s\n' "$out" | grep -c 'rc=137$')"
	local d; d=$(scratch)/mf; mkdir -p "$d"
	across 2 2 accelctl main-first -- sh -c 'date +%s%N >'"$d"'/start.$ACCELCTL_RANK; sleep 0.2; date +%s%N >'"$d"'/end.$ACCELCTL_RANK'
	assertRc 0 "main-first"
	local r
	for r in 1 2 3; do
		assertTrue "rank $r after main" "[ $(cat "$d/start.$r") -ge $(cat "$d/end.0") ]"
	done
}

testSourceDiesAcrossNodes() {
	local d; d=$(scratch)/die; mkdir -p "$d"
	across 2 2 bash -c "$(source_dies "$d" 20s)"
	assertEquals "waiters on both nodes exit 3" 3 "$(printf '%s\n' "$out" | grep -c 'rc=3$')"
	# Node 1 is told the source died, not that it has yet to send.
	assertContains "node 0's waiter: $err" "$err" "1: accelctl: on-main: rank 0: aborted: rank 0 (node 0) died"
	assertContains "node 1's waiters: $err" "$err" "2: accelctl: on-main: rank 0: aborted: rank 0 (another node) died"
	assertNotContains "$err" "has not sent its result"
}

testAbortAcrossNodes() {
	across 2 2 bash -c '
		if [ $ACCELCTL_RANK = 3 ]; then sleep 0.5; accelctl abort no space; exit 0; fi
		accelctl barrier --timeout 20s never; echo "rc=$?"
		accelctl barrier --timeout 20s later; echo "later rc=$?"'
	assertEquals "waiters on both nodes exit 3" 3 "$(printf '%s\n' "$out" | grep -c ': rc=3$')"
	assertEquals "and later waits too" 3 "$(printf '%s\n' "$out" | grep -c 'later rc=3$')"
	assertContains "$err" "aborted: rank 3: no space"
}

testTimeoutNamesMissingNode() {
	# Node 1's ranks meet their helper (which tells Redis who they are), then
	# stay, without arriving, until node 0's ranks have timed out: a rank
	# that exits is lost for the waits that need it (exit 4, not a timeout).
	local d; d=$(scratch)/missing; mkdir -p "$d"
	across 2 2 bash -c '
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			accelctl on-local-main --wait -- true
			until [ $(ls '"$d"'/done.* 2>/dev/null | wc -l) -ge 2 ] || [ $SECONDS -gt 120 ]; do sleep 0.05; done
			exit 0
		fi
		sleep 0.5; accelctl barrier --timeout 2s alone; echo "rc=$?"; touch '"$d"'/done.$ACCELCTL_RANK'
	assertEquals "node 0 times out" 2 "$(printf '%s\n' "$out" | grep -c 'rc=124$')"
	assertContains "$err" "all 2 ranks of node 0 arrived; waiting for node 1 ($(hostname): ranks 2, 3)"
}

# status on a node whose ranks all arrived names the missing node, its host and ranks.
# Node 1 arrives only once rank 0 has read that status; rank 0 asks until the
# text is there (the look at the missing nodes comes with the first status,
# and under ASan on a busy machine rank 1 may arrive a second late), 60 s at
# most by bash's clock (a guard; the deadlines are 120 s).
testStatusAcrossNodesNamesMissing() {
	local d; d=$(scratch)/st; mkdir -p "$d"
	across 2 2 bash -c '
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			accelctl on-local-main --wait -- true
			end=$((SECONDS + 75)); until [ -e '"$d"'/read ] || [ $SECONDS -ge $end ]; do sleep 0.1; done
			accelctl barrier --timeout 120s s; exit
		fi
		if [ $ACCELCTL_RANK = 0 ]; then
			accelctl barrier --timeout 120s s & end=$((SECONDS + 60))
			while accelctl status >'"$d"'/status; ! grep -q "waiting for node 1 (.*: ranks 2, 3)" '"$d"'/status &&
			    [ $SECONDS -lt $end ]; do sleep 0.1; done
			: >'"$d"'/read; wait
		else
			accelctl barrier --timeout 120s s
		fi'
	assertRc 0 "barrier"
	assertContains "$(cat "$d/status")" "barrier    s"
	assertContains "status: $(cat "$d/status")" "$(cat "$d/status")" "all 2 ranks of node 0 arrived; waiting for node 1 ($(hostname): ranks 2, 3)"
}

# Two jobs, one Redis, the same names: they never meet.
testJobsShareRedisNeverMeet() {
	local base; base=$(scratch)/two; mkdir -p "$base/a" "$base/b"; chmod 700 "$base/a" "$base/b"
	local common="ACCELCTL_RENDEZVOUS=unix://$REDIS_SOCK ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=1 ACCELCTL_LOCAL_RANK=0 ACCELCTL_NNODES=2"
	# shellcheck disable=SC2086
	(run $common ACCELCTL_JOB_ID=A ACCELCTL_RUNTIME_DIR="$base/a" ACCELCTL_RANK=0 ACCELCTL_NODE_RANK=0 -- barrier --timeout 2s x
	 echo "$rc" >"$base/a.rc") &
	# shellcheck disable=SC2086
	run $common ACCELCTL_JOB_ID=B ACCELCTL_RUNTIME_DIR="$base/b" ACCELCTL_RANK=0 ACCELCTL_NODE_RANK=0 -- barrier --timeout 2s x
	wait
	assertEquals "job B's node 0 alone" 124 "$rc"
	assertEquals "job A's node 0 alone" 124 "$(cat "$base/a.rc")"
	assertNotEquals "keys of both jobs, apart" "" "$(redis_cli --scan --pattern 'accelctl:{A}:*')"
	assertNotEquals "" "$(redis_cli --scan --pattern 'accelctl:{B}:*')"
	# shellcheck disable=SC2086
	run $common ACCELCTL_JOB_ID=A ACCELCTL_RUNTIME_DIR="$base/a" ACCELCTL_RANK=0 ACCELCTL_NODE_RANK=0 -- helper stop
	# shellcheck disable=SC2086
	run $common ACCELCTL_JOB_ID=B ACCELCTL_RUNTIME_DIR="$base/b" ACCELCTL_RANK=0 ACCELCTL_NODE_RANK=0 -- helper stop
}

# A run counter that is not a run number (another program's key, a hand-made
# SET): every rank fails at once, naming the key, where a registration that
# compared numbers sent "5.5" and 5 back and forth for ever (review of issue 20).
# At once: under 60 s of the 120 s deadline (two accelctl calls on a busy machine).
testRunCounterNotANumber() {
	local base v t0; base=$(scratch)/ctr
	local common="ACCELCTL_RENDEZVOUS=unix://$REDIS_SOCK ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=1 ACCELCTL_LOCAL_RANK=0 ACCELCTL_NNODES=2"
	for v in 5.5 1e300 abc; do
		mkdir -p "$base$v/0" "$base$v/1"; chmod 700 "$base$v/0" "$base$v/1"
		redis_cli set "accelctl:{C$v}:run" "$v" >/dev/null
		t0=$SECONDS
		# shellcheck disable=SC2086
		(RUN_LIMIT=300 run $common ACCELCTL_JOB_ID=C$v ACCELCTL_RUNTIME_DIR="$base$v/1" ACCELCTL_RANK=1 ACCELCTL_NODE_RANK=1 -- barrier --timeout 120s x
		 echo "$rc" >"$base$v/1.rc") &
		# shellcheck disable=SC2086
		RUN_LIMIT=300 run $common ACCELCTL_JOB_ID=C$v ACCELCTL_RUNTIME_DIR="$base$v/0" ACCELCTL_RANK=0 ACCELCTL_NODE_RANK=0 -- barrier --timeout 120s x
		wait
		assertEquals "counter '$v': node 0 fails" 125 "$rc"
		assertContains "counter '$v': $err" "$err" "accelctl:{C$v}:run holds '$v', not a run number"
		assertTrue "counter '$v': at once, not at the deadline ($((SECONDS - t0)) s)" "[ $((SECONDS - t0)) -lt 60 ]"
		# shellcheck disable=SC2086
		run $common ACCELCTL_JOB_ID=C$v ACCELCTL_RUNTIME_DIR="$base$v/0" ACCELCTL_RANK=0 ACCELCTL_NODE_RANK=0 -- helper stop
		# shellcheck disable=SC2086
		run $common ACCELCTL_JOB_ID=C$v ACCELCTL_RUNTIME_DIR="$base$v/1" ACCELCTL_RANK=1 ACCELCTL_NODE_RANK=1 -- helper stop
		redis_cli del "accelctl:{C$v}:run" >/dev/null	# ours, without a TTL
	done
}

testKeysHaveTtlAndOneHashTag() {
	across 2 1 accelctl barrier ttl
	assertRc 0 "barrier"
	local k bad=""
	for k in $(redis_cli --scan --pattern 'accelctl:*'); do
		case $k in accelctl:\{*\}:*) ;; *) bad="$bad $k(no hash tag)" ;; esac
		[ "$(redis_cli ttl "$k")" -gt 0 ] || bad="$bad $k(no TTL)"
	done
	assertEquals "every key has the job's hash tag and a TTL" "" "$bad"
}

testTcpAndUnixSocket() {
	RDV=redis://127.0.0.1:$REDIS_PORT across 2 2 accelctl barrier tcp
	assertRc 0 "over TCP"
	RDV=unix://$REDIS_SOCK across 2 2 accelctl barrier unix
	assertRc 0 "over a Unix socket"
}

testBadUrl() {
	run ACCELCTL_RENDEZVOUS=http://example -- launch --nnodes 2 -n 1 -- accelctl barrier x
	assertRc 2 "bad URL"
	assertErrMatches "accelctl: barrier: invalid rendezvous: expected redis://[user:password@]host:port[/db], redis-sentinel://[[user:]password@]host[:port][,host[:port]...][/db]#master, redis-cluster://[[user:]password@]host[:port][,host[:port]...] or unix:///path"
	# Sentinel: the master's name is needed; the password never printed.
	run ACCELCTL_RENDEZVOUS=redis-sentinel://u:pass-word-8@h1,h2 -- launch --nnodes 2 -n 1 -- accelctl barrier x
	assertRc 2 "a Sentinel URL without the master's name"
	assertErrMatches "#master (the master's name after '#', at most 127 bytes, printable, no spaces)"
	assertFalse "the password is not printed" "echo \"\$err\" | grep -q pass-word-8"
	run ACCELCTL_RENDEZVOUS=redis://host:99999 -- launch --nnodes 2 -n 1 -- accelctl barrier x
	assertRc 2 "bad port"
	assertErrMatches "invalid rendezvous: bad port"
	# A scheme of no transport here: named, and what follows never printed.
	run ACCELCTL_RENDEZVOUS=nosuch://u:pass-word-9@h:1 -- launch --nnodes 2 -n 1 -- accelctl barrier x
	assertRc 2 "unknown scheme"
	assertErrMatches "(this build has no transport for 'nosuch://')"
	assertNotContains "$err" "pass-word-9"
	# ACCELCTL_REDIS_TTL: seconds, at least 1; anything else is exit 2 on every rank.
	local ttl
	for ttl in abc 0 -5 1.5 10000000000000000; do
		run ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" ACCELCTL_REDIS_TTL=$ttl -- \
			launch --nnodes 2 -n 1 -- accelctl barrier x
		assertRc 2 "ACCELCTL_REDIS_TTL=$ttl"
		assertErrMatches "invalid ACCELCTL_REDIS_TTL='$ttl'"
	done
}

# Several nodes of a job on one host (two torchrun launchers, several slurmd) may
# share a runtime directory: each node still gets a helper of its own.
testNodesShareARuntimeDir() {
	local d; d=$(scratch)/shared; mkdir -p -m 700 "$d"
	across 2 2 env ACCELCTL_RUNTIME_DIR="$d" bash -c 'accelctl barrier --timeout 20s sh && accelctl broadcast --timeout 20s v "r$ACCELCTL_RANK"'
	assertRc 0 "two nodes in one runtime directory"
	assertEquals "rank 0's value everywhere" 4 "$(printf '%s\n' "$out" | grep -c ': r0$')"
	assertEquals "one socket per node" 2 "$(find "$d" -name '*.node[01].sock' | wc -l)"
}

# CMD longer than the progress interval on 2 nodes: on-main --wait and main-first
# (the soak suites do 30 s at the default interval).
testWaitLongerThanProgressAcrossNodes() {
	run ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" ACCELCTL_PROGRESS_INTERVAL=1s -- launch --nnodes 2 -n 2 --tag -- bash -c '
		accelctl on-main --wait -- sh -c "sleep 3; exit 5"; echo "rc=$?"
		accelctl main-first -- sh -c "[ \$ACCELCTL_RANK = 0 ] && sleep 3; echo ran"; echo "rc=$?"'
	assertEquals "on-main --wait: every rank gets 5: $err" 4 "$(printf '%s\n' "$out" | grep -c 'rc=5$')"
	assertEquals "main-first: every rank ran CMD" 4 "$(printf '%s\n' "$out" | grep -c ': ran$')"
	assertEquals "main-first: every rank exits 0" 4 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
}

# perArrival NODES: "BYTES CALLS BITFIELDS" into Redis per node-arrival
# (INFO's total_net_input_bytes and commandstats, the scripts' calls included,
# INFO and CONFIG left out; BITFIELD is an arrival's own command) over 21
# barriers of NODES nodes x 1 rank, after a warm-up barrier (connects,
# registration, script loading are not per arrival).
perArrival() {
	local n=$1 d; d=$(scratch)/pa$n; mkdir -p "$d"
	cat >"$d/snap" <<EOS
redis-cli -s '$REDIS_SOCK' info all | tr -d '\r' | awk -F'[:=,]' '
	/^total_net_input_bytes:/ { b = \$2 }
	/^cmdstat_/ && \$1 !~ /^cmdstat_(info|config)/ { c += \$3 }
	/^cmdstat_bitfield:/ { f = \$3 }
	END { print b, c, f + 0 }'
EOS
	# Over NCCL a barrier that waits 200 ms is posted to the store as well:
	# a minute here, so that a loaded machine's late ranks are not counted.
	run ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" ACCELCTL_TEST_NCCL_SLOW_MS=60000 -- \
		launch --nnodes "$n" -n 1 --tag -- bash -c '
		accelctl barrier --timeout 30s w1 || exit
		[ $ACCELCTL_RANK = 0 ] && sh '"$d"'/snap >'"$d"'/before
		accelctl barrier --timeout 30s w2 || exit
		for i in $(seq 1 20); do accelctl barrier --timeout 30s l || exit; done
		[ $ACCELCTL_RANK = 0 ] && sh '"$d"'/snap >'"$d"'/after; exit 0'
	assertRc 0 "$n nodes x 21 barriers"
	awk -v n="$n" 'NR == 1 { b = $1; c = $2; f = $3 } NR == 2 { printf "%d %.1f %.1f\n", ($1 - b) / (21 * n), ($2 - c) / (21 * n), ($3 - f) / (21 * n) }' \
		"$d/before" "$d/after"
}

# status --history on every node names the slow node's last rank: Redis'
# arrive script, run by the arrival that completes the barrier, writes its
# node and rank into the result (issue 22). Without it every node but the
# slow one said "?" (and the slow one itself, by its own clock, "rank 5").
testHistoryNamesTheSlowNode() {
	local d; d=$(scratch)/hist; mkdir -p "$d"
	RUN_LIMIT=300 across 4 2 bash -c '
		accelctl barrier start
		[ $ACCELCTL_RANK = 5 ] && sleep 5
		date +%s%N >'"$d"'/t.$ACCELCTL_RANK
		accelctl barrier slow
		if [ $ACCELCTL_LOCAL_RANK = 0 ]; then
			accelctl status --history 1 >'"$d"'/h.$ACCELCTL_NODE_RANK
			accelctl status --history 1 --json >'"$d"'/j.$ACCELCTL_NODE_RANK
		fi
		accelctl barrier end'
	assertRc 0 "4 nodes, one slow"
	# NCCL's all-reduce (tests/fake, tests/gpu) has no order: it says "?".
	local n last="rank 5 (node 2)" late
	[ "${ACCELCTL_TEST_TRANSPORT:-}" = nccl ] && last="?"
	# Node 2's lateness by the ranks' own clocks (one host here): its last
	# rank's call after the latest of the other nodes' ranks.
	late=$("$PY" -c 'import sys; t = {r: int(open("%s/t.%d" % (sys.argv[1], r)).read()) for r in range(8)}
print((t[5] - max(v for r, v in t.items() if r not in (4, 5))) // 1000)' "$d")
	for n in 0 1 2 3; do
		assertContains "node $n: $(cat "$d/h.$n")" "$(tr -s ' ' <"$d/h.$n")" " slow 0 $last "
		# Every node, the slow one too, has the spread across nodes (from
		# every node's own interval, no clocks compared): node 2's
		# lateness within 10% or a second (the ranks' clocks are read
		# before their accelctl starts, which a busy machine delays);
		# the first to post is another node, and the nodes' waits add up
		# to three times the spread (10% or a second).
		if [ "${ACCELCTL_TEST_TRANSPORT:-}" = nccl ]; then
			assertEquals "node $n: no spread over NCCL" "(None, None)" \
				"$(jq_ "$d/j.$n" 'c["spread_across_s"], c["first_node"]')"
			continue
		fi
		assertEquals "node $n: spread ${late}us: $(cat "$d/j.$n")" "True" \
			"$(jq_ "$d/j.$n" "abs(c['spread_across_s'] * 1e6 - $late) <= max($late * 0.1, 1e6)")"
		assertEquals "node $n: the first is not node 2" "True" "$(jq_ "$d/j.$n" 'c["first_node"] in (0, 1, 3)')"
		assertEquals "node $n: node-seconds" "True" \
			"$(jq_ "$d/j.$n" 'abs(c["node_seconds_waited"] - 3 * c["spread_across_s"]) <= max(0.1 * c["spread_across_s"], 1.0)')"
	done
	# The slow node waited for nobody, and says so (against the others' 5 s:
	# under a second, where 0.2 s judged the machine's latency); node 0 waited.
	assertEquals "node 2 waited" "True" "$(jq_ "$d/j.2" 'c["waited_across_s"] < 1.0')"
	[ -z "${ACCELCTL_TEST_SHOW:-}" ] || cat "$d/h.0" "$d/h.2" "$d/j.0" >&2
}

# jq_ FILE EXPR: EXPR of the history's one collective (as c), printed.
jq_() {
	"$PY" -c 'import json, sys; c = json.load(open(sys.argv[1]))["collectives"][0]; print(eval(sys.argv[2]))' "$1" "$2"
}

# The work of one node's arrival does not grow with the nodes: no script text,
# no list of every node's inbox, no reading of every arrival (issue 14).
#
# Over NCCL (fake.redis) no arrival goes through the store at all: what Redis
# sees then is the helpers' timers (keepalive, the stream's read), so bytes per
# arrival measure how long the barriers took on this machine, not the protocol;
# a busy machine under ASan once read 37 B at 2 nodes and 97 B at 8 (CI, stop
# 38). There the test checks that no arrival reached the store.
testArrivalCostFlatAsNodesGrow() {
	local two eight b2 c2 f2 b8 c8 f8
	two=$(perArrival 2) eight=$(perArrival 8)
	echo "per node-arrival (bytes, commands, bitfields): 2 nodes: $two; 8 nodes: $eight" >&2
	read -r b2 c2 f2 <<<"$two"
	read -r b8 c8 f8 <<<"$eight"
	if [ "${ACCELCTL_TEST_TRANSPORT:-}" = nccl ]; then
		assertEquals "over NCCL no arrival reaches the store (BITFIELDs per arrival, 2 nodes)" "0.0" "${f2:-x}"
		assertEquals "over NCCL no arrival reaches the store (BITFIELDs per arrival, 8 nodes)" "0.0" "${f8:-x}"
		return
	fi
	assertTrue "bytes per arrival at 8 nodes ($b8) under 600" "[ ${b8:-9999} -lt 600 ]"
	assertTrue "bytes per arrival do not grow: 2 nodes $b2, 8 nodes $b8" "[ ${b8:-9999} -le $((${b2:-0} * 13 / 10 + 40)) ]"
	assertTrue "commands per arrival at 8 nodes ($c8) at most 7" "awk 'BEGIN { exit !(${c8:-99} <= 7) }'"
	assertTrue "commands per arrival do not grow: 2 nodes $c2, 8 nodes $c8" "awk 'BEGIN { exit !(${c8:-99} <= ${c2:-0} + 0.5) }'"
}

load_shunit2
