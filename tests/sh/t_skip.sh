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

# The package suite without root: skipped, and says why. Run as nobody when we are root,
# from a world-readable copy of what it reads (t_deb.sh, sh/lib.sh, the binary, in the
# tree's layout): the checkout may be where nobody cannot read (a clone in root's 0700
# home), and there bash could not even open the script (exit 126, not the 77 tested).
testPackageSuiteSkipsWithoutRoot() {
	local d rc f
	# Where nobody may write (the scratch directory's parents are ours alone).
	d=$(mktemp -d /tmp/accelctl-skip.XXXXXX); chmod 755 "$d"
	SKIP_TMP=$d
	mkdir -p "$d/src/tests/package" "$d/src/tests/sh" "$d/bin" "$d/tmp"
	cp "$ACCELCTL_SRC/tests/package/t_deb.sh" "$d/src/tests/package/"
	cp "$ACCELCTL_SRC/tests/sh/lib.sh" "$d/src/tests/sh/"
	cp "$ACCELCTL" "$d/bin/accelctl"
	chmod -R a+rX "$d"; chmod 1777 "$d/tmp"
	# The copy is what the checkout holds.
	for f in tests/package/t_deb.sh tests/sh/lib.sh; do
		cmp -s "$ACCELCTL_SRC/$f" "$d/src/$f"
		assertEquals "the copy of $f is the checkout's" 0 $?
	done
	cmp -s "$ACCELCTL" "$d/bin/accelctl"
	assertEquals "the copy of the binary is the one built" 0 $?
	set -- env -i PATH=/usr/bin:/bin TMPDIR="$d/tmp" ACCELCTL="$d/bin/accelctl" \
		ACCELCTL_SRC="$d/src" bash "$d/src/tests/package/t_deb.sh"
	if [ "$(id -u)" = 0 ]; then
		command -v runuser >/dev/null || { startSkipping; return; }
		runuser -u nobody -- "$@" >"$d/out" 2>&1
	else
		"$@" >"$d/out" 2>&1
	fi
	rc=$?
	assertEquals "package.deb without root: $(cat "$d/out")" 77 "$rc"
	assertContains "says why" "$(cat "$d/out")" "installing a package needs root: skipped"
}

tearDown() {
	[ -n "${SKIP_TMP:-}" ] && rm -rf "$SKIP_TMP"
	SKIP_TMP=""
}

load_shunit2
