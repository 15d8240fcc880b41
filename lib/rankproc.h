/* rankproc.h: the processes that ran a rank's accelctl, and whether one still runs. */
#ifndef ACCELCTL_RANKPROC_H
#define ACCELCTL_RANKPROC_H

/* How far up a call's ancestry is kept: the parent (the rank's shell or
 * script) and its parent (past a wrapper that forks: timeout, time, flock). */
#define AC_RANKPROC_UP 2

/* Processes as /proc knows them: pid and start time (a pid is reused). */
struct ac_rankproc {
	long			pid[AC_RANKPROC_UP];	/* 0: none */
	unsigned long long	start[AC_RANKPROC_UP];	/* clock ticks after boot */
};

/* The ancestors of process PID, up to AC_RANKPROC_UP, into *P (never init
 * itself: the init of a pid namespace other than the first is a container's
 * entrypoint, often the rank). 0, or -1 (gone, or no /proc): *P unchanged. */
int ac_rankproc_parent(long pid, struct ac_rankproc *p);

/* Is one of P's processes the one it was, still running (not a zombie)? */
int ac_rankproc_alive(const struct ac_rankproc *p);

#endif
