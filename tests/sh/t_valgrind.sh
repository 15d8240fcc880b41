# t_valgrind.sh: the CLI paths under valgrind: no leaks, no invalid reads or writes.
# Not registered in the sanitizer build (valgrind cannot run an ASan binary).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/redis.sh"

oneTimeSetUp() {
	command -v valgrind >/dev/null || { echo "valgrind not installed: skipped" >&2; skip_suite; }
}

# vg VAR=VALUE... -- ARGS...: accelctl ARGS under valgrind; fails on any error or leak.
vg() {
	local vars=()
	while [ "$1" != "--" ]; do vars+=("$1"); shift; done
	shift
	env -i PATH=/usr/bin:/bin TMPDIR="$(scratch)" "${vars[@]}" valgrind -q --error-exitcode=99 \
		--leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible \
		"$ACCELCTL" "$@" >/dev/null 2>"$(scratch)/vg" </dev/null
	rc=$?
	assertNotEquals "valgrind clean: accelctl $* $(cat "$(scratch)/vg")" 99 "$rc"
}

testRankQuestions() {
	vg -- is-main
	vg RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 -- is-local-main
	vg SLURM_PROCID=3 SLURM_STEP_ID=0 SLURM_NTASKS=5 SLURM_LOCALID=0 SLURM_NODEID=1 \
		SLURM_STEP_TASKS_PER_NODE='3,1(x2)' SLURM_JOB_ID=4 -- info --json
	vg -- info
	vg -- info --shell
	vg ACCELCTL_RANK=1 ACCELCTL_WORLD_SIZE=2 -- on-main -- true
	vg ACCELCTL_RANK=1 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=1 ACCELCTL_LOCAL_WORLD_SIZE=2 -- print hi
}

# The rows of issue 21, and their unknown values and messages.
testNewLaunchers() {
	vg FLUX_TASK_RANK=1 FLUX_JOB_SIZE=3 FLUX_TASK_LOCAL_ID=1 FLUX_JOB_NNODES=2 \
		FLUX_JOB_ID=$'\xc6\x92'abc -- info
	vg FLUX_TASK_RANK=1 FLUX_JOB_SIZE=3 FLUX_TASK_LOCAL_ID=1 FLUX_JOB_NNODES=2 -- barrier x
	vg JOB_COMPLETION_INDEX=1 -- on-process 1 -- true
	vg JOB_COMPLETION_INDEX=1 -- status
	vg PALS_RANKID=3 PALS_NODEID=1 PMI_SIZE=4 PMI_LOCAL_RANK=1 PMI_LOCAL_SIZE=2 PALS_APID=x -- info --json
	vg JSM_NAMESPACE_RANK=1 JSM_NAMESPACE_SIZE=2 LSB_JOBID=5 LSB_JOBINDEX=2 -- info
	vg HOROVOD_RANK=1 HOROVOD_SIZE=2 HOROVOD_CROSS_RANK=0 -- is-main
	vg -- --help
}

testErrorPaths() {
	vg RANK=abc WORLD_SIZE=2 -- is-main
	vg -- on-process 1x -- true
	vg -- on-main -- /no/such/command
	vg -- is-mian
	vg -- launch -n 0 -- true
	vg -- info --json --shell
	vg -- --help
	vg -- on-process --help
	vg SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NODEID=0 \
		SLURM_STEP_TASKS_PER_NODE=garbage -- is-local-main
	# The NCCL paths that run without a GPU: the libraries loaded, no device found.
	vg -- check
	vg -- check --min-busbw x
	vg ACCELCTL_TRANSPORT=bogus ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 -- info
}

# Issue 23's paths: a refused deadline, a failed rendezvous start (its failing
# line), a link given as DIR/., a missing XDG_RUNTIME_DIR, a closed stdout.
testPlacesAndRefusals() {
	local two="ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2"
	vg -- barrier --timeout 0 x
	vg ACCELCTL_TIMEOUT=0 -- barrier x
	vg -- barrier --timeout '' x
	vg -- rendezvous start --redis-server /no/such/redis-server
	vg -- rendezvous start --no-such-option
	local rt; rt=$(scratch)/rt23; mkdir -m 700 "$rt"; ln -s "$rt" "$(scratch)/l23"
	# shellcheck disable=SC2086
	vg $two ACCELCTL_JOB_ID=vg23 ACCELCTL_RUNTIME_DIR="$(scratch)/l23/." -- barrier x
	# shellcheck disable=SC2086
	vg $two ACCELCTL_JOB_ID=vg23 XDG_RUNTIME_DIR=/no/such/run/user -- helper status
	env -i PATH=/usr/bin:/bin valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect,possible "$ACCELCTL" info >&- 2>"$(scratch)/vg"
	rc=$?
	assertEquals "closed stdout: the write error, valgrind clean: $(cat "$(scratch)/vg")" 125 "$rc"
}

testLaunch() {
	vg -- launch -n 3 --tag -- sh -c 'echo out; echo err >&2'
	vg -- launch -n 2 -K -- sh -c 'exit $ACCELCTL_RANK'
}

