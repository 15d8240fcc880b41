/* spawn.c: the one way accelctl starts a child process: fork, descriptors, mask, session, then CMD or a function.
 *
 * Six places started children, each with its own fork and its own chances
 * to get the sequence wrong: stdio buffers not flushed before the fork are
 * written twice; a death signal asked for after the parent already left
 * never comes; a daemon's middle process not reaped stays a zombie, and one
 * reaped by the kernel (SIGCHLD ignored) looks like a failed fork. Here is
 * the sequence once, in the order that matters: descriptors before the mask,
 * the death signal checked against a parent that already left, the double
 * fork of a daemon reaped at once so that it is init's child.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "run.h"
#include "spawn.h"

/* Put FD (or /dev/null) on descriptor TO in the child. */
static void
place(int fd, int to)
{
	if (fd == AC_CHILD_NULL) {
		int n = open("/dev/null", O_RDWR);

		if (n >= 0 && n != to) {
			dup2(n, to);
			close(n);
		}
	} else if (fd >= 0 && fd != to)
		dup2(fd, to);
	else if (fd == to)
		/* dup2(fd, fd) changes nothing: a close-on-exec descriptor
		 * already in place would be closed by the exec. */
		(void)fcntl(to, F_SETFD, 0);
}

/* The child's side, after the fork (or the second fork): never returns. */
static void
become(struct ac_child *c, pid_t parent)
{
	if (c->close_fd >= 0)
		close(c->close_fd);
	if (c->session)
		setsid();
	place(c->in, STDIN_FILENO);
	place(c->out, STDOUT_FILENO);
	place(c->err, STDERR_FILENO);
	if (c->deathsig != 0) {
		prctl(PR_SET_PDEATHSIG, c->deathsig);
		/* The parent left before prctl: no signal will come. */
		if (getppid() != parent)
			_exit(1);
	}
	if (c->mask != NULL)
		sigprocmask(SIG_SETMASK, c->mask, NULL);
	_exit(c->argv != NULL ? ac_exec(c->argv) : c->fn(c->arg));
}

int
ac_child_start(struct ac_child *c)
{
	pid_t parent = getpid(), pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (!c->detach)
			become(c, parent);
		setsid();
		parent = getpid();
		if ((pid = fork()) != 0)
			_exit(pid == -1);
		become(c, parent);
	}
	c->pid = pid;
	if (!c->detach)
		return 0;
	c->pid = 0;
	/* With SIGCHLD ignored (inherited: a parent that set SIG_IGN and
	 * exec'ed us) the kernel reaps the middle process itself: ECHILD.
	 * Whether its fork worked cannot be known then; the caller's own
	 * check (the helper's ready pipe, the supervisor's report) tells. */
	while (waitpid(pid, &st, 0) == -1) {
		if (errno == ECHILD)
			return 0;
		if (errno != EINTR)
			return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		errno = EAGAIN;		/* its fork failed */
		return -1;
	}
	return 0;
}

int
ac_child_wait(struct ac_child *c)
{
	int st;

	while (waitpid(c->pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	c->pid = 0;
	return ac_exit_code(st);
}
