# t_places.sh: where the runtime directory (and rendezvous start's directory) goes
# when the environment or another user is in the way: a login node's
# XDG_RUNTIME_DIR that this host lacks, /tmp/accelctl-UID or
# $SLURM_SUBMIT_DIR/.accelctl made first by another user, a link with a trailing
# slash or "/.", the directory moved and its name made a link while the helper
# runs (issue 23). The tests of another user need root and runuser (a
# second local user, as sh.peeruid makes): skipped without them.
. "$(dirname "$0")/lib.sh"

USER_NAME=accelctl-test

# make_user NAME: NAME exists, made if need be. sh.peeruid makes the same user,
# maybe at the same moment: a useradd that lost /etc/passwd's lock to it (or
# found the user made meanwhile) fails; tried again for 30 s, as long as the
# user is not there.
make_user() {
	local end=$((SECONDS + 30))
	until id "$1" >/dev/null 2>&1; do
		useradd --system --no-create-home "$1" 2>/dev/null && return 0
		[ $SECONDS -lt $end ] || { id "$1" >/dev/null 2>&1; return; }
		sleep 0.5
	done
}

oneTimeSetUp() {
	BASE=$(mktemp -d /tmp/accelctl-places.XXXXXX)
	chmod 755 "$BASE"
	OTHER=""
	if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && make_user "$USER_NAME"; then
		OTHER=$USER_NAME
		OUID=$(id -u "$USER_NAME")
		# Their build: ours may sit in root's 0700 home (sh.peeruid does so).
		THEIRS=$BASE/accelctl
		cp "$ACCELCTL" "$THEIRS" && chmod 755 "$THEIRS"
		OHOME=$BASE/home
		mkdir -m 700 "$OHOME" && chown "$USER_NAME" "$OHOME"
	fi
}

oneTimeTearDown() {
	[ -d "${BASE:-}" ] || return 0	# shunit2 may call it twice
	if [ -n "$OTHER" ]; then
		for j in taken gone; do
			as_other HOME="$OHOME" ACCELCTL_JOB_ID=$j $TWO0 -- helper stop
		done
		rm -rf "/tmp/accelctl-$OUID"
	fi
	rm -rf "$BASE"
}

TWO0="ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0"
TWO1="ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1"

needOther() { [ -n "$OTHER" ] || startSkipping; }

# as_other VAR=VALUE... -- ARGS...: accelctl ARGS as the other user, in a clean
# environment; $out, $err, $rc as run sets them.
as_other() {
	local vars=()
	while [ "$1" != "--" ]; do vars+=("$1"); shift; done
	shift
	local d; d=$(scratch)
	runuser -u "$OTHER" -- env -i PATH="$BASE:/usr/local/bin:/usr/bin:/bin" \
		"${vars[@]}" timeout 30 "$THEIRS" "$@" >"$d/oout" 2>"$d/oerr" </dev/null
	rc=$?
	out=$(cat "$d/oout")
	err=$(cat "$d/oerr")
}

# wait_for FILE: until FILE exists, at most 60 s by the clock (a guard; 400
# tries of 50 ms were "20 s" only on an idle machine).
wait_for() { eventually 60 test -e "$1"; }

# Slurm's --export=ALL brings the login node's /run/user/UID: not here, so
# the default place is used, and the helper's log says why.
testXdgRuntimeDirMissing() {
	local job=xdg$$ xdg; xdg=$(scratch)/run-user-missing
	# shellcheck disable=SC2086
	run $TWO0 ACCELCTL_JOB_ID=$job XDG_RUNTIME_DIR="$xdg" -- helper start
	assertRc 0 "a missing XDG_RUNTIME_DIR is taken as unset"
	local rt=/tmp/accelctl-$(id -u)
	assertContains "$out" "at $rt/$job.sock"
	assertContains "the log says why" "$(cat "$rt/$job.log")" \
		"XDG_RUNTIME_DIR=$xdg: No such file or directory on this host: taken as unset; using $rt"
	assertFalse "nothing made there" "[ -e '$xdg' ]"
	# shellcheck disable=SC2086
	run $TWO0 ACCELCTL_JOB_ID=$job XDG_RUNTIME_DIR="$xdg" -- helper stop
	rm -f "$rt/$job".*
}

