# t_hydra.sh: every subcommand under MPICH's real Hydra (mpiexec.hydra, the names Intel MPI
# uses too) on one host, as t_mpirun.sh runs them under Open MPI's mpirun; t_slurm.sh runs
# Hydra across simulated nodes. Skipped (ctest: Not Run) where Debian's mpich is missing;
# tests/deps.sh installs it (Open MPI stays the default mpirun).
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/lib.sh"

oneTimeSetUp() {
	command -v mpiexec.hydra >/dev/null || { echo "mpiexec.hydra not installed: skipped" >&2; skip_suite; }
}

testFourProcesses() {
	local out; out=$(scratch)/np4; mkdir -p "$out"
	launcher_env timeout 120 mpiexec.hydra -n 4 bash "$JOB_SH" "$out" >"$out/stdout" 2>"$out/stderr"
	st=$?; assertEquals "mpiexec.hydra exit status: $(cat "$out/stderr")" 0 "$st"
	check_job "$out" 4 1 4 mpich
}

# Two launches at once need their own identity: Hydra puts none in the environment.
testTwoLaunchesSideBySide() {
	local a b; a=$(scratch)/a b=$(scratch)/b; mkdir -p "$a" "$b"
	launcher_env ACCELCTL_JOB_ID=hydra-a timeout 120 mpiexec.hydra -n 2 bash "$JOB_SH" "$a" \
		>"$a/stdout" 2>"$a/stderr" &
	local pa=$!
	launcher_env ACCELCTL_JOB_ID=hydra-b timeout 120 mpiexec.hydra -n 3 bash "$JOB_SH" "$b" \
		>"$b/stdout" 2>"$b/stderr"
	st=$?; assertEquals "second launch: $(cat "$b/stderr")" 0 "$st"
	wait $pa
	st=$?; assertEquals "first launch: $(cat "$a/stderr")" 0 "$st"
	check_job "$a" 2 1 2 mpich
	check_job "$b" 3 1 3 mpich
}

oneTimeTearDown() { stop_helpers; }

load_shunit2