# The helper and the synchronising clients: a helper under valgrind serves a
# 2-rank job whose rank 0 runs under valgrind too; the helper then idles out.
testHelperAndSyncPaths() {
	local rt; rt=$(scratch)/rt; mkdir -m 700 "$rt"
	local job="ACCELCTL_RUNTIME_DIR=$rt ACCELCTL_JOB_ID=vg ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2"
	local r0="$job ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0" r1="$job ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1"
	# shellcheck disable=SC2086
	env -i PATH=/usr/bin:/bin $r0 ACCELCTL_HELPER_IDLE=3s ACCELCTL_TRACE_DIR="$(scratch)/vgtrace" valgrind -q --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
		"$ACCELCTL" helper run 2>"$(scratch)/vg-helper" &
	local hp=$!
	eventually 60 test -S "$rt/vg.sock"
	# shellcheck disable=SC2086
	(env -i PATH=/usr/bin:/bin $r1 sh -c '"$0" barrier b; "$0" broadcast c; "$0" on-main --wait -- true; "$0" barrier --status 0 s' "$ACCELCTL" >/dev/null) &
	# shellcheck disable=SC2086
	vg $r0 -- barrier b
	# shellcheck disable=SC2086
	vg $r0 -- broadcast c value
	# shellcheck disable=SC2086
	vg $r0 -- on-main --wait -- true
	# shellcheck disable=SC2086
	vg $r0 -- barrier --status 0 s
	# shellcheck disable=SC2086
	vg $r0 -- status
	# shellcheck disable=SC2086
	vg $r0 -- status --history
	# shellcheck disable=SC2086
	vg $r0 -- status --history 0 --json
	wait %2 2>/dev/null
	wait "$hp"
	st=$?; assertEquals "helper under valgrind: $(cat "$(scratch)/vg-helper")" 0 "$st"
	# The trace that helper wrote, merged (issue 22), and the merge's errors.
	vg -- trace merge --svg "$(scratch)/vg.svg" "$(scratch)/vgtrace"
	assertEquals "trace merge" 0 "$rc"
	vg -- trace merge "$(scratch)/no-such-dir"
	vg -- trace merge --job nope "$(scratch)/vgtrace"
}

# Two node helpers under valgrind meet through a private redis-server; every
# kind of wait crosses it once; then they idle out.
testHelpersWithRendezvous() {
	command -v redis-server >/dev/null || startSkipping
	redis_start
	local base; base=$(scratch)/xr; mkdir -p "$base/n0" "$base/n1"; chmod 700 "$base/n0" "$base/n1"
	local c="ACCELCTL_RENDEZVOUS=unix://$REDIS_SOCK ACCELCTL_JOB_ID=vgx ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=1 ACCELCTL_LOCAL_RANK=0 ACCELCTL_NNODES=2"
	local n pids=""
	for n in 0 1; do
		# shellcheck disable=SC2086
		env -i PATH=/usr/bin:/bin $c ACCELCTL_RUNTIME_DIR="$base/n$n" ACCELCTL_RANK=$n ACCELCTL_NODE_RANK=$n \
			ACCELCTL_HELPER_IDLE=3s valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect,possible "$ACCELCTL" helper run 2>"$base/vg$n" &
		pids="$pids $!"
	done
	eventually 60 eval '[ -S "$base/n0/vgx.node0.sock" ] && [ -S "$base/n1/vgx.node1.sock" ]'
	for n in 0 1; do
		# shellcheck disable=SC2086
		env -i PATH=/usr/bin:/bin $c ACCELCTL_RUNTIME_DIR="$base/n$n" ACCELCTL_RANK=$n ACCELCTL_NODE_RANK=$n \
			sh -c '"$0" barrier b && "$0" broadcast c v && "$0" on-main --wait -- true &&
			"$0" barrier --status 0 s && "$0" main-first -- true' "$ACCELCTL" >"$base/out$n" 2>&1 &
	done
	local p
	for p in $pids; do
		wait "$p"
		st=$?; assertEquals "helper $p under valgrind: $(cat "$base"/vg*)" 0 "$st"
	done
	assertEquals "both ranks got the broadcast" "v
v" "$(cat "$base/out0" "$base/out1")"
	redis_stop
}

# rendezvous: start (the supervisor it forks runs under valgrind too, its
# report in the log it removes), status, stop, and the error paths.
testRendezvousPaths() {
	command -v redis-server >/dev/null || startSkipping
	local d; d=$(scratch)/rdv; mkdir -m 700 "$d"
	vg HOME="$d" -- rendezvous start --dir "$d" --bind 127.0.0.1
	assertEquals "rendezvous start" 0 "$rc"
	local pw; pw=$(ls "$d"/rendezvous.*/password)
	vg ACCELCTL_REDIS_PASSWORD_FILE="$pw" -- rendezvous status
	assertEquals "rendezvous status" 0 "$rc"
	vg ACCELCTL_REDIS_PASSWORD_FILE="$pw" -- rendezvous stop
	assertEquals "rendezvous stop" 0 "$rc"
	vg ACCELCTL_REDIS_PASSWORD_FILE="$pw" -- rendezvous status
	vg -- rendezvous status
	vg HOME="$d" -- rendezvous start --port 0
	vg HOME="$d" -- rendezvous start --redis-server /no/such/redis-server
	# No redis-server on PATH (valgrind and valgrind.bin alone there).
	mkdir "$d/bin" && ln -s "$(command -v valgrind)"* "$d/bin/"
	vg HOME="$d" PATH="$d/bin" -- rendezvous start
	assertEquals "no redis-server: 125" 125 "$rc"
	vg -- rendezvous begin
	vg -- rendezvous --help
}

load_shunit2
