/* rankproc.c: the processes that ran a rank's accelctl, and whether one still runs (/proc).
 *
 * A helper idles on after its launch (srun leaves it for ACCELCTL_HELPER_IDLE),
 * and a later launch under the same job id may talk to the same rendezvous:
 * some requests are for the present launch only (xredis.c's wake), and the
 * helper answers them only while a process that ran one of its ranks' calls
 * still runs. The call's parent and grandparent are kept: a wrapper that
 * forks (timeout, time, flock) exits with the call, the rank's shell does not.
 * No further: the third is often a login shell that outlives every launch
 * started from it. A pid alone could be another process by then: the start
 * time tells them apart.
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

/* Is this process in a pid namespace of its own (NSpid lists more than one
 * pid), where pid 1 is a container's entrypoint rather than the host's init? */
static int
in_child_pidns(void)
{
	static int known = -1;
	char line[256];
	FILE *f;

	if (known >= 0)
		return known;
	known = 0;
	if ((f = fopen("/proc/self/status", "re")) == NULL)
		return known;
	while (fgets(line, sizeof(line), f) != NULL) {
		int a, b;

		if (strncmp(line, "NSpid:", 6) == 0) {
			known = sscanf(line + 6, "%d %d", &a, &b) == 2;
			break;
		}
	}
	fclose(f);
	return known;
}

int
ac_rankproc_parent(long pid, struct ac_rankproc *p)
{
	struct ac_rankproc r;
	char state;
	long up;
	unsigned long long start;
	int n = 0;

	memset(&r, 0, sizeof(r));
	if (pid <= 0 || read_stat(pid, &state, &up, &start) == -1)
		return -1;
	while (n < AC_RANKPROC_UP && (up > 1 || (up == 1 && in_child_pidns()))) {
		long next;

		if (read_stat(up, &state, &next, &start) == -1)
			break;
		r.pid[n] = up;
		r.start[n++] = start;
		if (up == 1)
			break;
		up = next;
	}
	if (n == 0)
		return -1;
	*p = r;
	return 0;
}

int
ac_rankproc_alive(const struct ac_rankproc *p)
{
	char state;
	long ppid;
	unsigned long long start;

	for (int i = 0; i < AC_RANKPROC_UP; i++)
		if (p->pid[i] > 0 && read_stat(p->pid[i], &state, &ppid,
		    &start) == 0 && start == p->start[i] && state != 'Z' &&
		    state != 'X')
			return 1;
	return 0;
}