# The directory appears while the job runs (a login on the node makes
# /run/user/UID): ranks that start later still go where the job's first went.
testXdgRuntimeDirAppearsMidJob() {
	local job=xdgmid$$ xdg d; xdg=$(scratch)/run-user-late d=$(scratch)
	local rt=/tmp/accelctl-$(id -u)
	# shellcheck disable=SC2086
	env -i PATH=/usr/bin:/bin $TWO0 ACCELCTL_JOB_ID=$job XDG_RUNTIME_DIR="$xdg" \
		timeout 30 "$ACCELCTL" barrier --timeout 20s mid >"$d/r0" 2>&1 &
	local r0=$!
	wait_for "$rt/$job.sock"
	assertTrue "rank 0's helper serves" $?
	mkdir -m 700 "$xdg"
	# shellcheck disable=SC2086
	run $TWO1 ACCELCTL_JOB_ID=$job XDG_RUNTIME_DIR="$xdg" -- barrier --timeout 20s mid
	assertRc 0 "rank 1 met rank 0"
	wait $r0
	st=$?; assertEquals "rank 0 met rank 1: $(cat "$d/r0")" 0 "$st"
	assertFalse "no second helper under the new XDG_RUNTIME_DIR" "[ -e '$xdg/accelctl/$job.sock' ]"
	# shellcheck disable=SC2086
	run $TWO0 ACCELCTL_JOB_ID=$job XDG_RUNTIME_DIR="$xdg" -- helper stop
	rm -f "$rt/$job".*
}

# "link/" and "link/." name the link: refused like "link", for a link of ours
# and one of another user that its owner could retarget.
testTrailingSlashOnALink() {
	local real link; real=$(scratch)/real link=$(scratch)/link
	mkdir -m 700 "$real"
	ln -s "$real" "$link"
	local v
	for v in "$link" "$link/" "$link/." "$link//./" "$link/./."; do
		# shellcheck disable=SC2086
		run $TWO0 ACCELCTL_JOB_ID=slash ACCELCTL_RUNTIME_DIR="$v" -- barrier --timeout 2s x
		assertRc 2 "ACCELCTL_RUNTIME_DIR=$v"
		assertErrMatches "runtime directory $link has unsafe permissions (symbolic link"
	done
	assertEquals "nothing made through the link" "" "$(ls -A "$real")"
	# A real directory with the same decorations is fine.
	# shellcheck disable=SC2086
	run $TWO0 ACCELCTL_JOB_ID=slash ACCELCTL_RUNTIME_DIR="$real/./" -- helper start
	assertRc 0 "a directory of ours, written $real/./"
	assertContains "its name without the decorations" "$out" "at $real/slash.sock"
	# shellcheck disable=SC2086
	run $TWO0 ACCELCTL_JOB_ID=slash ACCELCTL_RUNTIME_DIR="$real" -- helper stop
	[ -n "$OTHER" ] || return 0
	# Another user's link, in a directory they own, to a directory of ours.
	local pub=$BASE/pub; mkdir -p "$pub"; chown "$OTHER" "$pub"
	real=$(scratch)/real2; mkdir -m 700 "$real"
	runuser -u "$OTHER" -- ln -sfn "$real" "$pub/link"
	for v in "$pub/link/" "$pub/link/."; do
		# shellcheck disable=SC2086
		run $TWO0 ACCELCTL_JOB_ID=slash ACCELCTL_RUNTIME_DIR="$v" -- barrier --timeout 2s x
		assertRc 2 "another user's link as $v"
		assertErrMatches "runtime directory $pub/link has unsafe permissions (symbolic link, mode 777, owner uid $OUID)"
	done
	assertEquals "nothing made through their link" "" "$(ls -A "$real")"
}

