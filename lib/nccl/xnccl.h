/* xnccl.h: the NCCL transport: collectives over a communicator of the node helpers. */
#ifndef ACCELCTL_XNCCL_H
#define ACCELCTL_XNCCL_H

#include "xport.h"

struct ac_job;

/*
 * Carry job J's streamed collectives over NCCL (SETTING: enum ac_tsetting),
 * riding on RDV (the rendezvous, which posts the communicator's id and is the
 * fallback; NULL for a one-node job). Nothing is loaded until the first
 * collective.
 */
const struct ac_xport *ac_xnccl_open(struct ac_job *j, const struct ac_rdv *rdv,
    int setting);

#endif
