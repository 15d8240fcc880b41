# t_auth.sh: the etcd rendezvous with authentication and TLS (ctest etcd.auth):
# a password from ACCELCTL_ETCD_PASSWORD_FILE, a wrong one (125 at once, not at
# the deadline), the password in no output, log or argv; etcds:// with a
# throwaway CA made here by openssl, a missing CA (exit 2 on every rank);
# auth enabled under a job without a user (125 on every rank at once).
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"
. "$(dirname "$0")/keywait.sh"

PASS=s3cret-$RANDOM$RANDOM

oneTimeSetUp() {
	"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; skip_suite; }
	command -v openssl >/dev/null || { echo "openssl not installed: skipped" >&2; skip_suite; }
	local d; d=$(scratch)/ca; mkdir -p "$d"
	# A CA, and a certificate for 127.0.0.1 signed by it.
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=accelctl-test-ca \
		-keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
		-keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1\n' >"$d/ext"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-CAcreateserial -days 1 -extfile "$d/ext" -out "$d/server.pem" 2>/dev/null
	export ETCD_CACERT=$d/ca.pem
	ETCD_SCHEME=https
	etcd_start 1 --cert-file "$d/server.pem" --key-file "$d/server.key"
	etcdctl_ user add "root:$PASS" >/dev/null
	etcdctl_ role add root >/dev/null 2>&1
	etcdctl_ user grant-role root root >/dev/null
	etcdctl_ auth enable >/dev/null
	etcdctl_ get x >/dev/null 2>&1 && { echo "etcd auth did not turn on" >&2; exit 1; }
	printf '%s\n' "$PASS" >"$(scratch)/pw"
	chmod 600 "$(scratch)/pw"
}
oneTimeTearDown() { etcd_stop; }

across() {
	local nodes=$1 ranks=$2; shift 2
	run ACCELCTL_RENDEZVOUS="${RDV:-etcds://root@$ETCD_ENDPOINTS}" \
	    ACCELCTL_ETCD_CACERT="${CA-$ETCD_CACERT}" \
	    ACCELCTL_ETCD_PASSWORD_FILE="${PW-$(scratch)/pw}" -- \
	    launch --nnodes "$nodes" -n "$ranks" --tag -- "$@"
}

testPasswordFileAndTls() {
	local d; d=$(scratch)/ok; mkdir -p "$d"
	across 2 2 bash -c 'accelctl barrier --timeout 20s a; echo "rc=$?"
		v=$(accelctl broadcast --timeout 20s v "from $ACCELCTL_RANK"); echo "got [$v]"
		ps -ef >'"$d"'/ps.$ACCELCTL_RANK; cat $ACCELCTL_RUNTIME_DIR/*.log >'"$d"'/log.$ACCELCTL_RANK 2>/dev/null
		accelctl status >'"$d"'/status.$ACCELCTL_RANK 2>&1; true'
	assertEquals "every rank passed" 4 "$(printf '%s\n' "$out" | grep -c 'rc=0$')"
	assertEquals "rank 0's value everywhere" 4 "$(printf '%s\n' "$out" | grep -c 'got \[from 0\]$')"
	assertEquals "the password in no output, log, status or argv" "" \
		"$(grep -l -- "$PASS" "$d"/* 2>/dev/null; printf '%s\n%s' "$out" "$err" | grep -- "$PASS")"
}

testWrongPasswordAtOnce() {
	local t0 t1
	printf 'wrong\n' >"$(scratch)/bad"
	t0=$(date +%s%N)
	PW=$(scratch)/bad across 2 1 bash -c 'accelctl barrier --timeout 120s w; echo "rc=$?"'
	t1=$(date +%s%N)
	assertEquals "both ranks exit 125" 2 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	assertContains "$err" "rendezvous failed: 127.0.0.1:"
	assertContains "$err" "authentication failed"
	assertTrue "at once, not at the 120 s deadline ($(((t1 - t0) / 1000000)) ms)" "[ $(((t1 - t0) / 1000000)) -lt 60000 ]"
	# The password in the URL itself is not echoed either.
	PW= RDV="etcds://root:wrong-$PASS@$ETCD_ENDPOINTS" across 2 1 bash -c 'accelctl barrier --timeout 20s w2; echo "rc=$?"'
	assertEquals "125 again" 2 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	assertNotContains "$err" "$PASS"
}

testTlsNeedsCa() {
	CA= across 2 1 bash -c 'accelctl barrier t; echo "rc=$?"'
	assertEquals "exit 2 on every rank" 2 "$(printf '%s\n' "$out" | grep -c 'rc=2$')"
	assertContains "$err" "etcds:// needs ACCELCTL_ETCD_CACERT"
	# A CA that did not sign the server's certificate: 125 at the deadline.
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other \
		-keyout "$(scratch)/o.key" -out "$(scratch)/o.pem" 2>/dev/null
	CA=$(scratch)/o.pem across 2 1 bash -c 'accelctl barrier --timeout 2s t; echo "rc=$?"'
	assertEquals "125 with another CA" 2 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	assertContains "$err" "rendezvous unreachable: 127.0.0.1:"
}

# A job without a user, and etcd's auth enabled while node 0 waits at b;
# node 1 arrives after. Node 1 failed at once (125, "user name is empty"),
# node 0 waited until its deadline (124) blaming node 1: a waiting node sent
# only lease keepalives, which etcd 3.4 does not check against auth. Its
# check is now a range read of its member key: 125 at once there too, with
# etcd's words.
testAuthEnabledUnderWaitingNode() {
	local d; d=$(scratch)/ae; mkdir -p "$d"
	etcdctl_ --user "root:$PASS" auth disable >/dev/null
	{ PW= RDV="etcds://$ETCD_ENDPOINTS" across 2 1 bash -c '
		accelctl barrier --timeout 60s warm || exit
		if [ $ACCELCTL_NODE_RANK = 1 ]; then
			until [ -e '"$d"'/go ] || [ $SECONDS -gt 90 ]; do sleep 0.05; done
		fi
		accelctl barrier --timeout 120s b; r=$?; date +%s%N >'"$d"'/left.$ACCELCTL_NODE_RANK; echo "rc=$r"'
	printf '%s\n' "$out" >"$d/out"; printf '%s\n' "$err" >"$d/err"; } &
	etcd_wait_key '/r1/arr/b:b/0/0$'
	etcdctl_ auth enable >/dev/null
	local t0; t0=$(date +%s%N)
	echo >"$d/go"
	wait
	etcdctl_ get x >/dev/null 2>&1 && etcdctl_ auth enable >/dev/null
	out=$(cat "$d/out")
	assertEquals "both ranks exit 125 ($(cat "$d/err"))" 2 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	assertEquals "both in etcd's words" 2 "$(grep -c 'user name is empty' "$d/err")"
	assertTrue "node 0 at once, not at its 120 s deadline ($((($(cat "$d/left.0") - t0) / 1000000)) ms)" \
		"[ $((($(cat "$d/left.0") - t0) / 1000000)) -lt 60000 ]"
}

load_shunit2
