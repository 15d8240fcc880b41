/* rdvowner.c: the process a job-scoped rendezvous server lives as long as.
 *
 * "eval "$(accelctl rendezvous start)"" runs accelctl inside a command
 * substitution: the server must live as long as the shell that reads our
 * output and evaluates it, the script, not as long as the subshells between
 * us (dash, and bash with a compound command, "$(cd x && accelctl ...)",
 * leave one, which exits the moment we do), nor as long as a filter in the
 * substitution ("$(accelctl rendezvous start | tee rdv.env)"). What tells
 * them apart without guessing from names is where the text goes: we follow
 * our output, pipe by pipe (through a filter's own output), to the process
 * that reads it, and the first of our ancestors found reading is the script.
 * Standard output that is not a pipe (a file to source later) means our
 * parent is the script.
 */
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdvowner.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434	/* Linux 5.3; the same number on every architecture */
#endif

unsigned long long
ac_proc_start(pid_t pid, pid_t *ppid, char *comm, size_t len)
{
	char path[64], buf[1024], *open, *close, *f;
	unsigned long long start = 0;
	FILE *fp;
	size_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* The name is in parentheses and may hold any byte: use the last ')'. */
	if ((open = strchr(buf, '(')) == NULL ||
	    (close = strrchr(buf, ')')) == NULL || close < open)
		return 0;
	if (comm != NULL)
		snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
	/* After the name: field 3 (state), 4 (ppid), ... 22 (starttime). */
	f = close + 1;
	/* A zombie has exited: only its parent has not looked yet. */
	if (f[0] == ' ' && (f[1] == 'Z' || f[1] == 'X'))
		return 0;
	for (field = 3; field <= 22 && f != NULL; field++) {
		char *end;
		unsigned long long v;

		while (*f == ' ')
			f++;
		v = strtoull(f, &end, 10);
		if (field == 4 && ppid != NULL)
			*ppid = (pid_t)v;
		if (field == 22)
			start = v;
		f = strchr(f, ' ');
	}
	return start;
}

/* The pipe (or other object) on PID's standard output, "" if unreadable. */
static void
stdout_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/fd/1", (long)pid);
	if ((n = readlink(path, buf, len - 1)) < 0)
		n = 0;
	buf[n] = '\0';
}

/* Does PID hold pipe PIPE ("pipe:[N]") open for reading? */
static int
reads(const char *pid, const char *pipe)
{
	char path[600], link[128];
	struct dirent *e;
	DIR *d;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		FILE *f;
		char line[128];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, e->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, pipe) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "flags:", 6) == 0 &&
			    (strtol(line + 6, NULL, 8) & O_ACCMODE) == O_RDONLY)
				found = 1;
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * Follow the text from PIPE to its reader: the nearest of our ANCESTORS (N of
 * them, nearest first) that reads it, or, through a reader that is not one of
 * them (a filter), through that reader's own output, a few pipes at most.
 * 0 when none is found.
 */
static pid_t
reader_of(const char *pipe, const pid_t *anc, int n, int depth)
{
	struct dirent *e;
	pid_t best = 0, filters[8];
	int nf = 0, bi = n;
	DIR *d;

	if (depth > 4 || strncmp(pipe, "pipe:", 5) != 0 ||
	    (d = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atol(e->d_name);
		int i;

		if (pid <= 1 || pid == getpid() || !reads(e->d_name, pipe))
			continue;
		for (i = 0; i < n && anc[i] != pid; i++)
			;
		if (i < bi) {
			bi = i;
			best = pid;
		} else if (i == n && nf < 8)
			filters[nf++] = pid;
	}
	closedir(d);
	for (int f = 0; best == 0 && f < nf; f++) {
		char out[128];

		stdout_of(filters[f], out, sizeof(out));
		if (strcmp(out, pipe) != 0)
			best = reader_of(out, anc, n, depth + 1);
	}
	return best;
}

int
ac_rdv_owner_find(struct ac_rdv_owner *o, char *err, size_t errlen)
{
	char ours[128];
	pid_t pid = getppid(), up, anc[32];
	int n = 0;

	memset(o, 0, sizeof(*o));
	o->pidfd = -1;
	stdout_of(getpid(), ours, sizeof(ours));
	/* Our ancestors, nearest first. */
	for (up = pid; up > 1 && n < 32; ) {
		anc[n++] = up;
		if (ac_proc_start(up, &up, NULL, 0) == 0)
			break;
	}
	if (strncmp(ours, "pipe:", 5) == 0 && (up = reader_of(ours, anc, n, 0)) > 1)
		pid = up;
	o->pid = pid;
	if (pid <= 1 || (o->start = ac_proc_start(pid, NULL, o->comm,
	    sizeof(o->comm))) == 0) {
		snprintf(err, errlen, "cannot find the process that started "
		    "it (pid %ld)", (long)pid);
		return -1;
	}
	o->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (o->pidfd == -1 && errno != ENOSYS && errno != EPERM) {
		snprintf(err, errlen, "pidfd_open of pid %ld: %s", (long)pid,
		    strerror(errno));
		return -1;
	}
	/* Opened after we read its start time: the pid was not reused meanwhile. */
	if (!ac_rdv_owner_alive(o)) {
		snprintf(err, errlen, "the process that started it (pid %ld) "
		    "has exited", (long)pid);
		if (o->pidfd != -1)
			close(o->pidfd);
		o->pidfd = -1;
		return -1;
	}
	return 0;
}

int
ac_rdv_owner_alive(const struct ac_rdv_owner *o)
{
	return ac_proc_start(o->pid, NULL, NULL, 0) == o->start;
}
