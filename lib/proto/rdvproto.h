/* rdvproto.h: the rendezvous protocol, written once over any store (store.h): run identity, node names, the abort, NCCL's rendezvous, the sweep. */
#ifndef ACCELCTL_RDVPROTO_H
#define ACCELCTL_RDVPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "rdvjoin.h"
#include "store.h"
#include "xport.h"

/* Start the protocol for job J (its run identity RID) over store S, whose
 * transport is X. */
void ac_rdvproto_init(struct ac_job *j, struct ac_runid *rid,
    const struct ac_xport *x, const struct ac_store *s);
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

/* This node posted C to the store (its arrival, a read of its result):
 * 1 when it had before. Looks are about those (store.h's look). */
int  ac_rdvproto_posted(const struct ac_coll *c);
/* A post was answered "not complete": look at what waits when a line is
 * due (ac_rdvproto_look_by), or LOOK_MAX_MS later at the latest. */
void ac_rdvproto_look_soon(void);
/* A look found what only a later look may act on (every slot set, no
 * result): look again in MS, not at the next line. */
void ac_rdvproto_look_in(long ms);
/* xport.h's look_by. */
long ac_rdvproto_look_by(long due);

/* The work due at NOW (looks for the names of missing nodes): ms until it
 * wants to run again, or -1. */
long ac_rdvproto_timer(long now);

/* xport.h's hello and node: this node's name put for the others once its
 * every rank said who it is; a node's name, or NULL while unknown. */
void ac_rdvproto_hello(struct ac_job *j);
const char *ac_rdvproto_node(long node);
/* xport.h's abort: J's abort put for every node (the first one stays). */
void ac_rdvproto_abort(struct ac_job *j);
/* xport.h's lost: "lost/RANK" put for every node (the latest news). */
void ac_rdvproto_lost(struct ac_job *j, const struct ac_lost *l);
/* xport.h's where and waits: "where/NODE", told, overwritten. */
void ac_rdvproto_where(struct ac_job *j, const char *record);
const char *ac_rdvproto_waits(long node);
/* Read the run's abort (a store that may have trimmed its event). */
void ac_rdvproto_read_abort(void);

/* The result V (LEN bytes, xvalue.c's form) of generation GEN of KEY. */
void ac_rdvproto_deliver(const char *key, int64_t gen, const char *v,
    size_t len);
/* C is over here (every local rank arrived at a later generation of its
 * name): completed on the spot, 1; else 0. The store's steps ask first. */
int  ac_rdvproto_over(struct ac_job *j, struct ac_coll *c);
/* May a store's arrive or want post C now (ready, in the run, not over)? */
int  ac_rdvproto_posting(struct ac_job *j, struct ac_coll *c);
/* May the sweep post done collective C's result again (not one completed
 * as over, nor one another transport carries)? */
int  ac_rdvproto_postable(const struct ac_coll *c);
/* After a (re)registration: post again what is in flight, then the store's
 * own (store.h's swept). */
void ac_rdvproto_sweep(void);
/* The helper exits: take back this node's arrivals at barriers that did
 * not complete (store.h's unpost). */
void ac_rdvproto_withdraw_all(void);

#endif
