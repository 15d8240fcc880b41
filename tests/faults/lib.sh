# faults/lib.sh: shared set-up for the fault-matrix suites (ctest label "faults",
# issue 10): simulated nodes whose ranks wait at barriers while a fault hits
# the Redis rendezvous, and what every rank saw.
#
# The ranks are started here, not by `accelctl launch`: each node gets a runtime
# directory that outlives the job (its helper's log and pid file are evidence),
# the job id is ours to choose (a rerun), and every rank's exit code and time
# are kept apart. Every process runs under `timeout -s KILL` (a hang fails the
# test with 137, never confused with accelctl's own 124), and tearDown stops
# only what this suite started, by pid.
. "$(dirname "${BASH_SOURCE[0]}")/../sh/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../sh/redis.sh"

# oom_errors: Redis' count of writes refused with OOM; oom_refused: one or more.
oom_errors() { redis_cli info errorstats | awk -F'[=,]' '/^errorstat_OOM:/ { print $2 }' | tr -d '\r'; }
oom_refused() { [ "$(oom_errors)" -ge 1 ] 2>/dev/null; }

# The longest any one rank may run before it is killed: a guard against a hang,
# never a verdict on speed (a mixed loop's 24 generations and a fault held for
# seconds, on 2 busy cores under ASan, came near the old 60 s).
JOB_LIMIT=${JOB_LIMIT:-180}
PY=$(command -v /usr/bin/python3 python3 | head -1)

