# sentinel.sh: Redis as sites run it highly available, on loopback for a suite: a
# master, two replicas and three sentinels (Debian's redis-server and redis-sentinel),
# and the faults that hit it; sourced by tests/faults/t_sentinel.sh (after lib.sh:
# scratch, skip_suite, eventually, proc_gone, wait_gone).
#
# One set serves every test that needs no settings of its own (ha_ready): ha_start
# makes it for the first, and ha_reset puts it back as ha_start left it for each next
# one. The Redis servers are kept (a stopped one goes on, a killed one starts again
# on its port, r0 is made the master again, data, scripts, counters and settings are
# cleared); the sentinels, when a test changed anything, start afresh, since a
# sentinel keeps what it saw (a failover's epochs and timers, peers and replicas it
# flagged down, a conversion it waits for) where a new one starts from what ha_start
# gives. A test with settings of its own (HA_REDIS_ARGS, HA_SENTINEL_CONF) calls
# ha_start, which replaces the shared set; the next ha_ready starts a new one.
#
# Every server runs in the foreground as a background child of the suite's shell
# (not daemonized): ctest's kill of a suite past its TIMEOUT takes its process tree,
# and daemonized servers (re-parented to pid 1) escaped it. Where setpriv can, they
# also get SIGKILL when that shell dies (port.sh's server_pdeath).
. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# The master's name the sentinels monitor, and how soon they call it down.
SENTINEL_MASTER=${SENTINEL_MASTER:-mymaster}
SENTINEL_DOWN_MS=${SENTINEL_DOWN_MS:-1000}

# How long a server may take to answer, and the set to settle: a guard against one
# that never does, never a verdict on speed.
HA_LIMIT=${HA_LIMIT:-90}

# ha_ready: the suite's shared set (no settings of its own) as ha_start makes it:
# started on first use, put back (ha_reset) afterwards; one that cannot be put back is
# replaced by a new one (said on stderr). Sets what ha_start sets.
ha_ready() {
	if [ -n "${HA_DIR:-}" ] && [ "${HA_SHARED:-}" = 1 ]; then
		ha_reset && return 0
		echo "sentinel.sh: the set could not be put back ($HA_WHY): a new one" >&2
	fi
	HA_REDIS_ARGS="" HA_SENTINEL_CONF="" HA_AUTH_R="" HA_AUTH_S="" ha_start || return 1
	HA_SHARED=1
}

# ha_start: start them, each on a free port, in $(scratch)/ha/{r0,r1,r2,s0,s1,s2};
# r0 is the master. Sets HA_DIR, HA_R (the Redis ports), HA_S (the sentinels'),
# and RDV_SENTINEL (the redis-sentinel:// URL). Waits (at most HA_LIMIT s) until
# both replicas are in sync, then until every sentinel names r0, knows both replicas
# (in sync, as it sees them) and the other two sentinels, none of them down. Skips
# the suite (77) where redis-server or redis-sentinel is missing. HA_REDIS_ARGS:
# more arguments for every redis-server; HA_SENTINEL_CONF: more lines for every
# sentinel's configuration (a password, say). A set started before is stopped first.
ha_start() {
	local i
	command -v redis-server >/dev/null || { echo "redis-server not installed: skipped" >&2; skip_suite; }
	command -v redis-sentinel >/dev/null || { echo "redis-sentinel not installed: skipped" >&2; skip_suite; }
	ha_stop
	HA_DIR=$(scratch)/ha
	rm -rf "$HA_DIR"
	for i in r0 r1 r2 s0 s1 s2; do mkdir -p "$HA_DIR/$i"; done
	ha_new r0 || return 1
	ha_new r1 r2 || return 1
	# Both replicas in sync before the sentinels start: their first look at the
	# master finds them (else they learn of them at its next INFO, 10 s later).
	eventually "$HA_LIMIT" ha_replicated || { echo "sentinel.sh: the replicas did not synchronise" >&2; return 1; }
	ha_new s0 s1 s2 || return 1
	ha_url
	ha_wait_known "$HA_LIMIT" || { echo "the sentinels did not find each other" >&2; return 1; }
}

