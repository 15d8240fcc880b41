# lib.sh: shared checks of the integration suites; sourced after tests/sh/lib.sh.
# check_job OUT WORLD NODES LSIZE LAUNCHER: judge what job.sh's processes wrote to OUT.
JOB_SH=$ACCELCTL_SRC/tests/integration/job.sh

# launcher_env: a clean environment for a launcher (the runner's own variables, a CI job
# inside Slurm say, must not leak in), with accelctl first on PATH.
launcher_env() {
	env -i PATH="$ACCELCTL_BIN_DIR:/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin" HOME="${HOME:-/}" \
		TMPDIR="$(scratch)" ACCELCTL_RUNTIME_DIR="$(scratch)/rt" LANG=C.UTF-8 "$@"
}

check_job() {
	local out=$1 world=$2 nodes=$3 lsize=$4 launcher=$5 r n
	assertEquals "every process ran (info files)" "$world" "$(ls "$out"/info.* 2>/dev/null | wc -l)"
	for r in $(seq 0 $((world - 1))); do
		assertContains "detection of rank $r" "$(cat "$out/info.$r" 2>/dev/null)" \
			"\"launcher\":\"$launcher\",\"rank\":$r,\"world_size\":$world,"
		assertContains "rank $r: $nodes nodes of $lsize" "$(cat "$out/info.$r" 2>/dev/null)" \
			"\"local_world_size\":$lsize,\"node_rank\":$(cut -d' ' -f1 "$out/host.$r" 2>/dev/null),\"nnodes\":$nodes"
	done
	assertEquals "one job id" 1 "$(cat "$out"/info.* | sed 's/.*"job_id"://' | sort -u | wc -l)"
	assertEquals "one host name per node" "$nodes" "$(cat "$out"/host.* | sort -u | wc -l)"
	assertEquals "is-main on exactly one process, rank 0" 0 "$(cat "$out/is-main")"
	assertEquals "is-local-main once per node, local rank 0" "$(seq 0 $((nodes - 1)))" \
		"$(cut -d' ' -f1 "$out/is-local-main" | sort -n)"
	assertEquals "on-local-process 1 once per node" "$(seq 0 $((nodes - 1)))" \
		"$(cut -d' ' -f1 "$out/on-local-process" | sort -n)"
	assertEquals "on-process runs on the last rank only" $((world - 1)) "$(cat "$out/on-process")"
	assertEquals "print once per node" "$nodes" "$(grep -c '^printed by' "$out/print")"
	for r in $(seq 1 $((world - 1))); do
		assertTrue "main-first: rank $r started after main ended" \
			"[ $(cat "$out/mf-start.$r") -ge $(cat "$out/mf-end.0") ]"
	done
	for r in $(seq 0 $((world - 1))); do
		assertEquals "broadcast on rank $r" from-0 "$(cat "$out/bcast.$r")"
		assertEquals "on-main --wait status on rank $r" 3 "$(cat "$out/wait.$r")"
		assertEquals "barrier --status on rank $r" 7 "$(cat "$out/status.$r")"
	done
	local last_in first_out
	last_in=$(cat "$out"/end-in.* | sort -n | tail -1)
	first_out=$(cat "$out"/end-out.* | sort -n | head -1)
	assertTrue "nobody left the barrier before the last arrived" "[ $first_out -ge $last_in ]"
}

# readme_snippet NAME FILE: the fenced block after "<!-- snippet: NAME -->" in README.md
# (or docs/launchers.md, where the other launchers' examples are), written to FILE, so
# that the suites run the documented examples as they stand.
readme_snippet() {
	awk -v tag="<!-- snippet: $1 -->" '
		$0 == tag { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$ACCELCTL_SRC/README.md" "$ACCELCTL_SRC/docs/launchers.md" >"$2"
	[ -s "$2" ] || fail "neither README.md nor docs/launchers.md has a snippet $1"
}

# make_stubs DIR: the commands the README's examples call (fetch-data.sh, train.py, ...),
# each appending "HOST RANK" to DIR/log.NAME; train.py exits FAIL_RC on rank FAIL_RANK.
make_stubs() {
	local d=$1 s
	for s in fetch-data.sh upload-checkpoint.sh clean-scratch.sh warm-cache.sh prepare.sh solver; do
		cat >"$d/$s" <<'STUB'
#!/bin/bash
eval "$(accelctl info --shell)" || exit
echo "$(hostname) $ACCELCTL_RANK" >>"$(dirname "$0")/log.$(basename "$0")"
STUB
		chmod +x "$d/$s"
	done
	cat >"$d/train.py" <<'STUB'
import os, subprocess, sys
info = dict(l.split("=", 1) for l in subprocess.check_output(["accelctl", "info", "--shell"], text=True).split())
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "log.train.py"), "a") as f:
    f.write(info["ACCELCTL_RANK"] + "\n")
sys.exit(int(os.environ.get("FAIL_RC", "0")) if info["ACCELCTL_RANK"] == os.environ.get("FAIL_RANK") else 0)
STUB
}

# lines FILE: how many lines FILE has (0 when it does not exist).
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

# stop_helpers: the node helpers of the suite's jobs (each would idle for minutes).
stop_helpers() {
	local f
	for f in "$(scratch)"/rt/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	return 0
}
