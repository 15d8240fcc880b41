# t_mpirun.sh: every subcommand under a real Open MPI mpirun on one host.
# Skipped (ctest: Not Run) where mpirun is missing; tests/deps.sh installs it.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/lib.sh"

# Open MPI refuses root without these; more ranks than the 2 CPUs need --oversubscribe.
mpi_env() { launcher_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$@"; }

oneTimeSetUp() {
	command -v mpirun >/dev/null || { echo "mpirun not installed: skipped" >&2; skip_suite; }
}

testFourProcesses() {
	local out; out=$(scratch)/np4; mkdir -p "$out"
	mpi_env timeout 120 mpirun --oversubscribe -np 4 bash "$JOB_SH" "$out" >"$out/stdout" 2>"$out/stderr"
	st=$?; assertEquals "mpirun exit status: $(cat "$out/stderr")" 0 "$st"
	check_job "$out" 4 1 4 openmpi
}

testReadmeSnippet() {
	local d; d=$(scratch)/readme; mkdir -p "$d"
	make_stubs "$d"
	readme_snippet mpirun.sh "$d/job.sh"
	(cd "$d" && mpi_env OMPI_MCA_rmaps_base_oversubscribe=1 timeout 120 bash job.sh >out 2>err)
	st=$?; assertEquals "the README's mpirun example: $(cat "$d/err")" 0 "$st"
	assertEquals "prepare once, on rank 0" "$(hostname) 0" "$(cat "$d/log.prepare.sh")"
	assertEquals "solver on all 4" 4 "$(lines "$d/log.solver")"
}

oneTimeTearDown() { stop_helpers; }

load_shunit2
