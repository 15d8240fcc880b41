# t_values.sh: results larger than one etcd request (ctest etcd.values): broadcasts of 1 MiB and
# more across nodes are written as parts and joined again (16 MiB, as over
# Redis); an etcd whose request limit is below a part fails every receiving
# rank at once (125, naming the limit), never a reconnect loop or a 124.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; skip_suite; }
	etcd_start 1
}
oneTimeTearDown() { etcd_stop; }

across() {
	local nodes=$1 ranks=$2; shift 2
	run ACCELCTL_RENDEZVOUS="$ETCD_URL" -- launch --nnodes "$nodes" -n "$ranks" --tag -- "$@"
}

# big SIZE NODES RANKS: rank 0 broadcasts SIZE random bytes; every rank's copy
# must be intact ("rc=0" per rank in $out, copies in $d).
big() {
	d=$(scratch)/big$1; mkdir -p "$d"
	head -c "$1" /dev/urandom >"$d/in"
	across "$2" "$3" bash -c '
		if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast --timeout 60s big <'"$d"'/in
		else accelctl broadcast --timeout 60s big </dev/null; fi >'"$d"'/out.$ACCELCTL_RANK
		echo "rc=$?"'
}

# Just over etcd's default request limit once in base64 (the old single put).
testOneAndAHalfMiB() {
	big $((1536 * 1024)) 2 2
	assertEquals "every rank got it ($err)" 4 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	local r
	for r in 0 1 2 3; do assertTrue "rank $r's copy is intact" "cmp -s $d/in $d/out.$r"; done
}

testOneMiB() {
	big 1048576 2 1
	assertEquals "both ranks got it ($err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertTrue "node 1's copy is intact" "cmp -s $d/in $d/out.1"
}

# The documented maximum, on 3 nodes.
testSixteenMiB() {
	local t0 t1; t0=$(date +%s%N)
	big $((16 * 1048576)) 3 1
	t1=$(date +%s%N)
	assertEquals "every rank got it ($err)" 3 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	local r
	for r in 1 2; do assertTrue "rank $r's copy is intact" "cmp -s $d/in $d/out.$r"; done
	echo "16 MiB over etcd to 3 nodes: $(((t1 - t0) / 1000000)) ms" >&2
}

# The same name again in a loop, values around the part size: each
# generation keeps its own value.
testPartsPerGeneration() {
	local d; d=$(scratch)/loop; mkdir -p "$d"
	head -c $((512 * 1024)) /dev/urandom >"$d/a"
	head -c $((512 * 1024 + 1)) /dev/urandom >"$d/b"
	head -c $((1300 * 1024)) /dev/urandom >"$d/c"
	across 2 1 bash -c '
		for f in a b c; do
			if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast --timeout 30s v <'"$d"'/$f
			else accelctl broadcast --timeout 30s v </dev/null; fi >'"$d"'/$f.$ACCELCTL_RANK || exit
		done; echo "rc=$?"'
	assertEquals "both ranks ($err)" 2 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	local f
	for f in a b c; do assertTrue "generation $f on node 1" "cmp -s $d/$f $d/$f.1"; done
}

# An etcd that refuses requests over 200000 bytes: not even a part fits.
# The receiving node fails at once (125) naming etcd's limit; the source's
# helper does not loop reconnecting, and a barrier after it still works.
testRequestLimitBelowAPart() {
	etcd_stop
	etcd_start 1 --max-request-bytes 200000
	local t0 t1; t0=$(date +%s%N)
	d=$(scratch)/lim; mkdir -p "$d"
	head -c 1048576 /dev/urandom >"$d/in"
	across 2 1 bash -c '
		if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast --timeout 120s big <'"$d"'/in >/dev/null
		else accelctl broadcast --timeout 120s big </dev/null >/dev/null; fi
		echo "rc=$?"
		accelctl barrier --timeout 30s after; echo "barrier=$?"
		accelctl status >'"$d"'/status.$ACCELCTL_NODE_RANK
		cat $ACCELCTL_RUNTIME_DIR/*.log >'"$d"'/log.$ACCELCTL_NODE_RANK'
	t1=$(date +%s%N)
	assertContains "$out" "1: rc=125"
	assertContains "$err" "request limit (its --max-request-bytes"
	assertContains "$err" "request is too large"
	# At once: under half the 120 s deadline (the whole launch is in the time).
	assertTrue "at once, not at the deadline ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -lt 60000 ]"
	assertEquals "the barrier after it passed on both nodes" 2 "$(printf '%s\n' "$out" | grep -c 'barrier=0$')"
	assertEquals "the source's helper never reconnected" 0 "$(grep -c 'rendezvous .*: up' "$d/log.0")"
	# The failed broadcast waits for nothing: status does not list it.
	assertContains "node 1's status" "$(cat "$d/status.1")" "nothing in flight"
	etcd_stop
	etcd_start 1
}

load_shunit2
