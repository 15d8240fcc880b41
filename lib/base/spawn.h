/* spawn.h: the one way accelctl starts a child process (as git's run-command.c). */
#ifndef ACCELCTL_SPAWN_H
#define ACCELCTL_SPAWN_H

#include <signal.h>
#include <sys/types.h>

/* A child's descriptor 0, 1 or 2 on /dev/null. */
#define AC_CHILD_NULL	(-2)

struct ac_child {
	/* What the child runs: ARGV through ac_exec (PATH, and the shell's
	 * 126 and 127 when it cannot), else FN(ARG), whose return is its
	 * exit code. */
	char		**argv;
	int		(*fn)(void *arg);
	void		 *arg;
	/* Its descriptors 0, 1 and 2: -1 ours, AC_CHILD_NULL, or that fd. */
	int		  in, out, err;
	/* Closed in the child: our end of a pipe it must not hold. -1 none. */
	int		  close_fd;
	/* Its own session, forked twice: init's child, never a zombie of
	 * ours, out of reach of the terminal's signals and of a shell's wait. */
	int		  detach;
	/* A session of its own (setsid), not forked twice: our child still,
	 * leader of its own process group, which a signal to -PID reaches as
	 * a whole; out of reach of the terminal's signals (launch's ranks). */
	int		  session;
	/* Sent to it when we exit, even by SIGKILL (PR_SET_PDEATHSIG); 0 none. */
	int		  deathsig;
	/* Its signal mask; NULL: ours. */
	const sigset_t	 *mask;
	/* Set by ac_child_start; 0 for a detached child (init waits for it). */
	pid_t		  pid;
};

/* A child with nothing set: descriptors ours, no fd to close. */
#define AC_CHILD_INIT	{ .in = -1, .out = -1, .err = -1, .close_fd = -1 }

/* Start C. 0, or -1 with errno (fork failed; for a detached child, the
 * middle process's fork failed: EAGAIN). Our stdio buffers are flushed
 * first, so that the child does not write them a second time. */
int ac_child_start(struct ac_child *c);

/* Wait for C (not detached) to end, EINTR retried: the shell's exit code of
 * its status (the code, or 128+N for signal N), or -1 with errno. */
int ac_child_wait(struct ac_child *c);

#endif