# ha_url: HA_R, HA_S and RDV_SENTINEL from the ports.
ha_url() {
	local i
	HA_R="" HA_S=""
	for i in 0 1 2; do HA_R="$HA_R $(ha_port "r$i")" HA_S="$HA_S $(ha_port "s$i")"; done
	HA_R=${HA_R# } HA_S=${HA_S# }
	RDV_SENTINEL="redis-sentinel://127.0.0.1:${HA_S// /,127.0.0.1:}#$SENTINEL_MASTER"
}

# ha_port NAME: the port of r0..r2 or s0..s2.
ha_port() { local p; read -r p <"$HA_DIR/$1/port" && echo "$p"; }
ha_pid() { local p; { read -r p <"$HA_DIR/$1/pid"; } 2>/dev/null && echo "$p"; }

# ha_pstate NAME: HA_PST, the state letter of NAME's process (R, S, T, Z...); false,
# and empty, when there is none. Read by bash: no process.
ha_pstate() {
	local p="" s
	HA_PST=""
	{ read -r p <"$HA_DIR/$1/pid"; } 2>/dev/null && [ -n "$p" ] || return 1
	{ s=$(<"/proc/$p/stat"); } 2>/dev/null || return 1
	s=${s##*) }
	HA_PST=${s%% *}
	case $HA_PST in Z | X) return 1 ;; esac
}

# ha_running NAME: its process runs (not gone, not SIGSTOPped: asking one would hang).
ha_running() { ha_pstate "$1" && case $HA_PST in T | t) false ;; esac; }

# ha_new NAME...: each of them (r0..r2, s0..s2) started on its port, or a free one
# of its own where it has none yet (another one when it found its port taken
# meanwhile), then waited for. A replica's master is r0.
ha_new() {
	local n tries=10 again
	for n in "$@"; do
		[ -s "$HA_DIR/$n/port" ] || free_port >"$HA_DIR/$n/port" || return 1
		ha_launch "$n"
	done
	while :; do
		again=""
		for n in "$@"; do
			ha_wait "$n" && continue
			if [ "$HA_WHY" = "port taken" ] && [ $tries -gt 1 ]; then
				echo "sentinel.sh: $n: port $(ha_port "$n") taken, another one" >&2
				free_port >"$HA_DIR/$n/port" || return 1
				ha_launch "$n"
				again=1
				continue
			fi
			echo "sentinel.sh: $n on port $(ha_port "$n"): $HA_WHY; its log:" >&2
			tail -n 10 "$HA_DIR/$n/log" >&2 2>/dev/null
			return 1
		done
		[ -n "$again" ] || return 0
		tries=$((tries - 1))
	done
}

# ha_launch NAME: start NAME on its port (r1, r2 as replicas of r0; a sentinel with a
# configuration written afresh); ha_wait NAME: until it answers (HA_LIMIT s at most).
# False when it exited first (HA_WHY "port taken" when its log says so) or never
# answered (killed then). ha_restart NAME: both.
ha_launch() {
	local n=$1 d=$HA_DIR/$1 port p
	read -r port <"$d/port" || return 1
	server_pdeath
	case $n in
	r*)
		# shellcheck disable=SC2046,SC2086
		# A replica's full sync starts at once (as cluster.sh's nodes), not 5 s
		# later (repl-diskless-sync-delay): the set is waited for in sync.
		$SERVER_PDEATH redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
			--repl-diskless-sync-delay 0 \
			--dir "$d" --daemonize no --pidfile "$d/pid" --logfile "$d/log" ${HA_REDIS_ARGS:-} \
			$([ "$n" = r0 ] || echo "--replicaof 127.0.0.1 $(ha_port r0)") \
			</dev/null >>"$d/log" 2>&1 &
		;;
	s*)
		# Sentinel rewrites its configuration file: one of its own, each.
		cat >"$d/sentinel.conf" <<-EOF
			port $port
			bind 127.0.0.1
			daemonize no
			pidfile $d/pid
			logfile $d/log
			dir $d
			sentinel monitor $SENTINEL_MASTER 127.0.0.1 $(ha_port r0) 2
			sentinel down-after-milliseconds $SENTINEL_MASTER $SENTINEL_DOWN_MS
			sentinel failover-timeout $SENTINEL_MASTER 10000
			sentinel parallel-syncs $SENTINEL_MASTER 2
			${HA_SENTINEL_CONF:-}
		EOF
		$SERVER_PDEATH redis-sentinel "$d/sentinel.conf" </dev/null >>"$d/log" 2>&1 &
		;;
	esac
	p=$!
	# Out of the job table: a test's plain `wait` must not wait for it.
	disown "$p" 2>/dev/null
	echo "$p" >"$d/pid"
}
ha_wait() {
	local n=$1 d=$HA_DIR/$1 p
	HA_WHY=""
	read -r p <"$d/pid" || { HA_WHY="not started"; return 1; }
	eventually "$HA_LIMIT" ha_up_or_gone "$n" "$p"
	if proc_gone "$p"; then
		HA_WHY=exited
		grep -qi 'address already in use' "$d/log" 2>/dev/null && HA_WHY="port taken"
		rm -f "$d/pid"
		return 1
	fi
	ha_up_or_gone "$n" "$p" && return 0
	HA_WHY="no answer in $HA_LIMIT s"
	kill -9 "$p" 2>/dev/null
	rm -f "$d/pid"
	return 1
}
ha_restart() { ha_launch "$1" && ha_wait "$1"; }

