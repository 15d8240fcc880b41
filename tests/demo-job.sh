#!/bin/bash
# demo-job.sh: a job script using accelctl; runs the same under srun, torchrun, mpirun
# or "accelctl launch" (tests/demo.sh runs it as 4 processes on one simulated node).
set -u
eval "$(accelctl info --shell)"
me="rank $ACCELCTL_RANK/$ACCELCTL_WORLD_SIZE (local $ACCELCTL_LOCAL_RANK)"

accelctl on-local-main -- echo "$me: on-local-main: fetching the data set once for this node"
accelctl on-process 3 -- echo "$me: on-process 3: only rank 3 runs this"
if accelctl is-main; then echo "$me: is-main: yes, I write the summary"; fi
if accelctl is-local-main; then echo "$me: is-local-main: yes, I watch this node's GPUs"; fi

# Rank 0 builds the cache first; the others use it once it exists.
accelctl main-first -- sh -c "echo '$me: main-first: building or reading the cache'" || exit
run=$(accelctl broadcast run-id "run-$(date +%s)-$RANDOM") || exit
echo "$me: broadcast: everyone uses run id $run"

# "Training": rank 2 fails, and every rank learns it at the barrier.
rc=0; [ "$ACCELCTL_RANK" = 2 ] && rc=1
if ! accelctl barrier --status "$rc" after-train; then
	echo "$me: barrier --status: a rank failed, every rank knows it"
fi
accelctl on-main --wait -- sh -c "echo '$me: on-main --wait: saving the logs while the others wait'"
echo "$me: saving the logs finished with status $?"
accelctl print "$me: print: shown once per node"
accelctl barrier done && echo "$me: done"
