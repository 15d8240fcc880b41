# cluster.sh: a Redis Cluster on loopback for a suite: three masters and three replicas
# (Debian's redis-server, `redis-cli --cluster create`), and the moves of a job's slot;
# sourced by tests/faults/t_cluster.sh.
. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# How soon a node that stops answering is failed over (cluster-node-timeout).
CLUSTER_TIMEOUT_MS=${CLUSTER_TIMEOUT_MS:-1000}

# cl_start: start six nodes in $(scratch)/cl/n0..n5 and make them a cluster, n0..n2
# masters (each with one replica). Sets CL_DIR and RDV_CLUSTER (the seeds: the three
# masters). Waits (at most 30 s) until every node says cluster_state:ok. Skips the
# suite (77) where redis-server is missing.
cl_start() {
	local i p d addrs=""
	command -v redis-server >/dev/null || { echo "redis-server not installed: skipped" >&2; skip_suite; }
	CL_DIR=$(scratch)/cl
	rm -rf "$CL_DIR"
	for i in 0 1 2 3 4 5; do
		p=$(cl_free_port "$addrs")
		d=$CL_DIR/n$i
		mkdir -p "$d"
		echo "$p" >"$d/port"
		addrs="$addrs 127.0.0.1:$p"
		cl_node_start "$i" || return 1
	done
	# shellcheck disable=SC2086
	timeout 60 redis-cli --cluster create $addrs --cluster-replicas 1 --cluster-yes >"$CL_DIR/create.log" 2>&1 ||
		{ cat "$CL_DIR/create.log" >&2; return 1; }
	RDV_CLUSTER="redis-cluster://127.0.0.1:$(cl_port n0),127.0.0.1:$(cl_port n1),127.0.0.1:$(cl_port n2)"
	cl_wait_ok 30 || { echo "the cluster did not come up" >&2; return 1; }
	# A replica that never synchronised cannot be promoted (its data is
	# too old: cluster-replica-validity-factor): wait until each has.
	cl_wait_synced 30 || { echo "the replicas did not synchronise" >&2; return 1; }
}

# cl_wait_synced SECONDS: every replica's link to its master is up.
cl_wait_synced() { eventually "$1" cl_all cl_synced; }

# cl_synced NODE: a master, or a replica whose link to its master is up.
cl_synced() {
	local info; info=$(cl_cli "$1" info replication 2>/dev/null | tr -d '\r')
	case $info in *role:slave*) ;; *) return 0 ;; esac
	case $info in *master_link_status:up*) return 0 ;; esac
	return 1
}

# cl_free_port TAKEN: a port P nothing listens on, with its cluster bus port P+10000
# free too, both below Linux's ephemeral range (32768 up: a port an outgoing
# connection holds cannot be bound), and neither among TAKEN ("127.0.0.1:P ...").
cl_free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 2700))
		case " $1 " in *":$p "* | *":$((p + 10000)) "* | *":$((p - 10000)) "*) continue ;; esac
		listening "$p" || listening "$((p + 10000))" && continue
		echo "$p"
		return
	done
}

cl_port() { cat "$CL_DIR/$1/port"; }
cl_pid() { cat "$CL_DIR/$1/pid" 2>/dev/null; }
cl_cli() { local n=$1; shift; timeout 10 redis-cli -h 127.0.0.1 -p "$(cl_port "$n")" "$@"; }

# cl_node_start I: node I on its port, in cluster mode.
cl_node_start() {
	local d=$CL_DIR/n$1
	redis-server --port "$(cat "$d/port")" --bind 127.0.0.1 --save '' --appendonly no \
		--cluster-enabled yes --cluster-config-file "$d/nodes.conf" \
		--cluster-node-timeout "$CLUSTER_TIMEOUT_MS" --repl-diskless-sync-delay 0 \
		--dir "$d" --daemonize yes \
		--pidfile "$d/pid" --logfile "$d/log"
	eventually 10 cl_cli "n$1" ping >/dev/null 2>&1 ||
		{ echo "node n$1 did not start: $(tail -3 "$d/log")" >&2; return 1; }
}

# cl_live: the nodes whose process runs.
cl_live() {
	local i
	for i in 0 1 2 3 4 5; do
		kill -0 "$(cl_pid "n$i")" 2>/dev/null && echo "n$i"
	done
}

# cl_wait_ok SECONDS: every live node says cluster_state:ok.
cl_wait_ok() { eventually "$1" cl_all cl_ok; }

# cl_all CHECK: CHECK NODE holds for every live node.
cl_all() {
	local i
	for i in $(cl_live); do "$1" "$i" || return 1; done
}

# cl_ok NODE: it says cluster_state:ok.
cl_ok() { cl_cli "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }

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
	local i
	for i in 0 1 2 3 4 5; do [ "$(cl_port "n$i")" = "$1" ] && echo "n$i" && return; done
}

cl_id() { cl_cli "$1" cluster myid; }

# cl_replica_of NODE: a node that replicates NODE.
cl_replica_of() {
	local id i; id=$(cl_id "$1")
	for i in $(cl_live); do
		cl_cli "$i" cluster nodes | grep -q "myself,slave $id" && echo "$i" && return
	done
}

# cl_stop: every node of the suite, by pid (SIGCONT first: a stalled one).
cl_stop() {
	local f p
	[ -n "${CL_DIR:-}" ] || return 0
	for f in "$CL_DIR"/*/pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	CL_DIR=""
}

# cl_role NODE: what ROLE says first (master, slave), or nothing.
cl_role() { cl_cli "$1" role 2>/dev/null | head -1; }
