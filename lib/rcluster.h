/* rcluster.h: Redis Cluster's redirections: which node MOVED and ASK name. */
#ifndef ACCELCTL_RCLUSTER_H
#define ACCELCTL_RCLUSTER_H

#include <stddef.h>

#include "rdvurl.h"

enum { AC_REDIR_NONE, AC_REDIR_MOVED, AC_REDIR_ASK };

/*
 * Is error reply TEXT "MOVED SLOT HOST:PORT" or "ASK SLOT HOST:PORT"? The
 * address into H (an empty host, Redis 7's "unknown endpoint", is CUR's).
 * AC_REDIR_NONE for every other error.
 */
int ac_rcluster_redirect(const char *text, const char *cur, struct ac_rdv_host *h);

#endif
