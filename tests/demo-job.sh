#!/bin/bash
# demo-job.sh: a job script using accelctl; runs the same under srun, torchrun, mpirun
# or "accelctl launch" (tests/demo.sh runs it on 2 simulated nodes of 2 processes).
set -u
eval "$(accelctl info --shell)"
me="rank $ACCELCTL_RANK/$ACCELCTL_WORLD_SIZE (node $ACCELCTL_NODE_RANK, local rank $ACCELCTL_LOCAL_RANK)"

accelctl on-local-main -- echo "$me: on-local-main: fetching the data set once for this node"
accelctl on-process 3 -- echo "$me: on-process 3: only rank 3 runs this"
if accelctl is-main; then
	echo "$me: is-main: yes, I write the summary"
fi
if accelctl is-local-main; then
	echo "$me: is-local-main: yes, I watch this node's GPUs"
fi
accelctl print "$me: print: shown once per node"
echo "$me: done"
