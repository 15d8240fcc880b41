# t_private_tmp.sh: ranks of one node that share no /tmp (a container runtime's private /tmp per task) meet one helper, by its abstract socket.
#
# Under enroot/pyxis, Apptainer --contain or bubblewrap each task may get a
# /tmp of its own: every rank then found no helper in its runtime directory
# (/tmp/accelctl-UID), started its own, and waited to the deadline for the
# others, "never connected". The helper now also listens on an abstract Unix
# socket named from the user, the directory's name and the job (rundir.c),
# which every process of the network namespace reaches. The sandboxes here
# are real: bubblewrap (Debian's bwrap) and unshare(1) with a tmpfs on /tmp,
# each skipped, with its reason, where it cannot run.
. "$(dirname "$0")/lib.sh"

oneTimeSetUp() {
	# Nothing here can run without a private /tmp: the suite says
	# skipped (ctest), not passed, where neither sandbox can be made.
	if ! can_bwrap && ! can_unshare; then
		echo "neither bubblewrap nor unshare -m (root) can give a process its own /tmp here: skipped" >&2
		skip_suite
	fi
	# Outside /tmp: the ranks' /tmp is not this one. Readable by the
	# sandboxed ranks (same user).
	OUT=$(mktemp -d /var/tmp/accelctl-ptmp.XXXXXX) || skip_suite
	JOBS=""
}

oneTimeTearDown() {
	local j
	# shellcheck disable=SC2046
	for j in $JOBS; do kill $(helper_pids "$j") 2>/dev/null; done
	[ -n "${OUT:-}" ] && rm -rf "$OUT"
	return 0
}

# can_bwrap: bubblewrap can give a process its own /tmp here.
can_bwrap() {
	command -v bwrap >/dev/null &&
		bwrap --dev-bind / / --tmpfs /tmp true 2>/dev/null
}

# can_unshare: unshare(1) can mount a tmpfs on /tmp of a new mount namespace.
can_unshare() {
	command -v unshare >/dev/null && [ "$(id -u)" = 0 ] &&
		unshare -m --propagation private sh -c 'mount -t tmpfs t /tmp' 2>/dev/null
}

# rank_env JOB R N: torchrun's variables for rank R of N on one node, job JOB.
rank_env() {
	echo "PATH=$ACCELCTL_BIN_DIR:/usr/bin:/bin HOME=${HOME:-/} RANK=$2 LOCAL_RANK=$2" \
		"WORLD_SIZE=$3 LOCAL_WORLD_SIZE=$3 GROUP_RANK=0 GROUP_WORLD_SIZE=1" \
		"TORCHELASTIC_RUN_ID=$1 MASTER_ADDR=localhost MASTER_PORT=29500" \
		"ACCELCTL_HELPER_IDLE=60s"
}

# ranks_in SANDBOX JOB N: N ranks of JOB, each in its own SANDBOX ("bwrap"
# or "unshare": a private /tmp), each passing two barriers; their exit codes
# and output under $OUT/JOB.R.
ranks_in() {
	local how=$1 job=$2 n=$3 r body pids=""
	JOBS="$JOBS $job"
	body='accelctl barrier --timeout 30s first && accelctl barrier --timeout 30s second; echo $? >"$OUT_RC"'
	for r in $(seq 0 $((n - 1))); do
		# shellcheck disable=SC2046 # rank_env is words of VAR=VALUE
		case $how in
		bwrap)
			env -i $(rank_env "$job" "$r" "$n") OUT_RC="$OUT/$job.$r.rc" \
				timeout 60 bwrap --dev-bind / / --tmpfs /tmp sh -c "$body" \
				>"$OUT/$job.$r.out" 2>&1 &
			;;
		unshare)
			env -i $(rank_env "$job" "$r" "$n") OUT_RC="$OUT/$job.$r.rc" \
				timeout 60 unshare -m --propagation private sh -c \
				"mount -t tmpfs t /tmp && $body" >"$OUT/$job.$r.out" 2>&1 &
			;;
		esac
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
}

