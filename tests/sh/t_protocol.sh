# t_protocol.sh: bad input on the helper's socket (garbage, truncated, oversized, unknown
# and out-of-order frames, another protocol version) gets an error or a closed
# connection, and the helper goes on serving the job.
. "$(dirname "$0")/lib.sh"

oneTimeSetUp() {
	: "${PROTO_CLIENT:?}"
	RT=$(scratch)/rt
	mkdir -m 700 "$RT"
	JOB="ACCELCTL_RUNTIME_DIR=$RT ACCELCTL_JOB_ID=proto ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2"
	# shellcheck disable=SC2086
	run $JOB ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- helper start
	PID=$(cat "$RT/proto.pid")
}

oneTimeTearDown() {
	# shellcheck disable=SC2086
	run $JOB ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- helper stop
}

# The helper still serves a 2-rank barrier, and it is the same process.
assertServing() {
	# shellcheck disable=SC2086
	(run $JOB ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- barrier --timeout 10s "after-$1"; echo "$rc" >"$RT/rc0") &
	# shellcheck disable=SC2086
	run $JOB ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- barrier --timeout 10s "after-$1"
	wait
	assertEquals "barrier after $1 (rank 1)" 0 "$rc"
	assertEquals "barrier after $1 (rank 0)" 0 "$(cat "$RT/rc0")"
	assertTrue "helper survived $1" "kill -0 $PID"
	assertEquals "same helper after $1" "$PID" "$(cat "$RT/proto.pid")"
}

badClient() {
	local out
	out=$(timeout 10 "$PROTO_CLIENT" "$RT/proto.sock" "$1" proto 2)
	assertEquals "helper's answer to $1: $out" 0 $?
	LAST=$out
	assertServing "$1"
}

testGarbage() { badClient garbage; }
testTruncated() { badClient truncated; }
testOversized() { badClient oversized; }
testUnknownType() { badClient badtype; }
testHugeString() { badClient hugestring; }
testNoHello() { badClient nohello; assertContains "$LAST" "expected HELLO first"; }
testMalformedArrive() { badClient badarrive; assertContains "$LAST" "malformed ARRIVE"; }
testMalformedHistory() { badClient badhistory; assertContains "$LAST" "malformed HISTORY"; }
# A released source's second FINISH is dropped, not refused (the FINISH a
# source resends after its helper died with the first one journaled).
testLateFinish() { badClient latefinish; assertNotContains "$(cat "$RT/proto.log")" "FINISH without"; }
testNegativeStatus() { badClient negstatus; assertContains "$LAST" "malformed ARRIVE"; }
testWrongJob() { badClient wrongjob; assertContains "$LAST" "this helper serves job proto, not some-other-job"; }

# Another version: the helper says its own and closes; the log names both.
testOtherVersion() {
	badClient version
	assertContains "$LAST" "welcome version 3"
	assertContains "$(cat "$RT/proto.log")" "refused a client of protocol version 999 (this helper speaks 3)"
}

# Many bad clients at once do not starve a good one.
testManyBadClients() {
	local i
	for i in $(seq 1 30); do
		timeout 10 "$PROTO_CLIENT" "$RT/proto.sock" garbage proto 2 >/dev/null &
	done
	wait
	assertServing many
}

# A key without the kind's ':' is refused, not journaled: status (which names
# the barrier after the ':') and every later helper of the job used to crash.
testKeyWithoutColon() {
	badClient nocolon
	assertContains "$LAST" "invalid key"
	# shellcheck disable=SC2086
	run $JOB ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 -- status
	assertRc 0 "status after a bad key"
	assertTrue "helper survived status" "kill -0 $PID"
	assertNotContains "$(cat "$RT/proto.state")" " x"
}

# A journal with bad records (a key without ':', garbage, a rank out of range)
# is replayed around them, each skipped with a log line; the good ones count.
testBadJournalRecordsSkipped() {
	local rt; rt=$(scratch)/rt-j; mkdir -m 700 "$rt"
	printf '%s\n' "J 2 2 0 1" "A 0 0 1 0 0 0 0 5 x" "garbage here" "A 7 0 1 0 0 0 0 6 b:far" \
		"A 0 0 1 0 0 0 0 7 b:good" "N 0 1 0 9 nocolon" >"$rt/pj.state"
	local J="ACCELCTL_RUNTIME_DIR=$rt ACCELCTL_JOB_ID=pj ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- helper start
	assertRc 0 "a helper starts on a journal with bad records"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- status
	assertRc 0 "status"
	assertContains "$out" "good"
	assertContains "$out" "1/2 arrived"
	assertEquals "four bad records skipped" 4 "$(grep -c 'journal: skipped a bad record' "$rt/pj.log")"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- barrier --timeout 5s good
	assertRc 0 "the replayed arrival completes the barrier"
	# shellcheck disable=SC2086
	run $J ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 -- helper stop
}

load_shunit2
