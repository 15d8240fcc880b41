# etcd.sh: a private etcd (one member, or a cluster of three) for a suite, on free
# loopback ports; sourced by the suites that need one (after lib.sh: scratch, nap,
# eventually, wait_gone, proc_gone).
#
# Members run as background children of the suite's shell, so that ctest's kill of
# a suite past its TIMEOUT takes them too (and, where setpriv can, they get SIGKILL
# when that shell dies). Their data lies in /dev/shm where there is room (a raft
# commit's fsync costs nothing there; etcd 3.4 has no --unsafe-no-fsync), each
# member's WAL taking 128 MB of memory while it runs: etcd_stop removes it, and
# etcd_start removes what suites killed before their etcd_stop left.

. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# How long a cluster may take to answer: a guard against one that never does,
# never a verdict on speed.
ETCD_START_LIMIT=${ETCD_START_LIMIT:-60}

# etcd_start [N] [ARGS...]: start N members (1 by default) with extra ARGS;
# sets ETCD_URL (etcd://host:port,...), ETCD_N, ETCD_DIR, ETCD_CPORT[i],
# ETCD_PPORT[i]. Skips the suite (exit 77) when etcd is missing. Started again on
# other ports when one was taken meanwhile ("address already in use"); a cluster
# that does not answer ends the suite (exit 1) with its members' logs.
etcd_start() {
	command -v etcd >/dev/null || { echo "etcd not installed (Debian: etcd-server): skipped" >&2; exit "${SKIP:-77}"; }
	ETCD_N=${1:-1}; shift || true
	ETCD_ARGS="$*"
	ETCD_SCHEME=${ETCD_SCHEME:-http}
	local i tries=5 cluster urls used
	while :; do
		# A fresh directory each time: a member must not find another cluster's data.
		etcd_dir
		cluster="" urls="" used=" "
		for ((i = 0; i < ETCD_N; i++)); do
			ETCD_CPORT[i]=$(etcd_port); used="$used${ETCD_CPORT[i]} "
			ETCD_PPORT[i]=$(etcd_port); used="$used${ETCD_PPORT[i]} "
			cluster="$cluster${cluster:+,}m$i=http://127.0.0.1:${ETCD_PPORT[i]}"
			urls="$urls${urls:+,}127.0.0.1:${ETCD_CPORT[i]}"
		done
		ETCD_CLUSTER=$cluster
		ETCD_ENDPOINTS=$urls
		case $ETCD_SCHEME in
		https) ETCD_URL="etcds://$urls" ;;
		*) ETCD_URL="etcd://$urls" ;;
		esac
		for ((i = 0; i < ETCD_N; i++)); do etcd_member_start "$i" new; done
		etcd_wait_up quiet && return 0
		tries=$((tries - 1))
		if [ $tries -gt 0 ] && grep -qi 'address already in use' "$ETCD_DIR"/m*.log 2>/dev/null; then
			echo "etcd.sh: a port was taken, other ones" >&2
			etcd_stop
			continue
		fi
		echo "etcd.sh: etcd $ETCD_N member(s) $ETCD_ARGS: $ETCD_WHY; their logs:" >&2
		for ((i = 0; i < ETCD_N; i++)); do tail -n 20 "$ETCD_DIR/m$i.log" >&2 2>/dev/null; done
		etcd_stop
		exit 1
	done
}

# etcd_port: a free port not yet given to this cluster ($used).
etcd_port() {
	local p
	p=$(free_port)
	while case $used in *" $p "*) true ;; *) false ;; esac; do p=$(free_port); done
	echo "$p"
}

