/* rdvjoin.h: the run identity's part of the protocol (rdvjoin.c), as rdvproto.c starts and drives it. */
#ifndef ACCELCTL_RDVJOIN_H
#define ACCELCTL_RDVJOIN_H

#include <stddef.h>

#include "store.h"
#include "xport.h"

/* Start for job J (its run identity RID) over store S. */
void ac_rdvjoin_init(struct ac_job *j, struct ac_runid *rid,
    const struct ac_store *s);
/* The registration's and the probe's work due at NOW: ms until more, or -1. */
long ac_rdvjoin_timer(long now);
/* Node NODE pinged (V, LEN bytes): node 0 answers. */
void ac_rdvjoin_ping(long node, const char *v, size_t len);

#endif
