# redis.sh: a private redis-server for a suite, on a free loopback port and a Unix
# socket in the suite's scratch directory; sourced by the suites that need one
# (after lib.sh: scratch, skip_suite, nap, eventually, wait_gone).
#
# The server runs in the foreground as a background child of the suite's shell
# (not --daemonize yes): when ctest kills a suite that ran past its TIMEOUT, it
# kills the suite's process tree, and a daemonized server (re-parented to pid 1)
# escaped it and ran on. Where setpriv(1) can, the server also gets SIGKILL when
# the shell that started it dies (PR_SET_PDEATHSIG).

. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# ACCELCTL_TEST_REDIS_BIN (tests/valkey.sh's output): its redis-server, redis-cli and
# redis-sentinel come first, so that the same suites run against Valkey.
if [ -n "${ACCELCTL_TEST_REDIS_BIN:-}" ]; then
	[ -x "$ACCELCTL_TEST_REDIS_BIN/redis-server" ] ||
		{ echo "no redis-server in $ACCELCTL_TEST_REDIS_BIN" >&2; exit 1; }
	PATH=$ACCELCTL_TEST_REDIS_BIN:$PATH
fi

# How long a server may take to answer its first PING: a guard against one that
# never does (a bad argument, its port taken), never a verdict on speed.
REDIS_START_LIMIT=${REDIS_START_LIMIT:-60}

# redis_start [ARGS...]: start redis-server with extra ARGS; sets REDIS_PORT,
# REDIS_SOCK, REDIS_DIR. Skips the suite (exit 77) when redis-server is missing.
# A REDIS_PORT set by the caller is kept; a port of redis_start's own choosing that
# turns out taken ("Address already in use": something bound it meanwhile) is
# replaced by another. A server that does not answer ends the suite (exit 1) with
# its log.
redis_start() {
	command -v redis-server >/dev/null || { echo "redis-server not installed: skipped" >&2; skip_suite; }
	REDIS_DIR=$(scratch)/redis
	mkdir -p "$REDIS_DIR"
	REDIS_SOCK=$REDIS_DIR/redis.sock
	local tries=1
	if [ -z "${REDIS_PORT:-}" ] || [ "$REDIS_PORT" = "${REDIS_OWN_PORT:-}" ]; then
		tries=5
		[ -n "${REDIS_PORT:-}" ] || { REDIS_PORT=$(free_port) && REDIS_OWN_PORT=$REDIS_PORT; }
	fi
	while :; do
		REDIS_ARGS="--port $REDIS_PORT --bind 127.0.0.1 --unixsocket $REDIS_SOCK --unixsocketperm 700"
		REDIS_ARGS+=" --save '' --appendonly no --dir $REDIS_DIR --daemonize no $*"
		redis_launch && break
		tries=$((tries - 1))
		if [ $tries -gt 0 ] && [ "$REDIS_WHY" = "port taken" ]; then
			echo "redis.sh: port $REDIS_PORT taken, another one" >&2
			REDIS_PORT=$(free_port) && REDIS_OWN_PORT=$REDIS_PORT
			continue
		fi
		redis_failed
		exit 1
	done
	# The server asked for, not Debian's by mistake (INFO's "executable" is
	# only the working directory and argv[0]: the process' own binary tells).
	[ -z "${ACCELCTL_TEST_REDIS_BIN:-}" ] ||
		[ "$(readlink -f "/proc/$(redis_pid)/exe")" = "$(readlink -f "$ACCELCTL_TEST_REDIS_BIN/redis-server")" ] ||
		{ echo "redis.sh: not $ACCELCTL_TEST_REDIS_BIN's server" >&2; exit 1; }
}

