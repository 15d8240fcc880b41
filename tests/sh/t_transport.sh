# t_transport.sh: ACCELCTL_TRANSPORT without a GPU (what every machine can test):
# invalid values, forced NCCL failing clearly, auto choosing Redis, info and status
# naming the transport, check without a GPU, and --version. Where a GPU is visible
# the forced-NCCL cases are skipped: tests/gpu/run.sh covers them there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/redis.sh"

oneTimeSetUp() {
	run -- --version
	NCCL_BUILT=0
	case $out in *"nccl: NCCL "*) NCCL_BUILT=1 ;; esac
	run ACCELCTL_TRANSPORT=nccl ACCELCTL_WORLD_SIZE=2 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 \
		ACCELCTL_LOCAL_WORLD_SIZE=2 -- info
	GPU=0
	case $out in *"transport         nccl"*) GPU=1 ;; esac
	redis_start
}
oneTimeTearDown() { redis_stop; }

testInvalidTransportExits2OnEveryRank() {
	run ACCELCTL_TRANSPORT=bogus -- launch -n 2 --tag -- bash -c 'accelctl barrier x; echo "rc=$?"'
	assertEquals "both ranks exit 2" 2 "$(printf '%s\n' "$out" | grep -c 'rc=2$')"
	assertContains "$err" "accelctl: barrier: invalid ACCELCTL_TRANSPORT 'bogus': expected auto, redis or nccl"
	run ACCELCTL_TRANSPORT=NCCL -- launch -n 2 -- accelctl broadcast v x
	assertRc 2 "broadcast, upper case"
	assertContains "$err" "accelctl: broadcast: invalid ACCELCTL_TRANSPORT 'NCCL'"
	run ACCELCTL_TRANSPORT=bogus -- info
	assertRc 2 "info"
	assertContains "$err" "accelctl: info: invalid ACCELCTL_TRANSPORT 'bogus'"
	run ACCELCTL_TRANSPORT=bogus -- info --shell
	assertRc 0 "info --shell prints no transport"
}

# The store's lifetime (ACCELCTL_REDIS_TTL, ACCELCTL_ETCD_TTL) is one setting
# with one parser: seconds or a duration with a unit, at least 1 s; anything
# else is exit 2 on every rank before it waits, naming the variable (issue 18:
# etcd's was read with atol, so "1d" was a 1-second lease and "abc" the
# default, silently).
testStoreLifetimeCheckedOnEveryRank() {
	local var url ttl
	for var in ACCELCTL_REDIS_TTL ACCELCTL_ETCD_TTL; do
		case $var in
		*REDIS*) url=redis://127.0.0.1:1 ;;
		*) "$ACCELCTL" --version | grep -q 'etcd=1' || continue; url=etcd://127.0.0.1:1 ;;
		esac
		for ttl in abc 0 -5 1.5 1x 0d 10000000000000000 11000d; do
			run ACCELCTL_RENDEZVOUS=$url "$var=$ttl" -- launch --nnodes 2 -n 1 --tag -- \
				accelctl barrier --timeout 5s x
			assertRc 2 "$var=$ttl"
			assertEquals "$var=$ttl: refused on both ranks" 2 \
				"$(printf '%s\n' "$err" | grep -c "invalid $var='$ttl'")"
		done
		# A helper started by hand (or by a prolog) serves those ranks:
		# it refuses the same, rather than take a day for it silently.
		for ttl in abc 1y; do
			run ACCELCTL_RENDEZVOUS=$url "$var=$ttl" ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 \
				ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=1 ACCELCTL_NODE_RANK=0 \
				ACCELCTL_NNODES=2 -- helper start
			assertRc 2 "helper start with $var=$ttl"
			assertContains "helper start with $var=$ttl" "$err" "invalid $var='$ttl'"
		done
	done
}