# etcd_dir: ETCD_DIR, a fresh directory: in /dev/shm where it has room for the
# members' WALs (etcd preallocates two 64 MB files each), else in scratch. Named
# after the suite's shell, so a later etcd_dir removes those of shells gone.
etcd_dir() {
	local d pid avail
	ETCD_DIR=""
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then
		for d in /dev/shm/accelctl-etcd.*; do
			[ -d "$d" ] || continue
			pid=${d#/dev/shm/accelctl-etcd.}; pid=${pid%%.*}
			case $pid in '' | *[!0-9]*) continue ;; esac
			kill -0 "$pid" 2>/dev/null || rm -rf "$d"
		done
		avail=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
		[ "${avail:-0}" -ge $(((256 + 192 * ETCD_N) * 1024)) ] &&
			ETCD_DIR=$(mktemp -d "/dev/shm/accelctl-etcd.$$.XXXXXX" 2>/dev/null)
	fi
	[ -n "$ETCD_DIR" ] || ETCD_DIR=$(mktemp -d "$(scratch)/etcd.XXXXXX")
}

# etcd_member_start I [new|existing]: start member I (again, with its data).
etcd_member_start() {
	local i=$1 state=${2:-existing}
	server_pdeath
	# shellcheck disable=SC2086
	$SERVER_PDEATH etcd --name "m$i" --data-dir "$ETCD_DIR/m$i" \
		--listen-client-urls "$ETCD_SCHEME://127.0.0.1:${ETCD_CPORT[i]}" \
		--advertise-client-urls "$ETCD_SCHEME://127.0.0.1:${ETCD_CPORT[i]}" \
		--listen-peer-urls "http://127.0.0.1:${ETCD_PPORT[i]}" \
		--initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PPORT[i]}" \
		--initial-cluster "$ETCD_CLUSTER" --initial-cluster-state "$state" \
		--initial-cluster-token "accelctl-test-$$" \
		--heartbeat-interval 50 --election-timeout 500 \
		$ETCD_ARGS </dev/null >>"$ETCD_DIR/m$i.log" 2>&1 &
	echo $! >"$ETCD_DIR/m$i.pid"
	# Out of the job table: a test's plain `wait` must not wait for it.
	disown $! 2>/dev/null || true
}

# etcd_member_restart I [new|existing]: start member I again after etcd_kill
# and wait until the cluster answers (etcd_wait_up; ends the suite with the
# logs when it never does). A member started right after SIGKILL may find its
# port still held by its dead self's connections (orphans with unsent data:
# "bind: address already in use") and exit: it is started again on the same
# port (the ranks' URL and the cluster's peer URL name it), until it stays up
# or ETCD_START_LIMIT s pass by the clock. A suite that restarted a member once
# and waited lost every later test to "rendezvous unreachable".
etcd_member_restart() {
	local i=$1 state=${2:-existing} end=$((SECONDS + ETCD_START_LIMIT)) p
	etcd_member_start "$i" "$state"
	until etcd_wait_up quiet; do
		p=$(etcd_member_pid "$i")
		if [ $SECONDS -lt "$end" ] && { [ -z "$p" ] || proc_gone "$p"; } &&
		    grep -qi 'address already in use' "$ETCD_DIR/m$i.log" 2>/dev/null; then
			echo "etcd.sh: member $i: its port still held after its restart: started again" >&2
			# Its log is read again only for what the next start says.
			mv -f "$ETCD_DIR/m$i.log" "$ETCD_DIR/m$i.log.$SECONDS"
			[ "$state" = new ] && rm -rf "${ETCD_DIR:?}/m$i"
			nap 0.5
			etcd_member_start "$i" "$state"
			continue
		fi
		echo "etcd.sh: member $i restarted: $ETCD_WHY; the logs' ends:" >&2
		tail -n 20 "$ETCD_DIR"/m*.log* >&2 2>/dev/null
		return 1
	done
}

# etcdctl_ ARGS...: etcdctl against the members (bounded).
etcdctl_() { etcdctl_at "$ETCD_SCHEME://${ETCD_ENDPOINTS//,/,$ETCD_SCHEME://}" "$@"; }
# etcdctl_at ENDPOINTS ARGS...: the same against ENDPOINTS (scheme://host:port,...).
etcdctl_at() {
	local eps=$1 tls=(); shift
	[ "$ETCD_SCHEME" = https ] && tls=(--cacert "$ETCD_CACERT")
	ETCDCTL_API=3 timeout 10 etcdctl --endpoints "$eps" "${tls[@]}" "$@"
}

