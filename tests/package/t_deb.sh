# t_deb.sh: the Debian package (packaging/deb.cmake): cpack builds it from this build
# tree, it depends on libc6 only, lintian finds no error, "apt-get install ./accelctl_*.deb"
# installs the binary, man page and completions where Debian puts them, the installed
# binary runs a barrier across 2 simulated nodes through a job-scoped Redis, and removing
# the package leaves nothing behind. Installs into this machine's /usr: ctest runs it
# alone (RUN_SERIAL), and it is skipped (77) without root, apt-get, cpack or lintian, or
# where an accelctl package or an /usr/bin/accelctl is there already (not ours to replace).
. "$(dirname "$0")/../sh/lib.sh"

FILES="/usr/bin/accelctl /usr/share/man/man1/accelctl.1.gz
/usr/share/bash-completion/completions/accelctl /usr/share/zsh/vendor-completions/_accelctl
/usr/share/fish/vendor_completions.d/accelctl.fish /usr/share/doc/accelctl/copyright
/usr/share/doc/accelctl/changelog.gz"

skip() { echo "t_deb.sh: $*: skipped" >&2; skip_suite; }

oneTimeSetUp() {
	[ "$(id -u)" = 0 ] || skip "installing a package needs root"
	local c
	for c in apt-get dpkg-deb cpack lintian redis-server; do
		command -v "$c" >/dev/null || skip "$c not installed"
	done
	dpkg-query -W -f='${Status}' accelctl 2>/dev/null | grep -q ' installed' &&
		skip "an accelctl package is installed already"
	[ -e /usr/bin/accelctl ] && skip "/usr/bin/accelctl exists already"
	P=$(scratch)/pkg; mkdir -p "$P"
	# The package of this build tree, into our scratch directory.
	cpack -G DEB --config "$ACCELCTL_BIN_DIR/CPackConfig.cmake" -B "$P" >"$P/cpack.out" 2>&1 ||
		{ cat "$P/cpack.out" >&2; exit 1; }
	DEB=$(ls "$P"/accelctl_*.deb)
	INSTALLED=0
}

oneTimeTearDown() {
	# A failed test must not leave the package installed on the machine.
	[ "${INSTALLED:-0}" = 1 ] && DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq accelctl >/dev/null 2>&1
	return 0
}

testContents() {
	assertEquals "one package" 1 "$(printf '%s\n' "$DEB" | wc -l)"
	assertEquals "depends on libc only" "" \
		"$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed 's/ *(.*//; s/^ *//' | grep -vx libc6)"
	local listed f
	listed=$(dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|')
	for f in $FILES; do
		assertContains "$f in the package" "$listed" "$f"
	done
	assertEquals "no uncompressed man page" "" \
		"$(printf '%s\n' "$listed" | grep -x /usr/share/man/man1/accelctl.1)"
	assertEquals "owned by root" "" "$(dpkg-deb -c "$DEB" | awk '$2 != "root/root"')"
}

testLintian() {
	local out rc
	out=$(lintian --fail-on error --tag-display-limit 0 "$DEB" 2>&1); rc=$?
	assertEquals "lintian: $out" 0 "$rc"
	assertNotContains "no lintian error" "$out" "E: "
}

testInstallBarrierRemove() {
	(cd "$P" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$(basename "$DEB")") \
		>"$P/install.out" 2>&1
	st=$?; assertEquals "apt-get install ./$(basename "$DEB"): $(tail -n 5 "$P/install.out")" 0 "$st"
	INSTALLED=1
	local f
	for f in $FILES; do
		assertTrue "$f installed" "[ -f '$f' ]"
	done
	assertEquals "the man page is found" /usr/share/man/man1/accelctl.1.gz "$(man -w accelctl 2>/dev/null)"
	# The installed binary only (PATH without the build tree), 2 simulated nodes
	# of 2 ranks, meeting through a Redis of their own.
	local d; d=$(scratch)/home; mkdir -p "$d"
	env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME="$d" TMPDIR="$d" bash -c '
		[ "$(command -v accelctl)" = /usr/bin/accelctl ] || { echo "not the installed one" >&2; exit 9; }
		eval "$(accelctl rendezvous start)" || exit
		accelctl launch --nnodes 2 -n 2 -- sh -c "
			accelctl barrier --timeout 60s installed || exit
			accelctl broadcast --timeout 60s word \"from-\$ACCELCTL_RANK\""' >"$P/run.out" 2>"$P/run.err"
	st=$?; assertEquals "barrier across 2 nodes with the installed binary: $(cat "$P/run.err")" 0 "$st"
	assertEquals "4 ranks got rank 0's word" 4 "$(grep -c '^from-0$' "$P/run.out")"
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq accelctl >"$P/remove.out" 2>&1
	st=$?; assertEquals "apt-get purge accelctl: $(tail -n 5 "$P/remove.out")" 0 "$st"
	INSTALLED=0
	for f in $FILES /usr/share/doc/accelctl; do
		assertFalse "$f removed" "[ -e '$f' ]"
	done
	dpkg-query -W -f='${Status}' accelctl 2>/dev/null | grep -q ' installed'
	assertFalse "dpkg no longer lists it" $?
}

load_shunit2
