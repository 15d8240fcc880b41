# t_barrier_loop.sh (soak): 2,000 barriers on 2 simulated nodes of 2 ranks over Redis;
# each node's helper's RSS, open descriptors and journal size stay flat. The figures
# at the start (barrier 1 and 100) and the end (barrier 2000) are printed.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/redis.sh"

# A sanitized build is several times slower, and ASan's quarantine keeps
# freed memory (RSS grows there whatever the helper does): fewer barriers, and
# RSS is printed but not checked.
if [ -n "${ACCELCTL_SANITIZED:-}" ]; then
	N=${SOAK_BARRIERS:-500}
else
	N=${SOAK_BARRIERS:-2000}
fi

oneTimeSetUp() { redis_start; }
oneTimeTearDown() { redis_stop; }

testTwoThousandBarriers() {
	local d; d=$(scratch)/loop; mkdir -p "$d"
	local t0; t0=$(date +%s)
	# Local rank 0 of each node samples its node's helper: "G rss_kib fds journal_bytes".
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" TMPDIR="$d" ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" \
		ACCELCTL_JOURNAL_MAX=16384 timeout 170 "$ACCELCTL" launch --nnodes 2 -n 2 -- bash -c '
		sample() {
			local p; p=$(cat $ACCELCTL_RUNTIME_DIR/*.pid)
			echo "$1 $(awk "/^VmRSS/ { print \$2 }" /proc/$p/status) $(ls /proc/$p/fd | wc -l) $(stat -c %s $ACCELCTL_RUNTIME_DIR/*.state)" \
				>>'"$d"'/node$ACCELCTL_NODE_RANK
		}
		for g in $(seq 1 '"$N"'); do
			accelctl barrier --timeout 60s loop || exit
			if [ $ACCELCTL_LOCAL_RANK = 0 ]; then
				case $g in 1|100|'"$((N / 2))"'|'"$N"') sample $g ;; esac
			fi
		done' >"$d/out" 2>"$d/err"
	assertEquals "$N barriers: $(tail -n 3 "$d/err")" 0 $?
	echo "$N barriers, 2 nodes x 2 ranks over Redis: $(($(date +%s) - t0)) s"
	local n
	for n in 0 1; do
		echo "node $n helper (barrier, RSS KiB, fds, journal bytes):" $(cat "$d/node$n")
		local s e
		s=$(grep '^100 ' "$d/node$n")
		e=$(grep "^$N " "$d/node$n")
		set -- $s $e
		[ -n "${ACCELCTL_SANITIZED:-}" ] ||
			assertTrue "node $n: RSS flat ($2 -> $6 KiB)" "[ $(($6 - $2)) -lt 256 ]"
		# One or two clients of the node may be connected at a sample.
		assertTrue "node $n: descriptors flat ($3 -> $7)" "[ $7 -le $(($3 + 2)) ]"
		# The journal is compacted many times over the loop (limit 16 KiB): it
		# stays under twice the limit, half-way as at the last barrier.
		local mid; mid=$(grep "^$((N / 2)) " "$d/node$n" | cut -d' ' -f4)
		assertTrue "node $n: journal flat ($4 -> $8 bytes)" "[ $8 -le 32768 ] && [ $4 -le 32768 ]"
		assertTrue "node $n: compacted half-way (${mid:-none} bytes)" "[ ${mid:-99999999} -le 32768 ]"
	done
}

load_shunit2