# etcd_wait_up [quiet]: until every running member (one with a pid file) answers,
# ETCD_START_LIMIT s at most: a connect to each client port first (no process),
# then `etcdctl endpoint health`, less and less often. False, ETCD_WHY saying why
# (and, unless quiet, the members' logs), when a member exited or the deadline
# passed.
etcd_wait_up() {
	local i p eps end ms=10 t up
	ETCD_WHY=""
	end=$((${EPOCHREALTIME/[.,]/} + ETCD_START_LIMIT * 1000000))
	while :; do
		eps="" up=1
		for ((i = 0; i < ETCD_N; i++)); do
			p=""
			{ p=$(<"$ETCD_DIR/m$i.pid"); } 2>/dev/null
			[ -n "$p" ] || continue
			if proc_gone "$p"; then
				ETCD_WHY="member $i (pid $p) exited"
				break 2
			fi
			[ $up = 0 ] || listening "${ETCD_CPORT[i]}" || up=0
			eps="$eps${eps:+,}$ETCD_SCHEME://127.0.0.1:${ETCD_CPORT[i]}"
		done
		[ -n "$eps" ] || { ETCD_WHY="no member runs"; break; }
		[ $up = 1 ] && etcdctl_at "$eps" --command-timeout=2s endpoint health >/dev/null 2>&1 && return 0
		if [ "${EPOCHREALTIME/[.,]/}" -ge "$end" ]; then
			ETCD_WHY="no healthy answer in $ETCD_START_LIMIT s"
			break
		fi
		printf -v t '0.%03d' "$ms"; nap "$t"
		ms=$((ms < 100 ? ms * 2 : 200))
	done
	if [ "${1:-}" != quiet ]; then
		echo "etcd.sh: etcd_wait_up: $ETCD_WHY; the logs' ends:" >&2
		for ((i = 0; i < ETCD_N; i++)); do tail -n 5 "$ETCD_DIR/m$i.log" >&2 2>/dev/null; done
	fi
	return 1
}

# etcd_member_pid I; etcd_kill I: SIGKILL member I (and wait until it is gone).
etcd_member_pid() {
	local p
	{ p=$(<"$ETCD_DIR/m$1.pid"); } 2>/dev/null || return 1
	echo "$p"
}
etcd_kill() {
	local p; p=$(etcd_member_pid "$1")
	[ -n "$p" ] || return 0
	kill -9 "$p" 2>/dev/null
	wait_gone "$p" 10 || echo "etcd.sh: member $1 (pid $p) still there 10 s after SIGKILL" >&2
	rm -f "$ETCD_DIR/m$1.pid"
}

# etcd_leader: the index of the member that leads now (empty if none).
etcd_leader() {
	local i js id
	for ((i = 0; i < ETCD_N; i++)); do
		[ -f "$ETCD_DIR/m$i.pid" ] || continue
		js=$(ETCDCTL_API=3 timeout 5 etcdctl --endpoints "127.0.0.1:${ETCD_CPORT[i]}" \
			endpoint status -w json 2>/dev/null) || continue
		[[ $js =~ \"member_id\":([0-9]+) ]] || continue
		id=${BASH_REMATCH[1]}
		[[ $js =~ \"leader\":([0-9]+) ]] && [ "${BASH_REMATCH[1]}" = "$id" ] && { echo "$i"; return; }
	done
}

# etcd_stop: every member killed, their directory (data, logs) removed.
etcd_stop() {
	local i
	[ -n "${ETCD_N:-}" ] || return 0
	for ((i = 0; i < ETCD_N; i++)); do etcd_kill "$i"; done
	[ -z "${ETCD_DIR:-}" ] || rm -rf "$ETCD_DIR"
}
