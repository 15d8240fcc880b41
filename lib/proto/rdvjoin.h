/* rdvjoin.h: the run identity's part of the protocol (rdvjoin.c): registration, its answers, and whether keys can be posted. */
#ifndef ACCELCTL_RDVJOIN_H
#define ACCELCTL_RDVJOIN_H

#include <stddef.h>

#include "store.h"
#include "xport.h"

/* Start for job J (its run identity RID) over store S. IN is called once
 * the node is in the run over a connection that is up (rdvproto.c: post
 * again what is owed): a call up, not an include of the protocol above. */
void ac_rdvjoin_init(struct ac_job *j, struct ac_runid *rid,
    const struct ac_store *s, void (*in)(void));
/* The registration's and the probe's work due at NOW: ms until more, or -1. */
long ac_rdvjoin_timer(long now);
/* Node NODE pinged (V, LEN bytes): node 0 answers. */
void ac_rdvjoin_ping(long node, const char *v, size_t len);

/* What a store's registration (store.h's join) found. */
enum ac_join {
	AC_JOIN_DOWN,	/* no answer: registered at the next connect */
	AC_JOIN_IN,	/* in the run named: the one it knew, or opened (node 0) */
	AC_JOIN_FRESH,	/* took its free place in the run named, fresh: probed */
	AC_JOIN_WAIT,	/* node 0 has not opened this launch's run (RUN the newest) */
	AC_JOIN_TAKEN,	/* its place in the run named is another lineage's */
};
/*
 * The answer to join for a fresh node whose place in the newest run, RUN,
 * another lineage holds: waited out as AC_JOIN_WAIT (an earlier launch's
 * idle helper: this launch's node 0 opens a newer run), but BEAT (LEN bytes:
 * the holder's ~beat/NODE in RUN, maybe empty) may say that the holder, its
 * ranks running, refused this helper's claim: two helpers claim one node,
 * and this one fails, naming the other.
 */
void ac_rdvjoin_held(long run, const char *beat, size_t len);
/* "NONCE PID HOST", this helper: what a store's registration that finds
 * the place held tells the holder (claim/NODE, told in RUN). */
const char *ac_rdvjoin_claimant(void);
/* claim/NODE told, V (LEN bytes) "NONCE PID HOST": 1 when it claims this
 * node, for another lineage, while this node's ranks run (a second helper
 * for one node: refuse it), with its nonce in NONCE (17 bytes) and the
 * failure's words in WHY; else 0. */
int  ac_rdvjoin_claimed(const char *key, const char *v, size_t len,
    char *nonce, char *why, size_t whylen);
/* The store's connection is up (again): register, fresh on this connection. */
void ac_rdvjoin_connected(void);
/* Register again: KEEP 0, the run's state was lost (nothing is posted
 * until it is answered); 1, a refresh (posting goes on meanwhile). */
void ac_rdvjoin_join(int keep);
/* The answer to store.h's join: HOW, in RUN. */
void ac_rdvjoin_joined(enum ac_join how, long run);
/* In the run over a connection that is up: keys can be posted. */
int  ac_rdvjoin_ready(void);
/* Keys can be named: ready, or probing a run joined fresh (put and get). */
int  ac_rdvjoin_named(void);
/* A registration is out. */
int  ac_rdvjoin_joining(void);
/* xport.h's describe, for status: the store, where, and its state in the run. */
void ac_rdvjoin_describe(char *buf, size_t len);
/* xport.h's pending: what arrivals not posted wait for, or NULL. */
const char *ac_rdvjoin_pending(void);
/* The run is closed (node 0 opened a newer one): a fresh joiner that saw
 * nothing complete there leaves it and registers again, fresh. */
void ac_rdvjoin_closed(void);
/* A rank posts: 1 when the store leaves a run told closed before (it
 * registers again: the sweep posts in node 0's run), else 0. */
int  ac_rdvjoin_moved_on(void);
/* A cross-node collective completed in the run (a store's own fast path). */
void ac_rdvjoin_progressed(void);

#endif
