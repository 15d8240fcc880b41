/* xredis.h: the cross-node step through a Redis rendezvous, inside the helper's loop. */
#ifndef ACCELCTL_XREDIS_H
#define ACCELCTL_XREDIS_H

#include <poll.h>
#include <stddef.h>

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

/* The Redis steps themselves, for a transport that wraps them (xnccl.c). */
const struct ac_xops *ac_xredis_ops(void);
/* ON: another transport carries the collectives; a reconnect re-posts none. */
void ac_xredis_quiet(int on);
/* Post again everything in flight and the last results (after a fallback). */
void ac_xredis_resync(void);

/*
 * The NCCL transport's use of the rendezvous: JOINED is called with "id"
 * and the communicator's id in hex, "wait" (node 0 has not posted it yet:
 * JOINED comes again when it has, through the inbox, without polling), or
 * "off" and why (NCCL is off for the rest of the job).
 */
struct ac_xredis_nccl {
	void	(*joined)(const char *state, const char *value, size_t len);
};
void ac_xredis_nccl_hooks(const struct ac_xredis_nccl *h);
/* Join epoch 0's communicator; node 0 passes the id it made (hex). Sent
 * again after a reconnect until answered. 0, or -1 while disconnected. */
int  ac_xredis_nccl_join(const char *idhex);
void ac_xredis_nccl_fetch_id(void);
/* NCCL is off for the job: record WHY and tell every node ('N'). */
void ac_xredis_nccl_off(const char *why);

#endif
