/* stdfds.c: descriptors 0-2 made to exist before anything else opens a file.
 *
 * A job wrapper may run us with stdout closed (">&-"). Left so, the first
 * file we open (the helper's socket, a lock) becomes descriptor 1, and a
 * printf meant for the user lands in it: a broadcast wrote its value into
 * the helper's socket. So a closed descriptor among 0-2 gets /dev/null,
 * opened the wrong way round (stdin write-only, stdout and stderr
 * read-only, as glibc does for set-uid programs): each use then fails with
 * EBADF, as it would have on the closed descriptor, so a closed stdout is
 * still the documented write error (exit 125), never a silent success. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "stdfds.h"

int
ac_stdfds_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* The lowest free descriptor: this one, as the ones below it
		 * are open. */
		got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (got != fd) {
			if (got != -1)
				close(got);
			return -1;
		}
	}
	return 0;
}
