# store.sh: the rendezvous a suite that runs over either store starts and stops
# (STORE=redis or etcd): a private redis-server or a one-member etcd, and RDV, the
# URL its ranks use. Sourced after lib.sh, redis.sh and etcd.sh.

# store_start: STORE's server up, RDV set; the suite skipped (77) where this
# accelctl was built without etcd.
store_start() {
	if [ "$STORE" = etcd ]; then
		"$ACCELCTL" --version | grep -q '^features:.* etcd=1' || { echo "no etcd support: skipped" >&2; skip_suite; }
		etcd_start 1
		RDV=$ETCD_URL
	else
		redis_start
		RDV=unix://$REDIS_SOCK
	fi
}

store_stop() { if [ "$STORE" = etcd ]; then etcd_stop; else redis_stop; fi; }
