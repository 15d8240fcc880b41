# lib.sh: shared set-up for the shunit2 suites; sourced by every tests/sh/t_*.sh.
#
# ctest passes ACCELCTL (the binary under test) and ACCELCTL_SRC (the source
# tree). Every accelctl call of a test runs in a clean environment (env -i) so
# that the variables of whatever runs the suite (a CI job inside Slurm, say)
# cannot change what is detected.
#
# The harness itself must cost little: on a busy 2-core machine every fork+exec
# is 5-15 ms of CPU taken from the helpers and servers whose behaviour the tests
# judge. So the clock is bash's own ($EPOCHREALTIME), waits sleep without a
# process (nap), polls back off (eventually), files are read with $(<FILE), and
# shunit2's counters are counted by bash (expr below). This file stands alone
# (tests/sh/t_skip.sh runs a copy of it without the rest of tests/).

: "${ACCELCTL:?set ACCELCTL to the accelctl binary}"
: "${ACCELCTL_SRC:?set ACCELCTL_SRC to the source tree}"
# The system's tools before whatever the caller's PATH puts first: a pyenv or
# conda shim for python3 costs half a second of CPU a call (the caller's
# directories still follow, for what only they hold).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}
case $ACCELCTL in */*) ACCELCTL_BIN_DIR=${ACCELCTL%/*} ;; *) ACCELCTL_BIN_DIR=. ;; esac
ACCELCTL_BIN_DIR=$(cd "${ACCELCTL_BIN_DIR:-/}" && pwd)
FIXTURES=${FIXTURES:-$ACCELCTL_SRC/tests/fixtures/launcher-env}
SKIP=77
# skip_suite: end the suite as skipped (exit 77, ctest's SKIP_RETURN_CODE), also from
# oneTimeSetUp or a test: there shunit2 2.1.8's EXIT trap turned a plain "exit 77" into a
# failure ("unknown failure encountered running a test", exit 2).
skip_suite() { trap - 0; exit "$SKIP"; }

# The suite's private scratch directory; removed by shunit2 itself.
scratch() { printf '%s\n' "${SHUNIT_TMPDIR:?}"; }

# now_us: NOW_US, the wall clock in microseconds, without a process (date +%s%N
# is a fork+exec: 10-20 ms on a busy machine). ${EPOCHREALTIME/[.,]/} is the
# same number inline.
now_us() { NOW_US=${EPOCHREALTIME/[.,]/}; }

# nap SECONDS: sleep without a process: a read with a timeout on a FIFO nobody
# writes (opened for the read only, so no child inherits a descriptor). The FIFO
# lies in the suite's scratch directory; without one, sleep(1) it is.
nap() {
	local _nap
	case $1 in 0 | 0. | .0 | 0.0 | 0.00 | 0.000) return 0 ;; esac
	[ -n "${NAP_FIFO:-}" ] && [ -p "$NAP_FIFO" ] || nap_init
	{ read -r -t "$1" _nap <>"${NAP_FIFO:-/nonexistent/nap}"; } 2>/dev/null
	[ $? -gt 128 ] || command sleep "$1"
}
nap_init() {
	NAP_FIFO=""
	[ -n "${SHUNIT_TMPDIR:-}" ] && [ -d "$SHUNIT_TMPDIR" ] || return 0
	[ -p "$SHUNIT_TMPDIR/.nap" ] || mkfifo -m 600 "$SHUNIT_TMPDIR/.nap" 2>/dev/null
	[ -p "$SHUNIT_TMPDIR/.nap" ] && NAP_FIFO=$SHUNIT_TMPDIR/.nap
	return 0
}

# eventually SECONDS CMD...: run CMD until it succeeds, for at most SECONDS
# (whole), then once more; its last status. For what follows an asynchronous
# event (a server stopping after its job, a key deleted once every node read
# it): a check made once right after it, or after a fixed sleep, fails on a busy
# machine. The pause between tries starts at 10 ms and doubles up to 200 ms: a
# quick condition is seen at once, a slow one costs a few processes a second.
eventually() {
	local end=$((${EPOCHREALTIME/[.,]/} + $1 * 1000000)) ms=10 t; shift
	until "$@"; do
		[ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || { "$@"; return; }
		printf -v t '0.%03d' "$ms"; nap "$t"
		ms=$((ms < 100 ? ms * 2 : 200))
	done
}

# proc_gone PID: PID has exited (no such process, or a zombie nobody reaped yet).
proc_gone() {
	local s
	kill -0 "$1" 2>/dev/null || return 0
	{ s=$(<"/proc/$1/stat"); } 2>/dev/null || return 0
	s=${s##*) }
	[ "${s:0:1}" = Z ]
}

# wait_gone PID SECONDS: until PID has exited, at most SECONDS; 1 if it has not.
wait_gone() { eventually "$2" proc_gone "$1"; }

# shunit2 2.1.8 counts every test and assertion with `expr N + 1` (and tells a
# number with `expr STRING : '\([0-9]*\)'`): two or three processes per
# assertion. These forms are done by bash; anything else goes to expr(1). Same
# output, same status (1 when the result is null or 0).
expr() {
	local r
	if [ $# = 3 ]; then
		case $2 in
		+ | - | '*' | / | %)
			if [[ $1 =~ ^(0|[1-9][0-9]{0,17})$ && $3 =~ ^(0|[1-9][0-9]{0,17})$ ]] &&
				! [[ $2 = [/%] && $3 = 0 ]]; then
				r=$(($1 $2 $3))
				echo "$r"
				[ "$r" != 0 ]
				return
			fi
			;;
		:)
			if [ "$3" = '\([0-9]*\)' ]; then
				[[ $1 =~ ^([0-9]*) ]]
				r=${BASH_REMATCH[1]}
				echo "$r"
				[[ -n $r && ! $r =~ ^0+$ ]]
				return
			fi
			;;
		esac
	fi
	command expr "$@"
}

# run VAR=VALUE... -- ARGS...: run accelctl ARGS in a clean environment with
# only the given variables, capturing stdout, stderr and the exit code into
# $out, $err and $rc. Blocking calls are bounded so a bug fails, never hangs:
# RUN_LIMIT seconds, at least 120. The bound is a guard against a hang, never
# a verdict on speed: 8 ranks x 50 barriers took 20 s (the old bound) on 2
# cores busy with three other suites, and failed there only.
#
# ACCELCTL_TEST_TRANSPORT (set by tests/gpu/suite.sh) runs every call with that
# ACCELCTL_TRANSPORT, and then hands on what CUDA needs to find the GPU.
run() {
	local vars=() v
	if [ -n "${ACCELCTL_TEST_TRANSPORT:-}" ]; then
		vars+=("ACCELCTL_TRANSPORT=$ACCELCTL_TEST_TRANSPORT")
		for v in CUDA_VISIBLE_DEVICES LD_LIBRARY_PATH ACCELCTL_HELPER_GPU NCCL_DEBUG \
		    ACCELCTL_CUDART_LIBRARY ACCELCTL_NCCL_LIBRARY FAKE_CUDA_DEVICES; do
			[ -n "${!v:-}" ] && vars+=("$v=${!v}")
		done
	fi
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
	shift
	# ACCELCTL_TEST_RENDEZVOUS and ACCELCTL_TEST_NNODES (tests/etcd/suite.sh):
	# that rendezvous for every call, and "launch -n N" on that many nodes.
	if [ -n "${ACCELCTL_TEST_RENDEZVOUS:-}" ]; then
		vars+=("ACCELCTL_RENDEZVOUS=$ACCELCTL_TEST_RENDEZVOUS")
		for v in ACCELCTL_ETCD_PASSWORD_FILE ACCELCTL_ETCD_CACERT ACCELCTL_ETCD_CERT \
		    ACCELCTL_ETCD_KEY; do
			[ -n "${!v:-}" ] && vars+=("$v=${!v}")
		done
		if [ "${1:-}" = launch ] && [ -n "${ACCELCTL_TEST_NNODES:-}" ]; then
			launch_across "$ACCELCTL_TEST_NNODES" "$@"
			set -- "${ACROSS[@]}"
		fi
	fi
	local d; d=$(scratch)
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/local/bin:/usr/bin:/bin" HOME="${HOME:-/}" \
		TMPDIR="$d" "${vars[@]}" timeout "$((${RUN_LIMIT:-0} > 120 ? RUN_LIMIT : 120))" "$ACCELCTL" "$@" >"$d/out" 2>"$d/err"
	rc=$?
	out=$(<"$d/out")
	err=$(<"$d/err")
}

# launch_across K launch ARGS...: sets ACROSS to ARGS with "-n N" (N a
# multiple of K, no --nnodes given) made "--nnodes K -n N/K": the same ranks on
# K simulated nodes, K/N each. Anything else is left as it is.
launch_across() {
	local k=$1 i n="" at=-1 args
	shift
	args=("$@")
	ACROSS=("$@")
	for ((i = 1; i < ${#args[@]}; i++)); do
		case ${args[i]} in
		--) break ;;
		--nnodes) return ;;
		-n) n=${args[i + 1]:-}; at=$i ;;
		esac
	done
	case $n in ''|*[!0-9]*) return ;; esac
	[ $((n % k)) = 0 ] && [ "$n" -ge "$k" ] || return 0
	ACROSS=("${args[@]:0:at}" --nnodes "$k" -n $((n / k)) "${args[@]:at+2}")
}

# run_fixture FILE ARGS...: accelctl ARGS in the environment captured in FILE.
run_fixture() {
	local file=$1; shift
	local vars=()
	while IFS= read -r line; do
		[ -n "$line" ] && vars+=("$line")
	done <"$file"
	run "${vars[@]}" -- "$@"
}

assertRc() { assertEquals "exit code of: $2 (stderr: $err)" "$1" "$rc"; }
assertErrMatches() {
	case $err in
	*"$1"*) ;;
	*) fail "stderr does not contain '$1': $err" ;;
	esac
}
assertOneLineErr() {
	local n=0 l
	while IFS= read -r l; do [ -z "$l" ] || n=$((n + 1)); done <<<"$err"
	assertEquals "stderr is one line: $err" 1 "$n"
}

# early_releases FILE...: from "GEN enter NS" / "GEN leave NS" lines, the
# generations that some rank left before the last rank arrived (none, if right).
# One that no rank left is none (a run cut short: its exit code says so).
early_releases() {
	cat "$@" | awk '
		$2 == "enter" { if ($3 > maxin[$1]) maxin[$1] = $3 }
		$2 == "leave" { if (!($1 in minout) || $3 < minout[$1]) minout[$1] = $3 }
		END { for (g in maxin) if ((g in minout) && maxin[g] > minout[g]) print "generation " g " released early" }'
}

# generations DIR GENS TIMEOUT: a job script (bash) in which every rank passes barrier
# "gen" GENS times after random short sleeps, logging "G enter NS" / "G leave NS" to
# DIR/rRANK for early_releases. No process but the barrier's: the clock is
# $EPOCHREALTIME, the sleeps a read on DIR/.nap (made here when DIR exists; sleep(1)
# otherwise).
generations() {
	[ -d "$1" ] && { [ -p "$1/.nap" ] || mkfifo -m 600 "$1/.nap"; } 2>/dev/null
	printf '%s' '
		nap() { { read -r -t "$1" _n <>'"$1"'/.nap; } 2>/dev/null; [ $? -gt 128 ] || sleep "$1"; }
		for ((g = 0; g < '"$2"'; g++)); do
			p=$((RANDOM % 10)); [ $p = 0 ] || nap 0.00$p
			t=$EPOCHREALTIME; echo "$g enter ${t/[.,]/}000" >>'"$1"'/r$ACCELCTL_RANK
			accelctl barrier --timeout '"$3"' gen || exit
			t=$EPOCHREALTIME; echo "$g leave ${t/[.,]/}000" >>'"$1"'/r$ACCELCTL_RANK
		done'
}

# source_dies DIR TIMEOUT: a job script in which rank 0's "on-main --wait" is killed
# (kill -9) while its CMD runs, and every other rank waits for it with --timeout
# TIMEOUT and prints "rc=N" (3, if right: the rank they waited for died).
source_dies() {
	printf '%s' '
		if [ $ACCELCTL_RANK = 0 ]; then
			accelctl on-main --wait -- sh -c "echo \$PPID \$\$ >'"$1"'/pid; exec sleep 30" &
			while [ ! -s '"$1"'/pid ]; do sleep 0.02; done
			set -- $(<'"$1"'/pid); kill -9 $1; wait; kill $2; exit 0
		fi
		accelctl on-main --wait --timeout '"$2"' -- true; echo "rc=$?"'
}

# ACCELCTL_TEST_SKIP="testA testB" (tests/etcd/suite.sh): the suite's tests
# but those, said on stderr; ACCELCTL_TEST_ONLY="testA": only those (to rerun
# one test while debugging). shunit2 2.1.8 runs a suite() when one is defined.
if [ -n "${ACCELCTL_TEST_SKIP:-}${ACCELCTL_TEST_ONLY:-}" ]; then
	suite() {
		local t
		for t in $(grep -o '^test[A-Za-z0-9_]*' "$0"); do
			case " $ACCELCTL_TEST_SKIP " in
			*" $t "*) echo "$t: left out here (ACCELCTL_TEST_SKIP)" >&2; continue ;;
			esac
			case " ${ACCELCTL_TEST_ONLY:-$t} " in
			*" $t "*) suite_addTest "$t" ;;
			esac
		done
	}
fi

# Find shunit2 where Debian puts it, or on PATH. Its counters (`expr N + 1` in a
# command substitution: a subshell each, two per assertion, 20 ms of CPU on a busy
# machine) are bash arithmetic in the text sourced; the text is the same otherwise
# (a shunit2 that words them differently is sourced as it is, expr above helping).
# (eval, not `. <(...)`: a process substitution's descriptor would stay open in
# every process of the suite, which tests counting descriptors would see.)
load_shunit2() {
	local s _shunit2_text
	for s in "${SHUNIT2:-}" /usr/bin/shunit2 /usr/share/shunit2/shunit2 "$(command -v shunit2)"; do
		[ -n "$s" ] && [ -f "$s" ] || continue
		_shunit2_text=$(sed -E 's/`expr "?\$\{(__shunit_[A-Za-z]+)\}"? \+ 1`/$((\1 + 1))/' "$s" 2>/dev/null)
		case $_shunit2_text in
		*_shunit_generateReport*) eval "unset _shunit2_text; $_shunit2_text" ;;
		*) . "$s" ;;
		esac
		return
	done
	echo "shunit2 not found: install the shunit2 package" >&2
	exit 1
}

# pair_node LAUNCH NODE ARGS...: accelctl ARGS as the one rank of node NODE of
# a 2-node job $JOB through the rendezvous $PAIR_RDV, launch LAUNCH having its
# own runtime directories (a new launch starts fresh helpers, as launch and
# Slurm do). Sets $rc, $err. (etcd.runs and faults.state: reruns.)
pair_node() {
	local l=$1 n=$2; shift 2
	(pair_env "$l" "$n" timeout 30 "$ACCELCTL" "$@" 2>"$(scratch)/$l.err.$n")
	rc=$?
	err=$(<"$(scratch)/$l.err.$n")
}
# pair_env LAUNCH NODE CMD...: exec CMD in that rank's environment.
pair_env() {
	local l=$1 n=$2 d; shift 2
	d=$(scratch)/$l/n$n; mkdir -p "$d"; chmod 700 "$d"
	exec env -i PATH="/usr/bin:/bin" HOME="${HOME:-/}" ACCELCTL_RENDEZVOUS="$PAIR_RDV" \
		ACCELCTL_JOB_ID="$JOB" ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_RANK="$n" \
		ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=1 \
		ACCELCTL_NODE_RANK="$n" ACCELCTL_NNODES=2 "$@"
}

# probe_status ENV LAUNCH NODE STOP: read that node's `status` (ENV runs a
# command in its environment, as pair_env) until it names a probe of a run
# joined fresh, or file STOP is there (30 s at most: a guard, STOP comes from a
# barrier with a short deadline); PROBE_ST what it said last.
probe_status() {
	local end=$((${EPOCHREALTIME/[.,]/} + 30000000))
	PROBE_ST=""
	until [ -s "$4" ] || [ "${EPOCHREALTIME/[.,]/}" -ge "$end" ]; do
		case $PROBE_ST in *"is its node 0 alive?"*) return 0 ;; esac
		PROBE_ST=$("$1" "$2" "$3" "$ACCELCTL" status 2>&1); nap 0.02
	done
}
# probes_end_in_wait ENV LAUNCH NODE: read that node's `status` until it has
# shown two probes end in a wait for node 0 (60 s at most; a probe comes every
# 3 s or so, its wait shows for a quarter of a second: read every 20 ms);
# PROBES_SEEN how many it saw.
probes_end_in_wait() {
	local phase=joining st end=$((${EPOCHREALTIME/[.,]/} + 60000000))
	PROBES_SEEN=0
	until [ $PROBES_SEEN -ge 2 ] || [ "${EPOCHREALTIME/[.,]/}" -ge "$end" ]; do
		st=$("$1" "$2" "$3" "$ACCELCTL" status 2>&1)
		case $phase:$st in
		joining:*"is its node 0 alive?"*) phase=waiting ;;
		waiting:*"waiting for node 0"*) PROBES_SEEN=$((PROBES_SEEN + 1)); phase=joining ;;
		esac
		nap 0.02
	done
}
