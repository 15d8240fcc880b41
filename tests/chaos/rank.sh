# chaos/rank.sh: one rank of the chaos suite (tests/chaos.sh), sourced by bash -c
# under timeout -s KILL with the row-1 variables and FDIR (the run's directory).
#
# Every rank reads the same plan ($FDIR/plan, one collective a line, written by
# chaos/plan.sh from the seed; a line may make one rank enter late), so all
# four agree on what comes next without talking, and each knows what every
# other rank passes (the --status of each rank, the broadcast's bytes, CMD's
# status). Per collective it appends to
# $FDIR/log.RANK
#   I OP ENTER_US LEAVE_US RC WANT GOT
# (microseconds of the wall clock before accelctl started and after it exited:
# an early release can only look later than it was, never earlier, so the
# checks cannot blame a correct release), and the CMDs of on-main --wait and
# main-first append "I OP start|end US" to $FDIR/cmd.RANK. A wrong answer is
# written to $FDIR/fail.RANK at once and the rank exits 1: the driver then stops
# the run while the evidence is fresh, instead of waiting out 60 s deadlines.
# $FDIR/cur.RANK says what the rank is in (for a stall's report).
#
# The plan's "c" lines are the only communication about time: rank 0
# broadcasts the driver's $FDIR/want (go, quiet, stop), so every rank stops, or
# fills the helpers' caches and pauses for their fd and RSS sample (quiet()),
# at the same collective.
set -u
T=${CHAOS_TIMEOUT:-60s}
R=$ACCELCTL_RANK
LOG=$FDIR/log.$R
VAL=$FDIR/val.$R
now() { local t=$EPOCHREALTIME; echo "${t/[.,]/}"; }

bad() {
	echo "$I $op: $*" >>"$FDIR/fail.$R"
	exit 1
}

# value I SIZE OFF: broadcast I's bytes: "I:" and SIZE bytes of the blob from
# OFF; SIZE -1 is the empty value.
value() {
	[ "$2" -lt 0 ] && return 0
	printf '%s:' "$1"
	tail -c +$(($3 + 1)) "$FDIR/blob" | head -c "$2"
}
sha() { sha256sum | cut -c1-16; }

# The CMD of on-main --wait and main-first: logs its start and end, exits with
# $2 on rank 0 (main-first's others run it only after rank 0 succeeded).
CMD='echo "$0 $1 start ${EPOCHREALTIME/[.,]/}" >>"$FDIR/cmd.$ACCELCTL_RANK"
echo "$0 $1 end ${EPOCHREALTIME/[.,]/}" >>"$FDIR/cmd.$ACCELCTL_RANK"
[ "$ACCELCTL_RANK" = 0 ] && exit "$2"; exit 0'

