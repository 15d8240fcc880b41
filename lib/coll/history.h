/* history.h: the helper's record of the collectives released on this node, a bounded ring, and its text and JSON. */
#ifndef ACCELCTL_HISTORY_H
#define ACCELCTL_HISTORY_H

#include <stddef.h>
#include <stdint.h>

struct ac_coll;
struct ac_job;

/* The ring holds this many records; the oldest gives way to the newest. */
#define AC_HISTORY_MAX 10000

/* Local rank LRANK of J arrived live at C (not a journal's replay). */
void ac_history_arrived(const struct ac_job *j, struct ac_coll *c, long lrank);
/* C leaves the helper's collectives in flight, complete: add its record when
 * this helper saw it live. */
void ac_history_add(const struct ac_job *j, const struct ac_coll *c);
/* The global rank of C's last local rank to arrive (-1: none seen live, or
 * its rank not known): what this node says when its arrival completes C. */
int64_t ac_history_last_rank(const struct ac_job *j, const struct ac_coll *c);
/*
 * What this node says of itself when it posts C across nodes: the
 * milliseconds from its release of the job's previous barrier across nodes
 * to this post, on its own clock. Every node saw that release at about the
 * same moment (a broadcast's, --wait's or main-first's is not: a node that
 * comes after the source finished is released at its own arrival), so these
 * intervals order the nodes' posts, and their differences are the nodes'
 * waits, with no clock compared between hosts. -1 when not known (no such
 * barrier yet, a replaced helper, a node's own collective).
 */
int64_t ac_history_since(const struct ac_job *j, const struct ac_coll *c);
/* C was released live: when it is a barrier across nodes, the start of the
 * next collective's interval. */
void ac_history_released(struct ac_job *j, const struct ac_coll *c);
/* Free the ring (the helper exits; tests). */
void ac_history_free(void);
/* How many records the ring holds, and the bytes it takes. */
size_t ac_history_count(void);
size_t ac_history_bytes(void);

/*
 * The last N records (0: all), oldest first, as text or as JSON, into a
 * buffer of at most MAX bytes that the caller frees; older records are left
 * out, and the text says so, when the newest fill it. NULL on no memory.
 */
char *ac_history_format(const struct ac_job *j, long n, int json, size_t max);

/*
 * The line a waiter of local rank LRANK is sent when its wait at C lasted
 * more than AC_HISTORY_NOTE_MS: who came last and how much later. 0, or -1
 * when the wait was shorter (nothing to say).
 */
#define AC_HISTORY_NOTE_MS 60000
int ac_history_note(const struct ac_job *j, const struct ac_coll *c,
    long lrank, char *buf, size_t len);

#endif
