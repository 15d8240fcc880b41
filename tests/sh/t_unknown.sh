# t_unknown.sh: where the launcher's environment cannot tell a value (a Kubernetes Indexed
# Job's count, Flux's non-block task map), the questions that need only the rank answer,
# every other command exits 2 naming the ACCELCTL_ variable to set, and that variable alone
# then gives the value (DESIGN.md section 1; issue 21).
. "$(dirname "$0")/lib.sh"

INDEXED="JOB_COMPLETION_INDEX=1"
FLUX="FLUX_TASK_RANK=1 FLUX_JOB_SIZE=3 FLUX_TASK_LOCAL_ID=1 FLUX_JOB_NNODES=2 FLUX_JOB_ID=fx1"

# in ENV... -- ARGS: run ARGS with the words of ENV as the environment.
in_env() { local e=$1; shift; set -f; run $e ACCELCTL_RUNTIME_DIR="$RT" "$@"; set +f; }

setUp() { RT=$(scratch)/rt; mkdir -p "$RT"; chmod 700 "$RT"; }

testIndexedJobRankQuestions() {
	in_env "$INDEXED" -- is-main; assertRc 1 "is-main on index 1"
	in_env "JOB_COMPLETION_INDEX=0" -- is-main; assertRc 0 "is-main on index 0"
	in_env "$INDEXED" -- is-local-main; assertRc 0 "one process per pod: local main"
	in_env "$INDEXED" -- on-main -- echo ran; assertRc 0 "on-main elsewhere"
	assertEquals "on-main ran nothing on index 1" "" "$out"
	in_env "JOB_COMPLETION_INDEX=0" -- on-main -- echo ran
	assertEquals "on-main runs on index 0" ran "$out"
	in_env "$INDEXED" -- print hello; assertEquals "print on the pod's only process" hello "$out"
}

testIndexedJobNeedsTheCount() {
	local c
	for c in "barrier x" "broadcast x v" "main-first -- true" "on-main --wait -- true" \
	    "on-process 1 -- true" "abort" "status" "helper start"; do
		set -f; in_env "$INDEXED" -- $c; set +f
		assertEquals "$c: exit 2 ($err)" 2 "$rc"
		assertContains "$c names what to set" "$err" "set ACCELCTL_WORLD_SIZE"
		assertContains "$c says why" "$err" "Indexed Job"
	done
	assertEquals "no helper was started" "" "$(ls "$RT")"
	in_env "$INDEXED" -- info
	assertContains "info: unknown, and what to set" "$out" "unknown  (set ACCELCTL_WORLD_SIZE)"
	assertContains "info: why" "$out" "Indexed Job's completion count"
	in_env "$INDEXED ACCELCTL_WORLD_SIZE=3" -- info --json
	assertContains "ACCELCTL_WORLD_SIZE alone gives it" "$out" '"rank":1,"world_size":3,"local_rank":0,"local_world_size":1,"node_rank":1,"nnodes":3,'
	in_env "JOB_COMPLETION_INDEX=0 ACCELCTL_WORLD_SIZE=1" -- barrier x
	assertRc 0 "a barrier of one"
}

testFluxUnevenMap() {
	in_env "$FLUX" -- is-local-main; assertRc 1 "local rank 1 is not local main"
	in_env "FLUX_TASK_RANK=2 FLUX_JOB_SIZE=3 FLUX_TASK_LOCAL_ID=0 FLUX_JOB_NNODES=2" -- on-local-main -- echo ran
	assertEquals "on-local-main on local rank 0" ran "$out"
	in_env "$FLUX" -- on-local-process 1 -- true
	assertRc 2 "another local index needs the local size"
	assertContains "names what to set" "$err" "set ACCELCTL_LOCAL_WORLD_SIZE"
	assertContains "says why" "$err" "no block task map"
	in_env "$FLUX" -- main-first --local -- true
	assertRc 2 "main-first --local needs it too"
	in_env "$FLUX ACCELCTL_LOCAL_WORLD_SIZE=2" -- barrier x
	assertRc 2 "the node rank is still unknown"
	assertContains "names the node rank" "$err" "set ACCELCTL_NODE_RANK"
	in_env "$FLUX ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_NODE_RANK=0" -- info
	assertContains "local size from its variable" "$out" "local_world_size  2        (ACCELCTL_LOCAL_WORLD_SIZE)"
	assertContains "the rest from Flux" "$out" "nnodes            2        (FLUX_JOB_NNODES)"
	assertContains "Flux's identity" "$out" "job_id            flux.fx1 (FLUX_JOB_ID)"
}

# A helper refuses a client whose local rank or size is unknown ("HELLO with impossible
# ranks"): helper start left one running that refused every client (helper status and
# stop then exited 125, "did not confirm"), status said "did not answer" (125).
testHelperNeedsTheLocalLayout() {
	local c
	for c in "helper start" "helper run" "helper status" "helper stop" "status"; do
		set -f; in_env "$FLUX" -- $c; set +f
		assertEquals "$c: exit 2 ($err)" 2 "$rc"
		assertContains "$c names what to set" "$err" "set ACCELCTL_LOCAL_WORLD_SIZE"
		assertContains "$c says why" "$err" "no block task map"
	done
	set -f; in_env "FLUX_TASK_RANK=1 FLUX_JOB_SIZE=4 FLUX_JOB_NNODES=2" -- helper start; set +f
	assertEquals "no local rank: exit 2 ($err)" 2 "$rc"
	assertContains "names the local rank" "$err" "set ACCELCTL_LOCAL_RANK"
	assertEquals "no helper was started" "" "$(ls "$RT")"
	# Given, the helper starts and answers.
	set -f; in_env "$FLUX ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_NODE_RANK=0" -- helper start; set +f
	assertRc 0 "helper start with the layout set"
	set -f; in_env "$FLUX ACCELCTL_LOCAL_WORLD_SIZE=2 ACCELCTL_NODE_RANK=0" -- helper stop; set +f
	assertRc 0 "helper stop"
}

load_shunit2
