/* rlast.h: one command on a blocking connection of its own: a helper's last words. */
#ifndef ACCELCTL_RLAST_H
#define ACCELCTL_RLAST_H

#include <stddef.h>

#include "rdvurl.h"

/*
 * ARGV (lengths LEN, or NULL for strings) to the server U names (its host
 * and port, or its socket path), with U's credentials and database, waiting
 * at most TIMEOUT_MS per step; CLUSTER set, one MOVED or ASK is followed.
 * 0 when the server answered other than with an error, else -1.
 */
int ac_rlast_cmd(const struct ac_rdv_url *u, int cluster, int argc,
    const char **argv, const size_t *len, long timeout_ms);

#endif
