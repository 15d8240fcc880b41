# sentinel.sh: Redis as sites run it highly available, on loopback for a suite: a
# master, two replicas and three sentinels (Debian's redis-server and redis-sentinel),
# and the faults that hit it; sourced by tests/faults/t_sentinel.sh.
. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# The master's name the sentinels monitor, and how soon they call it down.
SENTINEL_MASTER=${SENTINEL_MASTER:-mymaster}
SENTINEL_DOWN_MS=${SENTINEL_DOWN_MS:-1000}

# ha_start: start them, each on a free port, in $(scratch)/ha/{r0,r1,r2,s0,s1,s2};
# r0 is the master. Sets HA_DIR, HA_R (the Redis ports), HA_S (the sentinels'),
# and RDV_SENTINEL (the redis-sentinel:// URL). Waits (at most 30 s) until
# every sentinel knows the two replicas and the other two sentinels. Skips
# the suite (77) where redis-server or redis-sentinel is missing. HA_REDIS_ARGS:
# more arguments for every redis-server; HA_SENTINEL_CONF: more lines for every
# sentinel's configuration (a password, say).
ha_start() {
	local i p d
	command -v redis-server >/dev/null || { echo "redis-server not installed: skipped" >&2; skip_suite; }
	command -v redis-sentinel >/dev/null || { echo "redis-sentinel not installed: skipped" >&2; skip_suite; }
	HA_DIR=$(scratch)/ha
	rm -rf "$HA_DIR"
	HA_R="" HA_S=""
	for i in 0 1 2; do
		p=$(free_port)
		d=$HA_DIR/r$i
		mkdir -p "$d"
		echo "$p" >"$d/port"
		HA_R="$HA_R $p"
		# shellcheck disable=SC2086
		redis_server_at "$i" ${HA_REDIS_ARGS:-} $([ "$i" = 0 ] || echo "--replicaof 127.0.0.1 $(ha_port r0)")
	done
	for i in 0 1 2; do
		p=$(free_port)
		d=$HA_DIR/s$i
		mkdir -p "$d"
		echo "$p" >"$d/port"
		HA_S="$HA_S $p"
		# Sentinel rewrites its configuration file: one of its own, each.
		cat >"$d/sentinel.conf" <<-EOF
			port $p
			bind 127.0.0.1
			daemonize yes
			pidfile $d/pid
			logfile $d/log
			dir $d
			sentinel monitor $SENTINEL_MASTER 127.0.0.1 $(ha_port r0) 2
			sentinel down-after-milliseconds $SENTINEL_MASTER $SENTINEL_DOWN_MS
			sentinel failover-timeout $SENTINEL_MASTER 10000
			sentinel parallel-syncs $SENTINEL_MASTER 2
			${HA_SENTINEL_CONF:-}
		EOF
		redis-sentinel "$d/sentinel.conf" >/dev/null
	done
	RDV_SENTINEL="redis-sentinel://$(echo $HA_S | sed 's/\([0-9]*\)/127.0.0.1:\1/g; s/ /,/g')#$SENTINEL_MASTER"
	ha_wait_known 30 || { echo "the sentinels did not find each other" >&2; return 1; }
}

# ha_port NAME: the port of r0..r2 or s0..s2.
ha_port() { cat "$HA_DIR/$1/port"; }
ha_pid() { cat "$HA_DIR/$1/pid" 2>/dev/null; }

# redis_server_at I [ARGS...]: start Redis number I on its port (again).
redis_server_at() {
	local i=$1 d=$HA_DIR/r$1; shift
	redis-server --port "$(cat "$d/port")" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$d" --daemonize yes --pidfile "$d/pid" --logfile "$d/log" "$@"
	eventually 10 ha_cli "r$i" ping >/dev/null 2>&1
}

# ha_cli NAME ARGS...: redis-cli to r0..r2 or s0..s2, bounded (with the password
# of HA_AUTH_R or HA_AUTH_S, where set).
ha_cli() {
	local n=$1 a; shift
	case $n in r*) a=${HA_AUTH_R:-} ;; *) a=${HA_AUTH_S:-} ;; esac
	if [ -n "$a" ]; then
		REDISCLI_AUTH=$a timeout 5 redis-cli -h 127.0.0.1 -p "$(ha_port "$n")" "$@"
	else
		timeout 5 redis-cli -h 127.0.0.1 -p "$(ha_port "$n")" "$@"
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
	local i
	for i in 0 1 2; do [ "$(ha_port "r$i")" = "$1" ] && echo "r$i" && return; done
}

# ha_wait_known SECONDS: every sentinel knows two replicas and two other sentinels.
ha_wait_known() { eventually "$1" ha_known; }
ha_known() {
	local s
	for s in s0 s1 s2; do
		ha_cli "$s" sentinel master "$SENTINEL_MASTER" 2>/dev/null | tr -d '\r' | awk '
			prev == "num-slaves" { r = $1 } prev == "num-other-sentinels" { o = $1 }
			{ prev = $1 } END { exit !(r >= 2 && o >= 2) }' || return 1
	done
}

# ha_wait_master_not PORT SECONDS: until every sentinel names a master other than PORT,
# and that master says ROLE master; prints its port. Sentinels named in HA_STOPPED
# (stalled on purpose) are not asked.
ha_wait_master_not() { eventually "$2" ha_master_not "$1"; }
ha_master_not() {
	local s m="" got
	for s in s0 s1 s2; do
		[ -n "$(ha_pid "$s")" ] && kill -0 "$(ha_pid "$s")" 2>/dev/null || continue
		case " ${HA_STOPPED:-} " in *" $s "*) continue ;; esac
		got=$(ha_cli "$s" --raw sentinel get-master-addr-by-name "$SENTINEL_MASTER" 2>/dev/null | sed -n 2p)
		[ -n "$got" ] && [ "$got" != "$1" ] || return 1
		m=$got
	done
	[ -n "$m" ] && [ "$(ha_role "$(ha_name "$m")")" = master ] && echo "$m"
}

# ha_role NAME: what ROLE says first (master, slave), or nothing.
ha_role() { ha_cli "$1" --raw role 2>/dev/null | head -1; }

# ha_stop: every server and sentinel of the suite, by pid (SIGCONT first: a stalled one).
ha_stop() {
	local f p
	[ -z "${FAKE_PID:-}" ] || { kill -9 "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; }
	FAKE_PID=""
	[ -n "${HA_DIR:-}" ] || return 0
	for f in "$HA_DIR"/*/pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	HA_DIR=""
}

# fake_sentinel_start MODE: a sentinel that lies, on a free port (FAKE_PORT): it
# answers SENTINEL get-master-addr-by-name with replica r1's address (MODE stale)
# or nil (MODE nil: it does not monitor the master), takes SUBSCRIBE and PING,
# and never publishes. One Python process; FAKE_PID.
fake_sentinel_start() {
	FAKE_PORT=$(free_port)
	python3 -c '
import socket, sys, threading
mode, replica = sys.argv[2], sys.argv[3]
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
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
' "$FAKE_PORT" "$1" "$(ha_port r1)" &
	FAKE_PID=$!
	eventually 10 listening "$FAKE_PORT"
}