# one OP A1 A2 A3 A4: collective I of the plan (or of the fill below), logged
# and checked.
one() {
	local op=$1 a1=${2:-} a2=${3:-} a3=${4:-} a4=${5:-} want="" got="" st x rc t0 t1
	case $op in
	b) want=0 ;;
	s)	# every rank's status; the lowest failing rank's is everyone's result
		st=($a1 $a2 $a3 $a4); want=0
		for x in "${st[@]}"; do [ "$x" != 0 ] && { want=$x; break; }; done ;;
	v)	want=$(value "$I" "$a1" "$a2" | sha)
		[ "$R" = 0 ] && value "$I" "$a1" "$a2" >"$VAL.src" ;;
	c)	[ "$R" = 0 ] && { want=$(cat "$FDIR/want"); printf '%s' "$want" >"$VAL.src"; } ;;
	w|m) want=$a1 ;;
	d) want=4 ;;
	*) bad "unknown plan line" ;;
	esac
	echo "$I $op $(now)" >"$FDIR/cur.$R"
	t0=$(now)
	case $op in
	b) accelctl barrier --timeout "$T" b ;;
	d) accelctl barrier --timeout "$T" death ;;
	s) accelctl barrier --timeout "$T" --status "${st[R]}" s ;;
	v|c) if [ "$R" = 0 ]; then accelctl broadcast --timeout "$T" "$op" <"$VAL.src" >"$VAL"
	   else accelctl broadcast --timeout "$T" "$op" </dev/null >"$VAL"; fi ;;
	w) accelctl on-main --wait --timeout "$T" -- bash -c "$CMD" "$I" w "$a1" ;;
	m) accelctl main-first --timeout "$T" -- bash -c "$CMD" "$I" m "$a1" ;;
	esac </dev/null
	rc=$?
	t1=$(now)
	case $op in
	v) got=$(sha <"$VAL") ;;
	c) got=$(cat "$VAL"); [ "$R" = 0 ] || want=$got ;;
	*) got=$rc ;;
	esac
	echo "$I $op $t0 $t1 $rc $want $got" >>"$LOG"
	[ "$rc" = 124 ] && bad "waited to its deadline ($T): exit 124"
	case $op in
	b|s|w|m|d) [ "$rc" = "$want" ] || bad "exit $rc, expected $want" ;;
	v) [ "$rc" = 0 ] && [ "$got" = "$want" ] ||
		bad "exit $rc, value sha $got of $(wc -c <"$VAL") bytes, expected $want of $((a1 < 0 ? 0 : a1 + ${#I} + 1))" ;;
	c) [ "$rc" = 0 ] || bad "exit $rc"
	   case $got in go|quiet|stop|die) ;; *) bad "control value '$got'" ;; esac ;;
	esac
	I=$((I + 1))
	CTL=$got
}

# At "quiet" (45% into the run, when the driver stops killing helpers) the
# ranks first broadcast 1 MiB values FILL times, each followed by a barrier:
# what a helper keeps to post again (16 MiB at most, the oldest dropped) is
# full before the sample, so the sample at the end measures leaks, not a cache
# filling up. The barriers keep rank 0 from running ahead of the readers by
# more than one value: a source 16 MiB ahead would have dropped a value its
# readers still need, a limit of its own and not what this measures. Then
# no accelctl of ours runs until $FDIR/resume: the driver samples the helpers
# idle.
quiet() {
	local k n=0
	for k in $(seq 1 "${CHAOS_FILL:-20}"); do
		one v 1048576 $(((I * 104729) % (CHAOS_BLOB_BYTES - 1048576)))
		one b
	done
	: >"$FDIR/quiet.$R"
	until [ -e "$FDIR/resume" ]; do
		[ $n -lt 6000 ] || bad "no resume after the quiet point"
		sleep 0.02; n=$((n + 1))
	done
}

# At "die" (the end of the run) a node dies (tests/chaos.sh, node_fault): the
# ranks of node 1 say they are ready (dying.RANK) and wait; the driver kills
# their node whole (helper and ranks), or stops it for two bounds and resumes
# it. Every rank that lives then waits at one more barrier, which needs node
# 1: it must exit 4 (lost), within the bound, never 124; node 1's own ranks,
# resumed, learn that they were declared lost and exit 4 as well.
dying() {
	local n=0
	if [ "$ACCELCTL_NODE_RANK" = 1 ]; then
		: >"$FDIR/dying.$R"
		until [ -e "$FDIR/resumed" ]; do
			[ $n -lt 9000 ] || bad "neither killed nor resumed"
			sleep 0.02; n=$((n + 1))
		done
	fi
	one d
}

I=0 CTL=""
exec 3<"$FDIR/plan"
while read -r lag p1 p2 p3 p4 p5 <&3; do
	op=$p1
	[ "${lag%:*}" = "$R" ] && sleep "$(printf '0.%03d' "${lag#*:}")"
	one "$p1" "$p2" "$p3" "$p4" "$p5"
	if [ "$p1" = c ]; then
		case $CTL in
		stop) exit 0 ;;
		die) op=d; dying; exit 0 ;;
		quiet) op=v; quiet ;;
		esac
	fi
done
# The plan ran out before the driver said stop: every rank ends here alike.
exit 0