# What every rank script starts with:
#   bar NAME [BARRIER ARGS...]: `accelctl barrier ARGS NAME`, logging
#     "NAME.GEN enter NS" before and "NAME.GEN leave NS" after a pass to
#     $FDIR/gRANK (for early_releases), and "NAME RC MS" to $FDIR/tRANK;
#     returns the barrier's exit code.
#   waitfor FILE [SECONDS]: until $FDIR/FILE exists (at most SECONDS, 60: a
#     guard; exit 98 past that).
#   nap SECONDS: sleep without a process (a read with a timeout on $FDIR/.nap, a
#     FIFO job_start makes; sleep(1) where there is none).
#   loop GENS TIMEOUT [HOLD NODE FILE]: GENS passes of barrier "loop", short
#     random pauses between them; exits with the first failure. With HOLD, the
#     ranks of node NODE wait for $FDIR/FILE before they enter generation HOLD
#     (0-based): a fault injected meanwhile finds the other nodes' arrivals of
#     that generation in Redis, and the last one still to come.
PRELUDE='
declare -A _gen
nap() {
	case $1 in 0 | 0.0 | 0.00) return 0 ;; esac
	{ read -r -t "$1" _nap <>"$FDIR/.nap"; } 2>/dev/null
	[ $? -gt 128 ] || sleep "$1"
}
bar() {
	local name=$1 rc s t; shift
	local g=$name.${_gen[$name]:-0}
	_gen[$name]=$((${_gen[$name]:-0} + 1))
	s=${EPOCHREALTIME/[.,]/}000
	echo "$g enter $s" >>"$FDIR/g$ACCELCTL_RANK"
	accelctl barrier "$@" "$name"; rc=$?
	t=${EPOCHREALTIME/[.,]/}000
	[ $rc = 0 ] && echo "$g leave $t" >>"$FDIR/g$ACCELCTL_RANK"
	echo "$name $rc $(((t - s) / 1000000))" >>"$FDIR/t$ACCELCTL_RANK"
	return $rc
}
waitfor() {
	local end=$((${EPOCHREALTIME/[.,]/} + ${2:-60} * 1000000)) ms=10 t
	until [ -e "$FDIR/$1" ]; do
		[ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || { echo "waitfor $1: gave up after ${2:-60} s" >&2; exit 98; }
		printf -v t "0.%03d" "$ms"; nap "$t"
		ms=$((ms < 100 ? ms * 2 : 200))
	done
}
loop() {
	local g
	for ((g = 0; g < $1; g++)); do
		[ "$g" = "${3:-}" ] && [ "$ACCELCTL_NODE_RANK" = "$4" ] && waitfor "$5"
		nap 0.0$((RANDOM % 5))
		bar loop --timeout "$2" || exit
	done
}
'

# rank_env DIR NODES RANKS NODE LOCAL: the environment of one rank (or, with
# LOCAL 0, of its node's helper), one VAR=VALUE a line, into the array ENVV.
rank_env() {
	local d=$1 nodes=$2 ranks=$3 n=$4 l=$5
	ENVV=(PATH="$ACCELCTL_BIN_DIR:/usr/local/bin:/usr/bin:/bin" HOME="${HOME:-/}" TMPDIR="$d"
		FDIR="$d" ACCELCTL_TRANSPORT=redis ACCELCTL_RENDEZVOUS="$RDV" ACCELCTL_JOB_ID="$JOB"
		ACCELCTL_RUNTIME_DIR="$d/n$n" ACCELCTL_HELPER_IDLE=120s
		ACCELCTL_RANK=$((n * ranks + l)) ACCELCTL_WORLD_SIZE=$((nodes * ranks))
		ACCELCTL_LOCAL_RANK="$l" ACCELCTL_LOCAL_WORLD_SIZE="$ranks"
		ACCELCTL_NODE_RANK="$n" ACCELCTL_NNODES="$nodes")
	# shellcheck disable=SC2206
	[ -n "${BASH_ENV:-}" ] && ENVV+=(BASH_ENV="$BASH_ENV")	# tests/sh/bashenv
	[ -n "${JOB_ENV:-}" ] && ENVV+=($JOB_ENV)
	return 0
}

# job_start DIR NODES RANKS SCRIPT: start SCRIPT (bash, after PRELUDE) as RANKS
# ranks on each of NODES simulated nodes (only the nodes in $ONLY_NODES, if set),
# in the background. RDV is the rendezvous URL, JOB the job id (a fresh one by
# default), JOB_ENV more VAR=VALUE words. Rank R leaves DIR/out.R, DIR/err.R and
# DIR/rc.R ("EXIT-CODE MILLISECONDS"). job_wait waits for them.
job_start() {
	local d=$1 nodes=$2 ranks=$3 script=$4 n l r
	mkdir -p "$d"
	# The ranks' nap (PRELUDE) reads on it.
	[ -p "$d/.nap" ] || mkfifo -m 600 "$d/.nap" 2>/dev/null
	JOB=${JOB:-job$RANDOM$RANDOM}
	JOB_PIDS=""
	for ((n = 0; n < nodes; n++)); do
		case " ${ONLY_NODES:-$n} " in *" $n "*) ;; *) continue ;; esac
		mkdir -p -m 700 "$d/n$n"
		for ((l = 0; l < ranks; l++)); do
			r=$((n * ranks + l))
			rank_env "$d" "$nodes" "$ranks" "$n" "$l"
			(
				s=${EPOCHREALTIME/[.,]/}
				env -i "${ENVV[@]}" timeout -s KILL "$JOB_LIMIT" bash -c "$PRELUDE$script" \
					>"$d/out.$r" 2>"$d/err.$r" </dev/null &
				# timeout leads a process group of its own: tearDown ends it.
				echo $! >"$d/pid.$r"
				wait $!
				rc=$?
				echo "$rc $(((${EPOCHREALTIME/[.,]/} - s) / 1000))" >"$d/rc.$r"
			) &
			JOB_PIDS="$JOB_PIDS $!"
		done
	done
	echo "$d" >>"$(scratch)/jobdirs"
}

job_wait() {
	local p
	for p in $JOB_PIDS; do wait "$p"; done
	JOB_PIDS=""
}

# job_run DIR NODES RANKS SCRIPT: job_start, then job_wait.
job_run() { job_start "$@"; job_wait; }

# rcs DIR: every rank's exit code, in rank order ("0 0 125 0").
rcs() {
	local f r rc by=() out=""
	for f in "$1"/rc.*; do
		[ -f "$f" ] || continue
		r=${f##*.}
		rc=""
		read -r rc _ <"$f"
		case $r in *[!0-9]* | '') continue ;; esac
		by[r]=$rc
	done
	for r in "${!by[@]}"; do out="$out${out:+ }${by[r]}"; done
	echo "$out"
}

