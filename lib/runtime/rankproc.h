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

/* The process that is a rank: the eldest ancestor of a call that the
 * launcher started as that rank (lost.c, gone.c). */
struct ac_rankroot {
	long			pid;
	unsigned long long	start;		/* clock ticks after boot */
	long long		start_us;	/* wall clock, µs */
	long			ppid;		/* its parent: the launcher's process */
	char			comm[32];	/* "bash", for messages */
};

/*
 * The root of rank RANK of job JOB_ID above process PID: walking up from
 * PID's parent, the last ancestor whose environment (/proc/A/environ, as
 * the launcher gave it) still detects as that rank of that job. The
 * launcher's own process (slurmstepd, torchrun's agent, mpirun's daemon,
 * launch) is not one: it is no rank. 0, or -1 (PID's parent is no such
 * process, or /proc cannot tell).
 */
int ac_rankproc_root(long pid, const char *job_id, long long rank,
    struct ac_rankroot *r);

/* Is process PID (its environment) local rank *LRANK of node NODE of job
 * JOB_ID under a launcher? 0 with *LRANK and its ACCELCTL_RUNTIME_DIR (""
 * unset) in RTDIR, or -1. */
int ac_rankproc_local_rank(long pid, const char *job_id, long node,
    long *lrank, char *rtdir, size_t rtlen);

/* Is R's process still the one it was, and running? */
int ac_rankproc_root_alive(const struct ac_rankroot *r);

/* The wall clock (µs) at which a process started START clock ticks after
 * boot; 0 when it cannot be told. */
long long ac_rankproc_start_us(unsigned long long start);

#endif
