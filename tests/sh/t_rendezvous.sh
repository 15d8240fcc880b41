# t_rendezvous.sh: "accelctl rendezvous": a private redis-server for one job. start,
# status and stop; the printed lines under bash, dash, zsh and fish; a 4-node launch
# through it; the starting script killed with SIGKILL; no redis-server; two jobs at
# once; the password nowhere but in its file; modes; wrong passwords and commands
# outside the ACL refused; a redis-server that dies is started again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/port.sh"

oneTimeSetUp() {
	command -v redis-server >/dev/null || { echo "redis-server not installed: skipped" >&2; skip_suite; }
	command -v redis-cli >/dev/null || { echo "redis-cli not installed: skipped" >&2; skip_suite; }
}

setUp() {
	H=$(scratch)/home.$RANDOM$RANDOM
	mkdir -p "$H"
}

# job SHELL SCRIPT: SCRIPT run by SHELL in a clean environment whose HOME is $H,
# like a batch script; stdout, stderr and status into $out, $err, $rc. The
# timeout only turns a hang into a failure: 8 ranks on 4 nodes of an ASan build
# on a busy machine take their time.
job() {
	local sh=$1 o=${JOUT:-$(scratch)/j}; shift	# JOUT: where its output goes
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/local/bin:/usr/bin:/bin" HOME="$H" TMPDIR="$(scratch)" \
		${EXTRA_ENV:-} timeout 180 "$sh" -c "$1" >"${o}out" 2>"${o}err"
	rc=$?
	out=$(cat "${o}out")
	err=$(cat "${o}err")
}

# gone_within MS DIR PID PORT ADDR: true once DIR is removed, PID gone and nothing
# listens on ADDR:PORT, within MS milliseconds; prints how long it took (to the
# 20 ms it polls at; the clock is bash's own, no process per look).
gone_within() {
	local ms=$1 dir=$2 pid=$3 port=$4 addr=$5 t0 now
	t0=${EPOCHREALTIME/[.,]/}
	while :; do
		now=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
		if [ ! -e "$dir" ] && ! kill -0 "$pid" 2>/dev/null &&
			! (exec 3<>"/dev/tcp/$addr/$port") 2>/dev/null; then
			echo "$now"
			return 0
		fi
		[ "$now" -gt "$ms" ] && { echo "$now"; return 1; }
		sleep 0.02
	done
}

# state_of DIR KEY: a field of the server's state file.
state_of() { awk -v k="$2" '$1 == k { print $2 }' "$1/state"; }

testStartStatusStop() {
	job bash '
		eval "$(accelctl rendezvous start)" || exit
		echo "url=$ACCELCTL_RENDEZVOUS"
		echo "pwfile=$ACCELCTL_REDIS_PASSWORD_FILE"
		accelctl rendezvous status; echo "status=$?"
		d=$(dirname "$ACCELCTL_REDIS_PASSWORD_FILE")
		redis=$(awk "\$1 == \"redis\" { print \$2 }" "$d/state")
		accelctl rendezvous stop; echo "stop=$?"
		[ -e "$d" ] && echo "dir left"
		kill -0 "$redis" 2>/dev/null && echo "redis left"
		accelctl rendezvous status; echo "status-after=$?"
		accelctl rendezvous stop; echo "stop-again=$?"'
	assertEquals "script: $err" 0 "$rc"
	assertContains "$out" "url=redis://accelctl@"
	assertContains "$out" "pwfile=$H/.accelctl/rendezvous."
	assertContains "status shows the address" "$out" "rendezvous redis://accelctl@"
	assertContains "status shows uptime" "$out" "uptime "
	assertContains "status shows helpers" "$out" "helpers "
	assertContains "status shows memory" "$out" "memory "
	assertContains "status shows commands per second" "$out" " per second now"
	assertContains "$out" "status=0"
	assertContains "$out" "stop=0"
	assertNotContains "stop removed the directory" "$out" "dir left"
	assertNotContains "stop stopped redis-server" "$out" "redis left"
	assertContains "no server after stop: status exits 1" "$out" "status-after=1"
	assertContains "stop with nothing to stop" "$out" "stop-again=0"
	assertEquals "nothing on stderr" "" "$err"
	assertEquals "the job directory is gone" "" "$(ls "$H/.accelctl")"
}

