/* rdvarr.h: a barrier's arrivals node by node, as a store's events tell them (etcd's watch), and what they add up to. */
#ifndef ACCELCTL_RDVARR_H
#define ACCELCTL_RDVARR_H

#include <stdint.h>

struct ac_job;

void ac_rdvarr_init(struct ac_job *j);
void ac_rdvarr_stop(void);
/*
 * NODE's arrival at barrier KEY generation GEN as of the store's revision
 * REV: FAILS its failing ranks ("R:S ...", "" for none: fails.c), or NULL
 * (absent, or withdrawn). Older news than a node's last is ignored, and so
 * is news of a barrier this node does not wait at across nodes. NODE -1:
 * a listing at REV, which every node is absent from but those its news
 * then name.
 */
void ac_rdvarr_news(const char *key, int64_t gen, long node, const char *fails,
    long long rev);
/* What the news add up to: every node in (the result, into coll.c), or
 * which nodes are missing (the collective's xmissing, for a timeout). */
void ac_rdvarr_settle(const char *key, int64_t gen);
/* Forget the arrivals of barriers no longer waited at (the timer's). */
void ac_rdvarr_gc(void);

#endif
