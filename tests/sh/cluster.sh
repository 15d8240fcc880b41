# cluster.sh: a Redis Cluster on loopback for a suite: three masters and three replicas
# (Debian's redis-server, `redis-cli --cluster create`), and the moves of a job's slot;
# sourced by tests/faults/t_cluster.sh (after lib.sh: scratch, skip_suite, eventually,
# proc_gone).
#
# One cluster serves the whole suite (cl_ready): cl_start makes it for the first test,
# and cl_reset puts it back as cl_start left it for each next one (what a test
# stopped goes on, what it killed starts again on its port, moved roles and slots go
# back, data, scripts, counters and clients are cleared). Six servers started,
# joined and synchronised per test were most of the suite's time on a busy machine.
#
# The nodes run in the foreground as background children of the suite's shell (not
# --daemonize yes): ctest's kill of a suite past its TIMEOUT takes its process tree,
# and daemonized nodes (re-parented to pid 1) escaped it. Where setpriv can, a node
# also gets SIGKILL when that shell dies (port.sh's server_pdeath).
. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# How soon a node that stops answering is failed over (cluster-node-timeout).
CLUSTER_TIMEOUT_MS=${CLUSTER_TIMEOUT_MS:-1000}

# How long a node may take to answer, and the cluster to come up or settle after a
# reset: a guard against one that never does, never a verdict on speed.
CL_LIMIT=${CL_LIMIT:-90}

# cl_ready: the suite's cluster as cl_start made it: started on first use, put back
# (cl_reset) afterwards. One that cannot be put back is replaced by a new one (said
# on stderr). Sets what cl_start sets.
cl_ready() {
	if [ -n "${CL_DIR:-}" ] && [ -s "$CL_DIR/slots" ]; then
		cl_reset && return 0
		echo "cluster.sh: the cluster could not be put back ($CL_WHY): a new one" >&2
		cl_stop
	fi
	cl_start
}

# cl_start: start six nodes in $(scratch)/cl/n0..n5 and make them a cluster, n0..n2
# masters (each with one replica). Sets CL_DIR and RDV_CLUSTER (the seeds: the three
# masters). Waits (at most CL_LIMIT s) until every node says cluster_state:ok, knows
# the six nodes none of them failing, and every replica is in sync; then notes roles
# and slots for cl_reset. Skips the suite (77) where redis-server is missing.
cl_start() {
	local i addrs="" tries=10 again
	command -v redis-server >/dev/null || { echo "redis-server not installed: skipped" >&2; skip_suite; }
	cl_stop
	CL_DIR=$(scratch)/cl
	rm -rf "$CL_DIR"
	# The six started at once, then each waited for; one that found its port
	# taken meanwhile starts again on another.
	for i in 0 1 2 3 4 5; do
		mkdir -p "$CL_DIR/n$i"
		cl_free_port "$addrs" >"$CL_DIR/n$i/port" || return 1
		addrs="$addrs 127.0.0.1:$(cl_port "n$i")"
		cl_node_launch "$i"
	done
	while :; do
		again=""
		for i in 0 1 2 3 4 5; do
			cl_node_wait "$i" && continue
			if [ "$CL_WHY" = "port taken" ] && [ $tries -gt 1 ]; then
				echo "cluster.sh: port $(cl_port "n$i") (or its bus port) taken, another one" >&2
				cl_free_port "$addrs" >"$CL_DIR/n$i/port" || return 1
				addrs="$addrs 127.0.0.1:$(cl_port "n$i")"
				cl_node_launch "$i"
				again=1
				continue
			fi
			echo "cluster.sh: node n$i on port $(cl_port "n$i"): $CL_WHY; its log:" >&2
			tail -n 10 "$CL_DIR/n$i/log" >&2 2>/dev/null
			return 1
		done
		[ -n "$again" ] || break
		tries=$((tries - 1))
	done
	addrs=""
	for i in 0 1 2 3 4 5; do addrs="$addrs 127.0.0.1:$(cl_port "n$i")"; done
	# shellcheck disable=SC2086
	timeout 120 redis-cli --cluster create $addrs --cluster-replicas 1 --cluster-yes >"$CL_DIR/create.log" 2>&1 ||
		{ cat "$CL_DIR/create.log" >&2; return 1; }
	RDV_CLUSTER="redis-cluster://127.0.0.1:$(cl_port n0),127.0.0.1:$(cl_port n1),127.0.0.1:$(cl_port n2)"
	cl_wait_ok "$CL_LIMIT" || { echo "the cluster did not come up" >&2; return 1; }
	# A replica that never synchronised cannot be promoted (its data is
	# too old: cluster-replica-validity-factor): wait until each has.
	cl_wait_synced "$CL_LIMIT" || { echo "the replicas did not synchronise" >&2; return 1; }
	cl_note || { echo "cluster.sh: the new cluster's roles and slots could not be read" >&2; return 1; }
}

