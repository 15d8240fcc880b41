/* where.c: where the ranks a wait lacks are waiting instead, for its progress and timeout lines.
 *
 * The classic collective bug is ranks at different barriers
 * (`barrier step-$RANK`, a branch taken on one rank only): each wait then
 * names the others as missing, though they are alive and waiting too, at
 * another name. A line that says "rank 1 waits at barrier 'step-1'" points
 * at the bug. This node's ranks are known here (the connections); another
 * node's are known from the record that node tells the rendezvous once a
 * wait of its own has lasted a progress interval, at most once per
 * interval and only when it changed: a wait that ends in seconds costs
 * nothing, and a long one a few small writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "hstate.h"
#include "kind.h"
#include "where.h"
#include "xport.h"

/* How often a node tells where its ranks wait, at most, and how long a
 * wait lasts before it does (ms). */
#define TELL_MS	10000

/* A rank's last wait that ended at its deadline, while it waits nowhere
 * else: two ranks at two names time out together, and the second to go
 * says where the first was. */
struct left {
	char	 key[AC_KEY_MAX];
	int64_t	 gen;
	int	 set;
};

static struct {
	char	*told;		/* the record last told, or NULL */
	long	 next;		/* ms: not before */
	struct left *left;	/* [lsize] */
	long	 nleft;
} W;

void
ac_where_timed_out(long lrank, const char *key, int64_t gen)
{
	struct ac_job *j = &ac_hs.job;

	if (W.left == NULL && j->lsize > 0 &&
	    (W.left = calloc((size_t)j->lsize, sizeof(*W.left))) != NULL)
		W.nleft = j->lsize;
	if (lrank < 0 || lrank >= W.nleft)
		return;
	snprintf(W.left[lrank].key, sizeof(W.left[lrank].key), "%s", key);
	W.left[lrank].gen = gen;
	W.left[lrank].set = 1;
}

void
ac_where_arrived(long lrank)
{
	if (lrank >= 0 && lrank < W.nleft)
		W.left[lrank].set = 0;
}

/* "barrier 'step-1' (generation 0)" of KEY and GEN. */
static void
describe(const char *key, long long gen, char *buf, size_t len)
{
	const struct ac_kind *k = ac_kind_of(key);

	snprintf(buf, len, "%s '%s' (generation %lld)", k != NULL ? k->name :
	    "collective", ac_kind_label(key), gen);
}

int
ac_where_left(long lrank, char *buf, size_t len)
{
	if (lrank < 0 || lrank >= W.nleft || !W.left[lrank].set)
		return 0;
	describe(W.left[lrank].key, (long long)W.left[lrank].gen, buf, len);
	return 1;
}

static size_t
add(char *buf, size_t len, size_t n, const char *fmt, const char *a,
    long long rank, long node, const char *where)
{
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, fmt, a, rank, node, where);
	return n < len ? n : len;
}

void
ac_where_append(const struct ac_coll *co, char *buf, size_t len)
{
	struct ac_job *j = &ac_hs.job;
	size_t n = strlen(buf);
	const char *sep = "; ";
	char w[AC_KEY_MAX + 48];
	long shown = 0;

	/* This node's ranks that the wait lacks, waiting at something else:
	 * a barrier's missing ranks, a result's source. */
	for (long l = 0; l < j->lsize && shown < 8; l++) {
		int lacks = co->op == AC_OP_BARRIER ? !co->arrived[l] :
		    co->scope == AC_SCOPE_NODE ? co->source == l :
		    j->rank_of != NULL && j->rank_of[l] == co->source;

		if (!lacks)
			continue;
		struct ac_hconn *c;

		for (c = ac_hs.conns; c != NULL; c = c->next) {
			if (c->lrank != l || c->coll == NULL || c->coll == co)
				continue;
			describe(c->coll->key, (long long)c->coll->gen, w, sizeof(w));
			n = add(buf, len, n, "%srank %lld (node %ld) waits at %s",
			    sep, (long long)c->rank, j->node, w);
			sep = ", ";
			shown++;
			break;
		}
		if (c == NULL && l < W.nleft && W.left[l].set &&
		    (strcmp(W.left[l].key, co->key) != 0 || W.left[l].gen != co->gen)) {
			describe(W.left[l].key, (long long)W.left[l].gen, w, sizeof(w));
			n = add(buf, len, n, "%srank %lld (node %ld) timed out at %s",
			    sep, j->rank_of != NULL ? (long long)j->rank_of[l] :
			    (long long)l, j->node, w);
			sep = ", ";
			shown++;
		}
	}
	/* Another node's, from its record, for the nodes the wait lacks. */
	if (co->scope != AC_SCOPE_JOB || j->x == NULL || j->x->waits == NULL)
		return;
	for (const char *p = co->xmissing; *p != '\0' && shown < 8;) {
		char *end;
		long node = strtol(p, &end, 10);
		const char *rec = end != p ? j->x->waits(node) : NULL;

		if (end == p)
			break;
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
		for (const char *r = rec; r != NULL && *r != '\0' && shown < 8;) {
			long long rank, gen;
			char key[AC_KEY_MAX];
			const char *nl = strchr(r, '\n');

			if (sscanf(r, "%lld %lld %255s", &rank, &gen, key) == 3 &&
			    (strcmp(key, co->key) != 0 || gen != co->gen)) {
				describe(key, gen, w, sizeof(w));
				n = add(buf, len, n, "%srank %lld (node %ld) waits at %s",
				    sep, rank, node, w);
				sep = ", ";
				shown++;
			}
			r = nl != NULL ? nl + 1 : NULL;
		}
	}
}

long
ac_where_timer(long now)
{
	struct ac_job *j = &ac_hs.job;
	char *rec;
	size_t n = 0, cap = 4096;
	long due = -1;

	if (j->x == NULL || j->x->where == NULL)
		return -1;
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next)
		if (c->coll != NULL && ac_coll_cross(j, c->coll) &&
		    (due < 0 || c->waiting_since + TELL_MS < due))
			due = c->waiting_since + TELL_MS;
	if (due < 0)
		return -1;
	if (due < W.next)
		due = W.next;
	if (now < due)
		return due - now;
	if ((rec = malloc(cap)) == NULL)
		return -1;
	rec[0] = '\0';
	/* A line per rank: its first wait found (a rank waits at one). */
	for (long l = 0; l < j->lsize; l++)
		for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next)
			if (c->lrank == l && c->coll != NULL) {
				if (n < cap)
					n += (size_t)snprintf(rec + n, cap - n,
					    "%lld %lld %s\n", (long long)c->rank,
					    (long long)c->coll->gen, c->coll->key);
				break;
			}
	if (n >= cap)
		rec[cap - 1] = '\0';
	W.next = now + TELL_MS;
	if (W.told != NULL && strcmp(W.told, rec) == 0)
		free(rec);
	else {
		j->x->where(j, rec);
		free(W.told);
		W.told = rec;
	}
	return TELL_MS;
}

void
ac_where_stop(void)
{
	free(W.told);
	W.told = NULL;
	free(W.left);
	W.left = NULL;
	W.nleft = 0;
}
