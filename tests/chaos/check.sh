# chaos/check.sh: the checks of a chaos run (tests/chaos.sh), from what the ranks
# logged (chaos/rank.sh: log.RANK, cmd.RANK). Each prints one line per failure
# (nothing when all holds), or figures.

# chaos_lines DIR: every rank's lines, "L RANK I OP ENTER LEAVE RC WANT GOT" and
# "C RANK I OP start|end US", and "U RANK I OP ENTER" for the collective each
# rank was in last.
chaos_lines() {
	local r
	for r in 0 1 2 3; do
		[ -f "$1/log.$r" ] && sed "s/^/L $r /" "$1/log.$r"
		[ -f "$1/cmd.$r" ] && sed "s/^/C $r /" "$1/cmd.$r"
		[ -f "$1/cur.$r" ] && sed "s/^/U $r /" "$1/cur.$r"
	done
	return 0
}

# chaos_check DIR: the checks, over the collectives every rank finished (a run
# stopped by a failure leaves the one in flight to the failure's own report):
# - every rank's exit code and value is the one it must be (a 124 is named);
# - a barrier (plain or --status): nobody left before the last rank entered,
#   and none was passed by some ranks while others stayed in it;
# - a broadcast: no rank left before rank 0 entered; the control words agree;
# - on-main --wait: CMD ran once, on rank 0; no other rank left before it ended;
# - main-first: rank 0 ran CMD once; the others ran it once each, after it
#   ended, when it succeeded, and not at all when it failed; none left before
#   it ended.
# Times are microseconds; "early by" is how much earlier than it may be.
chaos_check() {
	chaos_lines "$1" | awk '
	function early(what, t, limit) {
		if (t < limit) printf "%s %s: %s %.3f ms before it may\n", i, op[i], what, (limit - t) / 1000
	}
	$1 == "L" {
		r = $2; i = $3
		seen[i]++; op[i] = $4; last[r] = i; if ($4 != "d") count[r]++  # a node killed whole never logs its death barrier (d)
		enter[i, r] = $5; leave[i, r] = $6; rc[i, r] = $7; want[i, r] = $8; got[i, r] = $9
		if (!(i in maxin) || $5 > maxin[i]) maxin[i] = $5
		if (!(i in minout) || $6 < minout[i]) minout[i] = $6
		if (r > 0 && (!(i in othout) || $6 < othout[i])) othout[i] = $6
		if ($7 == 124) printf "%s %s: rank %s waited to its deadline (124)\n", i, $4, r
		else if ($4 == "v" || $4 == "c") {
			if ($7 != 0) printf "%s %s: rank %s exited %s\n", i, $4, r, $7
		} else if ($7 != $8) printf "%s %s: rank %s exited %s, expected %s\n", i, $4, r, $7, $8
		if ($4 == "v" && $8 != $9) printf "%s v: rank %s got sha %s, expected %s\n", i, r, $9, $8
		next
	}
	$1 == "U" { inside[$2] = $3; since[$2] = $5; next }
	$1 == "C" {
		r = $2; i = $3
		if ($5 == "start") { ran[i, r]++; cstart[i, r] = $6 } else cend[i, r] = $6
	}
	END {
		for (r = 0; r < 4; r++) if (count[r] != count[0])
			printf "rank %s finished %d collectives, rank 0 %d\n", r, count[r], count[0]
		for (i in seen) {
			# The death barrier (d): every rank alive exits 4, checked by
			# the rank itself (chaos/rank.sh); nobody passes it.
			if (op[i] == "d") continue
			# A barrier some ranks passed and others are still in: split
			# (or early, if they left before the others entered).
			if (seen[i] < 4 && (op[i] == "b" || op[i] == "s"))
				for (r = 0; r < 4; r++) if (inside[r] == i && !((i, r) in leave))
					printf "%s %s: %d ranks passed it (the first left %.3f s %s rank %s entered), rank %s never did\n",
						i, op[i], seen[i], (minout[i] > since[r] ? minout[i] - since[r] : since[r] - minout[i]) / 1e6,
						(minout[i] > since[r] ? "after" : "BEFORE"), r, r
			if (seen[i] < 4) continue
			o = op[i]
			if (o == "b" || o == "s") {
				early("a rank left", minout[i], maxin[i])
				if (rc[i, 0] != rc[i, 1] || rc[i, 0] != rc[i, 2] || rc[i, 0] != rc[i, 3])
					printf "%s %s: split: the ranks exited %s %s %s %s\n", i, o, rc[i, 0], rc[i, 1], rc[i, 2], rc[i, 3]
			}
			else if (o == "v" || o == "c") {
				early("a rank left", othout[i], enter[i, 0])
				if (o == "c") for (r = 1; r < 4; r++) if (got[i, r] != got[i, 0])
					printf "%s c: rank %s got %s, rank 0 sent %s\n", i, r, got[i, r], got[i, 0]
			} else {
				if (ran[i, 0] != 1) printf "%s %s: rank 0 ran CMD %d times\n", i, o, ran[i, 0]
				else early("a rank left", othout[i], cend[i, 0])
				for (r = 1; r < 4; r++) {
					n = ran[i, r] + 0
					if (o == "w" && n) printf "%s w: rank %s ran CMD\n", i, r
					if (o == "m" && want[i, 0] != 0 && n) printf "%s m: rank %s ran CMD after rank 0 failed\n", i, r
					if (o == "m" && want[i, 0] == 0) {
						if (n != 1) printf "%s m: rank %s ran CMD %d times\n", i, r, n
						else early("rank " r " started CMD", cstart[i, r], cend[i, 0])
					}
				}
			}
		}
	}' | sort -n
}

# chaos_stats DIR: "N collectives (b B, s S, ...); slowest: I OP X ms", the
# slowest being the longest from the last rank's entry to the last rank's
# leaving (what the faults cost a collective: the ranks' own skew left out).
chaos_stats() {
	chaos_lines "$1" | awk '
	$1 == "L" {
		i = $3; o[i] = $4; n[i]++
		if ($5 > mi[i]) mi[i] = $5
		if ($6 > mo[i]) mo[i] = $6
	}
	END {
		for (i in n) if (n[i] == 4) {
			c[o[i]]++; all++
			d = mo[i] - mi[i]
			if (d > worst) { worst = d; wi = i }
		}
		printf "%d collectives (barrier %d, --status %d, broadcast %d, --wait %d, main-first %d, control %d); slowest: %s %s %.0f ms",
			all, c["b"], c["s"], c["v"], c["w"], c["m"], c["c"], wi, o[wi], worst / 1000
	}'
}

# chaos_slow DIR MS: the collectives that took longer than MS from the last
# rank's entry to the last rank's leaving: "I OP MS FROM_US TO_US". Not a
# failure by itself (a deadline is 60 s), but what a recovery cost.
chaos_slow() {
	chaos_lines "$1" | awk -v ms="$2" '
	$1 == "L" {
		i = $3; o[i] = $4; n[i]++
		if ($5 > mi[i]) mi[i] = $5
		if ($6 > mo[i]) mo[i] = $6
	}
	END { for (i in n) if (n[i] == 4 && mo[i] - mi[i] > ms * 1000) printf "%s %s %.0f %s %s\n", i, o[i], (mo[i] - mi[i]) / 1000, mi[i], mo[i] }' | sort -n
}
