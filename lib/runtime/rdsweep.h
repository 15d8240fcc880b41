/* rdsweep.h: the runtime directory's files of jobs long over, removed (rdsweep.c). */
#ifndef ACCELCTL_RDSWEEP_H
#define ACCELCTL_RDSWEEP_H

/* Longer than a batch system lets a job run. */
#define AC_SWEEP_DAYS	14

/*
 * Remove from directory DFD the files of every job but OWN (its file
 * names' common part, "JOB" of JOB.log) that no helper holds and that no
 * file of that job has changed for DAYS. How many files went.
 */
int ac_rdsweep(int dfd, const char *own, long days);

#endif