# errs DIR: every rank's stderr, each line prefixed with the rank.
errs() {
	local f
	for f in "$1"/err.*; do
		[ -f "$f" ] && sed "s/^/${f##*.}: /" "$f"
	done
}

# assertAllRc RC DIR COUNT WHAT: COUNT ranks ran, and every one exited RC.
assertAllRc() {
	local want=$1 d=$2 count=$3 what=$4 got
	got=$(rcs "$d")
	assertEquals "$what: exit codes of the $count ranks (stderr: $(errs "$d" | head -20))" \
		"$(printf "$want %.0s" $(seq 1 "$count") | sed 's/ $//')" "$got"
}

# bar_ms DIR NAME: the longest time any rank spent in its last barrier NAME (ms);
# bar_min_ms the shortest.
bar_ms() { cat "$1"/t[0-9]* 2>/dev/null | awk -v n="$2" '$1 == n { if ($3 > m) m = $3 } END { print m + 0 }'; }
bar_min_ms() { cat "$1"/t[0-9]* 2>/dev/null | awk -v n="$2" '$1 == n { if (!s || $3 < m) m = $3; s = 1 } END { print m + 0 }'; }

# assertNoEarly DIR: no generation of any barrier released before its last
# arrival (lib.sh's early_releases, over the generations someone passed: a
# generation that failed on every rank released nobody).
assertNoEarly() {
	local early
	early=$(cat "$1"/g[0-9]* 2>/dev/null | awk '
		$2 == "enter" { if ($3 > maxin[$1]) maxin[$1] = $3 }
		$2 == "leave" { if (!($1 in minout) || $3 < minout[$1]) minout[$1] = $3 }
		END { for (g in minout) if (maxin[g] > minout[g]) print "generation " g " released early" }')
	assertEquals "no generation released before its last arrival" "" "$early"
}

# helper_log DIR NODE / helper_pidfile DIR NODE: that node's helper files.
helper_log() { echo "$1/n$2/$JOB.node$2.log"; }
helper_pidfile() { echo "$1/n$2/$JOB.node$2.pid"; }
helper_pid() { local p; { p=$(<"$1/n$2/$JOB.node$2.pid"); } 2>/dev/null && echo "$p"; }

# helper_starts DIR NODE: how many helpers served that node (distinct pids in its log).
helper_starts() {
	grep -o 'accelctl-helper\[[0-9]*\]' "$(helper_log "$1" "$2")" 2>/dev/null | sort -u | wc -l
}

# helper_log_digest DIR NODE: a sanitizer's verdict, if any, and the log's last lines.
helper_log_digest() {
	local log; log=$(helper_log "$1" "$2")
	grep -m1 -E 'ERROR: AddressSanitizer|runtime error:' "$log" 2>/dev/null
	grep 'accelctl-helper\[' "$log" 2>/dev/null | tail -3
}

# assertOneHelperPerNode DIR NODES: one helper served each node the whole time
# (no crash and restart).
assertOneHelperPerNode() {
	local n
	for n in $(seq 0 $(($2 - 1))); do
		assertEquals "helpers started for node $n (log: $(helper_log_digest "$1" "$n"))" \
			1 "$(helper_starts "$1" "$n")"
	done
}

# at_gen DIR GEN: wait (at most 60 s: a guard, the loop's ranks fail long before)
# until rank 0 enters generation GEN of "loop". Its log read by bash, no process.
at_gen() {
	local want=$'\n'"loop.$2 enter " end=$((${EPOCHREALTIME/[.,]/} + 60000000)) ms=10 t g
	while :; do
		g=""
		{ g=$(<"$1/g0"); } 2>/dev/null
		case $'\n'$g in *"$want"*) return 0 ;; esac
		[ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || return 1
		printf -v t '0.%03d' "$ms"; nap "$t"
		ms=$((ms < 100 ? ms * 2 : 200))
	done
}

# fault DIR NAME: note that fault NAME happened now: "NAME NS PASSES", PASSES
# being the generations rank 0 had passed then. Tests assert with assertMidLoop
# that the fault hit a loop in flight.
fault() {
	local t=${EPOCHREALTIME/[.,]/}000
	echo "$2 $t $(grep -c leave "$1/g0" 2>/dev/null)" >>"$1/faults"
}

# assertMidLoop DIR GENS NAME...: each fault NAME was noted after the loop began
# and before rank 0 passed its last generation.
assertMidLoop() {
	local d=$1 gens=$2 name line last; shift 2
	last=$(grep "^loop\.$((gens - 1)) leave" "$d/g0" 2>/dev/null | awk '{ print $3 }')
	for name in "$@"; do
		line=$(grep "^$name " "$d/faults" 2>/dev/null | head -1)
		assertNotEquals "fault $name happened" "" "$line"
		[ -n "$line" ] || continue
		set -- $line
		assertTrue "fault $1 mid-loop (rank 0 had passed $3 of $gens)" "[ $3 -ge 1 ] && [ $3 -lt $gens ]"
		[ -n "$last" ] && assertTrue "fault $1 before the last pass" "[ $2 -lt $last ]"
	done
}

# wait_node_posted DIR NODES RANKS NODE NAME [GEN]: until `accelctl status` on
# node NODE shows that all its ranks arrived at barrier NAME (generation GEN)
# and it waits for other nodes (its arrival is posted), at most 15 s (a guard:
# it is seen in well under a second; a status read costs 50-150 ms under ASan).
wait_node_posted() {
	local d=$1 nodes=$2 ranks=$3 n=$4
	WNP_WANT="^barrier +$5 +generation ${6:-[0-9]+} .*waiting for node"
	rank_env "$d" "$nodes" "$ranks" "$n" 0
	eventually 15 node_posted
}
# node_posted: a line of `accelctl status` (in the environment ENVV) matches WNP_WANT.
node_posted() {
	local st l
	st=$(env -i "${ENVV[@]}" timeout 5 accelctl status 2>/dev/null)
	while IFS= read -r l; do
		[[ $l =~ $WNP_WANT ]] && return 0
	done <<<"$st"
	return 1
}

# no_password DIR WORD: WORD is in no file under DIR (outputs, logs, journals).
assertNoPassword() {
	local hits; hits=$(grep -rl -- "$2" "$1" 2>/dev/null)
	assertEquals "the password is in no output or log" "" "$hits"
}

# Valgrind: helpers run by hand under valgrind (`accelctl helper run`), then the
# ranks meet them. Skipped where valgrind is missing or the binary is sanitized.
vg_unavailable() {
	[ "${ACCELCTL_SANITIZED:-0}" = 1 ] && { echo "sanitized build: valgrind skipped" >&2; return 0; }
	command -v valgrind >/dev/null || { echo "valgrind not installed: skipped" >&2; return 0; }
	return 1
}

# vg_helpers_start DIR NODES RANKS: one helper per node under valgrind; VG_PIDS.
# `helper run` logs to stderr: that goes where a detached helper logs, so a
# helper started on demand after a crash shows up in the same log.
vg_helpers_start() {
	local d=$1 nodes=$2 ranks=$3 n i
	mkdir -p "$d"
	JOB=${JOB:-job$RANDOM$RANDOM}
	VG_PIDS=""
	for ((n = 0; n < nodes; n++)); do
		mkdir -p -m 700 "$d/n$n"
		rank_env "$d" "$nodes" "$ranks" "$n" 0
		env -i "${ENVV[@]}" timeout -s KILL 300 valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect,possible --log-file="$d/vg.$n" \
			"$ACCELCTL" helper run >/dev/null 2>>"$(helper_log "$d" "$n")" </dev/null &
		VG_PIDS="$VG_PIDS $!"
	done
	echo "$d" >>"$(scratch)/jobdirs"
	for ((n = 0; n < nodes; n++)); do
		eventually 60 test -S "$d/n$n/$JOB.node$n.sock" ||
			{ fail "helper of node $n under valgrind did not start in 60 s"; return 1; }
	done
}

# vg_helpers_stop DIR NODES RANKS: stop them; each must exit 0 with no valgrind error.
vg_helpers_stop() {
	local d=$1 nodes=$2 ranks=$3 n p i=0 rc
	for n in $(seq 0 $((nodes - 1))); do
		rank_env "$d" "$nodes" "$ranks" "$n" 0
		env -i "${ENVV[@]}" timeout 20 "$ACCELCTL" helper stop >/dev/null 2>&1
	done
	n=0
	for p in $VG_PIDS; do
		wait "$p"; rc=$?
		assertEquals "node $n's helper under valgrind exits 0 (137: never stopped; 99: errors): $(cat "$d/vg.$n")" 0 "$rc"
		n=$((n + 1))
	done
	VG_PIDS=""
}

# A server that is not Redis: it answers whatever it is sent with an HTTP error.
not_redis_start() {
	"$PY" -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
while True:
    c, _ = s.accept()
    try:
        c.settimeout(5)
        c.recv(65536)
        c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                  b"Content-Length: 11\r\nConnection: close\r\n\r\nBad Request")
    except OSError:
        pass
    c.close()
' "$1" &
	NOT_REDIS_PID=$!
	# Out of the job table: its SIGKILL in faults_teardown is no "Killed" notice.
	disown "$NOT_REDIS_PID" 2>/dev/null
	eventually 30 listening "$1"
}

