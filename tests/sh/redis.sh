# redis.sh: a private redis-server for a suite, on a free loopback port and a Unix
# socket in the suite's scratch directory; sourced by the suites that need one.

. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# ACCELCTL_TEST_REDIS_BIN (tests/valkey.sh's output): its redis-server, redis-cli and
# redis-sentinel come first, so that the same suites run against Valkey.
if [ -n "${ACCELCTL_TEST_REDIS_BIN:-}" ]; then
	[ -x "$ACCELCTL_TEST_REDIS_BIN/redis-server" ] ||
		{ echo "no redis-server in $ACCELCTL_TEST_REDIS_BIN" >&2; exit 1; }
	PATH=$ACCELCTL_TEST_REDIS_BIN:$PATH
fi

# redis_start [ARGS...]: start redis-server with extra ARGS; sets REDIS_PORT,
# REDIS_SOCK, REDIS_DIR. Skips the suite (exit 77) when redis-server is missing.
redis_start() {
	command -v redis-server >/dev/null || { echo "redis-server not installed: skipped" >&2; skip_suite; }
	REDIS_DIR=$(scratch)/redis
	mkdir -p "$REDIS_DIR"
	REDIS_PORT=${REDIS_PORT:-$(free_port)}
	REDIS_SOCK=$REDIS_DIR/redis.sock
	REDIS_ARGS="--port $REDIS_PORT --bind 127.0.0.1 --unixsocket $REDIS_SOCK --unixsocketperm 700 \
		--save '' --appendonly no --dir $REDIS_DIR --daemonize yes --pidfile $REDIS_DIR/pid \
		--logfile $REDIS_DIR/log $*"
	eval "redis-server $REDIS_ARGS"
	local i=0
	while [ ! -S "$REDIS_SOCK" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	# The server asked for, not Debian's by mistake (INFO's "executable" is
	# only the working directory and argv[0]: the process' own binary tells).
	[ -z "${ACCELCTL_TEST_REDIS_BIN:-}" ] ||
		[ "$(readlink -f "/proc/$(redis_pid)/exe")" = "$(readlink -f "$ACCELCTL_TEST_REDIS_BIN/redis-server")" ] ||
		{ echo "redis.sh: not $ACCELCTL_TEST_REDIS_BIN's server" >&2; exit 1; }
}

# redis_cli ARGS...: talk to it (as the default user, or REDISCLI_AUTH); bounded,
# so a stopped (SIGSTOP) or hung server fails the test instead of hanging it.
redis_cli() { timeout 10 redis-cli -s "$REDIS_SOCK" "$@"; }

redis_kill() {
	[ -n "${REDIS_DIR:-}" ] || return 0
	[ -f "$REDIS_DIR/pid" ] && kill -9 "$(cat "$REDIS_DIR/pid")" 2>/dev/null
	local i=0
	while [ -S "$REDIS_SOCK" ] && redis_cli ping >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
	rm -f "$REDIS_SOCK" "$REDIS_DIR/pid"
}

# redis_restart: the same server again, empty (no persistence).
redis_restart() {
	eval "redis-server $REDIS_ARGS"
	local i=0
	while ! redis_cli ping >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}

redis_stop() { redis_kill; }

# redis_pid: the running server's pid (from its pid file; empty when none runs).
redis_pid() { cat "$REDIS_DIR/pid" 2>/dev/null; }

# redis_wait_gone PID: wait (at most 10 s) until PID has exited; 1 if it has not.
redis_wait_gone() {
	local i=0
	while kill -0 "$1" 2>/dev/null; do
		[ $i -lt 500 ] || return 1
		sleep 0.02; i=$((i + 1))
	done
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
