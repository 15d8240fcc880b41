# t_late_barrier.sh (soak): a barrier where one rank arrives 25 s late, past two
# progress intervals: nobody leaves early, nobody fails, progress is reported.
. "$(dirname "$0")/../sh/lib.sh"

testRankTwentyFiveSecondsLate() {
	local d; d=$(scratch)/late; mkdir -p "$d"
	local t0; t0=$(date +%s)
	run_long() {
		env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" TMPDIR="$d" timeout 90 "$ACCELCTL" "$@"
	}
	run_long launch -n 4 --tag -- bash -c '
		[ $ACCELCTL_RANK = 3 ] && sleep 25 && date +%s%N >'"$d"'/arrive
		accelctl barrier late; r=$?; date +%s%N >'"$d"'/left.$ACCELCTL_RANK; echo "rc=$r"' >"$d/out" 2>"$d/err"
	echo "a barrier with one rank 25 s late: $(($(date +%s) - t0)) s"
	assertEquals "all four pass: $(cat "$d/err")" 4 "$(grep -c 'rc=0$' "$d/out")"
	local l
	for l in "$d"/left.*; do
		assertTrue "$(basename "$l") left after the last arrival" "[ $(cat "$l") -ge $(cat "$d/arrive") ]"
	done
	assertContains "progress while waiting" "$(cat "$d/err")" "3/4 arrived; missing:"
}

load_shunit2
