# t_slurm.sh: every subcommand under real Slurm (slurmctld and 4 slurmd on this host, see
# slurm.sh): srun on 2 to 4 nodes, the README's sbatch script (several steps, exit-code
# checks, one rank failing under barrier --status), the README's jobs that start their
# own rendezvous (sbatch on 4 nodes, an mpirun wrapper), srun -K, torchrun inside srun,
# and mpirun and MPICH's mpiexec.hydra in an allocation.
# Skipped (ctest: Not Run) where Slurm cannot run here: not root, no slurm-wlm, no unshare.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/redis.sh"
. "$(dirname "$0")/lib.sh"

oneTimeSetUp() {
	SL=$(scratch)/slurm; mkdir -p "$SL"
	local conf rc
	conf=$(bash "$ACCELCTL_SRC/tests/integration/slurm.sh" start "$SL" 4); rc=$?
	[ $rc = 77 ] && skip_suite
	[ $rc = 0 ] || { echo "Slurm did not start" >&2; tail -n 20 "$SL"/*.log >&2; exit 1; }
	eval "$conf"
	redis_start
}

oneTimeTearDown() {
	stop_helpers
	bash "$ACCELCTL_SRC/tests/integration/slurm.sh" stop "$SL"
	redis_stop
}

# slurm_env CMD...: CMD as a user of this cluster with the suite's Redis as rendezvous.
slurm_env() {
	launcher_env SLURM_CONF="$SLURM_CONF" ACCELCTL_RENDEZVOUS="unix://$REDIS_SOCK" \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		OMPI_MCA_rmaps_base_oversubscribe=1 "$@"
}

checkSrun() {
	local nodes=$1 per=$2 out; out=$(scratch)/srun-$1x$2; mkdir -p "$out"
	slurm_env timeout 180 srun -N "$nodes" --ntasks-per-node "$per" bash "$JOB_SH" "$out" \
		>"$out/stdout" 2>"$out/stderr"
	st=$?; assertEquals "srun exit status: $(cat "$out/stderr")" 0 "$st"
	check_job "$out" $((nodes * per)) "$nodes" "$per" slurm
}

testSrunTwoNodesTwoTasks() { checkSrun 2 2; }
testSrunThreeNodesThreeTasks() { checkSrun 3 3; }
testSrunFourNodesFourTasks() { checkSrun 4 4; }

# sbatch_readme DIR VAR=VALUE...: the README's batch script, run by sbatch --wait in DIR.
sbatch_readme() {
	local d=$1; shift
	mkdir -p "$d"
	make_stubs "$d"
	readme_snippet sbatch-job.sh "$d/job.sh"
	(cd "$d" && slurm_env "$@" timeout 180 sbatch --wait -o job.out job.sh >sbatch.out 2>&1)
}

testSbatchReadmeJob() {
	local d; d=$(scratch)/batch-ok
	sbatch_readme "$d"
	st=$?; assertEquals "sbatch --wait: $(cat "$d/job.out")" 0 "$st"
	assertContains "the batch script's is-main" "$(cat "$d/job.out")" "job done"
	assertEquals "train ran on all 4 ranks" 4 "$(lines "$d/log.train.py")"
	assertEquals "fetch-data: each node's local main first" "n1 0
n2 2" "$(awk '!seen[$1]++' "$d/log.fetch-data.sh" | sort)"
	assertEquals "fetch-data then ran on the others" 4 "$(lines "$d/log.fetch-data.sh")"
	assertEquals "upload once, on rank 0" "n1 0" "$(cat "$d/log.upload-checkpoint.sh")"
	assertEquals "second step: clean-scratch once per node" "n1
n2" "$(cut -d' ' -f1 "$d/log.clean-scratch.sh" | sort)"
}

testSbatchReadmeJobOneRankFails() {
	local d; d=$(scratch)/batch-fail
	sbatch_readme "$d" FAIL_RANK=3 FAIL_RC=5
	local rc=$?
	assertNotEquals "sbatch --wait fails" 0 "$rc"
	assertContains "the script saw the step fail" "$(cat "$d/job.out")" "training failed: 5"
	assertEquals "every rank learned who failed" 4 \
		"$(grep -c 'accelctl: barrier: after-train: rank 3 (exit 5) failed' "$d/job.out")"
	assertEquals "no upload" 0 "$(lines "$d/log.upload-checkpoint.sh")"
	assertEquals "no second step" 0 "$(lines "$d/log.clean-scratch.sh")"
	assertNotContains "no 'job done'" "$(cat "$d/job.out")" "job done"
}

# emptied DIR: nothing in DIR (or no DIR).
emptied() { [ -z "$(ls -A "$1" 2>/dev/null)" ]; }

# The README's job with a rendezvous of its own: 4 nodes, the server bound to the
# batch host's address (a real one, not loopback or the wildcard), gone with the job.
testSbatchRendezvousReadme() {
	local d; d=$(scratch)/batch-rdv
	mkdir -p "$d"
	make_stubs "$d"
	readme_snippet sbatch-rendezvous.sh "$d/job.sh"
	(cd "$d" && slurm_env timeout 180 sbatch --wait -o job.out job.sh >sbatch.out 2>&1)
	st=$?; assertEquals "sbatch --wait: $(cat "$d/job.out")" 0 "$st"
	local url addr
	url=$(sed -n 's/^meeting at //p' "$d/job.out")
	addr=${url#redis://accelctl@}; addr=${addr%:*}
	assertContains "the job's own server" "$url" "redis://accelctl@"
	case $addr in 127.* | 0.0.0.0 | "") fail "bound to '$addr', not the batch host's address" ;; esac
	assertContains "an address of this host" "$(ip -o addr 2>/dev/null || hostname -I)" "$addr"
	assertEquals "train ran on all 8 ranks" 8 "$(lines "$d/log.train.py")"
	assertEquals "fetch-data once per node" "n1
n2
n3
n4" "$(cut -d' ' -f1 "$d/log.fetch-data.sh" | sort)"
	# The supervisor removes it once the batch script exited, outside the
	# job's processes (proctrack/linuxproc loses it): sbatch --wait may
	# return first (4 to 90 ms before it, 20 runs with two CPU hogs).
	# 30 s tells "with the job" from "never" on a busy machine.
	local t0; t0=${EPOCHREALTIME/[.,]/}
	eventually 30 emptied "$d/.accelctl"
	echo "the server's directory went $(((${EPOCHREALTIME/[.,]/} - t0) / 1000)) ms after sbatch returned"
	assertEquals "the server's directory went with the job" "" "$(ls -A "$d/.accelctl")"
	assertNotContains "not the suite's Redis" "$(cat "$d/job.out")" "unix://"
}

testMpirunRendezvousReadme() {
	local d; d=$(scratch)/mpi-rdv; mkdir -p "$d"
	make_stubs "$d"
	readme_snippet mpirun-rendezvous.sh "$d/job.sh"
	(cd "$d" && slurm_env timeout 180 sbatch --wait -N 2 --ntasks-per-node 2 -o job.out job.sh >/dev/null 2>&1)
	st=$?; assertEquals "sbatch: $(cat "$d/job.out")" 0 "$st"
	assertEquals "prepare once, on rank 0" "n1 0" "$(cat "$d/log.prepare.sh")"
	assertEquals "solver on all 4" 4 "$(lines "$d/log.solver")"
	eventually 30 emptied "$d/.accelctl"	# as in testSbatchRendezvousReadme
	assertEquals "the server's directory went with the job" "" "$(ls -A "$d/.accelctl")"
}

# srun -K kills the ranks still waiting when one exits non-zero: nothing hangs or lingers.
# The barrier's name is this run's own ($$): the look for leftovers below matches no
# other suite's processes.
testSrunKillOnBadExit() {
	local d; d=$(scratch)/kill; mkdir -p "$d"
	local t0=$SECONDS name=never-reached-$$
	slurm_env timeout 120 srun -K -N 2 --ntasks-per-node 2 bash -c '
		eval "$(accelctl info --shell)"
		if [ "$ACCELCTL_RANK" = 3 ]; then sleep 1; exit 9; fi
		accelctl barrier --timeout 100s '"$name"' && echo "passed the barrier"' >"$d/out" 2>"$d/err"
	local rc=$?
	assertNotEquals "srun -K fails" 0 "$rc"
	assertNotEquals "srun itself was not timed out" 124 "$rc"
	assertTrue "killed well before the barrier's deadline ($((SECONDS - t0)) s)" "[ $((SECONDS - t0)) -lt 60 ]"
	# Slurm (proctrack/linuxproc) signals the processes of a task one by one: a shell
	# may outlive its killed barrier by an instant, but no barrier may pass.
	assertNotContains "no barrier passed: $(cat "$d/err")" "$(cat "$d/out")" "passed the barrier"
	# srun may return while a killed one is being reaped (KillWait is 5 s, and
	# slurmstepd is slow on a busy machine).
	eventually 30 eval '[ -z "$(pgrep -f "barrier --timeout 100s $name\$")" ]'
	assertEquals "no accelctl barrier left" "" "$(pgrep -f "barrier --timeout 100s $name\$")"
}

# torchrun started by srun once per node: torchrun's variables win over the step's.
testTorchrunInsideSrun() {
	command -v torchrun >/dev/null || startSkipping
	local out port; out=$(scratch)/torch-srun; mkdir -p "$out"; port=$(free_port)
	slurm_env timeout 180 srun -N 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc_per_node 2 \
		--rdzv_backend c10d --rdzv_endpoint "127.0.0.1:$port" --rdzv_id "srun-$port" \
		--redirects 9:1 --tee 9:1 --no_python bash "$JOB_SH" "$out" >"$out/stdout" 2>"$out/stderr"
	st=$?; assertEquals "srun torchrun: $(tail -n 5 "$out/stderr")" 0 "$st"
	check_job "$out" 4 2 2 torchrun
}

testMpirunInAllocation() {
	local out; out=$(scratch)/mpi-alloc; mkdir -p "$out"
	slurm_env timeout 180 sbatch --wait -N 2 --ntasks-per-node 2 -o "$out/job.out" \
		--wrap "mpirun bash $JOB_SH $out" >/dev/null 2>&1
	st=$?; assertEquals "sbatch --wrap mpirun: $(cat "$out/job.out")" 0 "$st"
	check_job "$out" 4 2 2 openmpi
}

# MPICH's Hydra starts its proxies with srun, one task per node, as Open MPI its daemons:
# PMI_RANK wins over their SLURM_PROCID, the local rank is Hydra's MPI_LOCALRANKID.
# -iface lo: the simulated nodes' names do not resolve, Hydra would connect to "n1".
testHydraInAllocation() {
	command -v mpiexec.hydra >/dev/null || startSkipping
	local out; out=$(scratch)/hydra-alloc; mkdir -p "$out"
	slurm_env timeout 180 sbatch --wait -N 2 --ntasks-per-node 2 -o "$out/job.out" \
		--wrap "mpiexec.hydra -iface lo -ppn 2 bash $JOB_SH $out" >/dev/null 2>&1
	st=$?; assertEquals "sbatch --wrap mpiexec.hydra: $(cat "$out/job.out")" 0 "$st"
	check_job "$out" 4 2 2 mpich
}

testMpirunReadmeSnippetInAllocation() {
	local d; d=$(scratch)/mpi-readme; mkdir -p "$d"
	make_stubs "$d"
	readme_snippet mpirun.sh "$d/snippet"
	{ echo '#!/bin/bash'; cat "$d/snippet"; } >"$d/job.sh"
	(cd "$d" && slurm_env timeout 180 sbatch --wait -N 2 --ntasks-per-node 2 -o job.out job.sh >/dev/null 2>&1)
	st=$?; assertEquals "sbatch: $(cat "$d/job.out")" 0 "$st"
	assertEquals "prepare once, on rank 0" "n1 0" "$(cat "$d/log.prepare.sh")"
	assertEquals "solver on all 4" 4 "$(lines "$d/log.solver")"
}

load_shunit2