# redis_launch: start redis-server $REDIS_ARGS (its output appended to
# $REDIS_DIR/log, its pid into $REDIS_DIR/pid) and wait until it answers PING (any
# answer: NOAUTH too), REDIS_START_LIMIT s at most. False when it exited first or
# never answered (killed then); REDIS_WHY says which.
redis_launch() {
	local p end ms=10 t reply="" log="" seen
	REDIS_WHY=""
	rm -f "$REDIS_SOCK"
	# What the log holds already (earlier servers'): only this one's lines tell.
	{ log=$(<"$REDIS_DIR/log"); } 2>/dev/null
	seen=${#log}
	server_pdeath
	eval "exec $SERVER_PDEATH redis-server $REDIS_ARGS" </dev/null >>"$REDIS_DIR/log" 2>&1 &
	p=$!
	# Out of the job table: a test's plain `wait` (for its own background jobs)
	# must not wait for the server. bash still reaps it when it exits.
	disown "$p" 2>/dev/null
	echo "$p" >"$REDIS_DIR/pid"
	end=$((${EPOCHREALTIME/[.,]/} + REDIS_START_LIMIT * 1000000))
	while :; do
		if proc_gone "$p"; then
			REDIS_WHY="exited"
			{ log=$(<"$REDIS_DIR/log"); } 2>/dev/null
			case ${log:seen} in *[Aa]"ddress already in use"*) REDIS_WHY="port taken" ;; esac
			rm -f "$REDIS_DIR/pid"
			return 1
		fi
		# The socket first (no process to look), then one PING.
		if [ -S "$REDIS_SOCK" ]; then
			reply=$(timeout 10 redis-cli -s "$REDIS_SOCK" ping 2>&1)
			case $reply in
			"" | *"Could not connect"* | *"Connection refused"* | *"Connection reset"* | \
			*"closed the connection"* | *"No such file"* | *LOADING*) ;;
			*) return 0 ;;	# PONG, or NOAUTH and the like: it answers
			esac
		fi
		if [ "${EPOCHREALTIME/[.,]/}" -ge "$end" ]; then
			REDIS_WHY="no answer in $REDIS_START_LIMIT s (last: ${reply:-no socket})"
			kill -9 "$p" 2>/dev/null
			rm -f "$REDIS_DIR/pid"
			return 1
		fi
		printf -v t '0.%03d' "$ms"; nap "$t"
		ms=$((ms < 100 ? ms * 2 : 200))
	done
}

# redis_failed: say why the server did not start, with its log's end.
redis_failed() {
	echo "redis.sh: redis-server $REDIS_ARGS: ${REDIS_WHY:-did not start}; its log:" >&2
	tail -n 30 "$REDIS_DIR/log" >&2 2>/dev/null
}

# redis_cli ARGS...: talk to it (as the default user, or REDISCLI_AUTH); bounded,
# so a stopped (SIGSTOP) or hung server fails the test instead of hanging it.
redis_cli() { timeout 10 redis-cli -s "$REDIS_SOCK" "$@"; }

# redis_kill: SIGKILL; returns once the server has exited.
redis_kill() {
	[ -n "${REDIS_DIR:-}" ] || return 0
	local p; p=$(redis_pid)
	if [ -n "$p" ]; then
		kill -9 "$p" 2>/dev/null
		wait_gone "$p" 10 || echo "redis.sh: redis-server $p still there 10 s after SIGKILL" >&2
	fi
	rm -f "$REDIS_SOCK" "$REDIS_DIR/pid"
}

# redis_restart: the same server again (same port and socket), empty (no
# persistence). False, with the log, when it does not answer.
redis_restart() {
	redis_launch || { redis_failed; return 1; }
}

redis_stop() { redis_kill; }

# redis_pid: the running server's pid (from its pid file; empty when none runs).
redis_pid() {
	local p
	{ p=$(<"$REDIS_DIR/pid"); } 2>/dev/null || return 1
	echo "$p"
}

# redis_wait_gone PID: wait (at most 10 s) until PID has exited; 1 if it has not.
redis_wait_gone() {
	wait_gone "$1" 10 || return 1
	rm -f "$REDIS_SOCK" "$REDIS_DIR/pid"
}

# redis_term: a graceful stop with SIGTERM (what systemctl stop does); returns once
# the server has exited, so redis_restart can bind the same port again.
redis_term() {
	local p; p=$(redis_pid)
	[ -n "$p" ] && kill -TERM "$p" && redis_wait_gone "$p"
}

# redis_shutdown: the same through the protocol, SHUTDOWN NOSAVE.
redis_shutdown() {
	local p; p=$(redis_pid)
	[ -n "$p" ] || return 1
	redis_cli shutdown nosave >/dev/null 2>&1
	redis_wait_gone "$p"
}

# redis_pause / redis_resume: stall the server (SIGSTOP) and let it go on (SIGCONT).
redis_pause() { kill -STOP "$(redis_pid)"; }
redis_resume() { kill -CONT "$(redis_pid)"; }
