/* parent.c: noticing, without polling, that the process that started us exited.
 *
 * A waiter whose job script died must not wait on (issue: torchrun signals
 * only the workers it started, the shells; the accelctl they ran was left
 * waiting until its deadline, and the launcher waited for it). The script
 * may exit, or be killed, at any time; we are then reparented (to init or a
 * subreaper), so getppid() changes. PR_SET_PDEATHSIG would fire when the
 * parent *thread* that forked us exits, which a threaded parent does at
 * will; a pidfd of the parent process is readable when the whole process
 * has exited, and poll(2) can wait on it beside the helper's socket.
 *
 * "exec accelctl barrier x" makes accelctl the script itself: its parent is
 * then the launcher, which is what to watch. A parent that is already gone
 * when we start (a subshell that backgrounded us and left) is not watched:
 * the wait was meant to outlive it.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>

#include <fcntl.h>
#include <unistd.h>

#include "parent.h"

static pid_t	ppid = -1;
static int	pfd = -2;	/* -2: not opened yet */

void
ac_parent_init(void)
{
	ppid = getppid();
}

int
ac_parent_fd(void)
{
	if (pfd != -2)
		return pfd;
	pfd = -1;
	/* Init (or a subreaper standing in for a parent that left) stays. */
	if (ppid <= 1)
		return pfd;
#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, ppid, 0);
	if (pfd >= 0)
		(void)fcntl(pfd, F_SETFD, FD_CLOEXEC);
	/* The parent may have exited before the pidfd was opened (and its pid
	 * been reused): then the pidfd is of someone else. */
	if (pfd >= 0 && getppid() != ppid) {
		close(pfd);
		pfd = -1;
	}
#endif
	return pfd;
}

int
ac_parent_gone(void)
{
	return ppid > 1 && getppid() != ppid;
}

long
ac_parent_pid(void)
{
	return (long)ppid;
}