# cl_wait_synced SECONDS: every live node knows the six nodes, none failing, and
# every replica's link to its master is up.
cl_wait_synced() { eventually "$1" cl_all cl_settled; }

# cl_synced NODE: a master, or a replica whose link to its master is up.
cl_synced() { cl_look "$1" && { [ "$LK_ROLE" = master ] || [ "$LK_LINK" = up ]; }; }

# cl_free_port TAKEN: a port P nothing listens on, with its cluster bus port P+10000
# free too, both below Linux's ephemeral range (32768 up: a port an outgoing
# connection holds cannot be bound), from 20000-22699 (free_port hands out
# 22700-29999), neither among TAKEN ("127.0.0.1:P ..."), both reserved for this
# suite (port.sh's port_reserve) so that no other suite's free_port or cl_free_port
# gives them out meanwhile.
cl_free_port() {
	local p i
	for ((i = 0; i < 2000; i++)); do
		p=$((20000 + RANDOM % 2700))
		case " $1 " in *":$p "*) continue ;; esac
		if declare -F port_reserve >/dev/null; then
			port_reserve "$p" && port_reserve $((p + 10000)) || continue
		fi
		{ listening "$p" || listening $((p + 10000)); } && continue
		echo "$p"
		return 0
	done
	echo "cluster.sh: no free port pair found" >&2
	return 1
}

cl_port() { local p; read -r p <"$CL_DIR/$1/port" && echo "$p"; }
cl_pid() { local p; { read -r p <"$CL_DIR/$1/pid"; } 2>/dev/null && echo "$p"; }

# cl_cli NODE ARGS...: redis-cli to NODE, bounded (a stopped or paused node fails the
# call instead of hanging the test). cl_rcli: the same unbounded, for the polls of
# eventually (which has its own deadline) on nodes that run (cl_running).
cl_cli() {
	local n=$1 p; shift
	read -r p <"$CL_DIR/$n/port" || return 1
	timeout 10 redis-cli -h 127.0.0.1 -p "$p" "$@"
}
cl_rcli() {
	local n=$1 p; shift
	read -r p <"$CL_DIR/$n/port" || return 1
	redis-cli -h 127.0.0.1 -p "$p" "$@"
}

