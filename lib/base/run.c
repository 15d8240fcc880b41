/* run.c: running the user's CMD, with the shell's exit codes when that fails. */
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "msg.h"
#include "run.h"

int
ac_exec(char **argv)
{
	int saved;

	/* Output written before the exec must not be lost with our buffers. */
	fflush(stdout);
	/* accelctl ignores SIGPIPE; an ignored signal would stay so in CMD. */
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	saved = errno;
	errno = saved;
	ac_warn("cannot run '%.200s'", argv[0]);
	return saved == ENOENT || saved == ENOTDIR ? AC_EXIT_NOTFOUND :
	    AC_EXIT_NOEXEC;
}

int
ac_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return AC_EXIT_FAILED;
}