testVersionAndInfoSayWhetherNcclIsCompiledIn() {
	run -- --version
	assertRc 0 "--version"
	case $out in
	*"nccl: NCCL "[0-9]*.[0-9]*.[0-9]*", CUDA "[0-9]*"; loaded at run time"* | *"nccl: not compiled in"*) ;;
	*) fail "--version does not say whether NCCL is compiled in: $out" ;;
	esac
	run -- info
	if [ "$NCCL_BUILT" = 1 ]; then
		assertContains "$out" "nccl              NCCL "
		run -- info --json
		case $out in *'"nccl":"'[0-9]*.[0-9]*.[0-9]*'"}') ;; *) fail "info --json: $out" ;; esac
	else
		assertContains "$out" "nccl              not compiled in"
		run -- info --json
		assertContains "$out" '"nccl":null}'
	fi
}

testForcedNcclWithoutGpuFailsWith125() {
	[ "$GPU" = 1 ] && startSkipping
	run ACCELCTL_TRANSPORT=nccl -- launch -n 3 --tag -- bash -c 'accelctl barrier --timeout 10s x; echo "rc=$?"'
	assertEquals "every rank exits 125, at once" 3 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	if [ "$NCCL_BUILT" = 1 ]; then
		assertContains "$err" "accelctl: barrier: 'x': NCCL transport (ACCELCTL_TRANSPORT=nccl) unavailable: "
	else
		assertContains "$err" "accelctl: barrier: ACCELCTL_TRANSPORT=nccl, but this accelctl was built without NCCL"
	fi
	run ACCELCTL_TRANSPORT=nccl -- launch -n 2 --tag -- bash -c 'accelctl broadcast --timeout 10s v hello; echo "rc=$?"'
	assertEquals "broadcast: every rank exits 125" 2 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
	# Across nodes too, with Redis as the rendezvous.
	run ACCELCTL_TRANSPORT=nccl ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" -- launch --nnodes 2 -n 2 --tag -- \
		bash -c 'accelctl barrier --timeout 10s x; echo "rc=$?"'
	assertEquals "2 nodes: every rank exits 125" 4 "$(printf '%s\n' "$out" | grep -c 'rc=125$')"
}

testForcedNcclLogsWhy() {
	[ "$GPU" = 1 ] || [ "$NCCL_BUILT" = 0 ] && startSkipping
	local d; d=$(scratch)/logs; mkdir -p "$d"; chmod 700 "$d"
	run ACCELCTL_TRANSPORT=nccl ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_JOB_ID=forced ACCELCTL_WORLD_SIZE=1 \
		ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=1 -- barrier x
	assertRc 0 "one process needs no transport"
	run ACCELCTL_TRANSPORT=nccl -- launch -n 2 -- bash -c 'accelctl barrier --timeout 5s x; cat "$ACCELCTL_RUNTIME_DIR"/*.log >&2'
	assertContains "$err" "NCCL transport (ACCELCTL_TRANSPORT=nccl) unavailable"
}

