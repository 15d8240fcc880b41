/* rdvarr.h: a barrier's arrivals node by node, as a store's events tell them (etcd's watch), and what they add up to. */
#ifndef ACCELCTL_RDVARR_H
#define ACCELCTL_RDVARR_H

#include <stdint.h>

struct ac_coll;
struct ac_job;

void ac_rdvarr_init(struct ac_job *j);
void ac_rdvarr_stop(void);
/*
 * NODE's arrival at barrier KEY generation GEN as of the store's revision
 * REV: FAILS its failing ranks ("R:S ...", "" for none: fails.c), then
 * " @RANK", its last rank to arrive, or NULL (absent, or withdrawn). MOD is
 * the revision that wrote the arrival (0 with NULL): the node whose arrival
 * is the newest completed the barrier (history.c's "last"). Older news than
 * a node's last is ignored, and so is news of a barrier this node does not
 * wait at across nodes. NODE -1: a listing at REV, which every node is absent
 * from but those its news then name.
 */
void ac_rdvarr_news(const char *key, int64_t gen, long node, const char *fails,
    long long rev, long long mod);
/* FAILS (at most LEN) of barrier C with this node's last rank to arrive
 * appended (" @RANK"), as ac_rdvarr_news reads it; its new length. */
size_t ac_rdvarr_value(const struct ac_job *j, const struct ac_coll *c,
    char *fails, size_t n, size_t len);
/* What the news add up to: every node in (the result, into coll.c), or
 * which nodes are missing (the collective's xmissing, for a timeout). */
void ac_rdvarr_settle(const char *key, int64_t gen);
/* Forget the arrivals of barriers no longer waited at (the timer's). */
void ac_rdvarr_gc(void);

#endif
