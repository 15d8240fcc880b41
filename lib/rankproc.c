/* rankproc.c: the process that ran a rank's accelctl, and whether it still runs (/proc).
 *
 * A helper idles on after its launch (srun leaves it for ACCELCTL_HELPER_IDLE),
 * and a later launch under the same job id may talk to the same rendezvous:
 * some requests are for the present launch only (xredis.c's wake), and the
 * helper answers them only while a process that ran one of its ranks' calls
 * still runs. A pid alone could be another process by then: the start time
 * tells them apart.
 */
#include <stdio.h>
#include <string.h>

#include "rankproc.h"

/* Fields 3 on of /proc/PID/stat (after "pid (comm) "; comm may hold
 * spaces and parentheses: the last ')' ends it): *STATE, *PPID, *START. */
static int
read_stat(long pid, char *state, long *ppid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime */
	if (sscanf(p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
	    "%*d %*d %*d %*d %*d %*d %llu", state, ppid, start) != 3)
		return -1;
	return 0;
}

int
ac_rankproc_parent(long pid, struct ac_rankproc *p)
{
	char state;
	long ppid, pp;
	unsigned long long start;

	if (pid <= 0 || read_stat(pid, &state, &ppid, &start) == -1 || ppid <= 1 ||
	    read_stat(ppid, &state, &pp, &start) == -1)
		return -1;
	p->pid = ppid;
	p->start = start;
	return 0;
}

int
ac_rankproc_alive(const struct ac_rankproc *p)
{
	char state;
	long ppid;
	unsigned long long start;

	return p->pid > 0 && read_stat(p->pid, &state, &ppid, &start) == 0 &&
	    start == p->start && state != 'Z' && state != 'X';
}
