/* rcluster.h: Redis Cluster's redirections: which node MOVED or ASK names. */
#ifndef ACCELCTL_RCLUSTER_H
#define ACCELCTL_RCLUSTER_H

#include "rdvurl.h"

enum ac_redirect {
	AC_REDIRECT_NONE,	/* another error */
	AC_REDIRECT_MOVED,	/* the slot is the node's now */
	AC_REDIRECT_ASK		/* the slot is moving there: this key is there */
};

/*
 * Is error reply TEXT "MOVED SLOT HOST:PORT" or "ASK SLOT HOST:PORT"? Which,
 * with the address in H unless H is NULL (an empty host, Redis 7's "unknown
 * endpoint", is CUR's); AC_REDIRECT_NONE for every other error.
 */
enum ac_redirect ac_rcluster_redirect(const char *text, const char *cur,
    struct ac_rdv_host *h);

#endif