# The helper's files go where the directory was when it was opened and checked,
# not through a path its owner (or another user) changes afterwards: the directory
# moved away and a link to another directory put in its place, the helper's exit
# removes its socket and pid file in the directory it checked, nothing in the
# other one.
testFilesFollowTheDescriptor() {
	local d; d=$(scratch)/fd.$$
	mkdir -m 700 "$d" "$d.other"
	# shellcheck disable=SC2086
	run $TWO0 ACCELCTL_JOB_ID=fdjob ACCELCTL_RUNTIME_DIR="$d" -- helper start
	assertRc 0 "helper start"
	local pid; pid=$(cat "$d/fdjob.pid")
	mv "$d" "$d.moved"
	ln -s "$d.other" "$d"
	: >"$d.other/fdjob.pid"
	: >"$d.other/fdjob.sock"
	kill -TERM "$pid"
	eventually 30 test ! -e "$d.moved/fdjob.pid"
	assertFalse "its pid file removed where it was" "[ -e '$d.moved/fdjob.pid' ]"
	assertFalse "its socket removed where it was" "[ -e '$d.moved/fdjob.sock' ]"
	assertTrue "the other directory's pid file left alone" "[ -e '$d.other/fdjob.pid' ]"
	assertTrue "the other directory's socket left alone" "[ -e '$d.other/fdjob.sock' ]"
	# Its last line, "exiting", comes after it removed its files ("signal
	# 15: exiting" before).
	eventually 10 grep -q ']: exiting$' "$d.moved/fdjob.log"
	assertContains "its log went on where it was" "$(cat "$d.moved/fdjob.log")" "exiting"
	assertEquals "no log in the other directory" "" "$(ls "$d.other" | grep log)"
}

# Another user made /tmp/accelctl-UID first: the job goes to
# $HOME/.accelctl/run.HOST, which they cannot make, and the helper's log names
# them; without a HOME the error names them and the variable to set.
testTmpTakenByAnotherUser() {
	needOther
	rm -rf "/tmp/accelctl-$OUID"
	mkdir -m 755 "/tmp/accelctl-$OUID"	# root is "the other user" here
	local d; d=$(scratch)
	runuser -u "$OTHER" -- env -i PATH=/usr/bin:/bin HOME="$OHOME" $TWO0 ACCELCTL_JOB_ID=taken \
		timeout 30 "$THEIRS" barrier --timeout 20s t >"$d/t0" 2>&1 &
	local r0=$!
	as_other HOME="$OHOME" ACCELCTL_JOB_ID=taken $TWO1 -- barrier --timeout 20s t
	assertRc 0 "rank 1 met rank 0 though /tmp/accelctl-$OUID is root's"
	wait $r0
	st=$?; assertEquals "rank 0: $(cat "$d/t0")" 0 "$st"
	local host; host=$(hostname | tr -c 'A-Za-z0-9.\n-' _)
	local home=$OHOME/.accelctl/run.$host
	assertTrue "the job's socket in $home" "[ -S '$home/taken.sock' ]"
	assertEquals "made 0700" 700 "$(stat -c %a "$home")"
	assertContains "the log names the other owner" "$(cat "$home/taken.log")" \
		"/tmp/accelctl-$OUID belongs to uid 0 (root), another user; using $home"
	assertEquals "nothing of theirs in root's directory" "" "$(ls -A "/tmp/accelctl-$OUID")"
	as_other ACCELCTL_JOB_ID=taken2 $TWO0 -- barrier --timeout 2s t
	assertRc 2 "no HOME to go to"
	assertErrMatches "accelctl: barrier: runtime directory /tmp/accelctl-$OUID belongs to uid 0 (root), another user: set ACCELCTL_RUNTIME_DIR"
	assertOneLineErr
	rm -rf "/tmp/accelctl-$OUID"
}

