#!/bin/bash
# mpirun-job.sh: every accelctl subcommand under a real launcher (run by t_mpirun.sh as
# "mpirun -np 4 bash mpirun-job.sh OUTDIR"); each process writes what it saw to OUTDIR.
set -u
out=$1
eval "$(accelctl info --shell)" || exit
r=$ACCELCTL_RANK
accelctl info --json >"$out/info.$r"
accelctl is-main && echo "$r" >>"$out/is-main"
accelctl is-local-main && echo "$r" >>"$out/is-local-main"
accelctl on-local-process 1 -- sh -c "echo $r >>'$out/on-local-process'"
accelctl on-process 2 -- sh -c "echo $r >>'$out/on-process'"
accelctl print "printed by $r" >>"$out/print"
accelctl barrier --timeout 60s start || exit
accelctl main-first --timeout 60s -- sh -c "date +%s%N >'$out/mf-start.$r'; sleep 0.2; date +%s%N >'$out/mf-end.$r'" || exit
accelctl broadcast --timeout 60s id "from-$r" >"$out/bcast.$r" || exit
accelctl on-main --wait --timeout 60s -- sh -c 'exit 3'; echo $? >"$out/wait.$r"
accelctl barrier --timeout 60s --status "$((r == 1 ? 7 : 0))" st; echo $? >"$out/status.$r"
accelctl barrier --timeout 60s end