# ha_up_or_gone NAME PID: PID has exited, or the server on NAME's port answers and is
# PID (not another suite's server that took the port while PID failed to).
ha_up_or_gone() {
	proc_gone "$2" && return 0
	case $(ha_rcli "$1" info server 2>/dev/null) in
	*"process_id:$2"$'\r'*) return 0 ;;
	esac
	return 1
}

# ha_cli NAME ARGS...: redis-cli to r0..r2 or s0..s2, bounded (with the password
# of HA_AUTH_R or HA_AUTH_S, where set). ha_rcli: the same unbounded, for polls (run
# by eventually, which has its own deadline) of servers that run.
ha_cli() { ha_rcli_ "timeout 5" "$@"; }
ha_rcli() { ha_rcli_ "" "$@"; }
ha_rcli_() {
	local t=$1 n=$2 a p; shift 2
	case $n in r*) a=${HA_AUTH_R:-} ;; *) a=${HA_AUTH_S:-} ;; esac
	read -r p <"$HA_DIR/$n/port" || return 1
	if [ -n "$a" ]; then
		REDISCLI_AUTH=$a $t redis-cli -h 127.0.0.1 -p "$p" "$@"
	else
		$t redis-cli -h 127.0.0.1 -p "$p" "$@"
	fi
}

# ha_master: the master's port as sentinel s0 (or the first that answers) says.
ha_master() {
	local s
	for s in s0 s1 s2; do
		ha_cli "$s" --raw sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>/dev/null |
			sed -n 2p | grep . && return 0
	done
	return 1
}

# ha_name PORT: which of r0..r2 listens on PORT.
ha_name() {
	local i p
	for i in 0 1 2; do read -r p <"$HA_DIR/r$i/port" && [ "$p" = "$1" ] && echo "r$i" && return; done
}

# ha_replicated: r0 is a master with two replicas in sync (INFO replication: ROLE
# may be renamed away).
ha_replicated() {
	local out n=0 l
	out=$(ha_rcli r0 info replication 2>/dev/null) || return 1
	case $out in *role:master*) ;; *) return 1 ;; esac
	while IFS= read -r l; do
		case $l in slave[0-9]*state=online*) n=$((n + 1)) ;; esac
	done <<<"${out//$'\r'/}"
	[ $n = 2 ]
}

# ha_wait_known SECONDS: ha_known, at most SECONDS.
ha_wait_known() { eventually "$1" ha_known; }

# ha_known: every sentinel sees the set as ha_start leaves it (ha_sees).
ha_known() {
	local s
	for s in s0 s1 s2; do ha_sees "$s" || return 1; done
}

