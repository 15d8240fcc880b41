#!/bin/bash
# chaos.sh: the chaos suite (issue 18; ctest "chaos", label chaos): collectives
# in a loop on 2 simulated nodes x 2 ranks while a driver injects faults at
# random, then checks from what every rank logged that nothing was lost,
# passed early or waited out a deadline.
#
#   tests/chaos.sh [--store redis|etcd]... [--minutes N] [--seed S]
#
# Default: both stores, 50 s of faults each (about 55-65 s each with the set-up
# and checks, what ctest runs; 2 more minutes where ranks wait out their
# deadlines). --minutes N runs N minutes per store. CHAOS_ONLY="kill flush"
# injects only those kinds of fault (the others of the schedule are skipped,
# so the rest keeps its place in it): to find which kind a failure needs. The seed
# is printed; --seed S replays the same collectives and the same fault
# schedule (chaos/plan.sh derives both from it with awk's srand, and the
# broadcasts' bytes with Python's random): the faults land at other moments
# of the loop, since a machine never runs at the same speed twice, but the
# order, kinds, targets and pauses are the same.
#
# The job: every rank runs chaos/rank.sh over the same plan: barrier,
# barrier --status (random statuses; everyone must get the lowest failing
# rank's), broadcast of 0 B to 1 MiB (every rank compares a sha256 of what it
# got with the one it computes itself), on-main --wait -- CMD (CMD exits at
# random: every rank must exit with it), main-first -- CMD, and a control word
# broadcast every 8th collective. Each node has its own ACCELCTL_RUNTIME_DIR,
# so its own helper; ranks start as tests/faults/lib.sh starts them (row-1
# variables, per-rank logs, timeout -s KILL). Every wait has --timeout 60s,
# far longer than any recovery: a 124 is a failure.
#
# The faults, one every 0.5-2 s (chaos/faults.sh), each over before the next:
#   Redis (no persistence): SIGKILL and SIGTERM, restarted empty; FLUSHALL;
#     SIGSTOP 2 s; CLIENT KILL TYPE normal; a node helper's kill -9.
#   etcd (3 members on loopback): a member SIGKILLed and restarted, or
#     SIGSTOPped 2 s, the leader half the time; del --prefix of the job's
#     keys; one of the helpers' leases revoked; a node helper's kill -9.
# At the end, node 1 dies: SIGKILLed whole, helper and ranks (Redis), or
#   SIGSTOPped for two liveness bounds and resumed (etcd; CHAOS_NODE_FAULT=kill,
#   stop or none for both); every rank alive must then exit 4 at a barrier that
#   needs node 1, never 124. The helpers run with ACCELCTL_NODE_TIMEOUT=10s
#   (CHAOS_NODE_BOUND): none of the store's faults may get a node declared lost.
# Helpers are killed only in the first 45% of the run. Then the control word
# "quiet" makes every rank broadcast 1 MiB twenty times (a barrier after
# each), which fills what a helper keeps to post again (16 MiB), and pause
# between two collectives; each node's helper is sampled idle: pid, open
# descriptors (/proc/PID/fd) and RSS. The rest of the run goes on under the
# other faults; at the end, the ranks gone, each node must have exactly one
# helper, the one sampled, with at most CHAOS_FD_SLACK (2) descriptors more
# than then (the two Redis connections may be between a fault and their
# reconnection at either sample, although each sample waits for the count
# to hold still longer than the helper's longest backoff) and an RSS at most
# CHAOS_RSS_SLACK_KIB (4096) higher: a 1 MiB value may sit in a few buffers
# at once (the frame read, the result kept, the reply). The helpers run with
# glibc's mmap threshold fixed at 128 KiB, so that RSS follows what they hold,
# not malloc's high-water mark; a leak per fault or per collective grows past
# the slack within the run.
#
# Checks (chaos/check.sh), from the ranks' microsecond wall clock on this one
# machine: every exit code and value is right; nobody leaves a barrier before
# the last rank entered it, a broadcast before rank 0 entered it, an
# on-main --wait or main-first before rank 0's CMD ended; no barrier is passed
# by some ranks while others stay in it; CMD runs once per rank that must run
# it; no replaced helper skips a record of its own journal as bad (its log
# says so: what it recorded is lost); no rank waits to its deadline, and
# nobody finishes anything for CHAOS_STALL (50 s) seconds. Collectives slower
# than CHAOS_SLOW ms (10000) are listed with the faults before them (what a
# recovery cost). A failure prints the seed, the failing check, the faults
# before it, what each rank was in, each node's `accelctl status`, and the
# tails of the helpers' logs; the run's directory is kept.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${ACCELCTL_SRC:=$(cd "$here/.." && pwd)}"
: "${ACCELCTL:=$ACCELCTL_SRC/build/accelctl}"
export ACCELCTL ACCELCTL_SRC

