/* rdvlive.h: node liveness over any store: each helper's beat, a ring of watchers, and lost nodes named (exit 4). */
#ifndef ACCELCTL_RDVLIVE_H
#define ACCELCTL_RDVLIVE_H

#include <stddef.h>

#include "store.h"

struct ac_job;

/* Watch J's nodes over store S (ACCELCTL_NODE_TIMEOUT read here); LOOK:
 * rdvproto.c's step that reads soon which nodes the waits miss. Nothing for
 * a job of one node. */
void ac_rdvlive_init(struct ac_job *j, const struct ac_store *s,
    void (*look)(void));
void ac_rdvlive_stop(void);
/* In the run again (a connect, a reconnect, a store back from an outage):
 * beat now, and every node has a whole bound again. */
void ac_rdvlive_up(void);
/* Beats, reads of the watched nodes' beats, and the waits that a lost node
 * ends: ms until due again, or -1. */
long ac_rdvlive_timer(long now);
/* A told key: "dead/NODE" is handled (1), any other is not (0). */
int  ac_rdvlive_told(const char *key, const char *v, size_t len);
/* Is a node of the run known lost? (A collective posted now is looked at
 * soon: what it misses may be that node.) */
int  ac_rdvlive_any_lost(void);
/* Another helper (lineage NONCE, 16 hex digits) claims this node while its
 * ranks run: the beat says so at once (" dup NONCE", which the claimant
 * reads), then the store fails for good with WHY. 0 when nodes are not
 * watched (the caller fails at once). */
int  ac_rdvlive_refuse(const char *nonce, const char *why);
/* For status: the bound in seconds, 0 when nodes are not watched. */
long ac_rdvlive_bound(void);

#endif
