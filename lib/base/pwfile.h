/* pwfile.h: a password read from the file a setting names: its first line, never echoed. */
#ifndef ACCELCTL_PWFILE_H
#define ACCELCTL_PWFILE_H

#include <stddef.h>

/*
 * The first line of FILE (named by variable VAR, for messages) into DST of
 * LEN bytes: a password, for every rendezvous. 0, or -1 with a reason in ERR
 * that never contains the password.
 */
int ac_read_password_file(const char *var, const char *file, char *dst,
    size_t len, char *err, size_t errlen);

#endif
