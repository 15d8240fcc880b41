/* coll.c: a node's view of one job: generations of every name, the collectives
 * in flight, their results, and the abort flag.
 *
 * Every local rank keeps its own count of arrivals at each name: its N-th
 * arrival joins generation N. So a rank that runs ahead waits in the next
 * generation and cannot release the current one, and a short-lived accelctl
 * process needs no state of its own. Every change is told to the job's
 * record (struct ac_coll_rec: the journal) before any client hears of it, so
 * a helper killed at any point is replaced by one that knows every arrival
 * (journal.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "duration.h"
#include "fails.h"
#include "kind.h"

/* Tell the job's record of EVENT, when it keeps one (coll.h). */
#define REC(j, event, ...) do {					\
	if ((j)->rec != NULL && (j)->rec->event != NULL)		\
		(j)->rec->event(__VA_ARGS__);				\
} while (0)

int
ac_job_shape(struct ac_job *j, long lsize, long world, long node, long nnodes)
{
	j->rank_of = malloc((size_t)lsize * sizeof(*j->rank_of));
	if (j->rank_of == NULL)
		return -1;
	for (long i = 0; i < lsize; i++)
		j->rank_of[i] = -1;
	j->lsize = lsize;
	j->world = world;
	j->node = node;
	j->nnodes = nnodes;
	REC(j, shape, j);
	/* Before any arrival is counted: a cross-node barrier must never
	 * complete on this node alone, not even while the journal replays. */
	if (j->shaped != NULL)
		j->shaped(j);
	return 0;
}

static void
coll_free(struct ac_coll *c)
{
	if (c == NULL)
		return;
	free(c->arrived);
	free(c->status);
	free(c->payload);
	free(c->xfailed);
	free(c->t.at);
	free(c);
}

void
ac_job_free(struct ac_job *j)
{
	struct ac_keygen *k, *kn;
	struct ac_coll *c, *cn;

	for (k = j->keys; k != NULL; k = kn) {
		kn = k->next;
		free(k->next_gen);
		free(k->nonce);
		free(k->last_gen);
		coll_free(k->last_done);
		free(k);
	}
	free(j->kbuckets);
	j->kbuckets = NULL;
	j->nkbuckets = j->nkeys = 0;
	for (c = j->colls; c != NULL; c = cn) {
		cn = c->next;
		coll_free(c);
	}
	free(j->rank_of);
	free(j->aborted);
	j->keys = NULL;
	j->colls = NULL;
	j->ncolls = 0;
	j->rank_of = NULL;
	j->aborted = NULL;
}

void
ac_job_hello(struct ac_job *j, long lrank, int64_t rank)
{
	if (j->rank_of[lrank] == rank)
		return;
	j->rank_of[lrank] = rank;
	REC(j, hello, j, lrank, rank);
	if (j->x != NULL)
		j->x->hello(j);
}

/* FNV-1a: names are short and chosen by job scripts, not by an attacker
 * who could gain from collisions (a rank can only slow its own job). */
size_t
ac_key_hash(const char *key)
{
	uint64_t h = 1469598103934665603ULL;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return (size_t)h;
}

struct ac_keygen *
ac_job_key(const struct ac_job *j, const char *key)
{
	if (j->nkbuckets == 0)
		return NULL;
	for (struct ac_keygen *k = j->kbuckets[ac_key_hash(key) % j->nkbuckets];
	    k != NULL; k = k->hnext)
		if (strcmp(k->key, key) == 0)
			return k;
	return NULL;
}

/* Room for one more name: the buckets double when they are all used, so
 * a lookup stays a bucket or two long. -1 on no memory. */
static int
key_room(struct ac_job *j)
{
	size_t n = j->nkbuckets ? 2 * j->nkbuckets : 64;
	struct ac_keygen **b;

	if (j->nkeys < j->nkbuckets)
		return 0;
	if ((b = calloc(n, sizeof(*b))) == NULL)
		return j->nkbuckets > 0 ? 0 : -1;	/* slower, still right */
	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next) {
		size_t i = ac_key_hash(k->key) % n;

		k->hnext = b[i];
		b[i] = k;
	}
	free(j->kbuckets);
	j->kbuckets = b;
	j->nkbuckets = n;
	return 0;
}