# A job script whose parent ignored SIGCHLD (SIG_IGN is inherited across
# exec): accelctl puts the default back (main), or the kernel would reap its
# children unseen: the supervisor's middle process ("cannot start the
# supervisor: No child processes", review of spawn.c), launch's ranks (it
# waited for ever) and on-* --wait's CMD (its status lost).
testStartWithSigchldIgnored() {
	cat >"$(scratch)/sigchld.sh" <<'EOS'
eval "$(accelctl rendezvous start)" || exit
accelctl launch --nnodes 2 -n 1 -- accelctl barrier sigchld; echo "barrier=$?"
accelctl launch -n 2 -- accelctl on-main --wait -- sh -c 'exit 7'; echo "wait=$?"
accelctl rendezvous stop; echo "stop=$?"
EOS
	job bash "exec perl -e '\$SIG{CHLD} = q(IGNORE); exec @ARGV or die' bash $(scratch)/sigchld.sh"
	assertEquals "script: $err" 0 "$rc"
	assertContains "$out" "barrier=0"
	assertContains "on-main --wait still sees CMD's status" "$out" "wait=7"
	assertContains "$out" "stop=0"
	# launch says which ranks failed (the sh -c 'exit 7'), and nothing else.
	assertEquals "nothing else on stderr" "accelctl: launch: ranks 0-1: exited with 7" "$err"
}

# The printed lines work where they are evaluated; the server lives as long as
# the script, not as long as the $(...) subshell, and stops when it ends.
# checkShell SHELL START-LINE [fish]
checkShell() {
	local sh=$1 script=$2 st='$?'
	[ "${3:-}" = fish ] && st='$status'
	job "$sh" "$script
		sleep 0.3   # longer than the \$(...) lived
		accelctl rendezvous status >/dev/null; echo status=$st
		accelctl launch --nnodes 2 -n 1 -- accelctl barrier in-$sh; echo barrier=$st
		dirname \"\$ACCELCTL_REDIS_PASSWORD_FILE\""
	assertEquals "$sh: $err" 0 "$rc"
	assertContains "$sh: alive after the substitution" "$out" "status=0"
	assertContains "$sh: a 2-node barrier through it" "$out" "barrier=0"
	local d; d=$(printf '%s\n' "$out" | tail -n 1)
	# The supervisor removes it a moment after the script ended (1 s was
	# tight on a busy machine); 30 s tells that from never.
	eventually 30 test ! -e "$d"
	assertFalse "$sh: the directory went with the script" "[ -e '$d' ]"
}

testBashEval() { checkShell bash 'eval "$(accelctl rendezvous start)" || exit'; }
testDashEval() { checkShell dash 'eval "$(accelctl rendezvous start)" || exit'; }
testZshEval() {
	command -v zsh >/dev/null || startSkipping
	checkShell zsh 'eval "$(accelctl rendezvous start)" || exit'
}
testFishSource() {
	command -v fish >/dev/null || startSkipping
	checkShell fish 'accelctl rendezvous start --shell fish | source; or exit 1' fish
}
testFishEval() {
	command -v fish >/dev/null || startSkipping
	checkShell fish 'eval (accelctl rendezvous start --shell fish); or exit 1' fish
}
# A subshell between the script and accelctl (dash forks one for a compound
# command): the server must follow the script, not the subshell.
testSubshellInSubstitution() {
	checkShell dash 'eval "$(cd / && accelctl rendezvous start)" || exit'
	checkShell bash 'eval "$( (accelctl rendezvous start) )" || exit'
}
# A filter in the substitution (the lines kept in a file too): the server
# follows the script that reads the filter's output, not the subshell.
testFilterInSubstitution() {
	checkShell bash 'eval "$(accelctl rendezvous start | tee "$TMPDIR/rdv.env")" || exit'
	checkShell dash 'eval "$(accelctl rendezvous start | cat)" || exit'
}

testFourNodeLaunch() {
	job bash '
		eval "$(accelctl rendezvous start)" || exit
		accelctl launch --nnodes 4 -n 2 --tag -- sh -c "
			for i in 1 2 3 4 5; do accelctl barrier --timeout 30s loop || exit; done
			accelctl broadcast --timeout 30s word \"\$(hostname)-from-0\"
			# Over 4 KiB: read with GET, not carried in the stream entry.
			accelctl broadcast --timeout 30s big \"\$(head -c 9000 /dev/zero | tr -c x x)\" | wc -c
			accelctl on-main --wait --timeout 30s -- true || exit
			accelctl barrier --status \$((ACCELCTL_RANK == 5 ? 4 : 0)) --timeout 30s st; echo rc=\$?"'
	assertEquals "8 ranks got the broadcast: $err" 8 "$(printf '%s\n' "$out" | grep -c -- "-from-0$")"
	assertEquals "8 ranks got the 9000-byte broadcast" 8 "$(printf '%s\n' "$out" | grep -c ': *900[01]$')"
	assertEquals "8 ranks agreed on rank 5's status" 8 "$(printf '%s\n' "$out" | grep -c 'rc=4$')"
}