# A HOME others can write (HOME=/tmp, a shared project directory): another user
# who made /tmp/accelctl-UID can make $HOME/.accelctl first too (a directory or a
# link of theirs) and move the job's run.HOST away under it. Refused, naming
# both, as rendezvous start refuses its default there; so is our own
# .accelctl that others can write.
testHomeTakenByAnotherUser() {
	needOther
	rm -rf "/tmp/accelctl-$OUID"
	mkdir -m 755 "/tmp/accelctl-$OUID"
	local pub=$BASE/pubhome how
	for how in dir link mine; do
		rm -rf "$pub" "$BASE/theirs"
		mkdir -m 1777 "$pub"
		case $how in
		dir) mkdir -m 777 "$pub/.accelctl" ;;
		link) mkdir -m 777 "$BASE/theirs"; ln -s "$BASE/theirs" "$pub/.accelctl" ;;
		mine) mkdir -m 777 "$pub/.accelctl"; chown "$OTHER" "$pub/.accelctl"; chmod 777 "$pub/.accelctl" ;;
		esac
		as_other HOME="$pub" ACCELCTL_JOB_ID=home$how $TWO0 -- barrier --timeout 2s t
		assertRc 2 "$how: $pub/.accelctl not theirs alone"
		assertErrMatches "runtime directory /tmp/accelctl-$OUID belongs to uid 0 (root), another user, and $pub/.accelctl is "
		case $how in
		dir) assertErrMatches "$pub/.accelctl is a directory of uid 0 (root), another user: set ACCELCTL_RUNTIME_DIR" ;;
		link) assertErrMatches "$pub/.accelctl is a symbolic link of uid 0 (root), another user" ;;
		mine) assertErrMatches "$pub/.accelctl is a directory of uid $OUID ($OTHER) that others can write" ;;
		esac
		assertOneLineErr
		assertEquals "$how: nothing made in it" "" "$(find "$pub/.accelctl/" "$BASE/theirs" -mindepth 1 2>/dev/null)"
	done
	rm -rf "$pub" "$BASE/theirs" "/tmp/accelctl-$OUID"
}

# The other user removes their directory while the job runs: ranks that start
# later go where the job's first ranks are, not to the freed name.
testTakenThenFreedMidJob() {
	needOther
	rm -rf "/tmp/accelctl-$OUID"
	mkdir -m 755 "/tmp/accelctl-$OUID"
	local d; d=$(scratch)
	local host; host=$(hostname | tr -c 'A-Za-z0-9.\n-' _)
	runuser -u "$OTHER" -- env -i PATH=/usr/bin:/bin HOME="$OHOME" $TWO0 ACCELCTL_JOB_ID=gone \
		timeout 30 "$THEIRS" barrier --timeout 20s g >"$d/g0" 2>&1 &
	local r0=$!
	wait_for "$OHOME/.accelctl/run.$host/gone.sock"
	assertTrue "rank 0's helper in the home directory" $?
	rmdir "/tmp/accelctl-$OUID"
	as_other HOME="$OHOME" ACCELCTL_JOB_ID=gone $TWO1 -- barrier --timeout 20s g
	assertRc 0 "rank 1 met rank 0"
	wait $r0
	st=$?; assertEquals "rank 0: $(cat "$d/g0")" 0 "$st"
	assertFalse "no helper in the freed name" "[ -e '/tmp/accelctl-$OUID/gone.sock' ]"
	rm -rf "/tmp/accelctl-$OUID"
}

# rendezvous start in a Slurm job whose $SLURM_SUBMIT_DIR/.accelctl another user
# made first: the password goes under $HOME/.accelctl, and start says so.
testSubmitDirTakenByAnotherUser() {
	needOther
	command -v redis-server >/dev/null || startSkipping
	local sub=$BASE/submit; mkdir -p -m 1777 "$sub"
	mkdir -m 700 "$sub/.accelctl"	# root's
	local d; d=$(scratch)
	runuser -u "$OTHER" -- env -i PATH="$BASE:/usr/local/bin:/usr/bin:/bin" HOME="$OHOME" \
		SLURM_JOB_ID=77 SLURM_SUBMIT_DIR="$sub" timeout 60 bash -c '
		eval "$(accelctl rendezvous start)" || exit
		echo "pw=$ACCELCTL_REDIS_PASSWORD_FILE"
		accelctl rendezvous status >/dev/null; echo "status=$?"' >"$d/sout" 2>"$d/serr"
	st=$?; assertEquals "the script ran: $(cat "$d/serr")" 0 "$st"
	assertContains "$(cat "$d/sout")" "pw=$OHOME/.accelctl/rendezvous.77."
	assertContains "$(cat "$d/sout")" "status=0"
	assertContains "start says why" "$(cat "$d/serr")" \
		"accelctl: rendezvous: $sub/.accelctl belongs to uid 0 (root), another user: using $OHOME/.accelctl"
	assertEquals "nothing of theirs in root's directory" "" "$(ls -A "$sub/.accelctl")"
}

load_shunit2
