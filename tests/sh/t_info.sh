# t_info.sh: info in text, --json and --shell, round trips, and errors.
. "$(dirname "$0")/lib.sh"

SLURM="SLURM_PROCID=3 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=5 SLURM_LOCALID=0 SLURM_NODEID=1 SLURM_STEP_NUM_NODES=3 SLURM_STEP_TASKS_PER_NODE=3,1(x2) SLURM_JOB_ID=42"

testText() {
	# shellcheck disable=SC2086
	run $SLURM -- info
	assertRc 0 info
	assertContains "$out" "launcher          slurm"
	assertContains "$out" "local_world_size  1        (SLURM_STEP_TASKS_PER_NODE)"
	assertContains "$out" "job_id            42.0     (SLURM_JOB_ID.SLURM_STEP_ID)"
}

testJson() {
	# shellcheck disable=SC2086
	run $SLURM ACCELCTL_TRANSPORT=redis -- info --json
	assertRc 0 "info --json"
	assertContains "$out" '{"launcher":"slurm","rank":3,"world_size":5,"local_rank":0,"local_world_size":1,"node_rank":1,"nnodes":3,"job_id":"42.0","transport":"redis","nccl":'
	# /usr/bin/python3, not a shim first on PATH (a second a start).
	local py; py=$(command -v /usr/bin/python3 python3 | head -1)
	if [ -n "$py" ]; then
		echo "$out" | "$py" -c 'import json,sys; d=json.load(sys.stdin); assert set(d)=={"launcher","rank","world_size","local_rank","local_world_size","node_rank","nnodes","job_id","transport","nccl"}'
		assertTrue "valid JSON with the documented keys" $?
	fi
}

testJsonUnknownIsNull() {
	run OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=5 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 -- info --json
	assertContains "$out" '"node_rank":null,"nnodes":null'
	run OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=5 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 -- info --shell
	assertNotContains "$out" "ACCELCTL_NODE_RANK"
	# Fewer processes here than in the job: cross-node, though the count is unknown
	# (a PALS 3 + 2 layout said "none", as for one node).
	run PALS_RANKID=0 PALS_LOCAL_RANKID=0 PALS_NODEID=0 PMI_LOCAL_SIZE=3 PMI_SIZE=5 PALS_APID=a1 \
		ACCELCTL_TRANSPORT=redis -- info --json
	assertContains "uneven PALS nodes: cross-node" "$out" '"node_rank":0,"nnodes":null,"job_id":"pals.a1","transport":"redis",'
	run OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=5 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 \
		ACCELCTL_TRANSPORT=redis -- info
	assertContains "uneven MPI nodes: cross-node" "$out" "transport         redis (ACCELCTL_TRANSPORT=redis)"
}

# Half a pair is no explicit row: after eval "$(accelctl info --shell)" under Flux's uneven
# map every command, is-main too, exited 2 ("ACCELCTL_LOCAL_RANK is set but
# ACCELCTL_LOCAL_WORLD_SIZE is not"). --shell says what to set and prints nothing to eval.
testShellHalfAPair() {
	local flux="FLUX_TASK_RANK=1 FLUX_JOB_SIZE=3 FLUX_TASK_LOCAL_ID=1 FLUX_JOB_NNODES=2 FLUX_JOB_ID=fx"
	# shellcheck disable=SC2086
	run $flux -- info --shell
	assertRc 2 "Flux's local rank without its size"
	assertEquals "nothing to eval" "" "$out"
	assertContains "names what to set" "$err" "set ACCELCTL_LOCAL_WORLD_SIZE"
	run PALS_RANKID=0 PALS_LOCAL_RANKID=0 PALS_NODEID=0 PMI_LOCAL_SIZE=3 PMI_SIZE=5 PALS_APID=a1 -- info --shell
	assertRc 2 "a PALS node id without the count"
	assertEquals "nothing to eval" "" "$out"
	assertContains "names what to set" "$err" "set ACCELCTL_NNODES"
	run JOB_COMPLETION_INDEX=1 -- info --shell
	assertRc 2 "an Indexed Job's rank without the world"
	assertContains "names what to set" "$err" "set ACCELCTL_WORLD_SIZE"
	# Given, the round trip holds.
	# shellcheck disable=SC2086
	run $flux ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_NODE_RANK=0 -- info --shell
	assertRc 0 "with the layout set"
	local vars=()
	while IFS= read -r line; do vars+=("${line//\'/}"); done <<<"$out"
	run "${vars[@]}" -- is-local-main
	assertRc 1 "local rank 1 after eval"
	run "${vars[@]}" -- info --json
	assertContains "the same values after eval" "$out" '"rank":1,"world_size":3,"local_rank":1,"local_world_size":2,"node_rank":0,"nnodes":2,"job_id":"flux.fx",'
}

# eval "$(accelctl info --shell)" gives the explicit row the same answers.
testShellRoundTrip() {
	local vars first
	# shellcheck disable=SC2086
	run $SLURM -- info --shell
	assertRc 0 "info --shell"
	assertContains "$out" "ACCELCTL_RANK=3"
	assertContains "$out" "ACCELCTL_JOB_ID='42.0'"
	first=$(env -i $SLURM "$ACCELCTL" info --json)
	vars=$(env -i sh -c 'eval "$1"; set -a; eval "$1"; env | grep ^ACCELCTL_' sh "$out")
	# shellcheck disable=SC2086
	run $vars -- info --json
	assertEquals "${first/slurm/explicit}" "$out"
}

testErrors() {
	run -- info --json --shell
	assertRc 2 "both formats"
	assertErrMatches "accelctl: info: --json and --shell exclude each other"
	run -- info --yaml
	assertRc 2 "unknown format"
	assertErrMatches "unknown option '--yaml'"
	run -- info extra
	assertRc 2 "extra argument"
	run RANK=x WORLD_SIZE=2 -- info --json
	assertRc 2 "bad env"
	assertEquals "" "$out"
}

load_shunit2