testKilledScript() {
	local d; d=$(scratch)/killed; mkdir -p "$d"
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/bin:/bin" HOME="$H" bash -c '
		eval "$(accelctl rendezvous start)" || exit
		dirname "$ACCELCTL_REDIS_PASSWORD_FILE" >'"$d"'/dir.tmp
		mv '"$d"'/dir.tmp '"$d"'/dir
		sleep 300 & echo $! >'"$d"'/sleep; wait; true' >"$d/out" 2>&1 &
	local script=$!
	# The start spawns redis-server and waits until it answers: seconds on
	# a busy machine.
	eventually 60 test -s "$d/dir"
	assertTrue "the script started its server: $(cat "$d/out")" "[ -s '$d/dir' ]" || {
		kill -9 "$script"; return; }
	local dir port addr redis
	dir=$(cat "$d/dir")
	port=$(state_of "$dir" port) addr=$(state_of "$dir" addr) redis=$(state_of "$dir" redis)
	assertTrue "redis-server runs" "kill -0 $redis"
	kill -9 "$script"
	local took
	# It takes ~70 ms (a pidfd). The bound tells "at once" from "never" or
	# "when something else happens" (the helper's idle exit, minutes), not a
	# speed: 3 s failed on a busy machine. Over a second is said, not failed.
	took=$(gone_within 15000 "$dir" "$redis" "$port" "$addr")
	assertTrue "server, port and files gone within 15 s of SIGKILL (${took} ms)" $?
	wait "$script" 2>/dev/null
	kill "$(cat "$d/sleep")" 2>/dev/null
	echo "SIGKILL to gone: $took ms" >&2
	[ "${took:-0}" -le 1000 ] || echo "warning: SIGKILL to gone took over a second (${took} ms)" >&2
}

testNoRedisServer() {
	local bin; bin=$(scratch)/nobin; mkdir -p "$bin"
	ln -sf "$(command -v timeout)" "$bin/timeout"
	ln -sf "$(command -v env)" "$bin/env"
	run PATH="$ACCELCTL_BIN_DIR:$bin" HOME="$H" -- rendezvous start
	assertRc 125 "no redis-server on PATH"
	assertErrMatches "accelctl: rendezvous: redis-server not found on PATH"
	assertErrMatches "apt-get install redis-server"
	assertErrMatches "ACCELCTL_RENDEZVOUS"
	assertOneLineErr
	assertEquals "a failing statement for eval" "(exit 125)" "$out"
	run HOME="$H" -- rendezvous start --redis-server /no/such/redis-server
	assertRc 125 "--redis-server that does not exist"
	assertErrMatches "cannot execute --redis-server '/no/such/redis-server'"
	run HOME="$H" ACCELCTL_REDIS_SERVER=/bin/true -- rendezvous start
	assertRc 125 "ACCELCTL_REDIS_SERVER that is not Redis"
	assertErrMatches "does not say a Redis version"
	assertEquals "no directory left" "" "$(ls -A "$H/.accelctl" 2>/dev/null)"
}

# The taught idiom stops the script when start fails (no redis-server here, a
# bad option), in every shell, with and without set -e; an ACCELCTL_RENDEZVOUS
# set before (a site default) is not met silently. failingStart SHELL SCRIPT
# [STATUS]: SCRIPT, with START for the start line, under SHELL; the script exits
# with start's status (125 for no redis-server, 2 for a bad option), or STATUS.
failingStart() {
	local sh=$1 script=$2 bad want
	for bad in "--redis-server /no/such/redis-server" "--no-such-option"; do
		want=${3:-125}
		[ -z "${3:-}" ] && [ "$bad" = --no-such-option ] && want=2
		EXTRA_ENV="ACCELCTL_RENDEZVOUS=redis://127.0.0.1:1" job "$sh" "${script//START/accelctl rendezvous start $bad}
			echo went-on"
		assertEquals "$sh, start $bad: the script's status (stderr: $err)" "$want" "$rc"
		assertNotContains "$sh, start $bad: the script stopped" "$out" "went-on"
		assertContains "$sh, start $bad: the reason on stderr" "$err" "accelctl: rendezvous: "
	done
}