# cl_pstate PID: CL_PST, the state letter of process PID (R, S, T, Z...); false, and
# empty, when there is none. Read by bash: no process.
cl_pstate() {
	local s
	CL_PST=""
	{ s=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	s=${s##*) }
	CL_PST=${s%% *}
}

# cl_running NODE: its process runs (not gone, not a zombie, not SIGSTOPped).
cl_running() {
	local p=""
	{ read -r p <"$CL_DIR/$1/pid"; } 2>/dev/null
	[ -n "$p" ] && cl_pstate "$p" || return 1
	case $CL_PST in Z | X | T | t) return 1 ;; esac
}

# cl_node_launch I: start node I on its port, in cluster mode (again: its nodes.conf
# makes it the same node to the others); cl_node_wait I: until it answers (CL_LIMIT s
# at most). False when it exited first (CL_WHY "port taken" when its log says so) or
# never answered (killed then). cl_node_start I: both.
cl_node_launch() {
	local d=$CL_DIR/n$1 port p
	read -r port <"$d/port" || return 1
	server_pdeath
	# shellcheck disable=SC2086
	$SERVER_PDEATH redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--cluster-enabled yes --cluster-config-file "$d/nodes.conf" \
		--cluster-node-timeout "$CLUSTER_TIMEOUT_MS" --repl-diskless-sync-delay 0 \
		--dir "$d" --daemonize no --pidfile "$d/pid" --logfile "$d/log" \
		</dev/null >>"$d/log" 2>&1 &
	p=$!
	# Out of the job table: a test's plain `wait` must not wait for it.
	disown "$p" 2>/dev/null
	echo "$p" >"$d/pid"
}
cl_node_wait() {
	local d=$CL_DIR/n$1 port p
	CL_WHY=""
	read -r port <"$d/port" && read -r p <"$d/pid" || { CL_WHY="not started"; return 1; }
	eventually "$CL_LIMIT" cl_up_or_gone "$p" "$port"
	if proc_gone "$p"; then
		CL_WHY=exited
		grep -qi 'address already in use' "$d/log" 2>/dev/null && CL_WHY="port taken"
		rm -f "$d/pid"
		return 1
	fi
	cl_up_or_gone "$p" "$port" && return 0
	CL_WHY="no answer in $CL_LIMIT s"
	kill -9 "$p" 2>/dev/null
	rm -f "$d/pid"
	return 1
}
cl_node_start() { cl_node_launch "$1" && cl_node_wait "$1"; }

# cl_up_or_gone PID PORT: PID has exited, or the server on PORT answers and is PID
# (not another suite's server that took the port while PID failed to).
cl_up_or_gone() {
	proc_gone "$1" && return 0
	case $(redis-cli -h 127.0.0.1 -p "$2" info server 2>/dev/null) in
	*"process_id:$1"$'\r'*) return 0 ;;
	esac
	return 1
}

# cl_live: the nodes whose process runs (not SIGSTOPped: asking one would hang).
cl_live() {
	local i
	for i in 0 1 2 3 4 5; do
		cl_running "n$i" && echo "n$i"
	done
}

# cl_wait_ok SECONDS: every live node says cluster_state:ok.
cl_wait_ok() { eventually "$1" cl_all cl_ok; }

# cl_all CHECK: CHECK NODE holds for every live node.
cl_all() {
	local i
	for i in 0 1 2 3 4 5; do
		cl_running "n$i" || continue
		"$1" "n$i" || return 1
	done
}

