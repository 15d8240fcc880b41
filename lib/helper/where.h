/* where.h: where the ranks a wait lacks are waiting instead (where.c). */
#ifndef ACCELCTL_WHERE_H
#define ACCELCTL_WHERE_H

#include <stddef.h>
#include <stdint.h>

struct ac_coll;

/* Append to BUF (a progress or timeout line of CO's wait) "; rank 1 (node
 * 0) waits at barrier 'step-1' (generation 0)" for the ranks CO lacks that
 * wait at something else, this node's and, from their records, the
 * missing nodes'. */
void ac_where_append(const struct ac_coll *co, char *buf, size_t len);
/* Tell the other nodes where this node's ranks wait, once a wait across
 * nodes has lasted an interval (at most once an interval, when it
 * changed). Ms until it is due again, or -1. */
long ac_where_timer(long now);
/* Local rank LRANK's wait at KEY/GEN ended at its deadline; it arrived
 * somewhere (it waits there now). */
void ac_where_timed_out(long lrank, const char *key, int64_t gen);
void ac_where_arrived(long lrank);
/* 1, and "barrier 'step-1' (generation 0)" in BUF, where local rank LRANK's
 * last wait ended at its deadline (it waits nowhere since); else 0. */
int ac_where_left(long lrank, char *buf, size_t len);
void ac_where_stop(void);

#endif