usage() { echo "usage: tests/chaos.sh [--store redis|etcd]... [--minutes N] [--seed S]"; }
stores="" secs=${CHAOS_SECONDS:-50} seed=""
while [ $# -gt 0 ]; do
	case $1 in
	--store) case ${2:-} in redis|etcd) stores="$stores $2" ;; *) usage >&2; exit 2 ;; esac; shift 2 ;;
	--minutes) secs=$(awk -v m="${2:-}" 'BEGIN { if (m + 0 <= 0) exit 1; printf "%d", m * 60 }') ||
		{ usage >&2; exit 2; }; shift 2 ;;
	--seed) case ${2:-} in ''|*[!0-9]*) usage >&2; exit 2 ;; esac; seed=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ -x "$ACCELCTL" ] || { echo "chaos: no accelctl at $ACCELCTL (set ACCELCTL)" >&2; exit 2; }
seed=${seed:-$(( ($(date +%s%N) / 1000) % 1000000000 ))}

SHUNIT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/chaos.XXXXXX") || exit 1
. "$here/faults/lib.sh"
. "$here/sh/etcd.sh"
. "$here/chaos/plan.sh"
. "$here/chaos/faults.sh"
. "$here/chaos/check.sh"

STALL=${CHAOS_STALL:-50}
# The liveness bound of the run's helpers: every fault of the store (a stall,
# a restart empty, a member's loss) must pass without a node declared lost,
# and the node that dies at the end is named within it.
CHAOS_NODE_BOUND=${CHAOS_NODE_BOUND:-10}
NODE_FAULT=${CHAOS_NODE_FAULT:-auto}
SLOW=${CHAOS_SLOW:-10000}
RSS_SLACK=${CHAOS_RSS_SLACK_KIB:-4096}
FD_SLACK=${CHAOS_FD_SLACK:-2}
# The helpers (started by the ranks, whose environment they inherit) get
# glibc's mmap threshold fixed at 128 KiB: every block of a broadcast's size
# is then its own mapping, returned to the kernel when freed, so RSS follows
# what the helper holds instead of the high-water mark of malloc's heap
# (with the default, dynamic threshold, a repost of 16 MiB of kept results
# left the heap that much larger for good, leak or not).
MALLOC_ENV=${CHAOS_MALLOC_ENV-GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072}
CHAOS_BLOB_BYTES=2097152
chaos_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

if [ -z "$stores" ]; then
	stores="redis"
	if "$ACCELCTL" --version | grep -q '^features:.* etcd=1' && command -v etcd >/dev/null; then
		stores="redis etcd"
	else
		echo "chaos: etcd left out (no etcd support in this accelctl, or etcd-server not installed)"
	fi
fi
command -v redis-server >/dev/null || case $stores in *redis*)
	echo "chaos: redis-server not installed: not run" >&2; exit 77 ;; esac

