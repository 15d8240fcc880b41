/* xredis.h: the cross-node step through a Redis rendezvous, inside the helper's loop. */
#ifndef ACCELCTL_XREDIS_H
#define ACCELCTL_XREDIS_H

#include <poll.h>

#include "coll.h"
#include "rdvurl.h"

/* Start connecting (asynchronously) for job J; sets J->x. 0, or -1 with ERR. */
int  ac_xredis_start(struct ac_job *j, const struct ac_rdv_url *u, char *err,
    size_t errlen);
/* Add the Redis descriptors to PFD (room for 2); returns how many. */
int  ac_xredis_fds(struct pollfd *pfd);
/* Handle what poll(2) reported on the descriptors added last. */
void ac_xredis_events(const struct pollfd *pfd, int n);
/* Reconnect when due; returns ms until the next wake-up it needs, or -1. */
long ac_xredis_timer(long now);
/* NULL while connected; else "host:port: why" (no password, ever). */
const char *ac_xredis_down(void);
/* The rendezvous refused us for good (a wrong password): waiters fail now. */
int  ac_xredis_fatal(void);
void ac_xredis_stop(void);

#endif
