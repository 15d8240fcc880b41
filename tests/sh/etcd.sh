# etcd.sh: a private etcd (one member, or a cluster of three) for a suite, on free
# loopback ports with data directories in the suite's scratch directory; sourced
# by the suites that need one.

. "$(dirname "${BASH_SOURCE[0]}")/port.sh"

# etcd_start [N] [ARGS...]: start N members (1 by default) with extra ARGS;
# sets ETCD_URL (etcd://host:port,...), ETCD_N, ETCD_DIR, ETCD_CPORT[i],
# ETCD_PPORT[i]. Skips the suite (exit 77) when etcd is missing.
etcd_start() {
	command -v etcd >/dev/null || { echo "etcd not installed (Debian: etcd-server): skipped" >&2; exit "${SKIP:-77}"; }
	ETCD_N=${1:-1}; shift || true
	ETCD_ARGS="$*"
	# A fresh directory each time: a member must not find another cluster's data.
	ETCD_DIR=$(mktemp -d "$(scratch)/etcd.XXXXXX")
	ETCD_SCHEME=${ETCD_SCHEME:-http}
	local i cluster="" urls="" used=" "
	etcd_port() {
		local p
		p=$(free_port)
		while case $used in *" $p "*) true ;; *) false ;; esac; do p=$(free_port); done
		used="$used$p "
		echo "$p"
	}
	for i in $(seq 0 $((ETCD_N - 1))); do
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
	for i in $(seq 0 $((ETCD_N - 1))); do etcd_member_start "$i" new; done
	etcd_wait_up
}

# etcd_member_start I [new|existing]: start member I (again, with its data).
etcd_member_start() {
	local i=$1 state=${2:-existing}
	# shellcheck disable=SC2086
	etcd --name "m$i" --data-dir "$ETCD_DIR/m$i" \
		--listen-client-urls "$ETCD_SCHEME://127.0.0.1:${ETCD_CPORT[i]}" \
		--advertise-client-urls "$ETCD_SCHEME://127.0.0.1:${ETCD_CPORT[i]}" \
		--listen-peer-urls "http://127.0.0.1:${ETCD_PPORT[i]}" \
		--initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PPORT[i]}" \
		--initial-cluster "$ETCD_CLUSTER" --initial-cluster-state "$state" \
		--initial-cluster-token "accelctl-test-$$" \
		--heartbeat-interval 50 --election-timeout 500 \
		$ETCD_ARGS >>"$ETCD_DIR/m$i.log" 2>&1 &
	echo $! >"$ETCD_DIR/m$i.pid"
	disown $! 2>/dev/null || true
}

# etcdctl_ ARGS...: etcdctl against the members (bounded).
etcdctl_() {
	local tls=()
	[ "$ETCD_SCHEME" = https ] && tls=(--cacert "$ETCD_CACERT")
	ETCDCTL_API=3 timeout 10 etcdctl --endpoints "$(printf '%s' "$ETCD_ENDPOINTS" |
		sed "s|\([^,]*\)|$ETCD_SCHEME://\1|g")" "${tls[@]}" "$@"
}

# etcd_wait_up: until the cluster answers (10 s at most).
etcd_wait_up() {
	local i=0
	while ! etcdctl_ --command-timeout=1s endpoint health >/dev/null 2>&1 && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
}

# etcd_member_pid I; etcd_kill I: SIGKILL member I (and wait until it is gone).
etcd_member_pid() { cat "$ETCD_DIR/m$1.pid" 2>/dev/null; }
etcd_kill() {
	local p; p=$(etcd_member_pid "$1")
	[ -n "$p" ] || return 0
	kill -9 "$p" 2>/dev/null
	while kill -0 "$p" 2>/dev/null; do sleep 0.02; done
	rm -f "$ETCD_DIR/m$1.pid"
}

# etcd_leader: the index of the member that leads now (empty if none).
etcd_leader() {
	local i
	for i in $(seq 0 $((ETCD_N - 1))); do
		[ -n "$(etcd_member_pid "$i")" ] || continue
		ETCDCTL_API=3 timeout 5 etcdctl --endpoints "127.0.0.1:${ETCD_CPORT[i]}" \
			endpoint status -w json 2>/dev/null |
			python3 -c 'import json,sys; s=json.load(sys.stdin)[0]["Status"]; sys.exit(0 if s["leader"]==s["header"]["member_id"] else 1)' &&
			{ echo "$i"; return; }
	done
}

etcd_stop() {
	local i
	[ -n "${ETCD_N:-}" ] || return 0
	for i in $(seq 0 $((ETCD_N - 1))); do etcd_kill "$i"; done
}
