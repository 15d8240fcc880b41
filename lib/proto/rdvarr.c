/* rdvarr.c: a barrier's arrivals node by node, as a store's events tell them (etcd's watch), and what they add up to.
 *
 * A store whose events carry every node's arrival (etcd: a key per node,
 * its value the node's failing ranks) leaves the counting here: each node's
 * latest news by the store's revision, so that a listing read before an
 * event that came first cannot undo it; complete when every node is in,
 * with the same result on every node (0, or the lowest failing rank's
 * status, fails.c); else the missing nodes, which a timeout names. Redis
 * counts in its script (one BITFIELD: store.h's fast path) and needs none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "duration.h"
#include "history.h"
#include "fails.h"
#include "rdvarr.h"
#include "rdvjoin.h"
#include "xport.h"

/* A barrier generation's arrivals, as this node has seen them. */
struct arrivals {
	struct arrivals	*next;
	char		 key[AC_KEY_MAX];
	int64_t		 gen;
	long long	*rev;		/* [nnodes] revision of the news */
	long long	*mod;		/* [nnodes] revision of the arrival */
	char		**fails;	/* [nnodes] "rank:status ...", NULL: absent */
};

static struct {
	struct ac_job	*job;
	struct arrivals	*arr;
} A;

void
ac_rdvarr_init(struct ac_job *j)
{
	ac_rdvarr_stop();
	A.job = j;
}

static void
free_arrivals(struct arrivals *a)
{
	for (struct arrivals **p = &A.arr; *p != NULL; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			break;
		}
	for (long n = 0; n < A.job->nnodes; n++)
		free(a->fails[n]);
	free(a->fails);
	free(a->rev);
	free(a->mod);
	free(a);
}

void
ac_rdvarr_stop(void)
{
	while (A.arr != NULL)
		free_arrivals(A.arr);
	memset(&A, 0, sizeof(A));
}

/* The arrivals of barrier KEY GEN, if this node waits there across nodes:
 * made (CREATE) on its first news. */
static struct arrivals *
tracked(const char *key, int64_t gen, int create)
{
	struct ac_coll *c;
	struct arrivals *a;
	long nn;

	if (A.job == NULL || (c = ac_job_find(A.job, key, gen)) == NULL ||
	    c->done || c->op != AC_OP_BARRIER || !ac_coll_cross(A.job, c))
		return NULL;
	for (a = A.arr; a != NULL; a = a->next)
		if (a->gen == gen && strcmp(a->key, key) == 0)
			return a;
	nn = A.job->nnodes;
	if (!create || (a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->rev = calloc((size_t)nn, sizeof(*a->rev));
	a->mod = calloc((size_t)nn, sizeof(*a->mod));
	a->fails = calloc((size_t)nn, sizeof(*a->fails));
	if (a->rev == NULL || a->mod == NULL || a->fails == NULL) {
		free(a->rev);
		free(a->mod);
		free(a->fails);
		free(a);
		return NULL;
	}
	snprintf(a->key, sizeof(a->key), "%s", key);
	a->gen = gen;
	a->next = A.arr;
	A.arr = a;
	return a;
}

static void
news(struct arrivals *a, long node, const char *fails, long long rev,
    long long mod)
{
	if (node < 0 || node >= A.job->nnodes || rev < a->rev[node])
		return;
	a->rev[node] = rev;
	a->mod[node] = fails != NULL ? mod : 0;
	free(a->fails[node]);
	a->fails[node] = fails != NULL ? strdup(fails) : NULL;
}

void
ac_rdvarr_news(const char *key, int64_t gen, long node, const char *fails,
    long long rev, long long mod)
{
	struct arrivals *a = tracked(key, gen, 1);

	if (a == NULL)
		return;
	if (node >= 0) {
		news(a, node, fails, rev, mod);
		return;
	}
	for (long n = 0; n < A.job->nnodes; n++)
		news(a, n, NULL, rev, 0);
}

size_t
ac_rdvarr_value(const struct ac_job *j, const struct ac_coll *c, char *fails,
    size_t n, size_t len)
{
	/* After the failures: fails.c's reader stops at the '@', and so did
	 * that of helpers before it was written. Then, when known, the node's
	 * interval since its previous release (ac_history_since). */
	int64_t d = ac_history_since(j, c);
	int k = d >= 0 ? snprintf(fails + n, len - n, " @%lld ~%lld",
	    (long long)ac_history_last_rank(j, c), (long long)d) :
	    snprintf(fails + n, len - n, " @%lld",
	    (long long)ac_history_last_rank(j, c));

	return k > 0 && (size_t)k < len - n ? n + (size_t)k : n;
}

/* Every node's arrival is in: the result, as every node computes it from
 * the same keys. */
static void
complete(struct arrivals *a)
{
	struct ac_fail *f = NULL;
	size_t nf = 0, cap = 0, more = 0;
	char text[512];
	struct ac_result r = { 0 };
	int64_t lo = -1, hi = -1, sum = 0;
	long known = 0;

	for (long node = 0; node < A.job->nnodes; node++) {
		const char *at = strrchr(a->fails[node], '@');
		const char *til = strrchr(a->fails[node], '~');

		/* The spread of the posts, from every node's interval. */
		if (til != NULL && at != NULL && til > at) {
			int64_t d = strtoll(til + 1, NULL, 10);

			if (d >= 0) {
				known++;
				if (lo < 0 || d < lo) {
					lo = d;
					r.first_node = node;
				}
				if (d > hi)
					hi = d;
			}
		}

		nf = ac_fails_add(a->fails[node], &f, nf, &cap, &more);
		/* The newest arrival completed it: who everyone waited for. */
		if (a->mod[node] > 0 && (!r.last_known || a->mod[node] >
		    a->mod[r.last_node])) {
			r.last_known = 1;
			r.last_node = node;
			r.last_rank = at != NULL ? strtoll(at + 1, NULL, 10) : -1;
		}
	}
	if (known == A.job->nnodes) {
		for (long node = 0; node < A.job->nnodes; node++)
			sum += hi - strtoll(strrchr(a->fails[node], '~') + 1,
			    NULL, 10);
		r.wait_known = 1;
		r.across_ms = hi - lo;
		r.across_sum_ms = sum;
	}
	r.status = ac_fails_text(f, nf, more, text, sizeof(text));
	r.failed = text;
	free(f);
	ac_rdvjoin_progressed();
	ac_job_remote_done(A.job, a->key, a->gen, &r);
}

void
ac_rdvarr_settle(const char *key, int64_t gen)
{
	struct arrivals *a = tracked(key, gen, 0);
	struct ac_coll *c;
	size_t n = 0;
	long missing = 0;

	if (a == NULL)
		return;
	c = ac_job_find(A.job, key, gen);
	c->xmissing[0] = '\0';
	c->xlook_us = ac_wall_us();
	for (long node = 0; node < A.job->nnodes; node++) {
		if (a->fails[node] != NULL)
			continue;
		missing++;
		if (n < sizeof(c->xmissing) - 24)
			n += (size_t)snprintf(c->xmissing + n, sizeof(c->xmissing) - n,
			    "%s%ld", n ? ", " : "", node);
	}
	if (missing == 0) {
		complete(a);
		free_arrivals(a);
	}
}

void
ac_rdvarr_gc(void)
{
	for (struct arrivals *a = A.arr, *next; a != NULL; a = next) {
		const struct ac_coll *c = ac_job_find(A.job, a->key, a->gen);

		next = a->next;
		if (c == NULL || c->done)
			free_arrivals(a);
	}
}
