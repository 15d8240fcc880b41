# t_peeruid.sh: a client of another uid is refused by the helper (SO_PEERCRED), even
# root, who can reach the socket through the 0700 directory. Needs root to make a
# test user: skipped (ctest: Not Run) otherwise.
. "$(dirname "$0")/lib.sh"

USER_NAME=accelctl-test

# make_user NAME: NAME exists, made if need be. sh.places makes the same user,
# maybe at the same moment: a useradd that lost /etc/passwd's lock to it (or
# found the user made meanwhile) fails; tried again for 30 s, as long as the
# user is not there (a lost race skipped this suite: coverage lost unseen).
make_user() {
	local end=$((SECONDS + 30))
	until id "$1" >/dev/null 2>&1; do
		useradd --system --no-create-home "$1" 2>/dev/null && return 0
		[ $SECONDS -lt $end ] || { id "$1" >/dev/null 2>&1; return; }
		sleep 0.5
	done
}

oneTimeSetUp() {
	: "${PROTO_CLIENT:?}"
	if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null; then
		echo "needs root and runuser: skipped" >&2
		skip_suite
	fi
	make_user "$USER_NAME" || { echo "cannot create $USER_NAME: skipped" >&2; skip_suite; }
	BASE=$(mktemp -d /tmp/accelctl-peer.XXXXXX)
	chmod 755 "$BASE"
	RT=$BASE/rt
	mkdir -m 700 "$RT" && chown "$USER_NAME" "$RT"
	# The build may sit where the other user cannot reach it (a clone in
	# root's 0700 home): that user runs a copy from the world-readable base.
	THEIRS=$BASE/accelctl
	cp "$ACCELCTL" "$THEIRS" && chmod 755 "$THEIRS"
}

oneTimeTearDown() {
	[ -x "${THEIRS:-}" ] || return 0	# shunit2 may call it twice
	runuser -u "$USER_NAME" -- env ACCELCTL_RUNTIME_DIR="$RT" ACCELCTL_JOB_ID=peer \
		ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		"$THEIRS" helper stop
	rm -rf "$BASE"
}

testOtherUidRefused() {
	runuser -u "$USER_NAME" -- env ACCELCTL_RUNTIME_DIR="$RT" ACCELCTL_JOB_ID=peer \
		ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		"$THEIRS" helper start >/dev/null
	assertEquals "helper started as $USER_NAME" 0 $?
	local out
	out=$(timeout 10 "$PROTO_CLIENT" "$RT/peer.sock" peer peer 2)
	assertEquals "root's connection refused: $out" 0 $?
	assertContains "$out" "permission denied"
	assertContains "$(cat "$RT/peer.log")" "refused a client of uid 0"
}

load_shunit2
