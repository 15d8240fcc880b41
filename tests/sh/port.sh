# port.sh: free_port, listening and server_pdeath, for the suites and scripts that
# start a server on loopback.

# listening PORT: something accepts connections on 127.0.0.1:PORT. No process: the
# connection is opened and closed by this shell (in a subshell only in POSIX mode,
# where a failed `exec` redirection would end the shell).
listening() {
	local fd
	if shopt -qo posix; then
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
		return
	fi
	{ exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
	exec {fd}>&-
}

# free_port: a loopback port nothing listens on and no other suite holds, from
# 22700-29999: below Linux's ephemeral range (32768 and up by default: a port an
# outgoing connection holds answers no connect, yet a server could not bind it),
# and clear of cluster.sh's cl_free_port (20000-22699, bus ports 30000-32699).
#
# A port is picked now and bound later (seconds later, at times), while other
# suites run at the same time: each port handed out is reserved (port_reserve) for
# as long as the suite that asked lives, so no other suite's free_port gives it
# out meanwhile. A server that still finds its port taken (by something else)
# is started again on another one (redis_start, etcd_start).
free_port() {
	local p i
	for ((i = 0; i < 2000; i++)); do
		p=$((22700 + RANDOM % 7300))
		port_reserve "$p" || continue
		listening "$p" && continue
		echo "$p"
		return 0
	done
	echo "free_port: no free port found" >&2
	return 1
}

# port_reserve PORT: reserve PORT for this suite (the shell $$ and its start time, so a
# reused pid is no owner): a file PORT_LOCKS/PORT created exclusively (noclobber),
# taken over when its owner is gone. False when another live suite holds it, or when
# this suite took it already (free_port never hands out a port twice). No process
# but mkdir's, once. Where PORT_LOCKS cannot be made, every port is free to take.
PORT_LOCKS=${PORT_LOCKS:-/tmp/accelctl-test-ports.$UID}
port_reserve() {
	local f=$PORT_LOCKS/$1 me owner noclobber=0 rc
	[ -d "$PORT_LOCKS" ] || mkdir -p -m 700 "$PORT_LOCKS" 2>/dev/null || return 0
	port_starttime $$; me="$$ $PORT_ST"
	[[ $- == *C* ]] && noclobber=1
	set -C
	{ echo "$me" >"$f"; } 2>/dev/null
	rc=$?
	[ $noclobber = 1 ] || set +C
	[ $rc = 0 ] && return 0
	{ owner=$(<"$f"); } 2>/dev/null
	# Ours already, or being written (empty), or its owner lives: not to take.
	[ -n "$owner" ] && [ "$owner" != "$me" ] || return 1
	port_starttime "${owner%% *}"
	[ "$PORT_ST" = "${owner#* }" ] && return 1
	# Taken over (two suites doing so at once: the one that reads its own line
	# back keeps it).
	{ echo "$me" >|"$f"; } 2>/dev/null || return 1
	{ owner=$(<"$f"); } 2>/dev/null
	[ "$owner" = "$me" ]
}

# port_starttime PID: PORT_ST, PID's start time (clock ticks since boot; empty when
# there is no such process).
port_starttime() {
	local s
	PORT_ST=""
	{ s=$(<"/proc/$1/stat"); } 2>/dev/null || return 0
	s=${s##*) }
	set -- $s
	PORT_ST=${20}
}

# server_pdeath: SERVER_PDEATH, the words that start a server so that it gets SIGKILL
# when the shell that started it dies (setpriv --pdeathsig), where setpriv can. Only
# in the suite's own shell ($$): a server restarted from a subshell outlives that
# subshell, so it must not die with it.
server_pdeath() {
	SERVER_PDEATH=""
	[ "${BASHPID:-$$}" = "$$" ] || return 0
	if [ -z "${SERVER_SETPRIV:-}" ]; then
		SERVER_SETPRIV=no
		setpriv --pdeathsig KILL true 2>/dev/null && SERVER_SETPRIV=yes
	fi
	[ "$SERVER_SETPRIV" = no ] || SERVER_PDEATH="setpriv --pdeathsig KILL"
}
