# chaos/plan.sh: what a chaos run does, from its seed alone (awk's srand), so that
# `tests/chaos.sh --seed S` replays the same collectives and the same faults.

# chaos_plan SEED N: N collectives, one a line, for chaos/rank.sh, each after
# LAG: "-", or "R:MS" (one in five): rank R enters MS ms (20-500) late, so
# that faults also find ranks of a node apart, results read late, a node
# behind the other:
#   b                 barrier
#   s S0 S1 S2 S3     barrier --status, rank R passing SR (mostly 0)
#   v SIZE OFF        broadcast of "I:" and SIZE bytes of the blob from OFF
#                     (SIZE -1: the empty value); sizes spread evenly over
#                     1 B..1 MiB on a log scale, 1 MiB itself now and then,
#                     except in every other 3,000 collectives (a long run):
#                     there at most 4 KiB, so that a helper's journal grows
#                     long between compactions (at 4 MiB) and a replacement
#                     replays thousands of records
#   w S               on-main --wait -- CMD, CMD exiting S
#   m S               main-first -- CMD, rank 0's CMD exiting S
#   c                 the driver's control word, broadcast (every 8th line)
# The statuses avoid accelctl's own codes (2, 3, 124, 125, 129) so a wrong
# one says whose it is.
chaos_plan() {
	awk -v seed="$1" -v n="$2" -v blob="$CHAOS_BLOB_BYTES" 'BEGIN {
		srand(seed)
		split("1 4 7 42 99", bad, " ")
		for (i = 0; i < n; i++) {
			lag = rand() < 0.2 ? int(rand() * 4) ":" (20 + int(rand() * 481)) : "-"
			if (i % 8 == 7) { print lag, "c"; continue }
			printf "%s ", lag
			r = rand()
			if (r < 0.25) print "b"
			else if (r < 0.45) {
				line = "s"
				for (k = 0; k < 4; k++)
					line = line " " (rand() < 0.8 ? 0 : bad[1 + int(rand() * 5)])
				print line
			} else if (r < 0.70) {
				q = rand()
				if (q < 0.05) size = -1
				else if (int(i / 3000) % 2) size = int(2 ^ (rand() * 12))
				else if (q < 0.10) size = 1048576
				else size = int(2 ^ (rand() * 20))
				off = int(rand() * (blob - (size < 0 ? 0 : size)))
				print "v", size, off
			} else if (r < 0.85) print "w", (rand() < 0.6 ? 0 : bad[1 + int(rand() * 5)])
			else print "m", (rand() < 0.6 ? 0 : bad[1 + int(rand() * 5)])
		}
	}'
}

# chaos_faults SEED N STORE: N faults, "PAUSE_MS KIND ARG" a line: the pause
# before it (0.5-2 s, as issue 18 asks), what, and on what.
#   redis: kill (SIGKILL, restarted empty), term (SIGTERM, restarted empty),
#          flush (FLUSHALL), stop (SIGSTOP 2 s), clients (CLIENT KILL TYPE
#          normal), helper NODE (kill -9)
#   etcd:  kill M, stop M (a member SIGKILLed and restarted with its data, or
#          SIGSTOPped 2 s; M "leader" is whichever leads then), del (the job's
#          keys, del --prefix), revoke K (the K-th of the leases, sorted),
#          helper NODE
chaos_faults() {
	awk -v seed="$1" -v n="$2" -v store="$3" 'BEGIN {
		srand(seed + 7919)
		if (store == "redis") k = split("kill term flush stop clients helper", kinds, " ")
		else k = split("kill stop del revoke helper", kinds, " ")
		for (i = 0; i < n; i++) {
			kind = kinds[1 + int(rand() * k)]
			arg = "-"
			if (kind == "helper") arg = int(rand() * 2)
			else if (store == "etcd" && (kind == "kill" || kind == "stop"))
				arg = rand() < 0.5 ? "leader" : int(rand() * 3)
			else if (kind == "revoke") arg = int(rand() * 1000)
			print 500 + int(rand() * 1501), kind, arg
		}
	}'
}

# chaos_blob SEED FILE BYTES: the bytes broadcasts are cut from, the same for a
# seed (binary, NULs included).
chaos_blob() {
	if [ -n "${PY:-}" ]; then
		"$PY" -c 'import random, sys
r = random.Random(int(sys.argv[1]))
sys.stdout.buffer.write(r.randbytes(int(sys.argv[2])))' "$1" "$3" >"$2"
	else
		head -c "$3" /dev/urandom >"$2"
	fi
}
