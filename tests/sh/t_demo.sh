# t_demo.sh: README's demo job, run through accelctl launch, shows what it promises.
. "$(dirname "$0")/lib.sh"

testDemoJob() {
	run -- launch --nnodes 2 -n 2 --tag -- bash "$ACCELCTL_SRC/tests/demo-job.sh"
	assertRc 0 "demo job"
	assertEquals "on-local-main once per node" 2 "$(printf '%s\n' "$out" | grep -c 'on-local-main')"
	assertEquals "on-process 3 on rank 3 only" "3: rank 3/4 (node 1, local rank 1): on-process 3: only rank 3 runs this" \
		"$(printf '%s\n' "$out" | grep 'on-process 3')"
	assertEquals "is-main once" 1 "$(printf '%s\n' "$out" | grep -c 'is-main: yes')"
	assertEquals "is-local-main once per node" "0
2" "$(printf '%s\n' "$out" | grep 'is-local-main: yes' | cut -d: -f1 | sort)"
	assertEquals "every rank done" 4 "$(printf '%s\n' "$out" | grep -c ': done$')"
}

load_shunit2