static struct ac_keygen *
keygen(struct ac_job *j, const char *key)
{
	struct ac_keygen *k;
	size_t i;

	if ((k = ac_job_key(j, key)) != NULL)
		return k;
	if (key_room(j) == -1 || (k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	k->next_gen = calloc((size_t)j->lsize, sizeof(*k->next_gen));
	k->nonce = calloc((size_t)j->lsize, sizeof(*k->nonce));
	k->last_gen = calloc((size_t)j->lsize, sizeof(*k->last_gen));
	if (k->next_gen == NULL || k->nonce == NULL || k->last_gen == NULL) {
		free(k->next_gen);
		free(k->nonce);
		free(k->last_gen);
		free(k);
		return NULL;
	}
	snprintf(k->key, sizeof(k->key), "%s", key);
	k->next = j->keys;
	j->keys = k;
	i = ac_key_hash(key) % j->nkbuckets;
	k->hnext = j->kbuckets[i];
	j->kbuckets[i] = k;
	j->nkeys++;
	return k;
}

static struct ac_coll *
find_coll(struct ac_job *j, struct ac_keygen *k, int64_t gen)
{
	(void)j;
	/* Newest first (new_coll keeps them so): a new generation is told
	 * at the head, an old one after the few newer in flight. */
	for (struct ac_coll *c = k->colls; c != NULL && c->gen >= gen;
	    c = c->knext)
		if (c->gen == gen)
			return c;
	if (k->last_done != NULL && k->last_done->gen == gen)
		return k->last_done;
	return NULL;
}

static struct ac_coll *
new_coll(struct ac_job *j, struct ac_keygen *k, int op, int scope, int64_t gen,
    int64_t source)
{
	struct ac_coll *c = calloc(1, sizeof(*c)), **pp = &k->colls;

	if (c == NULL)
		return NULL;
	c->arrived = calloc((size_t)j->lsize, 1);
	c->status = calloc((size_t)j->lsize, sizeof(*c->status));
	if (c->arrived == NULL || c->status == NULL) {
		coll_free(c);
		return NULL;
	}
	snprintf(c->key, sizeof(c->key), "%s", k->key);
	c->op = op;
	c->scope = scope;
	c->gen = gen;
	c->source = source;
	c->since_ms = ac_now_ms();
	c->t.last_rank = c->t.last_node = -1;
	c->t.across_us = c->t.across_sum_us = -1;
	c->t.first_node = -1;
	c->next = j->colls;
	j->colls = c;
	j->ncolls++;
	while (*pp != NULL && (*pp)->gen > gen)
		pp = &(*pp)->knext;
	c->knext = *pp;
	*pp = c;
	return c;
}

/* C leaves its name's list of collectives in flight. */
static void
unlink_kcoll(struct ac_keygen *k, struct ac_coll *c)
{
	for (struct ac_coll **pp = &k->colls; *pp != NULL; pp = &(*pp)->knext)
		if (*pp == c) {
			*pp = c->knext;
			break;
		}
	c->knext = NULL;
}

static long source_lrank(const struct ac_job *j, const struct ac_coll *c);

/* The global rank of local rank L, for messages and ordering. */
static int64_t
rank_of(const struct ac_job *j, long l)
{
	return j->rank_of[l];
}

/* Barrier result: all 0, else the status of the lowest failing rank, and
 * the failing ranks named (fails.c). The cost is that of the local ranks,
 * never of the world size: a HELLO claiming 2^60 ranks made a loop over
 * the world spin for ever (tests/fuzz/regress/helper/barrier-huge-world). */
static void
barrier_result(struct ac_job *j, struct ac_coll *c)
{
	struct ac_fail *f;
	size_t n = 0;

	c->result = 0;
	c->failed[0] = '\0';
	for (long l = 0; l < j->lsize; l++)
		n += c->status[l] != 0;
	if (n == 0)
		return;
	if ((f = malloc(n * sizeof(*f))) == NULL) {
		/* Unnamed, but the status stands: the lowest rank's. */
		for (long l = 0, best = -1; l < j->lsize; l++) {
			int64_t r = rank_of(j, l) >= 0 ? rank_of(j, l) : l;

			if (c->status[l] != 0 && (best < 0 || r < best)) {
				best = r;
				c->result = c->status[l];
			}
		}
		return;
	}
	n = 0;
	for (long l = 0; l < j->lsize; l++)
		if (c->status[l] != 0) {
			f[n].rank = rank_of(j, l) >= 0 ? rank_of(j, l) : l;
			f[n++].status = c->status[l];
		}
	c->result = ac_fails_text(f, n, 0, c->failed, sizeof(c->failed));
	free(f);
}

int
ac_coll_cross(const struct ac_job *j, const struct ac_coll *c)
{
	return j->x != NULL && c->scope == AC_SCOPE_JOB &&
	    (j->nnodes > 1 || j->xlocal);
}

int
ac_job_waiting_across(const struct ac_job *j)
{
	for (const struct ac_coll *c = j->colls; c != NULL; c = c->next)
		if (ac_coll_cross(j, c) && !c->done && c->waiters > 0)
			return 1;
	return 0;
}

/* C is released (or its source died): its time, then the helper's waiters. */
static void
tell_released(struct ac_job *j, struct ac_coll *c)
{
	if (!j->replaying) {
		c->t.released = ac_now_us();
		REC(j, released, j, c);
	}
	if (j->released != NULL)
		j->released(j, c);
}

/*
 * Release C when this node has all it needs. Across nodes a barrier first
 * hands this node's outcome to the transport, which releases it later
 * (ac_job_remote_done); a result op publishes a local source's result.
 */
static void
complete(struct ac_job *j, struct ac_coll *c)
{
	int cross = ac_coll_cross(j, c);

	if (c->done)
		return;
	if (c->op == AC_OP_BARRIER) {
		if (c->narrived < j->lsize)
			return;
		barrier_result(j, c);
		if (cross) {
			if (!c->xsent) {
				c->xsent = 1;
				c->xwd = 0;	/* posted again: nothing to take back */
				if (!j->replaying)
					c->t.posted = ac_now_us();
				j->x->arrive(j, c);
			}
			return;
		}
	} else if (c->src != AC_SRC_DONE) {
		/* Asked of the transport only when the source is elsewhere: a
		 * local one's result comes from here (a journal replayed with
		 * thousands still running asked as many at once). The sweep
		 * after a (re)connect still asks for a running one. */
		if (cross && !c->xsent && c->src == AC_SRC_NONE) {
			c->xsent = 1;
			j->x->want(j, c);
		}
		return;
	} else if (cross)
		j->x->publish(j, c);
	c->done = 1;
	j->changes++;
	tell_released(j, c);
}

struct ac_coll *
ac_job_find(struct ac_job *j, const char *key, int64_t gen)
{
	struct ac_keygen *k = ac_job_key(j, key);

	return k != NULL ? find_coll(j, k, gen) : NULL;
}

void
ac_job_remote_done(struct ac_job *j, const char *key, int64_t gen,
    const struct ac_result *r)
{
	struct ac_coll *c = ac_job_find(j, key, gen);

	j->xreached = 1;
	if (c == NULL || c->done || c->src == AC_SRC_LOST)
		return;
	j->changes++;
	if (r->lost) {
		c->src = AC_SRC_LOST;
		REC(j, lost, j, c);
		tell_released(j, c);
		return;
	}
	/* A barrier completed across nodes counted this node's arrival, so
	 * every local rank had arrived: one that withdrew since came too late
	 * (the others passed first) and stays past it with them. Moved back,
	 * a rerun under the same job id found its generations shifted, and
	 * both its ranks waited to their deadlines (review of issue 18). */
	if (c->op == AC_OP_BARRIER && c->narrived < j->lsize) {
		struct ac_keygen *k = ac_job_key(j, key);

		for (long l = 0; k != NULL && l < j->lsize; l++)
			if (!c->arrived[l] && k->next_gen[l] == gen) {
				k->next_gen[l] = gen + 1;
				c->arrived[l] = 1;
				c->narrived++;
			}
		c->xwd = 0;	/* nothing left to take back */
	}
	c->result = r->status;
	if (r->last_known) {
		c->t.last_node = r->last_node;
		c->t.last_rank = r->last_rank;
	}
	if (r->wait_known) {
		c->t.across_us = r->across_ms * 1000;
		c->t.across_sum_us = r->across_sum_ms * 1000;
		c->t.first_node = r->first_node;
	}
	/* A transport may hand back C's own text (a one-node NCCL job). */
	if (r->failed != c->failed)
		snprintf(c->failed, sizeof(c->failed), "%s", r->failed != NULL ?
		    r->failed : "");
	free(c->payload);
	c->payload = NULL;
	c->paylen = r->paylen;
	if (c->paylen > 0 && (c->payload = malloc(c->paylen)) == NULL)
		c->paylen = 0;
	if (c->paylen > 0)
		memcpy(c->payload, r->payload, c->paylen);
	c->done = 1;
	/* Before any rank hears of it: a replaced helper must know it is over. */
	REC(j, remote, j, c);
	tell_released(j, c);
}

static long
source_lrank(const struct ac_job *j, const struct ac_coll *c)
{
	if (c->scope == AC_SCOPE_NODE)
		return (long)c->source;
	for (long l = 0; l < j->lsize; l++)
		if (j->rank_of[l] == c->source)
			return l;
	return -1;
}

int
ac_key_valid(const char *key)
{
	size_t n;

	if (ac_kind_of(key) == NULL)	/* a letter of the kinds' table, ':' */
		return 0;
	n = strspn(key + 2, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._:-");
	return n > 0 && key[2 + n] == '\0' && n + 2 < AC_KEY_MAX;
}

struct ac_coll *
ac_job_arrive(struct ac_job *j, long lrank, int op, int scope, int role,
    const char *key, uint64_t nonce, int64_t gen, int64_t source,
    int64_t status, const char **why)
{
	struct ac_keygen *k;
	struct ac_coll *c;

	/* Checked here, where the live helper and the journal's replay meet:
	 * status and the transports take the name after the kind's ':'. */
	if (!ac_key_valid(key)) {
		*why = "invalid key (a kind letter, ':', then a name of A-Z a-z "
		    "0-9 . _ : -)";
		return NULL;
	}
	if (ac_kind_of(key)->op != op) {
		*why = "invalid operation for this kind of key";
		return NULL;
	}
	if (scope != AC_SCOPE_JOB && scope != AC_SCOPE_NODE) {
		*why = "invalid scope";
		return NULL;
	}
	/* A node-scope source is a local rank: one past the node's size
	 * would index past its arrays (a client's word, never trusted). */
	if (lrank < 0 || lrank >= j->lsize || source < 0 ||
	    (scope == AC_SCOPE_NODE && op == AC_OP_RESULT && source >= j->lsize)) {
		*why = "invalid rank";
		return NULL;
	}
	k = keygen(j, key);
	*why = "out of memory";
	if (k == NULL)
		return NULL;
	if (gen < 0 && nonce != 0 && k->nonce[lrank] == nonce)
		gen = k->last_gen[lrank];	/* a retry: the ACK was lost */
	if (gen < 0 || gen >= k->next_gen[lrank]) {
		if (gen < 0)
			gen = k->next_gen[lrank];
		/* A lying client or journal: the count below must not overflow
		 * (tests/fuzz/regress/helper/arrive-gen-max). */
		if (gen == INT64_MAX) {
			*why = "generation out of range";
			return NULL;
		}
		k->next_gen[lrank] = gen + 1;
		k->nonce[lrank] = nonce;
		k->last_gen[lrank] = gen;
		j->changes++;
		REC(j, arrive, j, lrank, op, scope, role, key, nonce, gen,
		    source, status);
	}
	if ((c = find_coll(j, k, gen)) == NULL) {
		/* An old generation nobody keeps: it was released long ago. */
		if (k->last_done != NULL && gen < k->last_done->gen) {
			*why = "generation already released and forgotten";
			return NULL;
		}
		if ((c = new_coll(j, k, op, scope, gen, source)) == NULL)
			return NULL;
	}
	if (c->op != op || c->scope != scope || c->source != source) {
		*why = "ranks disagree on what this name is (barrier, broadcast "
		    "or --wait, or the source rank)";
		return NULL;
	}
	if (!c->arrived[lrank]) {
		c->arrived[lrank] = 1;
		c->status[lrank] = status;
		c->narrived++;
		j->changes++;
	}
	if (role == AC_ROLE_SOURCE && c->src == AC_SRC_NONE)
		c->src = AC_SRC_RUNNING;
	if (!j->replaying)
		REC(j, arrived, j, c, lrank);	/* before it may complete */
	else
		c->t.replayed = 1;
	complete(j, c);
	return c;
}

int
ac_job_counter(struct ac_job *j, long lrank, const char *key,
    int64_t next_gen, int64_t last_gen, uint64_t nonce)
{
	struct ac_keygen *k;

	if (!ac_key_valid(key) || lrank < 0 || lrank >= j->lsize ||
	    next_gen < 0 || next_gen == INT64_MAX || last_gen < 0 ||
	    (k = keygen(j, key)) == NULL)
		return -1;	/* INT64_MAX: a next generation has none after it */
	k->next_gen[lrank] = next_gen;
	k->last_gen[lrank] = last_gen;
	k->nonce[lrank] = nonce;
	return 0;
}

long
ac_coll_source_lrank(const struct ac_job *j, const struct ac_coll *c)
{
	return source_lrank(j, c);
}

void
ac_job_finish(struct ac_job *j, struct ac_coll *c, int64_t status,
    const uint8_t *p, size_t n)
{
	if (c->src == AC_SRC_DONE)
		return;
	j->changes++;
	free(c->payload);
	c->payload = NULL;
	if (n > 0 && (c->payload = malloc(n)) == NULL)
		n = 0;
	if (n > 0)
		memcpy(c->payload, p, n);
	c->paylen = n;
	c->result = status;
	c->src = AC_SRC_DONE;
	if (!j->replaying)
		c->t.finished = ac_now_us();
	REC(j, finish, j, c);
	complete(j, c);
}

void
ac_job_source_lost(struct ac_job *j, struct ac_coll *c)
{
	if (c->src != AC_SRC_RUNNING)
		return;
	j->changes++;
	c->src = AC_SRC_LOST;
	REC(j, lost, j, c);
	if (ac_coll_cross(j, c))
		j->x->publish(j, c);
	tell_released(j, c);
}

int
ac_job_withdraw(struct ac_job *j, long lrank, const char *key, int64_t gen)
{
	struct ac_keygen *k = ac_job_key(j, key);
	struct ac_coll *c = NULL;

	/* next_gen - 1, not gen + 1: a journal's W record may say INT64_MAX. */
	if (k == NULL || lrank < 0 || lrank >= j->lsize ||
	    k->next_gen[lrank] - 1 != gen)
		return -1;
	if ((c = find_coll(j, k, gen)) == k->last_done)
		c = NULL;	/* released: nothing to take back */
	if (c == NULL || c->done || c->src == AC_SRC_LOST || !c->arrived[lrank] ||
	    (c->op == AC_OP_RESULT && source_lrank(j, c) == lrank))
		return -1;
	/* Posted across nodes by a transport that cannot take it back
	 * (NCCL): the arrival stands, as it did before withdrawals. */
	if (c->xsent && c->op == AC_OP_BARRIER && (j->x == NULL ||
	    j->x->withdraw == NULL))
		return -1;
	REC(j, withdraw, j, lrank, c);
	j->changes++;
	c->arrived[lrank] = 0;
	c->status[lrank] = 0;
	c->narrived--;
	if (c->t.at != NULL)
		c->t.at[lrank] = 0;	/* its next arrival is the one */
	k->next_gen[lrank] = gen;
	k->nonce[lrank] = 0;
	if (c->xsent && c->op == AC_OP_BARRIER) {
		c->xsent = 0;
		c->xwd = 1;
		j->x->withdraw(j, c);
	} else if (c->op == AC_OP_RESULT)
		c->xsent = 0;	/* asked for again when a rank waits again */
	return 0;
}

void
ac_job_abort(struct ac_job *j, long lrank, const char *reason)
{
	char text[600];
	size_t n;

	if (j->aborted != NULL)
		return;
	if (lrank >= 0 && rank_of(j, lrank) >= 0)
		n = (size_t)snprintf(text, sizeof(text), "rank %lld: ",
		    (long long)rank_of(j, lrank));
	else
		n = (size_t)snprintf(text, sizeof(text), "%s", "");
	snprintf(text + n, sizeof(text) - n, "%s", *reason ? reason :
	    "no reason given");
	/* One line: the reason ends up in journals and messages. */
	for (char *p = text; *p != '\0'; p++)
		if ((unsigned char)*p < ' ')
			*p = ' ';
	if ((j->aborted = strdup(text)) == NULL)
		return;
	REC(j, abort, j, lrank, reason);
	if (j->x != NULL && (j->nnodes > 1 || j->xlocal))
		j->x->abort(j);
	if (j->aborting != NULL)
		j->aborting(j);
}

void
ac_job_abort_remote(struct ac_job *j, const char *text)
{
	if (j->aborted != NULL || (j->aborted = strdup(text)) == NULL)
		return;
	/* Journaled as coming from nowhere (-1): a restart must remember it. */
	REC(j, abort, j, -1, text);
	if (j->aborting != NULL)
		j->aborting(j);
}

void
ac_job_gc(struct ac_job *j)
{
	struct ac_coll **pp = &j->colls, *c;

	while ((c = *pp) != NULL) {
		int finished = c->done || c->src == AC_SRC_LOST;

		/* Every rank withdrew (and the transport was told): nobody
		 * is there, and status must not list it. */
		struct ac_keygen *k;

		if (!finished && c->narrived == 0 && c->waiters == 0 && !c->xwd &&
		    !c->xsent) {
			*pp = c->next;
			j->ncolls--;
			if ((k = keygen(j, c->key)) != NULL)
				unlink_kcoll(k, c);
			coll_free(c);
			continue;
		}
		if (!finished || c->narrived < j->lsize || c->waiters > 0) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		c->next = NULL;
		j->ncolls--;
		j->changes++;
		REC(j, collected, j, c);
		if ((k = keygen(j, c->key)) != NULL)
			unlink_kcoll(k, c);
		if (k != NULL && (k->last_done == NULL || k->last_done->gen < c->gen) &&
		    (k->last_done == NULL || k->last_done->waiters == 0)) {
			coll_free(k->last_done);
			k->last_done = c;
		} else
			coll_free(c);
	}
}

/*
 * The global rank of a local rank that never connected, when the ranks that
 * did connect show a block layout on this node (at least two of them, all
 * with rank - local rank equal); else -1. Never guessed from one rank alone:
 * a cyclic layout would make the guess wrong.
 */
static int64_t
guess_rank(const struct ac_job *j, long l)
{
	int64_t base = -1;
	long known = 0;

	for (long i = 0; i < j->lsize; i++) {
		if (j->rank_of[i] < 0)
			continue;
		if (known++ > 0 && j->rank_of[i] - i != base)
			return -1;
		base = j->rank_of[i] - i;
	}
	return known >= 2 ? base + l : -1;
}

int
ac_job_unseen(const struct ac_job *j)
{
	for (long l = 0; j->rank_of != NULL && l < j->lsize; l++)
		if (rank_of(j, l) < 0)
			return 1;
	return 0;
}

void
ac_coll_summary(const struct ac_job *j, const struct ac_coll *c, char *buf,
    size_t len)
{
	size_t n;
	long shown = 0, missing = 0, sl;
	const char *why;

	if (c->op == AC_OP_RESULT) {
		sl = source_lrank(j, c);
		if (c->scope == AC_SCOPE_NODE || sl >= 0)
			snprintf(buf, len, "%s %lld (node %ld) %s",
			    c->scope == AC_SCOPE_NODE ? "local rank" : "rank",
			    (long long)c->source, j->node,
			    c->src == AC_SRC_RUNNING ? "is still running CMD" :
			    c->src == AC_SRC_LOST ? "died" : "has not arrived yet");
		else if (c->src == AC_SRC_LOST)
			/* Its node posted "lost": it died there. */
			snprintf(buf, len, "rank %lld (another node) died",
			    (long long)c->source);
		else
			/* On another node: it may be running CMD there. */
			snprintf(buf, len, "rank %lld (another node) has not "
			    "sent its result yet",
			    (long long)c->source);
		return;
	}
	if (c->narrived == j->lsize && c->xsent && j->nnodes == 1) {
		snprintf(buf, len, "all %ld ranks arrived; waiting for the NCCL "
		    "all-reduce", j->lsize);
		return;
	}
	if (c->narrived == j->lsize && c->xsent && j->x != NULL &&
	    j->x->pending != NULL && (why = j->x->pending()) != NULL) {
		/* Not posted: "other nodes" would send the reader to them. */
		snprintf(buf, len, "all %ld ranks of node %ld arrived; not "
		    "posted: waiting for %s", j->lsize, j->node, why);
		return;
	}
	if (c->narrived == j->lsize && c->xsent && c->xmissing[0] == '\0') {
		snprintf(buf, len, "all %ld ranks of node %ld arrived; waiting for "
		    "other nodes (which ones is not known yet)", j->lsize, j->node);
		return;
	}
	if (c->narrived == j->lsize && c->xsent) {
		/* Name the missing nodes, with their hosts and ranks when known. */
		n = (size_t)snprintf(buf, len, "all %ld ranks of node %ld arrived; "
		    "waiting for node%s", j->lsize, j->node,
		    strchr(c->xmissing, ',') ? "s" : "");
		for (const char *p = c->xmissing; *p != '\0' && n < len;) {
			long node = strtol(p, (char **)&p, 10);
			const char *name = j->x->node(node);

			n += (size_t)snprintf(buf + n, len - n, " %ld", node);
			if (name != NULL && n < len)
				n += (size_t)snprintf(buf + n, len - n, " (%s)", name);
			while (*p == ',' || *p == ' ')
				p++;
			if (*p != '\0' && n < len)
				n += (size_t)snprintf(buf + n, len - n, ";");
		}
		return;
	}
	n = (size_t)snprintf(buf, len, "%ld/%ld arrived; missing:",
	    c->narrived, j->lsize);
	for (long l = 0; l < j->lsize && n < len; l++) {
		if (c->arrived[l])
			continue;
		missing++;
		if (shown++ >= 16)
			continue;
		if (rank_of(j, l) >= 0)
			n += (size_t)snprintf(buf + n, len - n, " rank %lld (node %ld)%s",
			    (long long)rank_of(j, l), j->node, ",");
		else if (guess_rank(j, l) >= 0)
			n += (size_t)snprintf(buf + n, len - n,
			    " rank %lld (node %ld, never connected)%s",
			    (long long)guess_rank(j, l), j->node, ",");
		else
			n += (size_t)snprintf(buf + n, len - n,
			    " local rank %ld of node %ld (never connected)%s", l,
			    j->node, ",");
	}
	if (missing > 16 && n < len)
		n += (size_t)snprintf(buf + n, len - n, " and %ld more,", missing - 16);
	if (n > 0 && n < len && buf[n - 1] == ',')
		buf[n - 1] = '\0';
}

void
ac_job_status(const struct ac_job *j, char *buf, size_t len)
{
	size_t n;
	long now = ac_now_ms();
	int any = 0;

	n = (size_t)snprintf(buf, len, "job %s, node %ld of %ld, %ld local "
	    "rank%s%s%s\n", j->id, j->node, j->nnodes, j->lsize,
	    j->lsize == 1 ? "" : "s", j->aborted ? ", ABORTED: " : "",
	    j->aborted ? j->aborted : "");
	for (const struct ac_coll *c = j->colls; c != NULL && n < len; c = c->next) {
		char sum[1024];

		/* Nor one the transport failed for good (its waiters exited
		 * 125, later ones will): it waits for nothing, as a lost
		 * source's does not. One every rank left is listed while the
		 * transport still owes its withdrawal: the other nodes still
		 * count this node's arrival. */
		if (c->done || c->src == AC_SRC_LOST || c->xfailed != NULL ||
		    (c->narrived == 0 && !c->xwd))
			continue;
		ac_coll_summary(j, c, sum, sizeof(sum));
		if (c->xwd)
			snprintf(sum + strlen(sum), sizeof(sum) - strlen(sum),
			    " (taking back node %ld's arrival across nodes)",
			    j->node);
		n += (size_t)snprintf(buf + n, len - n,
		    "%-10s %-24s generation %-4lld waiting %lds: %s\n",
		    ac_kind_of(c->key) != NULL ? ac_kind_of(c->key)->name : "?",
		    ac_kind_label(c->key),
		    (long long)c->gen, (now - c->since_ms) / 1000, sum);
		any = 1;
	}
	if (!any && n < len)
		snprintf(buf + n, len - n, "nothing in flight\n");
}