# ha_sees SENTINEL: it names r0 as the master (flags "master", nothing more: not
# down, no failover going on), and knows two replicas (flags "slave", in sync, ROLE
# says slave) and two other sentinels (flags "sentinel"). One redis-cli (SENTINEL
# MASTER, REPLICAS, SENTINELS), read by bash.
ha_sees() {
	local out l key="" port="" masters=0 replicas=0 sentinels=0 links=0 roles=0 bad=0
	out=$(printf 'SENTINEL MASTER %s\nSENTINEL REPLICAS %s\nSENTINEL SENTINELS %s\n' \
		"$SENTINEL_MASTER" "$SENTINEL_MASTER" "$SENTINEL_MASTER" | ha_rcli "$1" 2>/dev/null) || return 1
	while IFS= read -r l; do
		case $key in
		port) [ -n "$port" ] || port=$l ;;
		flags)
			case $l in
			master) masters=$((masters + 1)) ;;
			slave) replicas=$((replicas + 1)) ;;
			sentinel) sentinels=$((sentinels + 1)) ;;
			*) bad=$((bad + 1)) ;;
			esac
			;;
		master-link-status) [ "$l" = ok ] && links=$((links + 1)) ;;
		role-reported) [ "$l" = slave ] && roles=$((roles + 1)) ;;
		esac
		key=$l
	done <<<"${out//$'\r'/}"
	[ "$port" = "$(ha_port r0)" ] && [ $masters = 1 ] && [ $replicas = 2 ] && [ $sentinels = 2 ] &&
		[ $bad = 0 ] && [ $links = 2 ] && [ $roles = 2 ]
}

# ha_wait_master_not PORT SECONDS: until every sentinel names a master other than PORT,
# and that master says ROLE master; prints its port. Sentinels stalled (SIGSTOP, or
# named in HA_STOPPED) or gone are not asked.
ha_wait_master_not() { eventually "$2" ha_master_not "$1"; }
ha_master_not() {
	local s m="" got
	for s in s0 s1 s2; do
		ha_running "$s" || continue
		case " ${HA_STOPPED:-} " in *" $s "*) continue ;; esac
		got=$(ha_rcli "$s" --raw sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>/dev/null) || return 1
		got=${got#*$'\n'} got=${got%%$'\n'*}
		[ -n "$got" ] && [ "$got" != "$1" ] || return 1
		m=$got
	done
	[ -n "$m" ] || return 1
	got=$(ha_rcli "$(ha_name "$m")" --raw role 2>/dev/null)
	[ "${got%%$'\n'*}" = master ] && echo "$m"
}

# ha_role NAME: what ROLE says first (master, slave), or nothing.
ha_role() { ha_cli "$1" --raw role 2>/dev/null | head -1; }

# ha_fake_stop: the fake sentinel and the refusing ports' holder, if any.
ha_fake_stop() {
	local p
	for p in ${FAKE_PID:-} ${REFUSE_PID:-}; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	FAKE_PID="" REFUSE_PID=""
}

# ha_stop: every server and sentinel of the set, by pid (SIGCONT first: a stalled
# one), waiting until each has gone; and the fake sentinel.
ha_stop() {
	local f p ps=""
	ha_fake_stop
	[ -n "${HA_DIR:-}" ] || return 0
	for f in "$HA_DIR"/*/pid; do
		[ -f "$f" ] || continue
		{ read -r p <"$f"; } 2>/dev/null || continue
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
		ps="$ps $p"
	done
	for p in $ps; do
		wait_gone "$p" 10 || echo "sentinel.sh: server $p still there 10 s after SIGKILL" >&2
	done
	rm -f "$HA_DIR"/*/pid
	HA_DIR="" HA_SHARED=""
}

