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
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rankproc.h"
#include "topo.h"

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

long long
ac_rankproc_start_us(unsigned long long start)
{
	struct timespec wall, boot;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || clock_gettime(CLOCK_REALTIME, &wall) == -1 ||
	    clock_gettime(CLOCK_BOOTTIME, &boot) == -1)
		return 0;
	/* Now on the wall clock, less the time since the process started on
	 * the boot clock: no rounding of /proc/stat's btime to a second. */
	return (long long)wall.tv_sec * 1000000 + wall.tv_nsec / 1000 -
	    ((long long)boot.tv_sec * 1000000 + boot.tv_nsec / 1000 -
	    (long long)(start * 1000000ULL / (unsigned long long)hz));
}

/* A process's environment as the launcher gave it (what it was exec'ed
 * with), for detection's lookup: "NAME=VALUE" strings back to back. */
struct penv {
	char	*buf;
	size_t	 len;
};

static const char *
penv_get(const char *name, void *ctx)
{
	const struct penv *e = ctx;
	size_t nl = strlen(name);

	for (size_t i = 0; i < e->len;) {
		const char *s = e->buf + i;
		size_t sl = strnlen(s, e->len - i);

		if (sl > nl && strncmp(s, name, nl) == 0 && s[nl] == '=')
			return s + nl + 1;
		i += sl + 1;
	}
	return NULL;
}

/* Read /proc/PID/environ into E (at most 1 MiB: a larger one is no
 * launcher's). 0, or -1 (gone, another user's: EACCES). */
static int
penv_read(long pid, struct penv *e)
{
	char path[64];
	FILE *f;
	size_t cap = 65536;

	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	e->len = 0;
	e->buf = NULL;
	for (;;) {
		char *nb = realloc(e->buf, cap + 1);
		size_t n;

		if (nb == NULL)
			break;
		e->buf = nb;
		n = fread(e->buf + e->len, 1, cap - e->len, f);
		e->len += n;
		if (e->len < cap || cap >= (1u << 20))
			break;
		cap *= 2;
	}
	fclose(f);
	if (e->buf == NULL)
		return -1;
	e->buf[e->len] = '\0';
	return 0;
}

/* Is process PID (its launcher's environment) rank RANK of job JOB_ID? A
 * launcher's variables must say so: a process with none ("none": rank 0 of
 * 1) is no rank, whatever job id it carries (a driver that sets the ranks'
 * variables in its children). */
static int
is_rank(long pid, const char *job_id, long long rank)
{
	struct penv e;
	struct ac_topo t;
	char err[256];
	int yes;

	if (penv_read(pid, &e) == -1)
		return 0;
	yes = ac_topo_detect(&t, penv_get, &e, err, sizeof(err)) == 0 &&
	    strcmp(t.launcher, "none") != 0 &&
	    t.v[AC_RANK] == rank && ac_topo_job_id(&t, penv_get, &e, err,
	    sizeof(err)) == 0 && strcmp(t.job_id, job_id) == 0;
	free(e.buf);
	return yes;
}

int
ac_rankproc_local_rank(long pid, const char *job_id, long node, long *lrank,
    char *rtdir, size_t rtlen)
{
	struct penv e;
	struct ac_topo t;
	char err[256];
	const char *rt;
	int yes;

	if (penv_read(pid, &e) == -1)
		return -1;
	yes = ac_topo_detect(&t, penv_get, &e, err, sizeof(err)) == 0 &&
	    strcmp(t.launcher, "none") != 0 && t.v[AC_LRANK] >= 0 &&
	    (t.v[AC_NODE] == node || (t.v[AC_NODE] < 0 && node == 0)) &&
	    ac_topo_job_id(&t, penv_get, &e, err, sizeof(err)) == 0 &&
	    strcmp(t.job_id, job_id) == 0;
	if (yes) {
		*lrank = t.v[AC_LRANK];
		rt = penv_get("ACCELCTL_RUNTIME_DIR", &e);
		snprintf(rtdir, rtlen, "%s", rt != NULL ? rt : "");
	}
	free(e.buf);
	return yes ? 0 : -1;
}

static void
read_comm(long pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(comm, (int)len, f) != NULL)
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* PID's parent, or 0. */
static long
parent_of(long pid)
{
	char state;
	long ppid;
	unsigned long long start;

	return read_stat(pid, &state, &ppid, &start) == 0 ? ppid : 0;
}

/* The wrappers that fork the command they run and wait for it (those that
 * exec it, env, nice, nohup, taskset, numactl, are the call itself). */
static int
is_call_wrapper(const char *comm)
{
	static const char *const w[] = { "timeout", "flock", "time", "strace",
	    "ltrace", "perf", "setsid", NULL };

	for (int i = 0; w[i] != NULL; i++)
		if (strcmp(comm, w[i]) == 0)
			return 1;
	return 0;
}

int
ac_rankproc_root(long pid, const char *job_id, long long rank,
    struct ac_rankroot *r)
{
	char state;
	long up, next;
	unsigned long long start;
	int found = 0;

	if (pid <= 0 || read_stat(pid, &state, &up, &start) == -1)
		return -1;
	/* A bounded walk: a launcher is a few levels up, not hundreds. */
	for (int depth = 0; depth < 64 && up > 1; depth++) {
		if (read_stat(up, &state, &next, &start) == -1 ||
		    !is_rank(up, job_id, rank))
			break;
		r->pid = up;
		r->start = start;
		r->ppid = next;
		found = 1;
		up = next;
	}
	if (!found)
		return -1;
	read_comm(r->pid, r->comm, sizeof(r->comm));
	/*
	 * A wrapper that forks the call and lives exactly as long ("env -i
	 * VARS timeout 30 accelctl ..." from a shell that is no rank: the
	 * ranks of a test, a tool that runs each call apart) is no rank's
	 * process: it ends with every call, and the rank would be gone after
	 * each. Such a rank has no process to watch.
	 */
	if (r->pid == parent_of(pid) && is_call_wrapper(r->comm))
		return -1;
	r->start_us = ac_rankproc_start_us(r->start);
	return 0;
}

int
ac_rankproc_root_alive(const struct ac_rankroot *r)
{
	char state;
	long ppid;
	unsigned long long start;

	return read_stat(r->pid, &state, &ppid, &start) == 0 &&
	    start == r->start && state != 'Z' && state != 'X';
}
