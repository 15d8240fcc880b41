/* rankproc.h: the process that ran a rank's accelctl, and whether it still runs. */
#ifndef ACCELCTL_RANKPROC_H
#define ACCELCTL_RANKPROC_H

/* A process as /proc knows it: its pid and start time (a pid is reused). */
struct ac_rankproc {
	long			pid;	/* 0: none */
	unsigned long long	start;	/* clock ticks after boot */
};

/* The parent of process PID (the rank's shell, script or program) into *P.
 * 0, or -1 (gone, or no /proc). */
int ac_rankproc_parent(long pid, struct ac_rankproc *p);

/* Is P the process it was, still running (not a zombie)? */
int ac_rankproc_alive(const struct ac_rankproc *p);

#endif
