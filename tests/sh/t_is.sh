# t_is.sh: is-main and is-local-main under every launcher row, and their errors.
. "$(dirname "$0")/lib.sh"

# expect_is RC_MAIN RC_LOCAL VAR=VALUE...: both commands, silent, these codes.
expect_is() {
	local want_main=$1 want_local=$2; shift 2
	run "$@" -- is-main
	assertEquals "is-main with $*" "$want_main" "$rc"
	assertEquals "is-main prints nothing" "" "$out$err"
	run "$@" -- is-local-main
	assertEquals "is-local-main with $*" "$want_local" "$rc"
	assertEquals "is-local-main prints nothing" "" "$out$err"
}

testNoLauncherIsMain() { expect_is 0 0; }

testExplicit() {
	expect_is 0 0 ACCELCTL_RANK=0 ACCELCTL_WORLD_SIZE=4 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2
	expect_is 1 0 ACCELCTL_RANK=2 ACCELCTL_WORLD_SIZE=4 ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2
	expect_is 1 1 ACCELCTL_RANK=3 ACCELCTL_WORLD_SIZE=4 ACCELCTL_LOCAL_RANK=1 ACCELCTL_LOCAL_WORLD_SIZE=2
}

testTorchrun() {
	expect_is 0 0 RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2
	expect_is 1 1 RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2
}

testDeepSpeed() {
	expect_is 1 0 RANK=2 WORLD_SIZE=4 LOCAL_RANK=0 LOCAL_SIZE=2 CROSS_RANK=1 CROSS_SIZE=2
}

testOpenMPI() {
	expect_is 1 1 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2
}

# OMPI_COMM_WORLD_NODE_RANK is not a local rank: it must not change the answer.
testOpenMPINodeRankIgnored() {
	expect_is 1 0 OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=0 \
		OMPI_COMM_WORLD_LOCAL_SIZE=2 OMPI_COMM_WORLD_NODE_RANK=1
}

testMPICH() { expect_is 1 1 PMI_RANK=3 PMI_SIZE=4 MPI_LOCALRANKID=1 MPI_LOCALNRANKS=2; }
testMVAPICH2() { expect_is 0 0 MV2_COMM_WORLD_RANK=0 MV2_COMM_WORLD_SIZE=2 MV2_COMM_WORLD_LOCAL_RANK=0 MV2_COMM_WORLD_LOCAL_SIZE=1; }

testSlurmStep() {
	expect_is 1 0 SLURM_PROCID=3 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=5 SLURM_LOCALID=0 \
		SLURM_NODEID=1 SLURM_STEP_NUM_NODES=3 SLURM_STEP_TASKS_PER_NODE='3,1(x2)'
}

# A batch script has SLURM_PROCID=0 but no step: one process, main of all.
testSlurmBatchScriptIsOneProcess() {
	expect_is 0 0 SLURM_PROCID=0 SLURM_NTASKS=8 SLURM_TASKS_PER_NODE='4(x2)' SLURM_JOB_ID=3
}

testTorchrunInsideSrunWins() {
	expect_is 1 1 RANK=1 WORLD_SIZE=4 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 \
		SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE='1(x2)'
}

testMinusOneAndEmptyAreUnset() {
	expect_is 1 1 RANK=-1 WORLD_SIZE= ACCELCTL_RANK= PMI_RANK=1 PMI_SIZE=2 MPI_LOCALRANKID=1 MPI_LOCALNRANKS=2
}

# expect_env_error MESSAGE VAR=VALUE...: exit 2 and a one-line error.
expect_env_error() {
	local msg=$1; shift
	local c
	for c in is-main is-local-main; do
		run "$@" -- $c
		assertEquals "$c with $*" 2 "$rc"
		assertEquals "$c prints nothing on stdout" "" "$out"
		assertErrMatches "accelctl: $c: $msg"
		assertOneLineErr
	done
}

testMalformed() { expect_env_error "invalid RANK='abc': not a non-negative integer" RANK=abc WORLD_SIZE=2; }
testRankNotBelowWorld() { expect_env_error "inconsistent environment: RANK=3 is not below WORLD_SIZE=2" RANK=3 WORLD_SIZE=2; }
testLocalRankWithoutSize() { expect_env_error "LOCAL_RANK is set but neither LOCAL_WORLD_SIZE nor LOCAL_SIZE is" RANK=0 WORLD_SIZE=2 LOCAL_RANK=0; }
testSlurmGarbage() {
	expect_env_error "invalid SLURM_STEP_TASKS_PER_NODE='garbage'" SLURM_PROCID=0 SLURM_STEP_ID=0 \
		SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE=garbage
}
testHugeValue() {
	local big; big=$(head -c 100000 /dev/zero | tr '\0' 7)
	expect_env_error "invalid RANK='7777" RANK="$big" WORLD_SIZE=2
	assertTrue "message is short" "[ ${#err} -lt 200 ]"
	expect_env_error "invalid ACCELCTL_JOB_ID=" ACCELCTL_JOB_ID="$big"
}
testNegativeWorld() { expect_env_error "invalid WORLD_SIZE='-3'" RANK=0 WORLD_SIZE=-3; }

testLocalUnknownIsAnErrorForLocalQuestions() {
	run RANK=1 WORLD_SIZE=2 -- is-main
	assertRc 1 "is-main without local variables"
	run RANK=1 WORLD_SIZE=2 -- is-local-main
	assertRc 2 "is-local-main without local variables"
	assertErrMatches "cannot tell the local rank"
}

testExtraArgument() {
	run -- is-main extra
	assertRc 2 "is-main extra"
	assertErrMatches "accelctl: is-main: unexpected argument 'extra'"
	assertErrMatches "usage: accelctl is-main"
	run -- is-local-main --bogus
	assertRc 2 "is-local-main --bogus"
	assertErrMatches "unknown option '--bogus'"
}

load_shunit2
