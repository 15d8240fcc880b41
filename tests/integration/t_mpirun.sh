# t_mpirun.sh: the subcommands under a real Open MPI mpirun (one host, 4 processes).
# Skipped (ctest: Not Run) where mpirun is missing; tests/deps.sh installs it.
. "$(dirname "$0")/../sh/lib.sh"

oneTimeSetUp() {
	command -v mpirun >/dev/null || { echo "mpirun not installed: skipped" >&2; exit "$SKIP"; }
	OUT=$(scratch)/mpi; mkdir -p "$OUT"
	# Open MPI refuses root without these; more ranks than the 2 CPUs need the last.
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/local/bin:/usr/bin:/bin" HOME="${HOME:-/}" TMPDIR="$(scratch)" \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout 120 mpirun --oversubscribe -np 4 bash "$ACCELCTL_SRC/tests/integration/mpirun-job.sh" "$OUT" \
		>"$OUT/stdout" 2>"$OUT/stderr"
	MPI_RC=$?
}

testJobRan() { assertEquals "mpirun exit status: $(cat "$OUT/stderr")" 0 "$MPI_RC"; }

testDetection() {
	local r
	for r in 0 1 2 3; do
		assertContains "$(cat "$OUT/info.$r")" "\"launcher\":\"openmpi\",\"rank\":$r,\"world_size\":4,\"local_rank\":$r,\"local_world_size\":4,\"node_rank\":0,\"nnodes\":1"
	done
	assertEquals "one job id" 1 "$(cat "$OUT"/info.* | sed 's/.*"job_id"://' | sort -u | wc -l)"
}

testWhoRuns() {
	assertEquals "is-main on exactly one" 0 "$(cat "$OUT/is-main")"
	assertEquals "is-local-main on one per node" 0 "$(cat "$OUT/is-local-main")"
	assertEquals "on-local-process 1 once per node" 1 "$(cat "$OUT/on-local-process")"
	assertEquals "on-process 2" 2 "$(cat "$OUT/on-process")"
	assertEquals "print once per node" "printed by 0" "$(cat "$OUT/print")"
}

testSynchronisation() {
	local r
	for r in 1 2 3; do
		assertTrue "main-first: rank $r after main" "[ $(cat "$OUT/mf-start.$r") -ge $(cat "$OUT/mf-end.0") ]"
	done
	for r in 0 1 2 3; do
		assertEquals "broadcast on rank $r" from-0 "$(cat "$OUT/bcast.$r")"
		assertEquals "--wait status on rank $r" 3 "$(cat "$OUT/wait.$r")"
		assertEquals "--status on rank $r" 7 "$(cat "$OUT/status.$r")"
	done
}

load_shunit2