testFailedStartStopsTheScript() {
	local sh
	for sh in bash dash zsh; do
		command -v $sh >/dev/null || continue
		failingStart $sh 'eval "$(START)" || exit'
		failingStart $sh 'set -e; eval "$(START)" || exit'
		failingStart $sh 'set -e; eval "$(START)"'
	done
	# Without "|| exit" the script may look at eval's status: start's own.
	job bash 'eval "$(accelctl rendezvous start --port 0)"; echo "eval=$?"'
	assertContains "eval returns start's status" "$out" "eval=2"
	command -v fish >/dev/null || return 0
	failingStart fish 'START --shell fish | source; or exit' 1
	failingStart fish 'eval (START --shell fish); or exit' 1
	failingStart fish 'START --shell fish | source; or exit 1' 1
	# --json prints nothing to evaluate: its reader has the exit code.
	job bash 'accelctl rendezvous start --json --redis-server /no/such/redis-server'
	assertEquals "--json: nothing on stdout" "" "$out"
}

# Its lines cannot be written (stdout closed, as some wrappers run steps): exit
# 125, and the server it started is stopped at once, not left until the script ends.
testStartWithStdoutClosed() {
	job bash 'accelctl rendezvous start >&-; echo "rc=$?"; ls -A "$HOME/.accelctl"'
	assertContains "$out" "rc=125"
	assertContains "$err" "accelctl: rendezvous: write error on standard output: Bad file descriptor"
	assertEquals "no server, no directory left: $out" "rc=125" "$out"
	job bash 'accelctl rendezvous start >/dev/full; echo "rc=$?"; ls -A "$HOME/.accelctl"'
	assertEquals "a full disk: no server, no directory left: $out" "rc=125" "$out"
	assertEquals "the write error said once: $err" 1 \
		"$(printf '%s\n' "$err" | grep -c 'write error on standard output: No space left on device')"
	assertEquals "and nothing else: $err" 1 "$(printf '%s\n' "$err" | wc -l)"
}

# The server dies a 4th time (after its 3 restarts): the directory and its log
# stay while the script runs, with the reason; waits exit 125 naming the end, not
# 2 for a missing password; status says it; the script is told on its stderr;
# everything goes when the script exits.
# (In a job script.) kill_server_for_good DIR: kill the job's redis-server four
# times, each time once its supervisor restarted it (or gave up): the fourth
# death is its last.
KILL_FOR_GOOD='
kill_server_for_good() {
	local i end pid
	for i in 1 2 3 4; do
		pid=$(awk "\$1 == \"redis\" { print \$2 }" "$1/state")
		kill -9 "$pid"
		end=$((SECONDS + 60))
		while [ $SECONDS -lt $end ] && [ ! -e "$1/ended" ] &&
			[ "$(awk "\$1 == \"redis\" { print \$2 }" "$1/state")" = "$pid" ]; do
			sleep 0.05
		done
	done
}
'

testServerEndIsKept() {
	job bash "$KILL_FOR_GOOD"'
		eval "$(accelctl rendezvous start)" || exit
		d=$(dirname "$ACCELCTL_REDIS_PASSWORD_FILE")
		echo "dir=$d"
		kill_server_for_good "$d"
		end=$((SECONDS + 60))
		while [ ! -e "$d/ended" ] && [ $SECONDS -lt $end ]; do sleep 0.05; done
		accelctl launch --nnodes 2 -n 1 -- accelctl barrier --timeout 20s after; echo "barrier=$?"
		accelctl rendezvous status; echo "status=$?"
		[ -e "$d/log" ] && echo "log kept"
		[ -e "$d/password" ] && echo "password kept"'
	local d; d=$(printf '%s\n' "$out" | sed -n 's/^dir=//p')
	assertContains "$out" "barrier=125"
	assertContains "the ranks say the server ended: $err" "$err" \
		"the job's rendezvous server (accelctl rendezvous start) has ended: redis-server (pid"
	assertContains "$err" "after 3 restarts: not started again (its log: $d/log)"
	assertNotContains "not the missing password: $err" "$err" "ACCELCTL_REDIS_PASSWORD_FILE"
	assertContains "the script told on its stderr" "$err" \
		"accelctl: rendezvous: the job's redis-server has ended: redis-server (pid"
	assertContains "status says it" "$out" "no rendezvous server runs for $d: it ended: "
	assertContains "$out" "status=1"
	assertContains "$out" "log kept"
	assertNotContains "$out" "password kept"
	eventually 30 test ! -e "$d"	# a moment after the script, 2 s was tight
	assertFalse "the directory went with the script" "[ -e '$d' ]"
}