# cl_look NODE: one unbounded redis-cli to NODE (a poll, or a node known to run):
# INFO replication, CLUSTER INFO and CLUSTER NODES, read by bash into
#   LK_ROLE   master or slave          LK_LINK   a replica's master_link_status
#   LK_STATE  cluster_state            LK_ID     its node id
#   LK_NODES  the nodes it knows       LK_BAD    how many of them fail (fail, fail?,
#                                                handshake, noaddr) or are not connected
#   LK_OPEN   its slots left IMPORTING or MIGRATING ("[S-<-ID]", "[S->-ID]": S ...)
#   LK_MAP    (associative) each master serving slots: id -> its slot ranges
# False when it did not answer.
cl_look() {
	local out f i slots open
	LK_ROLE="" LK_LINK="" LK_STATE="" LK_ID="" LK_NODES=0 LK_BAD=0 LK_OPEN=""
	unset LK_MAP
	declare -gA LK_MAP=()
	out=$(printf 'INFO replication\nCLUSTER INFO\nCLUSTER NODES\n' | cl_rcli "$1" 2>/dev/null) || return 1
	while read -r -a f; do
		case ${f[0]:-} in
		role:*) LK_ROLE=${f[0]#role:} ;;
		master_link_status:*) LK_LINK=${f[0]#*:} ;;
		cluster_state:*) LK_STATE=${f[0]#*:} ;;
		esac
		[ "${#f[@]}" -ge 8 ] && [ "${#f[0]}" = 40 ] || continue
		LK_NODES=$((LK_NODES + 1))
		case ${f[2]} in *fail* | *handshake* | *noaddr*) LK_BAD=$((LK_BAD + 1)) ;; esac
		[ "${f[7]}" = connected ] || LK_BAD=$((LK_BAD + 1))
		slots="" open=""
		for ((i = 8; i < ${#f[@]}; i++)); do
			case ${f[i]} in
			\[*) open="$open ${f[i]%%-*}" ;;
			*) slots="$slots ${f[i]}" ;;
			esac
		done
		case ${f[2]} in *myself*) LK_ID=${f[0]} LK_OPEN=${open//[/} ;; esac
		case ${f[2]} in *master*) [ -z "$slots" ] || LK_MAP[${f[0]}]=${slots# } ;; esac
	done <<<"${out//$'\r'/}"
	[ -n "$LK_ROLE" ] && [ -n "$LK_STATE" ] && [ -n "$LK_ID" ]
}

# cl_ok NODE: it says cluster_state:ok.
cl_ok() { cl_look "$1" && [ "$LK_STATE" = ok ]; }

# cl_whole NODE: it says cluster_state:ok and knows six nodes, none failing.
cl_whole() { cl_look "$1" && [ "$LK_STATE" = ok ] && [ "$LK_NODES" = 6 ] && [ "$LK_BAD" = 0 ]; }

# cl_settled NODE: whole, and in sync if a replica.
cl_settled() { cl_whole "$1" && { [ "$LK_ROLE" = master ] || [ "$LK_LINK" = up ]; }; }

# cl_is NODE ROLE: its INFO says role:ROLE (master, slave).
cl_is() { cl_look "$1" && [ "$LK_ROLE" = "$2" ]; }

# cl_slot KEY: the slot of KEY (its {hash tag}).
cl_slot() { cl_cli n0 cluster keyslot "$1"; }

# cl_owner SLOT [NODE]: the node (n0..n5) serving SLOT, as NODE (a live one) says.
cl_owner() {
	local asked=${2:-$(cl_live | head -1)} port
	port=$(cl_cli "$asked" cluster slots | tr -d '\r' | awk -v s="$1" '
		NR % 1 == 0 { l[NR] = $0 }
		END {
			# redis-cli prints each range as lines: start, end, ip, port, id, ...
			for (i = 1; i <= NR; i++)
				if (l[i] ~ /^[0-9]+$/ && l[i + 1] ~ /^[0-9]+$/ && l[i] + 0 <= s && s <= l[i + 1] + 0 &&
				    l[i + 2] ~ /\./) { print l[i + 3]; exit }
		}')
	cl_name "$port"
}

# cl_name PORT: which node listens on PORT.
cl_name() {
	local i p
	for i in 0 1 2 3 4 5; do
		read -r p <"$CL_DIR/n$i/port" && [ "$p" = "$1" ] && echo "n$i" && return
	done
}

cl_id() { cl_cli "$1" cluster myid; }

# cl_replica_of NODE: a node that replicates NODE.
cl_replica_of() {
	local id i; id=$(cl_id "$1")
	for i in $(cl_live); do
		cl_cli "$i" cluster nodes | grep -q "myself,slave $id" && echo "$i" && return
	done
}

# cl_stop: every node of the suite, by pid (SIGCONT first: a stalled one), and
# waits until each has gone.
cl_stop() {
	local f p ps=""
	[ -n "${CL_DIR:-}" ] || return 0
	for f in "$CL_DIR"/*/pid; do
		[ -f "$f" ] || continue
		{ read -r p <"$f"; } 2>/dev/null || continue
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
		ps="$ps $p"
	done
	for p in $ps; do
		wait_gone "$p" 10 || echo "cluster.sh: node $p still there 10 s after SIGKILL" >&2
	done
	rm -f "$CL_DIR"/*/pid "$CL_DIR/slots"
	CL_DIR=""
}

# cl_role NODE: what ROLE says first (master, slave), or nothing.
cl_role() { cl_cli "$1" role 2>/dev/null | head -1; }

# --- Putting the cluster back between tests ---

# cl_note: what cl_reset puts back: each node's id and role (CL_ID[I], CL_ROLE[I]),
# and the slot map as n0 says (CL_MAP0: master id -> ranges; $CL_DIR/slots, a line
# "ID RANGE..." per master).
cl_note() {
	local i k
	CL_ID=() CL_ROLE=()
	for i in 0 1 2 3 4 5; do
		cl_look "n$i" || return 1
		CL_ID[i]=$LK_ID CL_ROLE[i]=$LK_ROLE
	done
	cl_look n0 && [ "${#LK_MAP[@]}" = 3 ] || return 1
	unset CL_MAP0
	declare -gA CL_MAP0=()
	for k in "${!LK_MAP[@]}"; do CL_MAP0[$k]=${LK_MAP[$k]}; done
	cl_map_lines >"$CL_DIR/slots"
}

# cl_map_lines: LK_MAP as lines "ID RANGE...".
cl_map_lines() {
	local k
	for k in "${!LK_MAP[@]}"; do echo "$k ${LK_MAP[$k]}"; done
}

# cl_map_same: LK_MAP (the last look's) is the slot map noted; cl_map_back NODE:
# NODE's is (a poll).
cl_map_same() {
	local k
	[ "${#LK_MAP[@]}" = "${#CL_MAP0[@]}" ] || return 1
	for k in "${!CL_MAP0[@]}"; do [ "${LK_MAP[$k]:-}" = "${CL_MAP0[$k]}" ] || return 1; done
}
cl_map_back() { cl_look "$1" && cl_map_same; }

# cl_node_of ID: the node (n0..n5) noted with ID.
cl_node_of() {
	local i
	for i in 0 1 2 3 4 5; do [ "${CL_ID[i]}" = "$1" ] && echo "n$i" && return; done
}

# cl_survey NODE: a look at NODE (a node n0..n5) that notes in SV_* what cl_reset
# needs: SV_OPEN[I] its open slots, SV_ROLE[I] its role, SV_MAP (n0's map is the
# one noted: 1, or empty); true when NODE is whole.
cl_survey() {
	local i=${1#n}
	cl_whole "$1" || return 1
	SV_OPEN[i]=$LK_OPEN SV_ROLE[i]=$LK_ROLE
	[ "$i" != 0 ] || { SV_MAP=""; cl_map_same && SV_MAP=1; }
	return 0
}

# cl_as_noted NODE: NODE is whole, in sync, in the role noted, and sees the slot
# map noted.
cl_as_noted() {
	local i=${1#n}
	cl_settled "$1" && [ "$LK_ROLE" = "${CL_ROLE[i]}" ] && cl_map_same
}

# cl_reset: put the suite's cluster back as cl_start left it. False, with CL_WHY, when
# it cannot (cl_ready then starts a new one).
#   - A node a test stopped (SIGSTOP) goes on; one it killed starts again on its port
#     (the same node: its nodes.conf).
#   - Slots left open by a move given up (IMPORTING, MIGRATING) made STABLE.
#   - A master that lost its role to its replica (killed, stopped, CLUSTER FAILOVER)
#     takes it back with CLUSTER FAILOVER once in sync.
#   - Data flushed, scripts flushed, clients of the last test's helpers (if any)
#     closed, counters (INFO errorstats, commandstats, stats) reset: the tests count
#     ASK, TRYAGAIN, ASKING and connections from zero, as on a fresh cluster.
#   - A slot a test moved goes back to its first master (empty now), as redis-cli
#     --cluster reshard moves one: IMPORTING, MIGRATING, then NODE on every master.
#   - Then (when anything but data changed) until every node is whole, in sync, in its
#     role, the slot map as noted.
# A cluster no test changed costs a look and a reset command line per node.
cl_reset() {
	local i p s o c oid cid m tries out changed=""
	CL_WHY=""
	SV_OPEN=() SV_ROLE=() SV_MAP=""
	for i in 0 1 2 3 4 5; do
		p=$(cl_pid "n$i")
		if [ -n "$p" ] && cl_pstate "$p"; then
			case $CL_PST in
			T | t) kill -CONT "$p"; changed=1 ;;
			Z | X) p="" ;;
			esac
		else
			p=""
		fi
		[ -n "$p" ] && continue
		changed=1
		cl_node_start "$i" || { CL_WHY="n$i did not start again: $CL_WHY"; return 1; }
	done
	eventually "$CL_LIMIT" cl_all cl_survey || { CL_WHY="not whole in $CL_LIMIT s"; return 1; }
	for i in 0 1 2 3 4 5; do
		[ -z "${SV_OPEN[i]}" ] || changed=1
		for s in ${SV_OPEN[i]}; do
			cl_cli "n$i" cluster setslot "$s" stable | grep -q OK ||
				{ CL_WHY="n$i: SETSLOT $s STABLE failed"; return 1; }
		done
	done
	# Roles: each first master takes its role back from its replica.
	for i in 0 1 2 3 4 5; do
		[ "${SV_ROLE[i]}" = "${CL_ROLE[i]}" ] && continue
		changed=1
		[ "${CL_ROLE[i]}" = master ] || continue
		eventually "$CL_LIMIT" cl_synced "n$i" || { CL_WHY="n$i not in sync with its master"; return 1; }
		tries=3
		until cl_cli "n$i" cluster failover 2>/dev/null | grep -q OK && eventually 30 cl_is "n$i" master; do
			tries=$((tries - 1))
			[ $tries -gt 0 ] || { CL_WHY="n$i did not take its master role back"; return 1; }
		done
	done
	# Data, scripts, clients, counters: one command line per node.
	for i in 0 1 2 3 4 5; do
		out=$({ [ "${CL_ROLE[i]}" = master ] && echo FLUSHALL
			printf 'SCRIPT FLUSH\nCLIENT KILL TYPE normal\nCLIENT KILL TYPE pubsub\nCONFIG RESETSTAT\n'; } |
			cl_cli "n$i" 2>&1)
		case $out in
		*ERR* | *rror* | "") CL_WHY="n$i: the reset said: $out"; return 1 ;;
		esac
	done
	# Slots moved: back to the master noted, each ("SLOT FIRST-OWNER NOW-OWNER").
	# (n0's map before the roles went back names the masters of then.)
	if [ -z "$SV_MAP" ] && { cl_look n0 || { CL_WHY="n0 does not answer"; return 1; }; } && ! cl_map_same; then
		changed=1
		while read -r s oid cid; do
			[ -n "$s" ] || continue
			o=$(cl_node_of "$oid") c=$(cl_node_of "$cid")
			[ -n "$o" ] && [ -n "$c" ] || { CL_WHY="slot $s: served by ${cid:-nobody}, first by $oid"; return 1; }
			cl_cli "$o" cluster setslot "$s" importing "$cid" | grep -q OK &&
				cl_cli "$c" cluster setslot "$s" migrating "$oid" | grep -q OK &&
				cl_cli "$o" cluster setslot "$s" node "$oid" | grep -q OK &&
				cl_cli "$c" cluster setslot "$s" node "$oid" | grep -q OK ||
				{ CL_WHY="slot $s could not go back from $c to $o"; return 1; }
			for m in 0 1 2 3 4 5; do
				[ "n$m" != "$o" ] && [ "n$m" != "$c" ] && [ "${CL_ROLE[m]}" = master ] &&
					cl_cli "n$m" cluster setslot "$s" node "$oid" >/dev/null
			done
		done < <(cl_map_lines | awk 'NR == FNR { f = "o" } NR != FNR { f = "c" }
			{ for (i = 2; i <= NF; i++) { n = split($i, r, "-"); a = r[1]; b = (n == 2 ? r[2] : r[1])
				for (s = a; s <= b; s++) { if (f == "o") o[s] = $1; else c[s] = $1 } } }
			END { for (s = 0; s < 16384; s++) if (o[s] != c[s]) print s, o[s], c[s] }' "$CL_DIR/slots" -)
	fi
	[ -z "$changed" ] && return 0
	eventually "$CL_LIMIT" cl_all cl_as_noted || { CL_WHY="not as noted (whole, in sync, roles, slots) after the reset"; return 1; }
}
