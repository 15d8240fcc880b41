# t_wait_local.sh (soak): on-main --wait and main-first around a CMD of 30 s, longer
# than the default progress interval (10 s), on 4 ranks of one node; both at once.
. "$(dirname "$0")/../sh/lib.sh"

testThirtySecondCmd() {
	local d; d=$(scratch)/w; mkdir -p "$d"
	local t0; t0=$(date +%s)
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" TMPDIR="$d" timeout 90 "$ACCELCTL" launch -n 4 --tag -- \
		bash -c 'accelctl on-main --wait -- sh -c "sleep 30; exit 7"; echo "rc=$?"' >"$d/wait.out" 2>"$d/wait.err" &
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" TMPDIR="$d" timeout 90 "$ACCELCTL" launch -n 4 --tag -- \
		bash -c 'accelctl main-first -- sh -c "[ \$ACCELCTL_RANK = 0 ] && sleep 30; echo ran"; echo "rc=$?"' >"$d/mf.out" 2>"$d/mf.err" &
	wait
	echo "on-main --wait and main-first around 30 s on 4 ranks: $(($(date +%s) - t0)) s"
	assertEquals "on-main --wait: every rank gets CMD's status: $(cat "$d/wait.err")" 4 "$(grep -c 'rc=7$' "$d/wait.out")"
	assertEquals "main-first: every rank ran CMD: $(cat "$d/mf.err")" 4 "$(grep -c ': ran$' "$d/mf.out")"
	assertEquals "main-first: every rank exits 0" 4 "$(grep -c 'rc=0$' "$d/mf.out")"
}

load_shunit2
