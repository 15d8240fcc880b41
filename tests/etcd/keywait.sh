# keywait.sh: waiting on etcd's keys with a deadline (sourced by the t_*.sh
# suites that delete or revoke under a job; needs etcdctl_ from etcd.sh).

# etcd_wait_key RE [SECONDS]: until a key under accelctl/ matches the grep
# RE, SECONDS (5 by default) at most; false when it never did.
etcd_wait_key() {
	local end=$(($(date +%s) + ${2:-5}))
	until etcdctl_ get --prefix accelctl/ --keys-only 2>/dev/null | grep -q -- "$1"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# etcd_wait_file FILE [SECONDS]: until FILE exists, SECONDS (10) at most.
etcd_wait_file() {
	local end=$(($(date +%s) + ${2:-10}))
	until [ -e "$1" ]; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.05
	done
}
