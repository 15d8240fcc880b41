/* rdvproto.h: the rendezvous protocol, written once over any store (store.h): so far node names, the abort and NCCL's rendezvous. */
#ifndef ACCELCTL_RDVPROTO_H
#define ACCELCTL_RDVPROTO_H

#include <stddef.h>

#include "coll.h"
#include "store.h"
#include "xport.h"

/* Start the protocol for job J over store S, whose transport is X. */
void ac_rdvproto_init(struct ac_job *j, const struct ac_xport *x,
    const struct ac_store *s);
/* Free what it holds (the helper exits). */
void ac_rdvproto_stop(void);
/* What a transport riding on the rendezvous (NCCL) is given (xport.h). */
const struct ac_rdv *ac_rdvproto_rdv(void);
/* The store is in its run again (registered after a connect or a loss):
 * what the protocol still owes the other nodes goes out now. */
void ac_rdvproto_up(void);
/* An event of the run: KEY was put with AC_PUT_TELL (V, LEN bytes). */
void ac_rdvproto_told(const char *key, const char *v, size_t len);
/* Does another transport (NCCL, while it is up) carry the collectives of
 * KEY's kind? The store then neither posts nor sweeps them. */
int  ac_rdvproto_elsewhere(const char *key);

/* The work due at NOW (looks for the names of missing nodes): ms until it
 * wants to run again, or -1. */
long ac_rdvproto_timer(long now);

/* xport.h's hello and node: this node's name put for the others once its
 * every rank said who it is; a node's name, or NULL while unknown. */
void ac_rdvproto_hello(struct ac_job *j);
const char *ac_rdvproto_node(long node);
/* xport.h's abort: J's abort put for every node (the first one stays). */
void ac_rdvproto_abort(struct ac_job *j);
/* Read the run's abort (a store that may have trimmed its event). */
void ac_rdvproto_read_abort(void);

#endif