# auto without a GPU: Redis carries the job, silently for the ranks.
testAutoWithoutGpuTakesRedis() {
	[ "$GPU" = 1 ] && startSkipping
	local d; d=$(scratch)/auto; mkdir -p "$d"
	run ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" -- launch --nnodes 2 -n 2 --tag -- bash -c '
		for g in 1 2 3; do accelctl barrier --timeout 20s a || exit; done
		accelctl barrier --status $((ACCELCTL_RANK == 3 ? 5 : 0)) --timeout 20s st; echo "rc=$?"
		v=$(accelctl broadcast --timeout 20s v "from0-$ACCELCTL_RANK"); echo "v=$v"
		[ $ACCELCTL_LOCAL_RANK = 0 ] && accelctl status >&2; true'
	assertEquals "every rank agrees on --status" 4 "$(printf '%s\n' "$out" | grep -c 'rc=5$')"
	assertEquals "broadcast across nodes" 4 "$(printf '%s\n' "$out" | grep -c 'v=from0-0$')"
	assertEquals "no error printed" "" "$(printf '%s\n' "$err" | grep ': accelctl: .*NCCL')"
	if [ "$NCCL_BUILT" = 0 ]; then
		assertContains "status names the transport" "$err" "transport: redis"
		return
	fi
	# The nodes agreed through Redis that NCCL is off for the job, and why.
	local off; off=$(redis_cli --scan --pattern 'accelctl:*:nccl:off' | head -n 1)
	assertNotEquals "an off key" "" "$off"
	assertTrue "with a TTL" "[ $(redis_cli ttl "$off") -gt 0 ]"
	case $(redis_cli get "$off") in
	*GPU* | *"cannot load"*) ;;
	*) fail "off key says: $(redis_cli get "$off")" ;;
	esac
	assertContains "status names the transport" "$err" "transport: redis (NCCL off: "
	run ACCELCTL_TRANSPORT=redis ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" -- launch --nnodes 2 -n 1 -- \
		bash -c 'accelctl barrier x && accelctl status'
	assertRc 0 "redis forced"
	assertContains "$out" "transport: redis"
}

testInfoNamesTheTransport() {
	run ACCELCTL_WORLD_SIZE=4 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		ACCELCTL_NODE_RANK=0 ACCELCTL_NNODES=2 ACCELCTL_TRANSPORT=redis -- info
	assertContains "$out" "transport         redis (ACCELCTL_TRANSPORT=redis)"
	run ACCELCTL_WORLD_SIZE=2 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 -- info
	assertContains "one node" "$out" "transport         none (ACCELCTL_TRANSPORT=auto)"
	run -- info --json
	assertContains "one process" "$out" '"transport":"none"'
	if [ "$GPU" = 0 ]; then
		run ACCELCTL_WORLD_SIZE=4 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 \
			ACCELCTL_NODE_RANK=0 ACCELCTL_NNODES=2 -- info
		assertContains "auto, no GPU" "$out" "transport         redis (ACCELCTL_TRANSPORT=auto"
		run ACCELCTL_WORLD_SIZE=2 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 \
			ACCELCTL_TRANSPORT=nccl -- info --json
		assertContains "forced, no GPU" "$out" '"transport":"unavailable"'
	fi
}

testCheckWithoutGpu() {
	[ "$GPU" = 1 ] && startSkipping
	run -- check
	assertRc 2 "check, one process, no GPU"
	assertOneLineErr
	case $err in
	"accelctl: check: no GPU visible"* | "accelctl: check: cannot load "* | \
	"accelctl: check: this accelctl was built without NCCL"*) ;;
	*) fail "unexpected message: $err" ;;
	esac
	run -- launch -n 3 --tag -- bash -c 'accelctl check --timeout 20s; echo "rc=$?"'
	assertEquals "every rank exits 2" 3 "$(printf '%s\n' "$out" | grep -c 'rc=2$')"
}

testCheckOptions() {
	local bad
	for bad in "--min-busbw x" "--min-busbw 0" "--min-busbw -3" "--min-busbw inf" "--iters 0" \
		"--iters 1x" "--max-size 512" "--max-size 2G" "--max-size 1T" "--timeout 1y"; do
		# shellcheck disable=SC2086
		run -- check $bad
		assertRc 2 "check $bad"
	done
	run -- check --max-size 1T
	assertContains "$err" "accelctl: check: invalid --max-size '1T': expected a size from 1K to 1G"
	assertContains "$err" "usage: accelctl check"
	run -- check extra
	assertRc 2 "a positional"
}

# ACCELCTL_HELPER_GPU: a malformed value is the environment's fault.
testHelperGpuMalformed() {
	[ "$NCCL_BUILT" = 1 ] || startSkipping
	run ACCELCTL_HELPER_GPU=first -- check
	assertRc 2 "check with ACCELCTL_HELPER_GPU=first"
}

load_shunit2
