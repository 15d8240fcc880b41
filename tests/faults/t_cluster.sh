# t_cluster.sh: issue 20's Redis Cluster faults: three masters and three replicas on
# loopback (tests/sh/cluster.sh), and ranks of 3 simulated nodes that loop over a
# barrier, a broadcast and an `on-main --wait` (faults/lib.sh's mixed_loop) while the
# job's slot is migrated to another master key by key (ASK, then MOVED), or held
# half-moved for 12 s (ASK followed with ASKING, TRYAGAIN sent again), a replica
# takes over with CLUSTER FAILOVER, the slot's master is SIGKILLed (its replica is
# promoted). Each prints the time from the fault to the next barrier passed.
#
# One cluster serves every test (cluster.sh's cl_ready): started for the first,
# put back as it was for each next one (a node killed or stopped back, roles and
# slots moved back, data, scripts, counters and clients cleared).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../sh/cluster.sh"

tearDown() { faults_teardown; }
oneTimeTearDown() { faults_teardown; cl_stop; }

# The mixed loops run 15 generations, not faults/lib.sh's 24, with a second hold
# (late_loop). The fault still comes at a third of the loop (generation 5: the
# helpers started, and barrier, broadcast and on-main --wait each done a few
# times), with node 2 held back and the other nodes' arrivals posted; up to 4
# generations pass while it lasts, and the last 5 always after it, their median
# checked against the pace before it (a helper that sits out a back-off or
# misses a result shows in all 5).
GENS=15

# late_loop FAULT...: mixed_loop through the cluster with FAULT..., node 2's ranks
# held a second time, before generation GENS - GENS/3 - 1 of "loop", until the
# faults are over. A move lets node 2 go as soon as its first keys moved (the
# loop goes on while the slot is half here, half there), and generations pass
# while it lasts: 7 to 10 of 16 in a hold of 12 s on a machine of today, fewer
# under ASan, and a quicker machine or helper would end the loop before the
# move ("moved" after the last pass). With this hold the faults are noted
# mid-loop, and the last GENS/3 generations come after them, whatever the speed.
late_loop() {
	JOB_ENV="${JOB_ENV:+$JOB_ENV }LATE_GEN=$((GENS - GENS / 3 - 1)) LATE_NODE=$((NODES - 1))"
	mixed_loop "$RDV_CLUSTER" "$@" faults_over
}
# faults_over DIR: the faults are over: node 2 may pass the second hold.
faults_over() { touch "$1/over"; }

# In every rank, with LATE_GEN set: barrier "loop" of generation LATE_GEN waits,
# on node LATE_NODE, until $FDIR/over exists (faults/lib.sh's bar, renamed
# _bar_early, and waitfor).
PRELUDE="$PRELUDE"'
_f=$(declare -f bar) && eval "_bar_early${_f#bar}"
_late_n=0
bar() {
	if [ "$1" = loop ] && [ -n "${LATE_GEN:-}" ]; then
		[ "$_late_n" = "$LATE_GEN" ] && [ "$ACCELCTL_NODE_RANK" = "$LATE_NODE" ] && waitfor over 120
		_late_n=$((_late_n + 1))
	fi
	_bar_early "$@"
}
'

# The job's slot and the node serving it now.
job_slot() { cl_slot "{$JOB}"; }

# migrate_keys SRC DST SLOT N: MIGRATE the slot's keys, N at a time, from SRC to
# DST until none is left (or, with ONCE, one batch); 1 on a refusal.
migrate_keys() {
	local keys out
	while keys=$(cl_cli "$1" cluster getkeysinslot "$3" "$4") && [ -n "$keys" ]; do
		# shellcheck disable=SC2086
		out=$(cl_cli "$1" migrate 127.0.0.1 "$(cl_port "$2")" "" 0 5000 keys $keys)
		case $out in OK | NOKEY) ;; *) echo "MIGRATE: $out" >&2; return 1 ;; esac
		[ -z "${ONCE:-}" ] || return 0
	done
	return 0
}

# The counters below ask NODE through CLI: cl_cli (bounded) by default; the
# polls (run by eventually, which has its own deadline, on a node that runs) make
# it cl_rcli, one process a look instead of two. Their output is read by bash.

# redirected NODE: it gave an ASK or TRYAGAIN reply.
redirected() { local CLI=cl_rcli; [ "$(redirects "$1")" -gt 0 ]; }