# The run's own processes are stopped however it ends: ranks and helpers by
# their pid files (faults_teardown), stray helpers of our job ids by title,
# the store. Nothing else is touched.
cleanup() {
	local p
	faults_teardown >/dev/null 2>&1
	[ -n "${CD:-}" ] && for p in $(helpers_of 0) $(helpers_of 1); do kill -9 "$p" 2>/dev/null; done
	if [ -n "${ETCD_N:-}" ]; then
		for p in $(cat "$ETCD_DIR"/m*.pid 2>/dev/null); do kill -CONT "$p" 2>/dev/null; done
		etcd_stop
		ETCD_N=""
	fi
}
trap 'cleanup; [ -n "${KEEP:-}" ] || rm -rf "$SHUNIT_TMPDIR"' EXIT
trap 'exit 130' INT TERM

# want WORD: the control word rank 0 broadcasts next (renamed into place: rank
# 0 never reads a file half written).
want() { echo "$1" >"$CD/want.new" && mv "$CD/want.new" "$CD/want"; }

# helpers_sample: SAMPLE[NODE] = "PID FDS RSS_KIB" of each node's helper, once
# both descriptor counts held still for 2.6 s, longer than the helper's longest
# pause before it connects again (2 s and a quarter; 20 s at most): a
# connection a fault closed is made again before the count is taken. "none"
# for a node without a helper.
helpers_sample() {
	local n p f i=0 same=0 last="" cur
	while [ $i -lt 100 ] && [ $same -lt 13 ]; do
		cur=""
		for n in 0 1; do
			p=$(helper_pid "$CD" "$n")
			cur="$cur $p:$(ls "/proc/$p/fd" 2>/dev/null | wc -l)"
		done
		if [ "$cur" = "$last" ]; then same=$((same + 1)); else same=0; last=$cur; fi
		sleep 0.2; i=$((i + 1))
	done
	for n in 0 1; do
		p=$(helper_pid "$CD" "$n")
		if [ -n "$p" ] && [ -d "/proc/$p" ]; then
			SAMPLE[n]="$p $(ls "/proc/$p/fd" | wc -l) $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status")"
		else
			SAMPLE[n]=none
		fi
	done
}

# helpers_of NODE: the pids of every helper process of that node of our job:
# a process titled "accelctl helper" started with that node's runtime
# directory (the title alone is cut to the length of the command line of the
# client that started the helper, so the job id may be missing from it).
helpers_of() {
	local p
	for p in $(node_pids "$1"); do
		case $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") in "accelctl helper"*) printf '%s ' "$p" ;; esac
	done
}

# sample_all: every second, each node's helper's "US NODE PID FDS RSS_KIB" to
# $CD/samples (the figures behind a failed fd or RSS check).
sample_all() {
	local n p now; now=$(chaos_us)
	[ $((now - ${SAMPLE_AT:-0})) -ge 1000000 ] || return 0
	SAMPLE_AT=$now
	for n in 0 1; do
		p=$(helper_pid "$CD" "$n")
		[ -n "$p" ] && [ -d "/proc/$p" ] || continue
		echo "$now $n $p $(ls "/proc/$p/fd" 2>/dev/null | wc -l) $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)"
	done >>"$CD/samples"
}

# over: sets WHY to why the run must stop now (a rank's failure, a rank gone, a
# stall), or empty. Not run in $(...): it keeps PROGRESS, the size of the
# ranks' logs when it last grew, and PROGRESS_AT, when.
over() {
	local f sz now
	WHY=""
	for f in "$CD"/fail.*; do
		[ -f "$f" ] && { WHY="rank ${f##*.}: $(head -1 "$f")"; return; }
	done
	if [ "$PHASE" != stopping ]; then
		for f in "$CD"/rc.*; do
			[ -f "$f" ] && { WHY="rank ${f##*.} exited before the end: $(cut -d' ' -f1 "$f")"; return; }
		done
	fi
	now=$(chaos_us)
	[ $((now - SIZE_AT)) -lt 500000 ] && return
	SIZE_AT=$now
	sz=$(cat "$CD"/log.* 2>/dev/null | wc -c)
	if [ "$sz" != "$PROGRESS" ]; then
		PROGRESS=$sz PROGRESS_AT=$now
	elif [ $((now - PROGRESS_AT)) -gt $((STALL * 1000000)) ]; then
		WHY="stall: no rank finished a collective for ${STALL} s"
	fi
}

