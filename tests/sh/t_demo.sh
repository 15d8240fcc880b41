# t_demo.sh: README's demo job, run through accelctl launch, shows what it promises.
. "$(dirname "$0")/lib.sh"

testDemoJob() {
	run -- launch -n 4 --tag -- bash "$ACCELCTL_SRC/tests/demo-job.sh"
	assertRc 0 "demo job"
	has() { printf '%s\n' "$out" | grep -c -- "$1"; }
	assertEquals "on-local-main once on the node" 1 "$(has 'on-local-main:')"
	assertEquals "on-process 3 on rank 3 only" 1 "$(has '^3: rank 3/4 (local 3): on-process 3')"
	assertEquals "is-main once" 1 "$(has 'is-main: yes')"
	assertEquals "main-first on every rank" 4 "$(has 'main-first:')"
	assertEquals "one run id for all" 1 "$(printf '%s\n' "$out" | grep 'broadcast:' | sed 's/.*run id //' | sort -u | wc -l)"
	assertEquals "the failure of rank 2 reached every rank" 4 "$(has 'a rank failed, every rank knows it')"
	assertContains "$err" "accelctl: barrier: after-train: rank 2 (exit 1) failed"
	assertEquals "the logs were saved once" 1 "$(has 'on-main --wait: saving the logs')"
	assertEquals "and everyone got its status" 4 "$(has 'saving the logs finished with status 0')"
	assertEquals "every rank done" 4 "$(has ': done$')"
}

load_shunit2