# redirects NODE: how many ASK and TRYAGAIN replies NODE gave.
redirects() {
	local out l n=0
	out=$("${CLI:-cl_cli}" "$1" info errorstats 2>/dev/null)
	while IFS= read -r l; do
		l=${l%$'\r'}
		case $l in
		errorstat_ASK:count=* | errorstat_TRYAGAIN:count=*)
			l=${l#*count=}
			n=$((n + ${l%%,*}))
			;;
		esac
	done <<<"$out"
	echo "$n"
}

# asked NODE: it was sent ASKING (a helper followed an ASK there).
asked() {
	local out
	out=$(cl_rcli "$1" info commandstats 2>/dev/null)
	[[ $'\n'$out =~ $'\n'cmdstat_asking:calls=[1-9] ]]
}

# askers NODE: the clients connected to NODE, but the one asking, its replicas'
# links and MIGRATE's cached connection (RESTORE-ASKING): the helpers'
# connections to it as the importing node; askers_at_least NODE N: N of them.
askers() {
	local out l n=0
	out=$("${CLI:-cl_cli}" "$1" client list 2>/dev/null)
	while IFS= read -r l; do
		case $l in *cmd=restore-asking*) continue ;; *cmd=*) ;; *) continue ;; esac
		[[ $l =~ flags=[^\ ]*S ]] && continue
		n=$((n + 1))
	done <<<"$out"
	echo $((n - 1))
}
askers_at_least() { local CLI=cl_rcli; [ "$(askers "$1")" -ge "$2" ]; }

# conns NODE: the connections NODE has accepted since it started (or since the
# last reset of its counters).
conns() {
	local out l
	out=$(cl_cli "$1" info stats)
	while IFS= read -r l; do
		l=${l%$'\r'}
		case $l in total_connections_received:*) echo "${l#*:}"; return ;; esac
	done <<<"$out"
}

# status_everywhere DIR: accelctl status on every node of the job in DIR.
status_everywhere() {
	local n
	for ((n = 0; n < NODES; n++)); do
		rank_env "$1" "$NODES" "$RANKS" "$n" 0
		env -i "${ENVV[@]}" timeout 10 accelctl status >/dev/null 2>&1
	done
	return 0
}

# start_move [DST]: the job's slot starts moving from the master serving it to
# DST, or else the first other master: IMPORTING there, MIGRATING here, its
# first 3 keys moved. MV_SLOT, MV_SRC and MV_DST say which.
start_move() {
	local i
	MV_SLOT=$(job_slot) MV_DST=${1:-}
	MV_SRC=$(cl_owner "$MV_SLOT")
	for i in n0 n1 n2 n3 n4 n5; do
		[ -z "$MV_DST" ] && [ "$i" != "$MV_SRC" ] && [ "$(cl_role "$i")" = master ] &&
			MV_DST=$i && break
	done
	cl_cli "$MV_DST" cluster setslot "$MV_SLOT" importing "$(cl_id "$MV_SRC")" | grep -q OK &&
		cl_cli "$MV_SRC" cluster setslot "$MV_SLOT" migrating "$(cl_id "$MV_DST")" | grep -q OK &&
		ONCE=1 migrate_keys "$MV_SRC" "$MV_DST" "$MV_SLOT" 3
}

# migrate DIR: the job's slot to another master, as redis-cli --cluster reshard
# does it: IMPORTING on the target, MIGRATING on the source, its keys moved a
# few at a time with MIGRATE, then NODE on every master. The held node is let
# go after the first keys moved: the helpers meet a slot half here, half
# there (ASK, TRYAGAIN) until it has moved (MOVED).
migrate() {
	local d=$1 slot src dst did i
	fault "$d" migrate
	start_move "${MIGRATE_TO:-}" || return 1
	slot=$MV_SLOT src=$MV_SRC dst=$MV_DST did=$(cl_id "$MV_DST")
	touch "$d/faulted"
	# Until a helper met the half-moved slot: the source's count of ASK and
	# TRYAGAIN replies (INFO errorstats) grows (the helpers' logs say it at
	# most once per 10 s).
	eventually 30 redirected "$src" || echo "no helper met the moving slot" >&2
	REDIRECTS=$(redirects "$src")
	if [ -n "${HOLD:-}" ]; then
		# Held half-moved for HOLD s (the fault's length: longer than
		# the 5 s reply deadline and PING period), the loop going on:
		# ASK is followed to the importing node with ASKING, TRYAGAIN
		# sent again, and no helper drops its connections (the
		# source accepts none; the harness's own INFO is one).
		# A status on every node first, as a user asks while a job
		# hangs: it reads who is missing now (a look, whose GET of
		# the result the half-moved slot answers with ASK), so every
		# waiting helper is sent to the importing node whatever the
		# machine's timing (a helper reads the store only when a
		# line is due, not half a second into every wait: issue 35).
		status_everywhere "$d"
		eventually 30 asked "$dst" && ASKED=1
		local c0 r0; r0=$(redirects "$src") c0=$(conns "$src")
		sleep "$HOLD"
		REDIALS=$(($(conns "$src") - c0 - 1))
		PER_S=$((($(redirects "$src") - r0) / HOLD))
		ASKERS=$(askers "$dst")
	fi
	migrate_keys "$src" "$dst" "$slot" 10 || return 1
	for i in "$dst" "$src" $(cl_live); do
		[ "$(cl_role "$i")" = master ] &&
			cl_cli "$i" cluster setslot "$slot" node "$did" >/dev/null
	done
	fault "$d" moved
	MOVED_TO=$dst
}