# report WHY: everything a failure needs to be understood and replayed.
report() {
	local r n t
	echo "FAIL: chaos $STORE, seed $seed: $1"
	echo "  replay: tests/chaos.sh --store $STORE --seed $seed --minutes $(awk -v s="$secs" 'BEGIN { print s / 60 }')"
	echo "  run directory (kept): $SHUNIT_TMPDIR"
	echo "  the last faults (seconds into the run, kind, target, what was done):"
	tail -n 12 "$CD/faults" 2>/dev/null | awk -v t0="$T0" '{ printf "    %7.2f-%.2f %s\n", ($1 - t0) / 1e6, ($4 - t0) / 1e6, substr($0, index($0, $2)) }' |
		sed -E 's/ [0-9]{16} / /'
	for r in 0 1 2 3; do
		t=$(cat "$CD/cur.$r" 2>/dev/null)
		echo "  rank $r: in collective ${t% *} since $(awk -v a="${t##* }" -v t0="$T0" 'BEGIN { printf "%.2f s", (a - t0) / 1e6 }'); finished $(wc -l <"$CD/log.$r" 2>/dev/null || echo 0); stderr: $(tail -n 2 "$CD/err.$r" 2>/dev/null | tr '\n' '|')"
	done
	for n in 0 1; do
		rank_env "$CD" 2 2 "$n" 0
		echo "  node $n: helpers running: $(helpers_of "$n"); accelctl status:"
		env -i "${ENVV[@]}" timeout 5 "$ACCELCTL" status 2>&1 | head -12 | sed 's/^/    /'
		echo "  node $n: the helper's log, last lines:"
		tail -n 15 "$(helper_log "$CD" "$n")" 2>/dev/null | sed 's/^/    /'
	done
	KEEP=1
}

# node_fault_of: how node 1 dies at the end of this store's run: killed whole
# (Redis) or stopped for two bounds and resumed (etcd), CHAOS_NODE_FAULT=kill,
# stop or none for every store.
node_fault_of() {
	case ${NODE_FAULT:-auto} in
	auto) [ "$STORE" = redis ] && echo kill || echo stop ;;
	*) echo "$NODE_FAULT" ;;
	esac
}