# helper_pids JOB: the helpers that serve JOB (by their environment: the
# title a helper shows is cut to the room its first client's argv left).
helper_pids() {
	local p
	for p in $(pgrep -x accelctl-helper); do
		{ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "TORCHELASTIC_RUN_ID=$1" &&
			echo "$p"
	done
}

# helpers_of JOB: how many helper processes serve JOB.
helpers_of() { helper_pids "$1" | wc -l; }

# check_ranks JOB N: every rank passed both barriers, and one helper serves.
check_ranks() {
	local r rcs=""
	for r in $(seq 0 $(($2 - 1))); do
		rcs="$rcs $(cat "$OUT/$1.$r.rc" 2>/dev/null || echo none)"
	done
	assertEquals "every rank passed both barriers (their output: $(cat "$OUT/$1".*.out))" \
		"$(printf ' 0%.0s' $(seq 1 "$2"))" "$rcs"
	assertEquals "one helper serves the node" 1 "$(helpers_of "$1")"
}

testRanksWithAPrivateTmpEachMeetUnderBubblewrap() {
	can_bwrap || startSkipping
	local job=bw$$x$RANDOM
	ranks_in bwrap "$job" 4
	check_ranks "$job" 4
	# A rank outside every sandbox (the real /tmp) meets the same helper:
	# its status names the four ranks' barriers as done.
	# shellcheck disable=SC2046
	out=$(env -i $(rank_env "$job" 0 4) timeout 30 "$ACCELCTL" status 2>&1)
	assertContains "status reaches the helper by its abstract name" "$out" "nothing in flight"
	assertEquals "and starts no helper of its own" 1 "$(helpers_of "$job")"
	# So does one in a fresh sandbox, whose /tmp has no runtime directory
	# yet (an epilog's container): status, then helper stop.
	# shellcheck disable=SC2046
	out=$(env -i $(rank_env "$job" 0 4) timeout 30 bwrap --dev-bind / / --tmpfs /tmp \
		accelctl status 2>&1)
	assertContains "status from a fresh /tmp" "$out" "nothing in flight"
	# shellcheck disable=SC2046
	env -i $(rank_env "$job" 0 4) timeout 30 bwrap --dev-bind / / --tmpfs /tmp \
		accelctl helper stop >/dev/null 2>&1
	eventually 20 test "$(helpers_of "$job")" = 0
	assertEquals "helper stop from a fresh /tmp stops it" 0 "$(helpers_of "$job")"
}

# can_bwrap_net: bubblewrap can also give a process its own network namespace.
can_bwrap_net() {
	can_bwrap && bwrap --dev-bind / / --tmpfs /tmp --unshare-net true 2>/dev/null
}

# Ranks that share neither a /tmp nor a network namespace (a container per
# rank without the host's network) cannot meet one helper: each starts its
# own. They used to wait for each other, "never connected", to the
# deadline. Each helper now finds the rank it lacks in /proc (same user, its
# environment this job's node and that local rank, another network
# namespace, our runtime directory not in its view) once a wait has lasted
# 5 s, and the waits fail with exit 125, naming that rank's process and what
# to set; a second wait fails at once.
testRanksInSeparateNetworkNamespacesFailFast() {
	can_bwrap_net || startSkipping
	local job=bn$$x$RANDOM r
	JOBS="$JOBS $job"
	for r in 0 1; do
		# shellcheck disable=SC2046 # rank_env is words of VAR=VALUE
		env -i $(rank_env "$job" "$r" 2) timeout 120 bwrap --dev-bind / / --tmpfs /tmp \
			--unshare-net sh -c 'echo $$ >"$0.pid"; accelctl barrier --timeout 90s first; echo $? >"$0.rc1"
				accelctl barrier --timeout 90s second; echo $? >"$0.rc2"' \
			"$OUT/$job.$r" >"$OUT/$job.$r.out" 2>&1 &
	done
	wait
	for r in 0 1; do
		assertEquals "rank $r's first wait failed before its deadline: $(cat "$OUT/$job.$r.out")" \
			125 "$(cat "$OUT/$job.$r.rc1")"
		assertEquals "and its second one too" 125 "$(cat "$OUT/$job.$r.rc2")"
		assertContains "and what to set" "$(cat "$OUT/$job.$r.out")" "ACCELCTL_RUNTIME_DIR"
	done
	# Each names the other rank and a process of it (its shell, or its
	# accelctl, whichever /proc listed first).
	assertContains "rank 0 names local rank 1" "$(cat "$OUT/$job.0.out")" \
		"local rank 1 of this node runs on $(hostname) as pid"
	assertContains "rank 1 names local rank 0" "$(cat "$OUT/$job.1.out")" \
		"local rank 0 of this node runs on $(hostname) as pid"
}

# Not a split: a job id used again, its earlier run's helper idle in another
# network namespace (its ranks gone), while this run's ranks share one
# sandbox and the second comes 8 s late. Nobody fails (the first review of
# the split check: a helper alone was taken for a split, and rank 0 exited
# 125 while rank 1 passed).
testIdleEarlierHelperElsewhereIsNoSplit() {
	can_bwrap_net || startSkipping
	local job=bi$$x$RANDOM
	JOBS="$JOBS $job"
	# shellcheck disable=SC2046
	env -i $(rank_env "$job" 0 2) timeout 60 bwrap --dev-bind / / --tmpfs /tmp --unshare-net \
		sh -c 'RANK=1 LOCAL_RANK=1 accelctl barrier --timeout 30s x & accelctl barrier --timeout 30s x && wait $!' \
		>"$OUT/$job.first" 2>&1
	assertEquals "the first run passes ($(cat "$OUT/$job.first"))" 1 "$(helpers_of "$job")"
	# shellcheck disable=SC2046
	env -i $(rank_env "$job" 0 2) timeout 60 bwrap --dev-bind / / --tmpfs /tmp --unshare-net \
		sh -c '(sleep 8; RANK=1 LOCAL_RANK=1 accelctl barrier --timeout 30s y) & accelctl barrier --timeout 30s y && wait $!' \
		>"$OUT/$job.second" 2>&1
	local rc=$?
	assertEquals "the second run passes too: $(cat "$OUT/$job.second")" 0 "$rc"
}

# A job run by hand (no launcher, no ACCELCTL_JOB_ID: job id "default") in
# two containers is two jobs, as it was before there was a name: rank 0 in
# one and rank 1 in the other do not meet (each waits out its deadline).
testHandRunJobsInTwoContainersStayApart() {
	can_bwrap || startSkipping
	local r
	for r in 0 1; do
		env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" HOME="${HOME:-/}" ACCELCTL_RANK=$r \
			ACCELCTL_LOCAL_RANK=$r ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 \
			ACCELCTL_HELPER_IDLE=10s timeout 60 bwrap --dev-bind / / --tmpfs /tmp sh -c 'accelctl barrier --timeout 3s apart; echo $? >"$0"' \
			"$OUT/apart.$r" >"$OUT/apart.$r.out" 2>&1 &
	done
	wait
	assertEquals "rank 0 alone in its container ($(cat "$OUT"/apart.0.out))" 124 "$(cat "$OUT/apart.0")"
	assertEquals "rank 1 alone in its container ($(cat "$OUT"/apart.1.out))" 124 "$(cat "$OUT/apart.1")"
}

testRanksWithAPrivateTmpEachMeetUnderUnshare() {
	can_unshare || startSkipping
	local job=us$$x$RANDOM
	ranks_in unshare "$job" 3
	check_ranks "$job" 3
}

# Not a split either: a rank that runs a step of its own in a sandbox without
# network (its environment inherited) before its first call. Only a
# namespace with a helper of this node is another side (second review: rank
# 0 failed with 125 while rank 1, later, passed).
testSandboxedChildIsNoSplit() {
	can_bwrap_net || startSkipping
	local job=bs$$x$RANDOM
	JOBS="$JOBS $job"
	# shellcheck disable=SC2046
	env -i $(rank_env "$job" 0 2) timeout 90 sh -c '
		(RANK=1 LOCAL_RANK=1; export RANK LOCAL_RANK
		 bwrap --dev-bind / / --tmpfs /tmp --unshare-net sleep 9
		 accelctl barrier --timeout 40s one && accelctl barrier --timeout 40s two; echo "r1=$?") &
		accelctl barrier --timeout 40s one && accelctl barrier --timeout 40s two; echo "r0=$?"; wait' \
		>"$OUT/$job.out" 2>&1
	assertContains "rank 0 passes ($(cat "$OUT/$job.out"))" "$(cat "$OUT/$job.out")" "r0=0"
	assertContains "rank 1 passes" "$(cat "$OUT/$job.out")" "r1=0"
}

# Across nodes: node 1's two ranks each in a sandbox of its own network and
# /tmp, the store (a Unix socket outside /tmp) reachable from both. Node 1's
# ranks fail with 125 and say what to set (their two helpers either find
# each other in /proc or meet as two claims on one node, on one host), and
# node 0's ranks, which would wait for node 1 to their deadline, fail too,
# before it (told as by abort, or node 1 found gone).
testSplitNodeAcrossNodesFailsEveryRank() {
	can_bwrap_net && command -v redis-server >/dev/null || startSkipping
	local job=bx$$x$RANDOM r sock=$OUT/rdv.$$.sock rpid
	JOBS="$JOBS $job"
	redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' \
		--appendonly no --daemonize no >"$OUT/rdv.log" 2>&1 &
	rpid=$!
	eventually 20 test -S "$sock"
	for r in 0 1 2 3; do
		set -- env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" HOME="${HOME:-/}" \
			ACCELCTL_JOB_ID="$job" ACCELCTL_RANK=$r ACCELCTL_WORLD_SIZE=4 \
			ACCELCTL_LOCAL_RANK=$((r % 2)) ACCELCTL_LOCAL_WORLD_SIZE=2 \
			ACCELCTL_NODE_RANK=$((r / 2)) ACCELCTL_NNODES=2 ACCELCTL_NODE_TIMEOUT=6s \
			ACCELCTL_RENDEZVOUS="unix://$sock" ACCELCTL_HELPER_IDLE=20s timeout 120
		if [ $r -ge 2 ]; then
			set -- "$@" bwrap --dev-bind / / --tmpfs /tmp --unshare-net
		else
			set -- "$@" env ACCELCTL_RUNTIME_DIR="$OUT/n0.$job"
			mkdir -p -m 700 "$OUT/n0.$job"
		fi
		"$@" sh -c 's=$(date +%s); accelctl barrier --timeout 90s x; echo "rc=$? after $(($(date +%s) - s))s"' \
			>"$OUT/$job.$r.out" 2>&1 &
	done
	wait $(jobs -p | grep -vx "$rpid")
	kill "$rpid"; wait "$rpid" 2>/dev/null
	for r in 2 3; do
		assertContains "node 1's rank $r fails: $(cat "$OUT/$job.$r.out")" "$(cat "$OUT/$job.$r.out")" "rc=125"
		assertContains "and says what to set: $(cat "$OUT/$job.$r.out")" "$(cat "$OUT/$job.$r.out")" "ACCELCTL_RUNTIME_DIR"
	done
	for r in 0 1; do
		assertNotContains "node 0's rank $r does not wait to its deadline: $(cat "$OUT/$job.$r.out")" \
			"$(cat "$OUT/$job.$r.out")" "rc=124"
		assertNotContains "nor pass" "$(cat "$OUT/$job.$r.out")" "rc=0 "
	done
}

# A rootfs made here for podman (no image pulled: nothing outside this
# machine is reached): accelctl, bash and the libraries they load, into
# $OUT/rootfs. Then the options podman needs on this host to run it, into
# POD (podman's defaults first; where crun cannot set rlimits or use a
# hybrid cgroup tree, as in some VMs, runc and no default ulimits), or
# nothing when no way runs /bin/true: the podman tests are skipped.
POD=""
pod_setup() {
	[ -n "$POD" ] && return 0
	command -v podman >/dev/null && [ "$(id -u)" = 0 ] || return 1
	local root=$OUT/rootfs b l try
	mkdir -p "$root/usr/bin" "$root/tmp"
	cp "$ACCELCTL" "$root/usr/bin/accelctl" || return 1
	for b in "$root/usr/bin/accelctl" /bin/bash /bin/true; do
		[ -e "$root$b" ] || { mkdir -p "$root$(dirname "$b")"; cp -L "$b" "$root$b"; }
		for l in $(ldd "$b" 2>/dev/null | grep -o '/[^ ]*'); do
			mkdir -p "$root$(dirname "$l")"; cp -L "$l" "$root$l"
		done
	done
	printf '[containers]\ndefault_ulimits = []\n' >"$OUT/containers.conf"
	for try in "" "--runtime runc"; do
		# shellcheck disable=SC2086
		if CONTAINERS_CONF=$OUT/containers.conf timeout 60 podman run --rm $try \
			--network host --rootfs "$root" /bin/true >/dev/null 2>&1; then
			POD="--rm $try"
			return 0
		fi
	done
	return 1
}

# pod_ranks JOB N NET: N ranks of JOB, each in a podman container of its own
# with a tmpfs on /tmp and network NET ("host", or "none" with the host's
# pid namespace), passing two barriers; their status and output in $OUT/JOB.R.
pod_ranks() {
	local job=$1 n=$2 net=$3 r extra="" pids=""
	JOBS="$JOBS $job"
	[ "$net" = host ] || extra="--pid host"
	for r in $(seq 0 $((n - 1))); do
		# shellcheck disable=SC2086 # POD and extra are words of options
		CONTAINERS_CONF=$OUT/containers.conf timeout 120 podman run $POD $extra \
			--network "$net" --tmpfs /tmp -e PATH=/usr/bin:/bin -e RANK=$r \
			-e LOCAL_RANK=$r -e WORLD_SIZE=$n -e LOCAL_WORLD_SIZE=$n -e GROUP_RANK=0 \
			-e GROUP_WORLD_SIZE=1 -e TORCHELASTIC_RUN_ID=$job -e MASTER_ADDR=localhost \
			-e MASTER_PORT=29500 -e ACCELCTL_HELPER_IDLE=20s --rootfs "$OUT/rootfs" \
			/bin/bash -c 'accelctl barrier --timeout 60s first && accelctl barrier --timeout 60s second; echo "rc=$?"' \
			>"$OUT/$job.$r.out" 2>&1 &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
}

# podman with --network host and a tmpfs on /tmp for each rank (a rootfs made
# here): the ranks meet one helper by its abstract socket, as under
# bubblewrap.
testRanksUnderPodmanMeet() {
	pod_setup || { echo "$FUNCNAME: podman cannot run a container here (not installed, not root, or no runtime that works): skipped" >&2; startSkipping; }
	local job=pm$$x$RANDOM r
	pod_ranks "$job" 3 host
	for r in 0 1 2; do
		assertContains "rank $r passed both barriers" "$(cat "$OUT/$job.$r.out")" "rc=0"
	done
}

# podman without the host's network (its own namespace per rank), the host's
# pid namespace kept: the two helpers find each other and every rank fails
# within seconds (125), not at its 60 s deadline.
testRanksUnderPodmanApartFailFast() {
	pod_setup || { echo "$FUNCNAME: podman cannot run a container here (not installed, not root, or no runtime that works): skipped" >&2; startSkipping; }
	local job=pn$$x$RANDOM r
	pod_ranks "$job" 2 none
	for r in 0 1; do
		assertContains "rank $r fails before its deadline" "$(cat "$OUT/$job.$r.out")" "rc=125"
		assertContains "naming the other rank" "$(cat "$OUT/$job.$r.out")" \
			"local rank $((1 - r)) of this node runs on"
	done
}

# pair_in_sandbox JOB NAME FILE: ranks 0 and 1 of JOB in one bubblewrap
# sandbox (a /tmp of their own) pass barrier NAME; their output into FILE,
# their status (0: both passed).
pair_in_sandbox() {
	# shellcheck disable=SC2046
	env -i $(rank_env "$1" 0 2) B="$2" timeout 60 bwrap --dev-bind / / --tmpfs /tmp \
		sh -c 'RANK=1 LOCAL_RANK=1 accelctl barrier --timeout 30s "$B" & accelctl barrier --timeout 30s "$B" && wait $!' >"$3" 2>&1
}

# Anyone may bind an abstract name. A name held by another uid is not ours:
# the rank neither talks to it nor hangs on it; it says so and serves itself
# (its own helper, on its file socket).
testAnotherUsersNameIsNotUsed() {
	if ! can_bwrap || [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 ||
		! command -v runuser >/dev/null || ! command -v python3 >/dev/null; then
		startSkipping
	fi
	local job=sq$$x$RANDOM name sq pid st
	JOBS="$JOBS $job"
	# The name: the helper says it when it serves (two ranks in one
	# sandbox; its /tmp is read through the helper's root).
	pair_in_sandbox "$job" a "$OUT/sq.first"
	pid=$(helper_pids "$job" | head -n 1)
	name=$(sed -n 's/.* and @\([^ ]*\) .*/\1/p' /proc/"$pid"/root/tmp/accelctl-0/*.log 2>/dev/null | head -n 1)
	assertNotEquals "the helper's log names its abstract socket ($(cat "$OUT/sq.first"))" "" "$name"
	kill "$pid"
	wait_gone "$pid" 20
	# nobody takes the name and counts what it is sent (into a
	# directory it may write).
	mkdir -m 777 "$OUT/sq" && chmod 711 "$OUT"
	runuser -u nobody -- python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").write("listening\n")
n = 0
s.settimeout(60)
try:
    while True:
        c, _ = s.accept(); c.settimeout(5)
        try:
            n = len(c.recv(4096))
        except OSError:
            n = 0
        # A connect that sends nothing is a check of who listens.
        open(sys.argv[2], "a").write("got %d bytes\n" % n if n else "checked\n")
except OSError:
    pass
' "$name" "$OUT/sq/log" 2>/dev/null &
	sq=$!
	eventually 20 grep -qs listening "$OUT/sq/log"
	pair_in_sandbox "$job" b "$OUT/sq.second"
	st=$?
	assertEquals "the ranks passed by their own helper ($(cat "$OUT/sq.second"))" 0 "$st"
	assertContains "it says whose name it found" "$(cat "$OUT/sq.second")" "is held by uid $(id -u nobody), not yours"
	assertContains "it checked who listens" "$(cat "$OUT/sq/log")" "checked"
	assertNotContains "and sent it nothing" "$(cat "$OUT/sq/log")" "bytes"
	kill "$sq" 2>/dev/null
	wait "$sq" 2>/dev/null
	return 0
}

load_shunit2