# Ranks already waiting when the server gives up (local main or not, on either
# node) leave at once with 125 naming its end, not at their deadline with
# "rendezvous unreachable". The deadline is 100 s and "at once" is under half
# of it: 10 s of a 50 s deadline was a verdict on the machine's speed.
testServerEndWhileWaiting() {
	job bash "$KILL_FOR_GOOD"'
		eval "$(accelctl rendezvous start)" || exit
		d=$(dirname "$ACCELCTL_REDIS_PASSWORD_FILE")
		# Each rank stays until all four have left their waits: a rank gone
		# ends the waits that need it ("lost", exit 4), and which of the two
		# a rank hears first is not what this test is about.
		accelctl launch --nnodes 2 -n 2 --tag -- bash -c "
			if [ \$ACCELCTL_RANK = 0 ]; then n=never; else n=mid; fi
			accelctl barrier --timeout 100s \$n; echo rc=\$?
			touch $TMPDIR/left.\$ACCELCTL_RANK
			until [ \$(ls $TMPDIR/left.* | wc -l) -ge 4 ] || [ \$SECONDS -gt 120 ]; do sleep 0.1; done" >"$TMPDIR/ranks" 2>&1 &
		l=$!
		# Until the helpers of both nodes serve (the ranks wait).
		end=$((SECONDS + 60))
		until [ "$(ls "$TMPDIR"/accelctl-launch.*/node*/*.sock 2>/dev/null | wc -l)" -ge 2 ]; do
			[ $SECONDS -lt $end ] || { echo "the helpers did not start in 60 s" >&2; exit 9; }
			sleep 0.05
		done
		kill_server_for_good "$d"
		t0=$SECONDS
		wait $l
		echo "left after $((SECONDS - t0))s"
		cat "$TMPDIR/ranks"'
	assertEquals "every rank 125: $out" 4 "$(printf '%s\n' "$out" | grep -c ': rc=125$')"
	local s; s=$(printf '%s\n' "$out" | sed -n 's/^left after \([0-9]*\)s$/\1/p')
	assertTrue "they left at once after the end (under 50 s), not at their 100 s deadline: $out" "[ '${s:-999}' -lt 50 ]"
	assertContains "$out" "accelctl: barrier: 'mid': the job's rendezvous server (accelctl rendezvous start) has ended: redis-server (pid"
	assertContains "$out" "accelctl: barrier: 'never': the job's rendezvous server"
	assertNotContains "$out" "timed out"
}

# The multi-node error without a rendezvous names both ways out.
testNoRendezvousMessage() {
	run ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=1 \
		ACCELCTL_NODE_RANK=0 ACCELCTL_NNODES=2 -- barrier x
	assertRc 2 "multi-node without a rendezvous"
	assertErrMatches "ACCELCTL_RENDEZVOUS=redis://HOST:PORT"
	assertErrMatches 'eval "$(accelctl rendezvous start)"'
}

testTwoJobsAtOnce() {
	local d; d=$(scratch)/two; mkdir -p "$d"
	local script='
		eval "$(accelctl rendezvous start)" || exit
		echo "$ACCELCTL_RENDEZVOUS" >'"$d"'/url.$JOB
		echo "$ACCELCTL_REDIS_PASSWORD_FILE" >'"$d"'/pw.$JOB
		accelctl launch --nnodes 2 -n 2 -- sh -c "for i in \$(seq 1 20); do accelctl barrier --timeout 30s same-name || exit; done"
		echo "rc=$?"
		until [ -e '"$d"'/checked ]; do sleep 0.05; done'
	# Both in the background, each with its own output: each waits for
	# "checked" (until its server was seen), so neither runs to its timeout.
	JOUT=$d/a. EXTRA_ENV="JOB=a" job bash "$script" &
	local a=$!
	JOUT=$d/b. EXTRA_ENV="JOB=b" job bash "$script" &
	local b=$!
	eventually 30 eval '[ -s "$d/pw.a" ] && [ -s "$d/pw.b" ]'
	assertNotEquals "two servers" "$(cat "$d/url.a")" "$(cat "$d/url.b")"
	assertNotEquals "two directories" "$(cat "$d/pw.a")" "$(cat "$d/pw.b")"
	touch "$d/checked"
	wait "$a" "$b"
	# Each ran its loop beside the other (same barrier name, same host) and passed.
	assertContains "job a: $(cat "$d/a.err")" "$(cat "$d/a.out")" "rc=0"
	assertContains "job b: $(cat "$d/b.err")" "$(cat "$d/b.out")" "rc=0"
}

