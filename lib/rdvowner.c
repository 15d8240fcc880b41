/* rdvowner.c: the process a job-scoped rendezvous server lives as long as.
 *
 * "eval "$(accelctl rendezvous start)"" runs accelctl inside a command
 * substitution. Bash and zsh exec the last command of $(...) in the forked
 * child, so our parent is the script's shell; dash and bash with a compound
 * command, "$(cd x && accelctl ...)", leave a subshell between us, which
 * exits the moment we do. Watching our parent would then stop the server at
 * once. What tells the two apart without guessing from names is the pipe: a
 * command substitution's subshells all write into the pipe the shell reads,
 * so we walk up while an ancestor's standard output is our own pipe. The
 * first one whose standard output is something else is the shell that waits
 * for the text: the script. Standard output that is not a pipe (a file to
 * source later) means our parent is the script. */
#include <sys/syscall.h>

#include <errno.h>
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

int
ac_rdv_owner_find(struct ac_rdv_owner *o, char *err, size_t errlen)
{
	char ours[128], theirs[128];
	pid_t pid = getppid(), up;
	int depth;

	memset(o, 0, sizeof(*o));
	o->pidfd = -1;
	stdout_of(getpid(), ours, sizeof(ours));
	for (depth = 0; depth < 32; depth++) {
		if (strncmp(ours, "pipe:", 5) != 0)
			break;
		stdout_of(pid, theirs, sizeof(theirs));
		if (strcmp(ours, theirs) != 0)
			break;
		/* A subshell of the substitution: its parent reads the pipe. */
		up = 0;
		if (ac_proc_start(pid, &up, NULL, 0) == 0 || up <= 1)
			break;
		pid = up;
	}
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