# kill_conns N CONNS SECONDS: N times, as soon as Redis has CONNS client
# connections besides this one, CLIENT KILL TYPE normal (at most SECONDS in all);
# prints how many kills closed at least CONNS connections. One process that
# speaks RESP itself: a redis-cli per poll would make 200 rounds last a minute.
kill_conns() {
	timeout -s KILL $(($3 + 15)) "$PY" -c '
import socket, sys, time

def send(f, *args):
    out = "*%d\r\n" % len(args)
    for a in args:
        out += "$%d\r\n%s\r\n" % (len(a), a)
    f.write(out.encode())
    f.flush()
    return read(f)

def read(f):
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise SystemExit("redis: " + rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode()
    if kind == b"*":
        return [read(f) for _ in range(int(rest))]
    raise SystemExit("redis: unexpected %r" % line)

s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rwb")
want, conns, end = int(sys.argv[2]), int(sys.argv[3]), time.time() + float(sys.argv[4])
done = 0
while done < want and time.time() < end:
    others = [l for l in send(f, "CLIENT", "LIST").splitlines() if "cmd=client|list" not in l]
    if len(others) < conns:
        time.sleep(0.01)
        continue
    if send(f, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") >= conns:
        done += 1
print(done)
' "$REDIS_SOCK" "$@"
}

# faults_teardown: stop what this suite started: the ranks still running (a
# failed test), the helpers of its jobs (by their pid files), a non-Redis
# server, Redis.
faults_teardown() {
	local p d f
	# The process groups of timeout(1): ranks still running, valgrind.
	for p in ${VG_PIDS:-}; do
		grep -qa timeout "/proc/$p/cmdline" 2>/dev/null && kill -9 -- "-$p"
	done
	if [ -f "$(scratch)/jobdirs" ]; then
		for d in $(sort -u "$(scratch)/jobdirs"); do
			for f in "$d"/pid.*; do
				[ -f "$f" ] || continue
				p=$(<"$f")
				grep -qa timeout "/proc/$p/cmdline" 2>/dev/null && kill -9 -- "-$p"
			done
		done
		for d in $(sort -u "$(scratch)/jobdirs"); do
			for f in "$d"/n*/*.pid; do
				[ -f "$f" ] || continue
				p=$(<"$f")
				grep -qa accelctl "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p"
			done
		done
		rm -f "$(scratch)/jobdirs"
	fi
	[ -n "${NOT_REDIS_PID:-}" ] && kill -9 "$NOT_REDIS_PID" 2>/dev/null
	NOT_REDIS_PID=""
	[ -n "${REDIS_DIR:-}" ] && [ -f "$REDIS_DIR/pid" ] && kill -CONT "$(<"$REDIS_DIR/pid")" 2>/dev/null
	redis_stop
	JOB="" JOB_PIDS="" VG_PIDS="" JOB_ENV="" ONLY_NODES=""
	REDIS_PORT=""
	wait 2>/dev/null
}

# The mixed loop of the Redis high-availability suites (t_sentinel.sh,
# t_cluster.sh): NODES x RANKS ranks over GENS generations.
NODES=${NODES:-3} RANKS=${RANKS:-2} GENS=${GENS:-24}

# A generation: the barrier, rank 0's broadcast of the generation's number
# (every rank checks it), rank 0's --wait for a command of its own.
PRELUDE="$PRELUDE"'
hloop() {
	local g v
	for ((g = 0; g < $1; g++)); do
		[ "$g" = "$2" ] && [ "$ACCELCTL_NODE_RANK" = "$3" ] && waitfor "$4" 120
		nap 0.0$((RANDOM % 5))
		bar loop --timeout 40s || exit
		v=$(accelctl broadcast --timeout 40s val "value $g") || exit
		[ "$v" = "value $g" ] || { echo "generation $g: broadcast gave [$v]" >&2; exit 90; }
		accelctl on-main --wait --timeout 40s -- true || exit
	done
}
'

# next_pass DIR NAME: ms from fault NAME to the first barrier any rank passed after it.
next_pass() {
	local t; t=$(awk -v n="$2" '$1 == n { print $2; exit }' "$1/faults")
	cat "$1"/g[0-9]* | awk -v t="$t" '$2 == "leave" && $3 > t { if (!m || $3 < m) m = $3 }
		END { if (m) printf "%d\n", (m - t) / 1000000; else print "none" }'
}

# mixed_loop RDV FAULT...: the loop of NODES x RANKS over GENS generations of
# hloop through rendezvous RDV; at a third of it, while node NODES-1 is held back (the others'
# arrivals are in Redis), each FAULT runs (a function; it notes itself with
# `fault`), then the last node arrives. Checks the loop as the fault suites do.
mixed_loop() {
	# A directory of its own: two tests of a suite once drew the same
	# $RANDOM, and the second counted the first's generations too.
	local d hold=$((GENS / 3)) f; d=$(mktemp -d "$(scratch)/loop.XXXXXX")
	RDV=$1; shift
	job_start "$d" $NODES $RANKS "hloop $GENS $hold $((NODES - 1)) faulted"
	if at_gen "$d" "$hold"; then
		wait_node_posted "$d" $NODES $RANKS 0 loop "$hold" ||
			echo "warning: node 0 not seen waiting at loop" >&2
		for f in "$@"; do "$f" "$d" || fail "$f did not happen"; done
	else
		fail "the loop did not reach generation $hold (stderr: $(errs "$d" | head -5))"
	fi
	touch "$d/faulted"
	job_wait
	assertAllRc 0 "$d" $((NODES * RANKS)) "$*"
	assertEquals "every rank entered and passed every generation" $((NODES * RANKS * GENS * 2)) \
		"$(cat "$d"/g[0-9]* | wc -l)"
	assertNoEarly "$d"
	assertOneHelperPerNode "$d" $NODES
	# After the fault, each generation passes at the loop's pace: a helper
	# that lost the run's stream (its cursor past the new master's entries)
	# passes only when its periodic look finds the result, 3.5 s a barrier.
	# The pace is the loop's own before the fault (rank 0's generations 1 to
	# hold-1; the first one starts the helpers), not a fixed figure: the old
	# "median under 1 s" judged the machine's speed (each barrier waits for
	# the slowest of 6 ranks' previous broadcast and on-main --wait, a dozen
	# processes each, on 2 busy cores under ASan). The last GENS/3 barriers'
	# median may be 3 times the pace before, or 3 s, whichever is larger: a
	# loop passing at the look's 3.5 s, or at a deadline, or never, still fails.
	local before after limit
	before=$(head -n "$hold" "$d/t0" | tail -n +2 | ms_median)
	after=$(tail -n $((GENS / 3)) "$d/t0" | ms_median)
	limit=$((3 * ${before:-0} > 3000 ? 3 * ${before:-0} : 3000))
	assertTrue "the last $((GENS / 3)) barriers' median, ${after} ms, is at most ${limit} ms (3 x ${before} ms, the median before the fault, or 3 s)" \
		"[ ${after:-99999} -le $limit ]"
	LOOP_DIR=$d
}

# ms_median: the median of the third fields (ms) of the "NAME RC MS" lines on stdin.
ms_median() {
	awk '{ print $3 }' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0 }'
}
