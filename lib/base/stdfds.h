/* stdfds.h: descriptors 0-2 made to exist before anything else opens a file. */
#ifndef ACCELCTL_STDFDS_H
#define ACCELCTL_STDFDS_H

/*
 * Open /dev/null on each of descriptors 0-2 that is closed: stdin
 * write-only, stdout and stderr read-only, so that using one fails (EBADF)
 * as it did closed, while no file opened later can take its number. Call
 * first in main. Returns 0, or -1 when /dev/null cannot be opened.
 */
int ac_stdfds_open(void);

#endif