# lose_importing DIR: the job's slot half-moved to another master, which is then
# lost once a helper followed an ASK there (HOW: KILL, SIGKILLed: the cluster is
# down until its replica is promoted, for HOLD s: past the 5 s reply deadline
# and the ASK connection's back-off; PAUSE, CLIENT PAUSE: it hangs with its
# connections open, the cluster whole, until a helper gave up on it and the
# pause ended); then the move is given up on the source (SETSLOT STABLE, as redis-cli --cluster fix
# would). REDIALS: the connections the source accepted meanwhile.
lose_importing() {
	local d=$1 slot src dst c0
	fault "$d" migrate
	start_move || return 1
	slot=$MV_SLOT src=$MV_SRC dst=$MV_DST
	touch "$d/faulted"
	eventually 30 asked "$dst" && ASKED=1
	c0=$(conns "$src")
	fault "$d" lost
	case $HOW in
	KILL) kill -KILL "$(cl_pid "$dst")" || return 1
		sleep "$HOLD" ;;
	# Paused 20 s, then on as soon as a helper has given up on it (5 s
	# without an answer): an 8 s pause was over before any helper's command
	# had waited 5 s on a busy machine (CI of stop 38). CLIENT UNPAUSE
	# cannot end it early: it waits behind the pause like any command.
	PAUSE) cl_cli "$dst" client pause 20000 all | grep -q OK || return 1
		eventually 20 grep -qE "the node importing the job.s slot, 127.0.0.1:[0-9]*: no answer" "$d"/n*/*.log
		# The move is given up once the node answers again, as before.
		eventually 30 cl_cli "$dst" ping >/dev/null ;;
	esac
	REDIALS=$(($(conns "$src") - c0 - 1))
	cl_cli "$src" cluster setslot "$slot" stable | grep -q OK || return 1
	fault "$d" stable
}

# give_up_then_move DIR: the job's slot starts moving to a master A, until a
# helper followed an ASK there; the move is given up (A's keys sent back, both
# nodes STABLE, as redis-cli --cluster fix does), then the slot moves to
# another master (migrate, held HOLD s half-moved). The helpers' connection to
# A, idle, must not keep them from the new importing node.
give_up_then_move() {
	local d=$1 slot src a i keys
	fault "$d" abandon
	start_move || return 1
	slot=$MV_SLOT src=$MV_SRC a=$MV_DST
	for i in n0 n1 n2 n3 n4 n5; do
		[ "$i" != "$src" ] && [ "$i" != "$a" ] && [ "$(cl_role "$i")" = master ] &&
			MIGRATE_TO=$i && break
	done
	eventually 30 asked "$a" || { echo "no helper followed ASK to $a" >&2; return 1; }
	# Most often both posting nodes' helpers meet an ASK (node 2 is held
	# back); which do depends on the keys moved first: take what came.
	eventually 5 askers_at_least "$a" $((NODES - 1)) || true
	ASKERS_A=$(askers "$a")
	for i in 1 2 3 4 5; do
		keys=$(cl_cli "$a" cluster getkeysinslot "$slot" 100 | tr '\n' ' ')
		[ -n "${keys// /}" ] || break
		printf 'ASKING\nMIGRATE 127.0.0.1 %s "" 0 5000 KEYS %s\n' "$(cl_port "$src")" "$keys" |
			timeout 10 redis-cli -h 127.0.0.1 -p "$(cl_port "$a")" >/dev/null
	done
	cl_cli "$src" cluster setslot "$slot" stable | grep -q OK || return 1
	cl_cli "$a" cluster setslot "$slot" stable | grep -q OK || return 1
	migrate "$d"
}

# slot_pair: SRC, the node serving the job's slot, and REP, its replica.
slot_pair() {
	SRC=$(cl_owner "$(job_slot)") REP=$(cl_replica_of "$SRC")
	[ -n "$REP" ]
}

# promoted NODE: it is a master, and says the cluster is whole.
promoted() { cl_is "$1" master && cl_ok "$1"; }

# cluster_failover DIR: the slot master's replica takes over (CLUSTER FAILOVER).
cluster_failover() {
	slot_pair || return 1
	fault "$1" failover
	cl_cli "$REP" cluster failover | grep -q OK || return 1
	eventually 60 promoted "$REP"
}

# kill_slot_master DIR: SIGKILL the slot's master; its replica is promoted.
kill_slot_master() {
	slot_pair || return 1
	fault "$1" kill
	kill -9 "$(cl_pid "$SRC")" || return 1
	eventually 60 promoted "$REP" || return 1
	fault "$1" promoted
}

# stop_slot_master DIR: SIGSTOP the slot's master; its replica is promoted
# while the old one keeps its connections, silent (the helpers waited on it
# until their deadline before: review of issue 20).
stop_slot_master() {
	slot_pair || return 1
	fault "$1" stop
	kill -STOP "$(cl_pid "$SRC")" || return 1
	eventually 60 promoted "$REP" || return 1
	fault "$1" promoted
}

report() { echo "# cluster: $1: the next barrier passed $(next_pass "$LOOP_DIR" "$2") ms after the fault" >&2; }

testSlotMigratedMidLoop() {
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM
	late_loop migrate
	assertMidLoop "$LOOP_DIR" $GENS migrate moved
	assertEquals "the slot is served by the node it moved to" "$MOVED_TO" "$(cl_owner "$(job_slot)")"
	assertTrue "a helper met the moving slot (ASK, TRYAGAIN: $REDIRECTS)" "[ ${REDIRECTS:-0} -gt 0 ]"
	assertTrue "a helper followed MOVED" "grep -q MOVED '$LOOP_DIR'/n*/*.log"
	report "slot migrated (MIGRATE key by key), from SETSLOT NODE" moved
}

