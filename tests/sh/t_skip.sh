# t_skip.sh: a suite that cannot run here ends as skipped (77, ctest's SKIP_RETURN_CODE),
# not failed: shunit2 2.1.8's EXIT trap turned "exit 77" in oneTimeSetUp into exit 2
# ("unknown failure encountered running a test"), so package.deb, the integration and
# etcd suites failed where they must skip (review of issue 21).
. "$(dirname "$0")/lib.sh"

testSkipFromOneTimeSetUp() {
	local d; d=$(scratch)/suite; mkdir -p "$d"
	# (printf: shunit2 takes every line that starts "testX()" in this file for a test)
	printf '%s\n' ". '$ACCELCTL_SRC/tests/sh/lib.sh'" \
		'oneTimeSetUp() { echo "nothing to test with: skipped" >&2; skip_suite; }' \
		'testNever() { fail "ran a test of a skipped suite"; }' load_shunit2 >"$d/t_x.sh"
	local rc
	bash "$d/t_x.sh" >"$d/out" 2>&1; rc=$?
	assertEquals "a suite skipped in oneTimeSetUp: $(cat "$d/out")" 77 "$rc"
	assertNotContains "no failure reported" "$(cat "$d/out")" "ASSERT"
}

# The package suite without root: skipped, and says why.
testPackageSuiteSkipsWithoutRoot() {
	local d rc
	# Where nobody may write (the scratch directory's parents are ours alone).
	d=$(mktemp -d /tmp/accelctl-skip.XXXXXX); chmod 777 "$d"
	if [ "$(id -u)" = 0 ]; then
		command -v runuser >/dev/null || { startSkipping; return; }
		runuser -u nobody -- env -i PATH=/usr/bin:/bin TMPDIR="$d" ACCELCTL="$ACCELCTL" \
			ACCELCTL_SRC="$ACCELCTL_SRC" bash "$ACCELCTL_SRC/tests/package/t_deb.sh" >"$d/out" 2>&1
	else
		env -i PATH=/usr/bin:/bin TMPDIR="$d" ACCELCTL="$ACCELCTL" ACCELCTL_SRC="$ACCELCTL_SRC" \
			bash "$ACCELCTL_SRC/tests/package/t_deb.sh" >"$d/out" 2>&1
	fi
	rc=$?
	assertEquals "package.deb without root: $(cat "$d/out")" 77 "$rc"
	assertContains "says why" "$(cat "$d/out")" "installing a package needs root: skipped"
	rm -rf "$d"
}

load_shunit2