# Each job's password opens only its own server.
testJobsNeverMeet() {
	local d; d=$(scratch)/meet; mkdir -p "$d"
	local script='eval "$(accelctl rendezvous start)" || exit
		echo "$ACCELCTL_RENDEZVOUS $ACCELCTL_REDIS_PASSWORD_FILE" >'"$d"'/$JOB.tmp; mv '"$d"'/$JOB.tmp '"$d"'/$JOB
		until [ -e '"$d"'/done ]; do sleep 0.05; done'
	EXTRA_ENV="JOB=a" job bash "$script" &
	local a=$!
	(EXTRA_ENV="JOB=b" job bash "$script") &
	local b=$!
	eventually 60 eval '[ -s "$d/a" ] && [ -s "$d/b" ]'
	assertTrue "both servers started" "[ -s '$d/a' ] && [ -s '$d/b' ]" || {
		touch "$d/done"; wait "$a" "$b"; return; }
	local url_b pw_a hp
	url_b=$(cut -d' ' -f1 "$d/b"); pw_a=$(cat "$(cut -d' ' -f2 "$d/a")")
	hp=${url_b#redis://accelctl@}
	assertContains "job a's password refused by job b's server" \
		"$(REDISCLI_AUTH=$pw_a redis-cli --no-auth-warning --user accelctl -h "${hp%:*}" -p "${hp##*:}" ping 2>&1)" "WRONGPASS"
	touch "$d/done"
	wait "$a" "$b"
}

# The password is in its file only: not in any argv (ps -ef, /proc/*/cmdline),
# environment (/proc/*/environ), log, state file or output, while a job runs.
testPasswordNowhereElse() {
	local d; d=$(scratch)/pw; mkdir -p "$d"
	job bash '
		eval "$(accelctl rendezvous start)" || exit
		dir=$(dirname "$ACCELCTL_REDIS_PASSWORD_FILE")
		accelctl launch --nnodes 2 -n 2 -- sh -c "
			accelctl barrier --timeout 30s in
			if [ \$ACCELCTL_RANK = 0 ]; then
				ps -ef >'"$d"'/ps
				for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
					tr \"\\\\0\" \" \" <\$f 2>/dev/null; echo
				done >'"$d"'/proc
				cp $dir/log $dir/state '"$d"'/
				cat $ACCELCTL_RUNTIME_DIR/*.log >'"$d"'/helper.log
				accelctl rendezvous status >'"$d"'/status 2>&1
			fi
			accelctl barrier --timeout 30s out"
		echo "launch=$?"
		cat "$ACCELCTL_REDIS_PASSWORD_FILE" >'"$d"'/password'
	assertContains "the job ran: $err" "$out" "launch=0"
	local pw; pw=$(cat "$d/password")
	assertEquals "a 256-bit password in hex" 64 "${#pw}"
	assertTrue "the helpers were connected" "grep -q 'helpers    2 ' '$d/status'"
	assertTrue "/proc was read" "[ $(wc -l <"$d/proc") -gt 10 ]"
	local f
	for f in ps proc log state helper.log status jout jerr; do
		assertFalse "the password is not in $f" "grep -qF '$pw' '$d/$f' '$(scratch)/$f' 2>/dev/null"
	done
	assertNotContains "not in the output" "$out$err" "$pw"
}

testModes() {
	job bash '
		eval "$(accelctl rendezvous start)" || exit
		d=$(dirname "$ACCELCTL_REDIS_PASSWORD_FILE")
		stat -c "%a %n" "$(dirname "$d")" "$d" "$d"/*'
	assertEquals "$err" 0 "$rc"
	assertContains "parent 0700" "$out" "700 $H/.accelctl
"
	assertTrue "job directory 0700" "printf '%s\n' '$out' | grep -q '^700 .*/rendezvous\.[^/]*$'"
	assertTrue "password file 0600" "printf '%s\n' '$out' | grep -q '^600 .*/password$'"
	assertEquals "every file 0600" "" "$(printf '%s\n' "$out" | grep '/rendezvous\.[^/]*/' | grep -v '^600 ')"
	# A parent of someone else's making (group-writable) is refused.
	chmod 770 "$H/.accelctl"
	job bash 'accelctl rendezvous start'
	assertEquals "unsafe parent: exit 2" 2 "$rc"
	assertContains "$err" "has unsafe permissions"
	# A --dir that others may write (not sticky) is refused too: another
	# user could swap the job's directory for a link before the clean-up.
	mkdir -m 777 "$(scratch)/open"
	chmod 777 "$(scratch)/open"
	job bash "accelctl rendezvous start --dir $(scratch)/open"
	assertEquals "--dir others may write: exit 2" 2 "$rc"
	assertContains "$err" "others could replace the job's directory"
	mkdir -p "$(scratch)/sticky" && chmod 1777 "$(scratch)/sticky"
	job bash "eval \"\$(accelctl rendezvous start --dir $(scratch)/sticky)\" && accelctl rendezvous status >/dev/null"
	assertEquals "a sticky --dir (as /tmp) is fine: $err" 0 "$rc"
	# In a Slurm job: under the submit directory.
	chmod 700 "$H/.accelctl"
	mkdir -p "$(scratch)/submit"
	EXTRA_ENV="SLURM_JOB_ID=77 SLURM_SUBMIT_DIR=$(scratch)/submit" job bash '
		eval "$(accelctl rendezvous start)" || exit; echo "$ACCELCTL_REDIS_PASSWORD_FILE"'
	assertContains "Slurm: under \$SLURM_SUBMIT_DIR, named after the job" "$out" "$(scratch)/submit/.accelctl/rendezvous.77."
}

testRefused() {
	local d; d=$(scratch)/refused; mkdir -p "$d"
	job bash '
		eval "$(accelctl rendezvous start)" || exit
		hp=${ACCELCTL_RENDEZVOUS#redis://accelctl@}; h=${hp%:*} p=${hp##*:}
		cli() { redis-cli --no-auth-warning -h "$h" -p "$p" "$@" 2>&1; }
		echo "default: $(cli ping)"
		echo "default-auth: $(cli auth anything)"
		echo "wrong: $(REDISCLI_AUTH=not-the-password cli --user accelctl ping)"
		pw=$(cat "$ACCELCTL_REDIS_PASSWORD_FILE")
		echo "right: $(REDISCLI_AUTH=$pw cli --user accelctl ping)"
		echo "flushall: $(REDISCLI_AUTH=$pw cli --user accelctl flushall)"
		echo "config: $(REDISCLI_AUTH=$pw cli --user accelctl config get requirepass)"
		echo "other-key: $(REDISCLI_AUTH=$pw cli --user accelctl set elsewhere 1)"
		echo "own-key: $(REDISCLI_AUTH=$pw cli --user accelctl set accelctl:x 1)"
		echo "function: $(REDISCLI_AUTH=$pw cli --user accelctl function list)"
		echo "evalsha: $(REDISCLI_AUTH=$pw cli --user accelctl script load "return 1")"'
	assertContains "$out" "default: NOAUTH"
	assertContains "$out" "default-auth: WRONGPASS"
	assertContains "$out" "wrong: AUTH failed: WRONGPASS"
	assertContains "$out" "right: PONG"
	assertContains "$out" "flushall: NOPERM"
	assertContains "$out" "config: NOPERM"
	assertContains "$out" "other-key: NOPERM"
	assertContains "$out" "own-key: OK"
	assertNotContains "FUNCTION LIST is allowed" "$out" "function: NOPERM"
	assertContains "SCRIPT LOAD is allowed" "$out" "evalsha: e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
}

# free_port finds a port nothing listens on now; another suite may bind it
# before the start here does (the start then fails "in use"): a new port is
# tried then, up to 5 times.
testBindPortJson() {
	local port try
	for try in 1 2 3 4 5; do
		port=$(free_port)
		job bash '
			accelctl rendezvous start --bind 127.0.0.1 --port '"$port"' --json >"$TMPDIR/j" || exit
			python3 -c "import json; j=json.load(open(\"$TMPDIR/j\")); print(j[\"rendezvous\"], j[\"port\"], j[\"user\"], j[\"password_file\"].endswith(\"/password\")); print(j[\"password_file\"])" >"$TMPDIR/p"
			head -n 1 "$TMPDIR/p"
			awk "\$1 == \"redis\" { print \$2 }" "$(dirname "$(tail -n 1 "$TMPDIR/p")")/state" >"$TMPDIR/redis.pid"'
		[ "$rc" != 0 ] && case $err in *"in use"*) continue ;; esac
		break
	done
	assertEquals "$err" 0 "$rc"
	assertEquals "--bind, --port, --json" "redis://accelctl@127.0.0.1:$port $port accelctl True" "$out"
	# The server stops a moment after its script exited (its supervisor
	# sees it go; 100 ms and more on a busy machine). Looked at by its pid:
	# once the port is free another suite may take it.
	local redis; redis=$(cat "$(scratch)/redis.pid")
	assertNotEquals "the server's pid" "" "$redis"
	eventually 30 eval '! kill -0 "$redis" 2>/dev/null'
	assertFalse "the server went with its job" "kill -0 '$redis' 2>/dev/null"
	# By default the host's address, never the wildcard; 0.0.0.0 only when asked,
	# and the URL still names an address the others reach.
	job bash 'eval "$(accelctl rendezvous start)"; accelctl rendezvous status | grep directory'
	assertNotContains "not bound to all by default" "$out" "listening on 0.0.0.0"
	job bash 'eval "$(accelctl rendezvous start --bind 0.0.0.0)"; echo "$ACCELCTL_RENDEZVOUS"; accelctl rendezvous status | grep directory'
	assertContains "--bind 0.0.0.0" "$out" "listening on 0.0.0.0"
	assertNotContains "the URL names a real address" "$out" "@0.0.0.0:"
	# --port already taken: exit 125 with redis-server's own reason. (Exit 9:
	# the first start did not get the port either, another suite has it.) The
	# second start is another job's, without the first one's exports: in the
	# same shell start refuses before it tries the port (a server serves it).
	for try in 1 2 3 4 5; do
		port=$(free_port)
		job bash 'eval "$(accelctl rendezvous start --bind 127.0.0.1 --port '"$port"')"
			[ -n "$ACCELCTL_RENDEZVOUS" ] || exit 9	# the first did not start
			env -u ACCELCTL_RENDEZVOUS -u ACCELCTL_REDIS_PASSWORD_FILE \
				accelctl rendezvous start --bind 127.0.0.1 --port '"$port"''
		[ "$rc" = 9 ] || break
	done
	assertEquals "a taken --port ($err)" 125 "$rc"
	assertContains "$err" "in use"
}

testUsageErrors() {
	run HOME="$H" -- rendezvous
	assertRc 2 "no action"
	run HOME="$H" -- rendezvous begin
	assertRc 2 "unknown action"
	assertErrMatches "accelctl: rendezvous: unknown action 'begin': start, stop or status"
	run HOME="$H" -- rendezvous start --port 0
	assertRc 2 "--port 0"
	run HOME="$H" -- rendezvous start --port 70000
	assertRc 2 "--port 70000"
	assertErrMatches "invalid --port '70000': too large"
	run HOME="$H" -- rendezvous start --shell csh
	assertRc 2 "--shell csh"
	run HOME="$H" -- rendezvous start --shell fish --json
	assertRc 2 "--shell and --json"
	run HOME="$H" -- rendezvous start --bind no.such.host.invalid
	assertRc 2 "unresolvable --bind"
	assertErrMatches "invalid --bind: cannot resolve 'no.such.host.invalid'"
	run HOME="$H" -- rendezvous stop --port 1
	assertRc 2 "start's options on stop"
	assertErrMatches "--port: for start only"
	run HOME="$H" -- rendezvous status
	assertRc 2 "status without ACCELCTL_REDIS_PASSWORD_FILE"
	assertErrMatches "ACCELCTL_REDIS_PASSWORD_FILE is not set"
	run HOME="$H" -- rendezvous stop
	assertRc 2 "stop without ACCELCTL_REDIS_PASSWORD_FILE"
	run HOME="$H" ACCELCTL_REDIS_PASSWORD_FILE="$H/nothing/password" -- rendezvous status
	assertRc 1 "status of a server that is gone"
	assertEquals "no directory left by the errors" "" "$(ls -A "$H/.accelctl" 2>/dev/null)"
}

# redis-server killed under a running job: the supervisor starts it again on the
# same port, and the job's barriers go on (the helpers post their state again).
testRedisRestarted() {
	job bash '
		eval "$(accelctl rendezvous start)" || exit
		d=$(dirname "$ACCELCTL_REDIS_PASSWORD_FILE")
		accelctl launch --nnodes 2 -n 2 -- sh -c "
			for i in \$(seq 1 30); do
				accelctl barrier --timeout 30s r || exit
				if [ \$ACCELCTL_RANK = 0 ] && [ \$i = 10 ]; then
					kill -9 \$(awk \"\\\$1 == \\\"redis\\\" { print \\\$2 }\" $d/state)
				fi
			done"
		echo "launch=$?"
		grep -c "started /" "$d/log"'
	assertContains "the loop passed across the restart: $err" "$out" "launch=0"
	assertEquals "started twice" 2 "$(printf '%s\n' "$out" | tail -n 1)"
}

load_shunit2