# node_pids NODE: every process of that node of our job (the ranks, their
# timeout wrappers and shells, its helper): those whose environment names its
# runtime directory. Its whole process tree, as a node that dies loses it.
node_pids() {
	local f p
	for f in /proc/[0-9]*/environ; do
		p=${f#/proc/}; p=${p%/environ}
		tr '\0' '\n' 2>/dev/null <"$f" | grep -qxF "ACCELCTL_RUNTIME_DIR=$CD/n$1" && printf '%s ' "$p"
	done
}

# node_fault: the end of the run. The ranks hear "die"; once node 1's are ready
# (chaos/rank.sh: dying), node 1 is SIGKILLed whole, or SIGSTOPped for two
# bounds and resumed. Every rank alive then waits at a barrier that needs node
# 1 and must exit 4 (rank.sh checks it, and that none is 124). WHY: a failure.
# The time from the fault to node 0's ranks' exit is printed.
node_fault() {
	local i=0 how pids t_fault ms p
	WHY=""
	how=$(node_fault_of)
	want die
	until [ -e "$CD/dying.2" ] && [ -e "$CD/dying.3" ]; do
		over; [ -z "$WHY" ] || return
		[ $i -lt 1800 ] || { WHY="node 1's ranks never got to the node's death (90 s)"; return; }
		sleep 0.05; i=$((i + 1))
	done
	pids=$(node_pids 1)
	t_fault=$(chaos_us)
	if [ "$how" = kill ]; then
		# The helper first, gone before its ranks: a rank's end seen by a
		# helper still alive is news it tells (exit 4 at once, on rank
		# news), and the run would not test liveness (seen: 2 ms).
		# shellcheck disable=SC2086
		kill -9 $(helpers_of 1) 2>/dev/null
		for p in $(helpers_of 1); do wait_gone "$p" 10; done
		# shellcheck disable=SC2086
		kill -9 $pids 2>/dev/null
		echo "$t_fault node-kill 1 $(chaos_us) node 1 SIGKILLed whole (pids $pids)" >>"$CD/faults"
		: >"$CD/resumed"
	else
		# shellcheck disable=SC2086
		kill -STOP $pids 2>/dev/null
		sleep $((2 * CHAOS_NODE_BOUND))
		: >"$CD/resumed"
		# shellcheck disable=SC2086
		kill -CONT $pids 2>/dev/null
		echo "$t_fault node-stop 1 $(chaos_us) node 1 SIGSTOPped $((2 * CHAOS_NODE_BOUND)) s whole, resumed (pids $pids)" >>"$CD/faults"
	fi
	i=0
	until [ -e "$CD/rc.0" ] && [ -e "$CD/rc.1" ]; do
		over; [ -z "$WHY" ] || return
		[ $i -lt 3600 ] || { WHY="node 0's ranks did not leave the dead node's barrier in 180 s"; return; }
		sleep 0.05; i=$((i + 1))
	done
	ms=$(awk -v t="$t_fault" '$2 == "d" { print int(($4 - t) / 1000) }' "$CD/log.0" 2>/dev/null)
	echo "  node 1 $how: node 0's ranks exited 4 ${ms:-?} ms after it (ACCELCTL_NODE_TIMEOUT ${CHAOS_NODE_BOUND}s)"
}

# run_store STORE: one chaos run over STORE; 0 when every check held.
run_store() {
	STORE=$1 CD=$SHUNIT_TMPDIR/run.$1 JOB=chaos-$1-$$ PHASE=chaos PROGRESS=-1 PROGRESS_AT=$(chaos_us) SIZE_AT=0
	mkdir -p "$CD"
	local why="" nops nfaults now next pause kind arg t_quiet t_end n s1 s2 checks i atend ends
	local t_setup; t_setup=$(chaos_us)
	case $STORE in
	redis) redis_start; RDV=redis://127.0.0.1:$REDIS_PORT ;;
	etcd) etcd_start 3; RDV=$ETCD_URL ;;
	esac
	# Enough collectives and faults for the longest run (the plan outlasting
	# it ends every rank alike: the last line of a plan is no cliff).
	nops=$((secs * 60 + 200)) nfaults=$((secs * 2 + 10))
	chaos_blob "$seed" "$CD/blob" "$CHAOS_BLOB_BYTES"
	chaos_plan "$seed" "$nops" >"$CD/plan"
	chaos_faults "$seed" "$nfaults" "$STORE" >"$CD/schedule"
	want go
	: >"$CD/faults"
	echo "chaos $STORE: seed $seed, ${secs} s of faults, job $JOB, in $CD"
	T0=$(chaos_us)
	# The helpers' idle exit is 30 minutes, not faults/lib.sh's 2: the
	# driver waits up to 2 minutes for an etcd member to answer again
	# (chaos/faults.sh), while the ranks may wait at the quiet point with
	# no call of ours (the sample must find the helper it will compare).
	JOB_LIMIT=$((secs + 300)) JOB_ENV="ACCELCTL_HELPER_IDLE=30m ACCELCTL_NODE_TIMEOUT=${CHAOS_NODE_BOUND}s CHAOS_TIMEOUT=60s CHAOS_RANK_SH=$here/chaos/rank.sh CHAOS_BLOB_BYTES=$CHAOS_BLOB_BYTES $MALLOC_ENV" \
		job_start "$CD" 2 2 '. "$CHAOS_RANK_SH"'
	t_quiet=$((T0 + secs * 450000)) t_end=$((T0 + secs * 1000000))
	exec 4<"$CD/schedule"
	read -r pause kind arg <&4
	next=$((T0 + pause * 1000))
	while :; do
		over; why=$WHY; [ -z "$why" ] || break
		now=$(chaos_us)
		if [ "$PHASE" = chaos ] && [ "$now" -ge "$t_quiet" ]; then
			# The ranks fill what the helpers keep, then wait: faults go on
			# meanwhile (helpers' kills no more), the sample waits for them.
			PHASE=filling
			want quiet
		fi
		if [ "$PHASE" = filling ] && [ "$(ls "$CD"/quiet.* 2>/dev/null | wc -l)" = 4 ]; then
			PHASE=quiet
			helpers_sample; s1=("${SAMPLE[@]}")
			want go
			: >"$CD/resume"
			PHASE=tail PROGRESS_AT=$(chaos_us)
			next=$(($(chaos_us) + pause * 1000))
			continue
		fi
		# The end waits for the sample: on a loaded machine the fill can
		# outlast the run, and the ranks wait for their resume.
		[ "$now" -ge "$t_end" ] && [ "$PHASE" = tail ] && break
		sample_all
		if [ "$now" -ge "$next" ]; then
			if [ "$kind" = helper ] && [ "$PHASE" != chaos ]; then
				echo "$now helper $arg $now skipped: past 45% of the run" >>"$CD/faults"
			elif [ -n "${CHAOS_ONLY:-}" ] && case " $CHAOS_ONLY " in *" $kind "*) false ;; *) true ;; esac; then
				echo "$now $kind $arg $now skipped: not in CHAOS_ONLY" >>"$CD/faults"
			else
				chaos_inject "$STORE" "$kind" "$arg"
			fi
			read -r pause kind arg <&4 || pause=999999999
			next=$(($(chaos_us) + pause * 1000))
		fi
		sleep 0.05
	done
	exec 4<&-
	if [ -z "$why" ]; then
		PHASE=stopping
		if [ "$NODE_FAULT" = none ]; then want stop; else node_fault; why=$WHY; fi
		i=0
		until [ "$(ls "$CD"/rc.* 2>/dev/null | wc -l)" = 4 ]; do
			over; why=$WHY; [ -z "$why" ] || break
			[ $i -lt 1800 ] || { why="the ranks did not all stop in 90 s"; break; }
			sleep 0.05; i=$((i + 1))
		done
	fi
	[ -z "$why" ] && { over; why=$WHY; }
	if [ -z "$why" ]; then
		for i in 0 1 2 3; do
			# Node 1's ranks, killed with their node, end with SIGKILL.
			[ "$(cut -d' ' -f1 "$CD/rc.$i")" = 0 ] ||
				{ [ "$(node_fault_of)" = kill ] && [ $i -ge 2 ] && [ "$(cut -d' ' -f1 "$CD/rc.$i")" = 137 ]; } ||
				{ why="rank $i exited $(cut -d' ' -f1 "$CD/rc.$i")"; break; }
		done
	fi
	atend=""; [ -z "$why" ] && atend=1
	checks=$(chaos_check "$CD")
	[ -z "$why" ] && [ -n "$checks" ] && why="$(echo "$checks" | head -1)"
	# The end checks run whenever the ranks got to the end, each one
	# printed, so that one failure does not hide another (WHY: the first).
	ends=""
	if [ -n "$atend" ]; then
		# A journal the helpers wrote themselves never holds a record that
		# makes no sense: a replacement that skips one lost what it recorded.
		for n in 0 1; do
			i=$(grep -c 'journal: skipped a bad record' "$(helper_log "$CD" "$n")" 2>/dev/null)
			[ "${i:-0}" -gt 0 ] && ends="$ends
