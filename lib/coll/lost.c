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

#include "coll.h"
#include "duration.h"
#include "lost.h"

int
ac_lost_add(struct ac_job *j, int64_t rank, long node, long lrank,
    int64_t died_us, const char *text, const char *frontier, int full)
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
	snprintf(l->text, sizeof(l->text), "%s", text);
	free(l->frontier);
	l->frontier = frontier != NULL ? strdup(frontier) : NULL;
	l->full = l->frontier != NULL && full;
	return 1;
}

int
ac_lost_node(struct ac_job *j, long node, int64_t died_us, int64_t after_us,
    const char *text)
{
	struct ac_lost *l;

	/* A node is lost once: the first news stays (its time, its words). */
	for (l = j->lost; l != NULL; l = l->next)
		if (l->rank < 0 && l->node == node)
			return 0;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -1;
	l->next = j->lost;
	j->lost = l;
	l->rank = -1;
	l->node = node;
	l->lrank = -1;
	l->died_us = died_us;
	l->after_us = after_us;
	snprintf(l->text, sizeof(l->text), "%s", text);
	return 1;
}

const struct ac_lost *
ac_lost_find(const struct ac_job *j, int64_t rank)
{
	for (const struct ac_lost *l = j->lost; l != NULL; l = l->next)
		if (l->rank == rank && rank >= 0)
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

/*
 * Did gone rank L stop short of C, by its frontier? Its next generation of
 * C's name at most C's: it never arrived there. A name not in a full
 * frontier it never used. Not known (no frontier, or a name past the
 * newest it lists): no, the wait goes on to its deadline, as before.
 * Its node's count, not this node's view of the store: the news may come
 * before the arrivals it follows are read here, and a barrier the rank
 * passed, or one it timed out at (its arrival stays), is not one it lacks.
 */
static int
short_of(const struct ac_lost *l, const struct ac_coll *c)
{
	size_t kl = strlen(c->key);

	for (const char *p = l->frontier; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n'), *sp = strchr(p, ' ');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);

		if (sp != NULL && sp < p + len && (size_t)(p + len - sp - 1) == kl &&
		    strncmp(sp + 1, c->key, kl) == 0)
			return c->gen >= strtoll(p, NULL, 10);
		p = nl != NULL ? nl + 1 : p + len;
	}
	return l->full;
}

char *
ac_lost_frontier(const struct ac_job *j, long lrank, int *full)
{
	size_t cap = 4096, n = 0;
	char *f = malloc(cap);
	int names = 0;

	*full = 1;
	if (f == NULL)
		return NULL;
	f[0] = '\0';
	/* Newest names first (coll.h): those a job uses now. */
	for (const struct ac_keygen *k = j->keys; k != NULL; k = k->next) {
		int64_t g = lrank >= 0 && lrank < j->lsize ? k->next_gen[lrank] : 0;
		size_t need = strlen(k->key) + 24;

		if (g <= 0)
			continue;
		if (names == AC_LOST_NAMES) {
			*full = 0;
			break;
		}
		if (n + need >= cap) {
			char *nf = realloc(f, cap * 2 + need);

			if (nf == NULL) {
				*full = 0;
				break;
			}
			f = nf;
			cap = cap * 2 + need;
		}
		n += (size_t)snprintf(f + n, cap - n, "%lld %s\n", (long long)g,
		    k->key);
		names++;
	}
	return f;
}

/* Does the list "0, 3, 7" (xmissing) hold NODE? */
static int
listed(const char *list, long node)
{
	for (const char *p = list; *p != '\0';) {
		char *end;
		long n = strtol(p, &end, 10);

		if (end == p)
			return 0;
		if (n == node)
			return 1;
		for (p = end; *p == ',' || *p == ' '; p++)
			;
	}
	return 0;
}

/* Does the list (xmissing) name every node but this one? A list cut short
 * (256 characters) names fewer: no. */
static int
others_missing(const struct ac_job *j, const char *list)
{
	long n = 0;

	for (long node = 0; node < j->nnodes; node++)
		if (node != j->node && listed(list, node))
			n++;
	return n == j->nnodes - 1;
}

/*
 * Does C need lost node L? Only on what the store said after L was known
 * lost: an arrival or a result it left before it died is in the store, and
 * an older look may not show it (the barrier then completes, as it should).
 */
static int
needs_node(const struct ac_job *j, const struct ac_coll *c,
    const struct ac_lost *l)
{
	if (c->scope != AC_SCOPE_JOB || j->nnodes <= 1 ||
	    ac_wall_us() < l->after_us || c->xlook_us < l->after_us)
		return 0;
	/*
	 * This node declared lost by the others (its helper stopped or cut
	 * off): those that looked and missed it left, and withdrew their
	 * arrivals. Once the store has had a bound to bring what it still
	 * owes (a barrier the others completed on this node's arrival
	 * passes), a barrier that every other node is missing from is one
	 * they left, or one whose late comers will find this node missing
	 * in turn: it ends here too. One where another node's arrival
	 * stands is not: that node saw this one (second review: a node merely
	 * slow made the frozen one leave, and its withdrawal then failed the
	 * node that was rightly waiting). A result comes from its source,
	 * alive: no.
	 */
	if (l->node == j->node)
		return c->op == AC_OP_BARRIER && others_missing(j, c->xmissing);
	if (c->op == AC_OP_BARRIER)
		return listed(c->xmissing, l->node);
	return c->src == AC_SRC_NONE && j->node_of != NULL &&
	    j->node_of(j, c->source) == l->node;
}

/* Does C need gone rank L? */
static int
needs(const struct ac_job *j, const struct ac_coll *c, const struct ac_lost *l)
{
	long lr;

	if (l->rank < 0)
		return needs_node(j, c, l);
	lr = local_of(j, l);

	if (c->op == AC_OP_BARRIER) {
		if (lr >= 0)
			return !c->arrived[lr];
		/* Another node's rank: how far it came, as its node counted. A
		 * barrier of this node alone never needs it. */
		return c->scope == AC_SCOPE_JOB && short_of(l, c);
	}
	/* A result: its source, on this node, has not begun (a source that
	 * died running CMD is coll.c's AC_SRC_LOST, exit 3, as before); on
	 * another node, it never came to this generation (one that did, its
	 * result is on its way, or its death is). */
	if (c->src != AC_SRC_NONE)
		return 0;
	if (lr >= 0)
		return c->scope == AC_SCOPE_NODE ? c->source == lr :
		    c->source == l->rank;
	return c->scope == AC_SCOPE_JOB && c->source == l->rank &&
	    short_of(l, c);
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
		free(l->frontier);
		free(l);
	}
}
