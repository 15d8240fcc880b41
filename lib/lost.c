/* lost.c: ranks that are gone for good, and which waits they end (exit 4, "lost").
 *
 * A rank that exits while the others wait for it at a collective, or before
 * it reached one they wait at, would hold them to their deadline (30
 * minutes by default) with a line that blames "never connected". Where
 * accelctl can know a rank is gone (launch saw it exit, the helper watched
 * the rank's process end, the helper turned it away) the waits that need it
 * end at once with exit 4 naming it. No I/O here: the sources of the news
 * are the helper's (gone.c) and the rendezvous' (rdvproto.c); this file
 * keeps the list and answers "does this wait need a gone rank?".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll.h"
#include "lost.h"

int
ac_lost_add(struct ac_job *j, int64_t rank, long node, long lrank,
    int64_t died_us, const char *text)
{
	struct ac_lost *l = (struct ac_lost *)ac_lost_find(j, rank);

	/* Known: the same news again (told twice, listed after a reconnect),
	 * or the rank came back in a later attempt and is gone again. */
	if (l != NULL) {
		if (died_us <= l->died_us)
			return 0;
	} else if ((l = calloc(1, sizeof(*l))) == NULL)
		return -1;
	else {
		l->next = j->lost;
		j->lost = l;
	}
	l->rank = rank;
	l->node = node;
	l->lrank = lrank;
	l->died_us = died_us;
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		l->known_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	}
	snprintf(l->text, sizeof(l->text), "%s", text);
	return 1;
}

const struct ac_lost *
ac_lost_find(const struct ac_job *j, int64_t rank)
{
	for (const struct ac_lost *l = j->lost; l != NULL; l = l->next)
		if (l->rank == rank)
			return l;
	return NULL;
}

/* L's local rank on this node, or -1 (another node's, or not known: a rank
 * that never said HELLO here and whose news did not say). */
static long
local_of(const struct ac_job *j, const struct ac_lost *l)
{
	if (l->lrank >= 0 && l->lrank < j->lsize &&
	    (l->node == j->node || j->nnodes <= 1))
		return l->lrank;
	for (long i = 0; j->rank_of != NULL && i < j->lsize; i++)
		if (j->rank_of[i] == l->rank)
			return i;
	return -1;
}

/* Is NODE in LIST ("1, 3")? */
static int
in_list(const char *list, long node)
{
	for (const char *p = list; *p != '\0';) {
		char *end;
		long n = strtol(p, &end, 10);

		if (end == p)
			break;
		if (n == node)
			return 1;
		for (p = end; *p == ',' || *p == ' '; p++)
			;
	}
	return 0;
}

/* Does C need gone rank L? */
static int
needs(const struct ac_job *j, const struct ac_coll *c, const struct ac_lost *l)
{
	long lr = local_of(j, l);

	if (c->op == AC_OP_BARRIER) {
		if (lr >= 0)
			return !c->arrived[lr];
		/*
		 * Another node's rank: the barrier needs it while the store
		 * says its node has not arrived, as read after the news came
		 * (the news may come before the arrivals it follows are read
		 * here; a rank that timed out there stays arrived). A barrier
		 * of this node alone never needs it; one not posted yet waits
		 * to be (its look follows).
		 */
		if (c->scope != AC_SCOPE_JOB || l->node < 0 ||
		    c->xmissing_us < l->known_us)
			return 0;
		return in_list(c->xmissing, l->node);
	}
	/*
	 * A result: its source, on this node, has not begun (a source that
	 * died running CMD is coll.c's AC_SRC_LOST, exit 3, as before). A
	 * source on another node is not judged from here: its result may be
	 * on its way (a large value is read from the store after its event,
	 * and the news of its end can come first), and this node cannot tell
	 * a result never sent from one not read yet.
	 */
	if (c->src != AC_SRC_NONE || lr < 0)
		return 0;
	return c->scope == AC_SCOPE_NODE ? c->source == lr :
	    c->source == l->rank;
}

const struct ac_lost *
ac_lost_needed(const struct ac_job *j, const struct ac_coll *c, int64_t since_us)
{
	const struct ac_lost *first = NULL;

	if (c == NULL || c->done || c->src == AC_SRC_LOST || c->xfailed != NULL)
		return NULL;
	/* The first to go is named: the others that went after it are often
	 * its waiters, which left with exit 4 (their news is no cause). */
	for (const struct ac_lost *l = j->lost; l != NULL; l = l->next)
		if ((since_us == 0 || l->died_us > since_us) && needs(j, c, l) &&
		    (first == NULL || l->died_us <= first->died_us))
			first = l;
	return first;
}

void
ac_lost_free(struct ac_job *j)
{
	while (j->lost != NULL) {
		struct ac_lost *l = j->lost;

		j->lost = l->next;
		free(l);
	}
}