# ha_reset: put the shared set back as ha_start left it. False, with HA_WHY, when it
# cannot (ha_ready then starts a new one).
#   - Untouched (every member runs, none stopped, r0 the master with both replicas in
#     sync, every sentinel as ha_sees wants it): only the data and counters below.
#   - Else the sentinels are killed (started afresh below); a Redis a test stopped
#     goes on, one it killed starts again on its port; r0 is made the master
#     (REPLICAOF NO ONE), r1 and r2 its replicas; once both are in sync, the
#     sentinels start with ha_start's configuration and are waited for as there.
#   - Data flushed, scripts flushed, counters reset, replicas read-only again (a test
#     made them writable).
ha_reset() {
	local n changed="" out port
	HA_WHY=""
	ha_fake_stop
	for n in r0 r1 r2 s0 s1 s2; do ha_running "$n" || changed=1; done
	[ -n "$changed" ] || { ha_replicated && ha_known; } || changed=1
	if [ -n "$changed" ]; then
		for n in s0 s1 s2; do
			port=$(ha_pid "$n")
			[ -n "$port" ] || continue
			kill -CONT "$port" 2>/dev/null
			kill -9 "$port" 2>/dev/null
			wait_gone "$port" 10 || { HA_WHY="sentinel $n still there after SIGKILL"; return 1; }
			rm -f "$HA_DIR/$n/pid"
		done
		for n in r0 r1 r2; do
			if ha_pstate "$n"; then
				case $HA_PST in T | t) kill -CONT "$(ha_pid "$n")" ;; esac
			else
				ha_restart "$n" || { HA_WHY="$n did not start again: $HA_WHY"; return 1; }
			fi
		done
		port=$(ha_port r0)
		ha_cli r0 replicaof no one | grep -q OK &&
			ha_cli r1 replicaof 127.0.0.1 "$port" | grep -q OK &&
			ha_cli r2 replicaof 127.0.0.1 "$port" | grep -q OK ||
			{ HA_WHY="REPLICAOF failed"; return 1; }
		eventually "$HA_LIMIT" ha_replicated || { HA_WHY="the replicas did not synchronise with r0"; return 1; }
		ha_new s0 s1 s2 || { HA_WHY="the sentinels did not start"; return 1; }
		ha_url
		ha_wait_known "$HA_LIMIT" || { HA_WHY="the sentinels did not find each other"; return 1; }
	fi
	for n in r0 r1 r2; do
		out=$({ [ "$n" = r0 ] && echo FLUSHALL
			printf 'SCRIPT FLUSH\nCONFIG SET replica-read-only yes\nCONFIG RESETSTAT\n'; } | ha_cli "$n" 2>&1)
		case $out in
		*ERR* | *rror* | "") HA_WHY="$n: the reset said: $out"; return 1 ;;
		esac
	done
}

# fake_sentinel_start MODE: a sentinel that lies, on a port the kernel gives it
# (FAKE_PORT: bound by the server itself, so no other suite can take it first): it
# answers SENTINEL get-master-addr-by-name with replica r1's address (MODE stale) or
# nil (MODE nil: it does not monitor the master), takes SUBSCRIBE and PING, and never
# publishes. One Python process; FAKE_PID.
fake_sentinel_start() {
	local f=$HA_DIR/fake.port
	rm -f "$f" "$f.new"
	"${PY:-python3}" -c '
import os, socket, sys, threading
mode, replica, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
def bulk(s): return b"$%d\r\n%s\r\n" % (len(s), s.encode())
def serve(c):
    f = c.makefile("rb")
    try:
        while True:
            line = f.readline()
            if not line: return
            n = int(line[1:]); args = []
            for _ in range(n):
                ln = int(f.readline()[1:]); args.append(f.read(ln + 2)[:-2].decode().lower())
            if args[0] == "sentinel":
                c.sendall(b"*2\r\n" + bulk("127.0.0.1") + bulk(replica) if mode == "stale" else b"*-1\r\n")
            elif args[0] == "subscribe":
                c.sendall(b"*3\r\n" + bulk("subscribe") + bulk(args[1]) + b":1\r\n")
            elif args[0] == "ping":
                c.sendall(b"*2\r\n" + bulk("pong") + bulk(""))
            else:
                c.sendall(b"+OK\r\n")
    except (OSError, ValueError):
        pass
    finally:
        c.close()
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
with open(portfile + ".new", "w") as out:
    out.write("%d\n" % s.getsockname()[1])
os.rename(portfile + ".new", portfile)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
' "$1" "$(ha_port r1)" "$f" </dev/null &
	FAKE_PID=$!
	eventually 30 test -s "$f" && read -r FAKE_PORT <"$f"
}

# refusing_ports N: REFUSE_PORTS, N loopback ports that refuse connections and that
# no other suite can take meanwhile: bound (the kernel picks them) by one Python
# process that never listens on them (REFUSE_PID; ha_fake_stop ends it). A port
# free_port found free could be bound by another suite before it was dialled.
refusing_ports() {
	local f=$(scratch)/refusing.ports
	rm -f "$f" "$f.new"
	"${PY:-python3}" -c '
import os, socket, sys, time
n, portfile = int(sys.argv[1]), sys.argv[2]
held = [socket.socket() for _ in range(n)]
for s in held:
    s.bind(("127.0.0.1", 0))
with open(portfile + ".new", "w") as out:
    out.write(" ".join(str(s.getsockname()[1]) for s in held) + "\n")
os.rename(portfile + ".new", portfile)
while True:
    time.sleep(3600)
' "$1" "$f" </dev/null &
	REFUSE_PID=$!
	eventually 30 test -s "$f" && read -r REFUSE_PORTS <"$f"
}