node $n: a replaced helper skipped $i records of its own journal as bad, e.g. $(grep -m1 -o 'journal: skipped a bad record.*' "$(helper_log "$CD" "$n")")"
		done
		helpers_sample; s2=("${SAMPLE[@]}")
		for n in 0 1; do
			# A node killed whole has no helper left to compare.
			[ $n = 1 ] && [ "$(node_fault_of)" = kill ] && continue
			set -- ${s1[n]} ${s2[n]}
			echo "  node $n's helper: at the quiet point pid $1, $2 fds, $3 KiB; at the end pid ${4:-none}, ${5:-?} fds, ${6:-?} KiB"
			if [ "$(helpers_of "$n")" != "$(helper_pid "$CD" "$n") " ]; then
				ends="$ends
node $n: helpers running at the end: $(helpers_of "$n")(pid file: $(helper_pid "$CD" "$n"))"
			elif [ "$1" = none ] || [ "$1" != "${4:-}" ]; then
				ends="$ends
node $n: the helper sampled at the quiet point ($1) is not the one at the end (${4:-none}): it died or was replaced without a kill"
				continue
			fi
			[ "$5" -gt $(($2 + FD_SLACK)) ] && ends="$ends
node $n's helper: $2 descriptors at the quiet point, $5 at the end: $(ls -l "/proc/$4/fd" 2>/dev/null |
				tail -n +2 | awk '{ sub(/:\[[0-9]+\]$/, "", $NF); print $NF }' | sort | uniq -c | awk '{ printf "%s x%s, ", $2, $1 }')TCP: $(ss -tanp 2>/dev/null |
				grep "pid=$4," | awk '{ print $1 }' | sort | uniq -c | awk '{ printf "%s x%s ", $2, $1 }')"
			[ "${ACCELCTL_SANITIZED:-0}" != 1 ] && [ $(($6 - $3)) -gt "$RSS_SLACK" ] && ends="$ends
