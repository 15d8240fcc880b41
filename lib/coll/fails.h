/* fails.h: the text that names a barrier's failing ranks, one form for one node and every store. */
#ifndef ACCELCTL_FAILS_H
#define ACCELCTL_FAILS_H

#include <stddef.h>
#include <stdint.h>

/* Shown at most, and at most this many bytes of them ("R (exit S)" joined
 * with ", "): ", and N more" then still fits a collective's 512 (coll.h's
 * failed). Redis' BARRIER_LUA builds the same text by the same rule. */
#define AC_FAILS_SHOWN	40
#define AC_FAILS_ROOM	480

struct ac_fail {
	int64_t	rank, status;
};

/*
 * Sort F (N failing ranks, and EXTRA more not listed) by rank and write
 * "1 (exit 3), 3 (exit 1), and 5 more" into BUF (LEN bytes, 512 at least): as many as the rule above lets
 * in, the rest counted. Returns the lowest rank's status (the barrier's
 * result), or 0 when N is 0.
 */
int64_t ac_fails_text(struct ac_fail *f, size_t n, size_t extra, char *buf,
    size_t len);

/* A node's arrival at a barrier says its failing ranks so, "R:S R:S +N"
 * (its AC_FAILS_SHOWN lowest, and N more; the stores put it, Redis' script
 * and ac_fails_add read it), from its LSIZE local ranks' STATUS and their
 * global RANK_OF (-1: not known, the local rank stands for it): into BUF
 * (LEN bytes, 2048 at least), its length. 0: every local rank exited 0. */
size_t ac_fails_of(const int64_t *rank_of, const int64_t *status, long lsize,
    char *buf, size_t len);
/* Add the ranks a node's "R:S R:S +N" lists to *F (N of them, room for
 * *CAP, grown), its count of more to *EXTRA; the new N. */
size_t ac_fails_add(const char *s, struct ac_fail **f, size_t n, size_t *cap,
    size_t *extra);

#endif
