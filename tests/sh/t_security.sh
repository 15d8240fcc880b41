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

# accelctl_cmdlines: the command lines of every accelctl process (argv[0]
# naming accelctl, or the helper's title), one a line.
accelctl_cmdlines() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		case $(head -z -n 1 "$f" 2>/dev/null | tr -d '\0') in
		*accelctl*) tr '\0' ' ' <"$f" 2>/dev/null; echo ;;
		esac
	done
}

# A password given on the command line (launch --rendezvous, helper run
# --rendezvous) is not in /proc/PID/cmdline, which every user can read, of any
# accelctl process: launch, its ranks, the helpers they start, helper run.
testPasswordNotInCmdline() {
	. "$ACCELCTL_SRC/tests/sh/redis.sh"
	redis_start --requirepass "S3cretPw$$"
	local d; d=$(scratch)/pw; mkdir -p -m 700 "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" TMPDIR="$d" "$ACCELCTL" launch -n 2 --nnodes 2 \
		--rendezvous "redis://:S3cretPw$$@127.0.0.1:$REDIS_PORT" -- \
		bash -c 'accelctl barrier --timeout 120s pw && touch '"$d"'/met.$ACCELCTL_RANK &&
			while [ ! -e '"$d"'/go ]; do sleep 0.1; done' >"$d/out" 2>"$d/err" &
	local l=$!
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" ACCELCTL_RUNTIME_DIR="$d" ACCELCTL_JOB_ID=pw \
		ACCELCTL_WORLD_SIZE=4 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_NODE_RANK=1 ACCELCTL_NNODES=2 \
		ACCELCTL_RANK=2 ACCELCTL_LOCAL_RANK=0 "$ACCELCTL" helper run \
		--rendezvous "redis://user:S3cretPw$$@127.0.0.1:$REDIS_PORT" 2>"$d/run.err" &
	local h=$!
	# Every process is there while the ranks wait for "go": 60 s by the
	# clock for them to meet (200 tries of 0.1 s were a count).
	eventually 60 eval '[ "$(ls "$d" | grep -c "^met")" -ge 4 ]'
	accelctl_cmdlines >"$d/cmdlines"
	touch "$d/go"
	wait $l
	st=$?; assertEquals "the job met through Redis with the password: $(cat "$d/err")" 0 "$st"
	assertEquals "processes showing the password" "" "$(grep "S3cretPw$$" "$d/cmdlines")"
	# One '*' per character of the password (its length varies with $$).
	local stars; stars=$(printf '%s' "S3cretPw$$" | tr -c '' '*')
	assertContains "launch shows the URL scrubbed" "$(cat "$d/cmdlines")" "launch -n 2 --nnodes 2 --rendezvous redis://:$stars@127.0.0.1:$REDIS_PORT"
	assertContains "helper run shows it scrubbed" "$(cat "$d/cmdlines")" "helper run --rendezvous redis://user:$stars@127.0.0.1:$REDIS_PORT"
	assertContains "the helpers launch's ranks started" "$(cat "$d/cmdlines")" "accelctl helper launch-"
	kill "$h"
	wait $h
	redis_stop
}

load_shunit2
