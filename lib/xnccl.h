/* xnccl.h: the cross-node step over an NCCL communicator of the node helpers. */
#ifndef ACCELCTL_XNCCL_H
#define ACCELCTL_XNCCL_H

#include <poll.h>
#include <stddef.h>

#include "coll.h"

/*
 * Carry job J's cross-node collectives over NCCL (SETTING: enum ac_tsetting),
 * with BASE (the Redis steps, or NULL for a one-node job) as the rendezvous
 * and the fallback. Sets J->x; nothing is loaded until the first collective.
 */
void ac_xnccl_start(struct ac_job *j, const struct ac_xops *base, int setting);
/* The descriptor NCCL completions wake us on (room for 1); how many. */
int  ac_xnccl_fds(struct pollfd *pfd);
void ac_xnccl_events(const struct pollfd *pfd, int n);
/* Look at the communicator; ms until it must be looked at again, or -1. */
long ac_xnccl_timer(long now);
/* "nccl (...)" or "redis (NCCL off: why)", for status. */
void ac_xnccl_describe(char *buf, size_t len);
/* Abort the communicator (never ncclCommDestroy: it would wait for peers). */
void ac_xnccl_stop(void);

#endif
