/* rdvowner.h: the process a job-scoped rendezvous server lives as long as. */
#ifndef ACCELCTL_RDVOWNER_H
#define ACCELCTL_RDVOWNER_H

#include <stddef.h>
#include <sys/types.h>

struct ac_rdv_owner {
	pid_t			pid;
	unsigned long long	start;		/* its start time (/proc/PID/stat), against pid reuse */
	int			pidfd;		/* readable when it exits; -1 where pidfd_open is missing */
	char			comm[32];	/* its name, for status */
};

/*
 * Find the script that started "accelctl rendezvous start": the parent,
 * unless the parent is only the subshell of a command substitution (its
 * standard output is the same pipe as ours), which exits as soon as we
 * do; then the process that reads that pipe, i.e. the first ancestor whose
 * standard output is something else: the shell that runs
 * eval "$(accelctl rendezvous start)". Opens a pidfd on it. Returns 0, or
 * -1 with a reason in ERR.
 */
int ac_rdv_owner_find(struct ac_rdv_owner *o, char *err, size_t errlen);

/* The start time of PID (clock ticks since boot), or 0 when it is gone (a
 * zombie included); its name into COMM (LEN bytes) and its parent into PPID when not NULL. */
unsigned long long ac_proc_start(pid_t pid, pid_t *ppid, char *comm,
    size_t len);

/* 1 while the process O names (pid and start time) still runs, else 0. */
int ac_rdv_owner_alive(const struct ac_rdv_owner *o);

#endif
