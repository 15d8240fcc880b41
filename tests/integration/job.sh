#!/bin/bash
# job.sh: every accelctl subcommand under a real launcher (srun, sbatch, torchrun, mpirun
# run it as "LAUNCHER ... bash job.sh OUTDIR"); each process writes what it saw to OUTDIR,
# and lib.sh's check_job judges it. Appends of one short line are atomic (O_APPEND).
set -u
out=$1
eval "$(accelctl info --shell)" || exit
r=$ACCELCTL_RANK n=$ACCELCTL_NODE_RANK
accelctl info --json >"$out/info.$r"
echo "$n $(hostname)" >"$out/host.$r"
accelctl is-main && echo "$r" >>"$out/is-main"
accelctl is-local-main && echo "$n $r" >>"$out/is-local-main"
accelctl on-local-process 1 -- sh -c "echo '$n $r' >>'$out/on-local-process'"
accelctl on-process $((ACCELCTL_WORLD_SIZE - 1)) -- sh -c "echo $r >>'$out/on-process'"
accelctl print "printed by $r" >>"$out/print"
accelctl barrier --timeout 60s start || exit
accelctl main-first --timeout 60s -- sh -c "date +%s%N >'$out/mf-start.$r'; sleep 0.2; date +%s%N >'$out/mf-end.$r'" || exit
accelctl broadcast --timeout 60s id "from-$r" >"$out/bcast.$r" || exit
accelctl on-main --wait --timeout 60s -- sh -c 'exit 3'; echo $? >"$out/wait.$r"
accelctl barrier --timeout 60s --status "$((r == ACCELCTL_WORLD_SIZE - 1 ? 7 : 0))" st; echo $? >"$out/status.$r"
# Everyone leaves the last barrier after everyone has entered it.
date +%s%N >"$out/end-in.$r"
accelctl barrier --timeout 60s end || exit
date +%s%N >"$out/end-out.$r"