# The slot held half-moved past every interval inside accelctl (the 5 s reply
# deadline and PING, the progress line's 10 s, the keys' TTL): the helpers
# follow ASK (ASKING, on a connection to the importing node) and send
# TRYAGAIN's commands again, without reconnecting; once it has moved, the
# next barrier passes at the loop's pace (no back-off to sit out).
testSlotHeldHalfMovedFollowsAsk() {
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM
	HOLD=12 ASKED=0 REDIALS=x
	# A TTL of 4 s: the hold outlasts it three times, so the keys of what
	# the ranks wait for live only by the renewals (every 1.3 s) sent
	# while the slot moves.
	JOB_ENV="ACCELCTL_REDIS_TTL=4s"
	late_loop migrate
	assertMidLoop "$LOOP_DIR" $GENS migrate moved
	assertEquals "the importing node was sent ASKING" 1 "$ASKED"
	assertEquals "no helper dialled the source again while the slot moved" 0 "$REDIALS"
	assertEquals "no helper took ASK or TRYAGAIN for a failure" "" \
		"$(grep -hE ': (ASK|TRYAGAIN) ' "$LOOP_DIR"/n*/*.log)"
	assertTrue "a helper followed MOVED" "grep -q MOVED '$LOOP_DIR'/n*/*.log"
	report "slot held half-moved for $HOLD s, from SETSLOT NODE" moved
	HOLD=
}

# The same, with the node helpers under valgrind (the ASK connection, the
# queue of TRYAGAIN's commands, MOVED at the end): no error, no leak.
testMigrationHelpersUnderValgrind() {
	local d; d=$(scratch)/vg
	if vg_unavailable; then startSkipping; fail "valgrind unavailable"; return; fi
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM RDV=$RDV_CLUSTER ASKED=0
	vg_helpers_start "$d" 2 2 || return
	# 20 generations of barrier "loop" (faults/lib.sh's loop), node 1 held back
	# at generation 8 until the move begins (migrate lets it go once the first
	# keys moved) and at 16 until it has ended: generations pass while the slot
	# is half-moved and after it moved, whatever the machine's speed (the loop
	# once ran to its end during the 6 s hold, and "moved" came after it).
	job_start "$d" 2 2 'for ((g = 0; g < 20; g++)); do
		if [ "$ACCELCTL_NODE_RANK" = 1 ]; then
			case $g in 8) waitfor faulted 120 ;; 16) waitfor moved 120 ;; esac
		fi
		nap 0.0$((RANDOM % 5))
		bar loop --timeout 60s || exit
	done'
	if at_gen "$d" 8; then
		HOLD=6 migrate "$d" || fail "the migration did not happen"
	fi
	touch "$d/faulted" "$d/moved"
	job_wait
	assertAllRc 0 "$d" 4 "a migration with the helpers under valgrind"
	assertNoEarly "$d"
	assertMidLoop "$d" 20 migrate moved
	assertEquals "the importing node was sent ASKING" 1 "$ASKED"
	vg_helpers_stop "$d" 2 2
}

