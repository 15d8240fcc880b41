/* lost.h: ranks that are gone for good, and which waits they end (exit 4, "lost"). */
#ifndef ACCELCTL_LOST_H
#define ACCELCTL_LOST_H

#include <stdint.h>

struct ac_job;
struct ac_coll;

/* A rank that will not arrive any more: its process exited (launch, or the
 * helper that watched it), or its node's helper turned it away. */
struct ac_lost {
	struct ac_lost	*next;
	/* Global; -1: a whole node (NODE), silent past the liveness bound
	 * (rdvlive.c): every rank of it. */
	int64_t		 rank;
	long		 node, lrank;	/* its node and local rank, -1 not known */
	int64_t		 died_us;	/* wall clock, µs: when it was seen gone */
	/* A whole node: no wait fails on it before this (wall µs): this
	 * node's own loss waits a bound for what the store still brings. */
	int64_t		 after_us;
	char		 text[512];	/* "rank 3 (node 0) exited with 7" */
	/* How far it came: "GEN KEY" lines, its next generation of each name
	 * it used, as its node counted them when it was gone (at most
	 * AC_LOST_NAMES, the newest); FULL: every name it used is there. A
	 * node reads from it what the rank passed, whatever it has read of
	 * the store so far. NULL: not known. */
	char		*frontier;
	int		 full;
};

#define AC_LOST_NAMES	256

/*
 * Remember that RANK (on NODE as local rank LRANK, -1 where not known) is
 * gone since DIED_US, with TEXT for the waiters' message. 1 when it is news (the waits it ends must be told), 0 when RANK
 * was known gone since then already, -1 on no memory.
 */
int ac_lost_add(struct ac_job *j, int64_t rank, long node, long lrank,
    int64_t died_us, const char *text, const char *frontier, int full);

/*
 * Remember that NODE is lost as a whole since DIED_US (wall clock, µs: when
 * this helper learnt it), TEXT for its waiters. Its waits are those of
 * barriers across nodes that the store, read after DIED_US, says it has not
 * arrived at, and results whose source is on it that were not there when
 * read after DIED_US (xlook_us); none before AFTER_US. This node itself
 * lost: a barrier that the store, read after AFTER_US, says another node
 * has not arrived at (those that needed this node have left it). 1 news, 0
 * known already, -1 no memory.
 */
int ac_lost_node(struct ac_job *j, long node, int64_t died_us, int64_t after_us,
    const char *text);

/* Local rank LRANK's frontier (struct ac_lost) from J's counters: a
 * malloc'ed string (NULL on no memory) and *FULL. */
char *ac_lost_frontier(const struct ac_job *j, long lrank, int *full);

/*
 * The gone rank that collective C still needs and will never get, for a
 * waiter whose rank's process started at SINCE_US (wall clock, µs; 0 not
 * known): C not over, and the rank is one whose arrival C lacks (a barrier)
 * or C's source that has not begun (a result). A rank gone before the
 * waiter's process started belongs to an earlier attempt of the job
 * (torchrun's restart, a job script run again under the same job id),
 * whose ranks come back: it ends nothing. NULL when none.
 */
const struct ac_lost *ac_lost_needed(const struct ac_job *j,
    const struct ac_coll *c, int64_t since_us);

/* Is RANK known gone? */
const struct ac_lost *ac_lost_find(const struct ac_job *j, int64_t rank);

void ac_lost_free(struct ac_job *j);

#endif
