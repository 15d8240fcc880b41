# t_security.sh: the runtime directory must be ours and private; anything else is refused.
. "$(dirname "$0")/lib.sh"

TWO="ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 ACCELCTL_JOB_ID=sec"

expectRefused() {
	# shellcheck disable=SC2086
	run $TWO ACCELCTL_RUNTIME_DIR="$1" -- barrier --timeout 2s x
	assertRc 2 "$2"
	assertErrMatches "accelctl: barrier: runtime directory $1 has unsafe permissions"
	assertFalse "no socket made in $2" "[ -e '$1/sec.sock' ]"
}

testGroupWritableRefused() {
	local d; d=$(scratch)/open; mkdir -m 770 "$d"
	expectRefused "$d" "mode 0770"
	chmod 755 "$d"
	expectRefused "$d" "mode 0755"
}

testSymlinkRefused() {
	local d; d=$(scratch)/real; mkdir -m 700 "$d"
	ln -s "$d" "$(scratch)/link"
	expectRefused "$(scratch)/link" "symbolic link"
}

testOtherOwnerRefused() {
	[ "$(id -u)" = 0 ] || startSkipping
	local d; d=$(scratch)/theirs; mkdir -m 700 "$d"
	chown 65534 "$d" 2>/dev/null || startSkipping
	expectRefused "$d" "owned by another uid"
}

testCreatedPrivate() {
	local d; d=$(scratch)/new
	# shellcheck disable=SC2086
	run $TWO ACCELCTL_RUNTIME_DIR="$d" -- helper start
	assertRc 0 "helper start"
	assertEquals "created 0700" 700 "$(stat -c %a "$d")"
	assertEquals "socket 0700" 700 "$(stat -c %a "$d/sec.sock")"
	# shellcheck disable=SC2086
	run $TWO ACCELCTL_RUNTIME_DIR="$d" -- helper stop
}

load_shunit2