# The importing node lost mid-move (killed; hung): the helpers close only its
# connection and send again what it carried, after a back-off; once the move
# is given up, the job goes on (what moved to the lost node is posted again).
checkImportingLost() {
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM
	HOW=$1 HOLD=8 ASKED=0 REDIALS=x
	late_loop lose_importing
	assertMidLoop "$LOOP_DIR" $GENS migrate lost stable
	assertEquals "the importing node was sent ASKING" 1 "$ASKED"
	assertTrue "a helper said which node it lost, and why ($2)" \
		"grep -qE 'the node importing the job.s slot, 127.0.0.1:[0-9]*: ($2)' '$LOOP_DIR'/n*/*.log"
	report "the importing node lost mid-move ($1), from SETSLOT STABLE" stable
	HOLD=
}

# Killed: the cluster is down (CLUSTERDOWN: every helper redials, backing off)
# until the node's replica is promoted; a helper that redialled the source at
# each failure of the importing node's connection made 133 in 8 s.
testImportingNodeKilled() {
	# Refused, or closed under a command in flight (once in 10 s per helper).
	checkImportingLost KILL 'Connection refused|Server closed the connection'
	assertTrue "the helpers dialled the source a few times, not at each failure: $REDIALS" \
		"[ ${REDIALS:-999} -lt 30 ]"
}

# Hung (the cluster whole): its commands go unanswered for 5 s, then wait and go
# again; the connections to the source stay.
testImportingNodeHangs() {
	checkImportingLost PAUSE 'no answer in 5 s'
	assertEquals "no helper dialled the source again" 0 "$REDIALS"
}


# A move given up, then another to a third master: the helpers follow ASK to
# the new importing node (their idle connection to the first is closed, not
# in the way: before, they sent every command back to the slot's node every
# 100 ms for as long as the move lasted, 180 redirects a second per helper).
testMoveGivenUpThenAnother() {
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM
	HOLD=8 ASKED=0 PER_S=x MIGRATE_TO= ASKERS_A=
	late_loop give_up_then_move
	assertMidLoop "$LOOP_DIR" $GENS abandon migrate moved
	assertEquals "the second importing node was sent ASKING" 1 "$ASKED"
	# Those that reached the first reach the second (which helpers meet an
	# ASK depends on which keys moved first: on Valkey, node 2's did not).
	assertTrue "the helpers reached the second importing node: $ASKERS, the first $ASKERS_A" \
		"[ ${ASKERS:-0} -ge ${ASKERS_A:-9} ] && [ ${ASKERS_A:-0} -ge 1 ]"
	assertTrue "redirects from the slot's node while it moved: $PER_S a second for $NODES helpers" \
		"[ ${PER_S:-999} -lt 150 ]"
	report "a move given up, then another held $HOLD s, from SETSLOT NODE" moved
	HOLD= MIGRATE_TO=
}

testClusterFailoverMidLoop() {
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM
	late_loop cluster_failover
	assertMidLoop "$LOOP_DIR" $GENS failover
	report "CLUSTER FAILOVER of the slot's master" failover
}

testSlotMasterKilledMidLoop() {
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM
	late_loop kill_slot_master
	assertMidLoop "$LOOP_DIR" $GENS kill
	report "the slot's master SIGKILLed" kill
	report "the slot's master SIGKILLed, from its replica's promotion" promoted
}

testSlotMasterStalledMidLoop() {
	cl_ready || { fail "the cluster did not start"; return; }
	JOB=job$RANDOM$RANDOM
	late_loop stop_slot_master
	assertMidLoop "$LOOP_DIR" $GENS stop promoted
	report "the slot's master SIGSTOPped, from its replica's promotion" promoted
}

load_shunit2