node $n's helper: RSS $3 KiB at the quiet point, $6 KiB at the end (more than $RSS_SLACK KiB higher)"
		done
		ends=${ends#?}
		[ -n "$ends" ] && { [ -n "$why" ] || why=$(echo "$ends" | head -1); echo "  end checks that failed:"; echo "$ends" | sed 's/^/    /'; }
	fi
	[ -n "$checks" ] && { echo "  checks that failed:"; echo "$checks" | head -20 | sed 's/^/    /'; }
	echo "  $(chaos_stats "$CD"); faults: $(awk '$5 != "skipped:" { print $2 }' "$CD/faults" | sort | uniq -c |
		awk '{ printf "%s%s %d", (NR > 1 ? ", " : ""), $2, $1 }'); $(( ($(chaos_us) - t_setup) / 1000000 )) s in all"
	# What the slowest recoveries cost, and the faults from 5 s before.
	chaos_slow "$CD" "$SLOW" | while read -r i o ms from to; do
		echo "  slow: collective $i ($o) took $ms ms; faults from 5 s before it to its end:"
		awk -v a=$((from - 5000000)) -v b="$to" -v t0="$T0" '$1 >= a && $1 <= b {
			printf "    %7.2f %s\n", ($1 - t0) / 1e6, substr($0, index($0, $2)) }' "$CD/faults" | sed -E 's/ [0-9]{16} / /'
	done
	if [ -n "$why" ]; then
		report "$why"
		cleanup
		return 1
	fi
	cleanup
	echo "PASS: chaos $STORE, seed $seed"
}

failed=0
echo "chaos: seed $seed (replay with --seed $seed)"
for s in $stores; do run_store "$s" || failed=1; done
if [ $failed = 0 ]; then echo "PASS: chaos ($stores ), seed $seed"; else echo "FAIL: chaos, seed $seed"; fi
exit $failed
