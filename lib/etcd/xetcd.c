/* xetcd.c: the etcd transport: arrivals, results, abort and the run identity as etcd v3 keys, over econn.c.
 *
 * Only node helpers talk to etcd. Per barrier generation each node sends one
 * txn: if its arrival key does not exist yet (compare create_revision == 0),
 * put it; either way read the generation's arrivals. The rest comes through
 * one watch stream per helper, on the run's whole prefix, from the revision it
 * last saw: other nodes' arrivals, results of --wait, broadcast and
 * main-first, an abort, node names, a newer run. A barrier completes on each
 * node when it has seen every node's arrival; every node computes the same
 * result from the same keys (the lowest failing rank's status), so nothing
 * else is written. One request per node per barrier, whatever the ranks.
 *
 * Keys (DESIGN-NOTES "The etcd rendezvous"): accelctl/JOB/run (the run
 * counter) and, under accelctl/JOB/rRUN/ (watched): members/NODE,
 * arr/KEY/GEN/NODE, wd/KEY/GEN/NODE (withdrawn), done/KEY/GEN, abort,
 * nodes/NODE, closed, ping/NODE, pong/NODE; beside it (not watched) a large
 * result's parts, pRUN/KEY/GEN/I, and what each node has read, sRUN/KEY/NODE.
 * Every key is put with this helper's lease, kept alive while the helper
 * lives, so that a job's keys go away a TTL after its helpers did; finished
 * generations are deleted sooner, once no node can need them (the watch asks
 * for puts only, so deleting costs the watchers nothing).
 *
 * What this node knows of a generation's arrivals carries, per node, the
 * revision of the news: a txn's reading at revision R and a watch event at
 * revision E may come in either order, and only the newer counts. After
 * every reconnect the helper registers again and posts everything in flight
 * (the txns are idempotent), and the watch resumes after the last revision
 * it delivered; a compacted revision is read again instead.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "coll.h"
#include "duration.h"
#include "econn.h"
#include "ejson.h"
#include "fails.h"
#include "kind.h"
#include "log.h"
#include "rdvarr.h"
#include "rdvkeep.h"
#include "rdvproto.h"
#include "ttl.h"
#include "xetcd.h"
#include "xvalue.h"

#define KEY_MAX 1024
/*
 * A result larger than this is written as parts of this size, one request
 * each: etcd refuses a request over its --max-request-bytes (1.5 MiB by
 * default), and base64 makes 512 KiB about 0.7 MB on the wire.
 */
#define PART_MAX (512 << 10)
#define VALUE_MAX ((16 << 20) + 4096)
#define UPLOADS_MAX (256 << 20)
/*
 * While a node waits across nodes, it checks this often that its member
 * still answers, and what: a watch on a member that hangs (a frozen
 * machine: the kernel still answers TCP keepalives) or that lost its
 * leader (a partition) stays open and silent, and the node waited until its
 * deadline while the others passed. The check is a (linearizable) range
 * read of its member key: one that stalls (5 s) resets the connection (the
 * next endpoint, the watch again); one refused (auth enabled since: etcd
 * 3.4 checks no keepalive against it) fails the rendezvous at once, as for
 * every rank that arrives after; a key gone is lost_keys().
 */
#define ALIVE_MS 3000

/* Uploads to write: newest first, with their bytes, so that neither a
 * bound nor an unlink walks the list (a replaced helper publishes
 * each of its journal's results again: 20,000 names were their square). */
struct ulist {
	struct upload	*head, *tail;
	size_t		 bytes;		/* values and bookkeeping */
};

/* At most this many uploads have a put out at once; the rest wait their
 * turn. 20,000 at once (a journal's results published again) were as many
 * libcurl transfers: 560 MB here, etcd at 1.4 GB, the helper's clients
 * refused, the next barrier waited to its deadline. */
#define UPLOADS_BUSY 8
/* The same for the acks that say a result was read here, one a name. */
#define ACKS_BUSY 8

/* A result to write: its parts, one put at a time, then its key. Kept
 * until etcd has it: a source runs ahead of a helper not yet registered (or
 * reconnecting), and coll.c keeps only the last result of a name. Then
 * kept (rdvkeep.c) to write again should etcd lose our lease, and them with
 * it, while a node has not read them. */
struct upload {
	struct upload	*next, *prev;	/* newest first, on one ulist */
	struct ulist	*on;
	char		 key[AC_KEY_MAX];
	int64_t		 gen;
	char		*v;		/* the kept one's, or our own */
	struct ac_kept	*kept;		/* written again: the pass' */
	size_t		 len, nparts, part;
	int		 busy;		/* a put is out */
	int		 restart;	/* etcd lost what was put: from part 0 */
};

/* A result in parts being read back, one part at a time. */
struct fetch {
	struct fetch	*next;
	char		 key[AC_KEY_MAX];
	int64_t		 gen;
	char		*v;
	size_t		 len, total, nparts, part;
};

/* A result's name: the last generation every rank of this node has read. */
struct seen {
	struct seen	*next;
	struct seen	*hnext;		/* the same hash bucket */
	char		 key[AC_KEY_MAX];
	int64_t		 acked;		/* etcd knows; -1: none yet */
	int64_t		 said;		/* the most this node said, by this
					 * helper or one it replaced; -1 */
	int64_t		 sending;	/* in flight, or -1 */
	int64_t		 del;		/* read by all up to here: delete; -1 */
	int		 deleting;	/* that delete is in flight */
	int64_t		 deleting_gen;	/* of this generation */
	int		 again;		/* a put may have landed after it */
	unsigned long	 sending_loss;	/* X.losses when sent */
};

static struct {
	struct ac_job	*job;
	struct ac_runid	*runid;
	long		 ttl;		/* s, the lease's */
	long long	 lease;		/* 0: none granted yet */
	long		 last_keepalive;	/* ms, sent */
	long		 last_check;	/* ms, sent (ALIVE_MS) */
	unsigned long	 epoch;		/* registrations so far */
	unsigned long	 losses;	/* repost_lost() so far */
	char		 base[AC_KEY_MAX + 32];		/* accelctl/JOB/ */
	char		 prefix[AC_KEY_MAX + 64];	/* accelctl/JOB/rRUN/ */
	long long	 join_rev;	/* the registration's revision (its member key's) */
	int		 lease_lost;	/* every key we put is gone: repost */
	long long	 last_rev;	/* the watch delivered up to here */
	long		 watch_run;	/* the run last_rev belongs to */
	struct ulist	 uploads;
	int		 rewrite;	/* the sweep writes every kept one again */
	int		 nbusy;		/* uploads with a put out */
	struct fetch	*fetches;
	struct seen	*seen;
	struct seen	**seen_b;	/* by name: a look-up per result and
					 * per tick is no walk of every name */
	size_t		 seen_nb, nseen;
	int		 deletes_due;	/* a seen's del waits to be sent */
	/* acks() walks every name only after the job changed, or when this
	 * is set (registered, a lost lease, an ack answered or not sent). */
	int		 acks_due;
	unsigned long	 acks_changes;	/* the job's changes at that walk */
	struct ac_keygen *acks_next;	/* a walk stopped at ACKS_BUSY: on here */
	int		 nacks;		/* acks out */
	struct req	*posts;		/* arrivals and withdrawals out */
} X;

struct req {
	char	key[AC_KEY_MAX];
	int64_t	gen;
	/* A barrier's arrival or withdrawal in flight (X.posts): the other,
	 * asked for meanwhile, waits for its reply (redo). libcurl runs
	 * requests side by side on as many connections, and etcd applies them
	 * in the order they reach it: a withdrawal sent while the arrival was
	 * out could be applied first, and the arrival then stood (etcd.faults.4
	 * testKillWaitingRank under ASan: the barrier passed on a dead rank). */
	struct req *next;
	int	 redo;
};

static void sweep(void);
static void s_join(void);
static void x_want(struct ac_job *j, struct ac_coll *c);
static void uploads(void);
static void deletes(void);

static int
ready(void)
{
	return ac_rdvjoin_ready();
}

/* --- JSON of etcd's gateway (ejson.c) --- */

/* A put with this helper's lease. */
static json_t *
op_put(const char *key, const void *v, size_t len)
{
	return ej_put(key, v, len, X.lease);
}

/* --- keys --- */

static void
keyname(char *buf, size_t len, const char *kind, const char *key, int64_t gen)
{
	if (key == NULL)
		snprintf(buf, len, "%s%s", X.prefix, kind);
	else
		snprintf(buf, len, "%s%s/%s/%" PRId64 "/", X.prefix, kind, key, gen);
}

/* A protocol key's (store.h): one that begins with '~' is quiet, outside
 * the run's watched prefix (qRUN/ beside rRUN/): no node's watch streams
 * it (the beats: one write each, not one event per node). */
static void
proto_key(char *buf, size_t len, const char *key)
{
	if (key[0] == '~')
		snprintf(buf, len, "%sq%ld/%s", X.base, X.runid->run, key + 1);
	else
		keyname(buf, len, key, NULL, 0);
}

static void
arr_key(char *buf, size_t len, const char *key, int64_t gen, long node)
{
	char kind[AC_KEY_MAX + 64];

	snprintf(kind, sizeof(kind), "arr/%s/%" PRId64 "/%ld", key, gen, node);
	keyname(buf, len, kind, NULL, 0);
}

/*
 * A result's key. Its generation has 20 digits, as have those of its parts
 * and of the nodes' "seen" keys: byte order is then number order, so one
 * range deletes every generation up to one, and a txn can compare them.
 */
/* A withdrawn arrival's announcement (s_unpost): wd/KEY/GEN/NODE. */
static void
wd_key(char *buf, size_t len, const char *key, int64_t gen, long node)
{
	char kind[AC_KEY_MAX + 64];

	snprintf(kind, sizeof(kind), "wd/%s/%" PRId64 "/%ld", key, gen, node);
	keyname(buf, len, kind, NULL, 0);
}

static void
done_key(char *buf, size_t len, const char *key, int64_t gen)
{
	char kind[AC_KEY_MAX + 48];

	snprintf(kind, sizeof(kind), "done/%s/%020" PRId64, key, gen);
	keyname(buf, len, kind, NULL, 0);
}

/* Part I of a result, outside the run's prefix so that the watch does not
 * carry it to every node: accelctl/JOB/pRUN/KEY/GEN/I. GEN -1: the prefix
 * of KEY's parts. */
static void
part_key(char *buf, size_t len, const char *key, int64_t gen, size_t i)
{
	if (gen < 0)
		snprintf(buf, len, "%sp%ld/%s/", X.base, X.runid->run, key);
	else
		snprintf(buf, len, "%sp%ld/%s/%020" PRId64 "/%zu", X.base,
		    X.runid->run, key, gen, i);
}

/* The last generation of result KEY that every rank of NODE has read:
 * accelctl/JOB/sRUN/KEY/NODE, outside the watched prefix too. */
static void
seen_key(char *buf, size_t len, const char *key, long node)
{
	snprintf(buf, len, "%ss%ld/%s/%ld", X.base, X.runid->run, key, node);
}

static void
node_key(char *buf, size_t len, const char *kind, long run, long node)
{
	snprintf(buf, len, "%sr%ld/%s/%ld", X.base, run, kind, node);
}

/* --- results --- */

static void
fetch_free(struct fetch *f)
{
	for (struct fetch **p = &X.fetches; *p != NULL; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	free(f->v);
	free(f);
}

static void fetch_next(struct fetch *f);

static void
on_fetch(json_t *reply, void *priv)
{
	struct fetch *f = priv;
	json_t *kv = reply != NULL ? json_array_get(ej_kvs(reply, -1), 0) : NULL;
	char *v = NULL;
	size_t vl = 0;

	if (reply == NULL) {
		fetch_free(f);	/* reset: sweep() asks for the result again */
		return;
	}
	if (kv == NULL || (v = ej_kv_field(kv, "value", &vl)) == NULL ||
	    vl > f->total - f->len) {
		struct ac_coll *c = ac_job_find(X.job, f->key, f->gen);

		ac_log("rendezvous: part %zu of %s generation %" PRId64
		    " is %s", f->part, f->key, f->gen, kv == NULL ? "gone" :
		    "malformed");
		free(v);
		fetch_free(f);
		/* Deleted under us (every node said it read it: a replaced
		 * helper replays its journal): ask again, and the result's
		 * key is gone too, with what this node said. It stayed in
		 * flight for good (review of etcd.keys). Parts and key go in
		 * one txn: no loop. */
		if (kv == NULL && c != NULL && !c->done)
			x_want(X.job, c);
		return;
	}
	memcpy(f->v + f->len, v, vl);
	f->len += vl;
	free(v);
	if (++f->part < f->nparts) {
		fetch_next(f);
		return;
	}
	if (f->len == f->total)
		ac_rdvproto_deliver(f->key, f->gen, f->v, f->len);
	else
		ac_log("rendezvous: the parts of %s generation %" PRId64
		    " hold %zu bytes, not %zu", f->key, f->gen, f->len, f->total);
	fetch_free(f);
}

static void
fetch_next(struct fetch *f)
{
	char key[KEY_MAX];

	part_key(key, sizeof(key), f->key, f->gen, f->part);
	if (ac_econn_call("/v3/kv/range", json_pack("{s:o}", "key", ej_b64s(key)),
	    on_fetch, f) == -1)
		fetch_free(f);
}

/*
 * A result's key says "P PARTS BYTES": its value was written as parts before
 * the key (so a reader never sees a partial value). Read them in turn and
 * join them, once per result this node still waits for.
 */
static void
fetch_start(const char *key, int64_t gen, const char *v)
{
	struct ac_coll *c = ac_job_find(X.job, key, gen);
	unsigned long long nparts, total;
	struct fetch *f;

	if (c == NULL || c->done || c->op != AC_OP_RESULT)
		return;
	if (sscanf(v, "P %llu %llu", &nparts, &total) != 2 || total == 0 ||
	    total > VALUE_MAX || nparts != (total + PART_MAX - 1) / PART_MAX) {
		ac_log("rendezvous: %s generation %" PRId64 ": not a "
		    "result", key, gen);
		return;
	}
	for (f = X.fetches; f != NULL; f = f->next)
		if (f->gen == gen && strcmp(f->key, key) == 0)
			return;		/* under way */
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->v = malloc((size_t)total)) == NULL) {
		free(f);
		return;
	}
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->gen = gen;
	f->total = (size_t)total;
	f->nparts = (size_t)nparts;
	f->next = X.fetches;
	X.fetches = f;
	fetch_next(f);
}

/*
 * What a result's key holds: the result; "P PARTS BYTES", a result in
 * parts; or "F why", a result its source could not write (etcd refused it
 * as too large): this node's waiters fail alike (125) with the reason.
 */
static void
got_value(const char *key, int64_t gen, const char *v, size_t len)
{
	struct ac_coll *c;

	if (len >= 2 && v[0] == 'P' && v[1] == ' ')
		fetch_start(key, gen, v);
	else if (len >= 2 && v[0] == 'F' && v[1] == ' ') {
		c = ac_job_find(X.job, key, gen);
		if (c != NULL && !c->done && c->xfailed == NULL &&
		    X.job->failed != NULL)
			X.job->failed(X.job, c, v + 2);
	} else
		ac_rdvproto_deliver(key, gen, v, len);
}

/* --- the collective steps --- */

static struct req *
new_req(const struct ac_coll *c)
{
	struct req *r = malloc(sizeof(*r));

	if (r != NULL) {
		snprintf(r->key, sizeof(r->key), "%s", c->key);
		r->gen = c->gen;
		r->next = NULL;
		r->redo = 0;
	}
	return r;
}

/*
 * Barrier C's arrival or withdrawal is out: what C wants now is sent once
 * its reply came (1). Else 0: nothing of C is out.
 */
static int
post_busy(const struct ac_coll *c)
{
	for (struct req *r = X.posts; r != NULL; r = r->next)
		if (r->gen == c->gen && strcmp(r->key, c->key) == 0) {
			r->redo = 1;
			return 1;
		}
	return 0;
}

/* Send TXN, C's arrival or withdrawal (R), listed as out until CB. */
static void
post_send(struct req *r, json_t *txn, ac_econn_cb *cb)
{
	r->next = X.posts;
	X.posts = r;
	if (ac_econn_call("/v3/kv/txn", txn, cb, r) == -1) {
		X.posts = r->next;
		free(r);
	}
}

static void x_arrive(struct ac_job *j, struct ac_coll *c);
static void x_withdraw(struct ac_job *j, struct ac_coll *c);

/* R's reply came, or never will (down: the sweep posts again). If the
 * other was asked for meanwhile, what the barrier wants now goes. */
static void
post_done(struct req *r)
{
	struct req **p = &X.posts;
	struct ac_coll *c;

	while (*p != NULL && *p != r)
		p = &(*p)->next;
	if (*p != NULL)
		*p = r->next;
	if (r->redo && X.job != NULL &&
	    (c = ac_job_find(X.job, r->key, r->gen)) != NULL && !c->done) {
		if (c->xwd)
			x_withdraw(X.job, c);
		else if (c->xsent)
			x_arrive(X.job, c);
	}
	free(r);
}

static void
on_ignore(json_t *reply, void *priv)
{
	(void)reply;
	free(priv);
}

/* Node of an arrival key ".../arr/KEY/GEN/NODE". */
static long
node_of(const char *k)
{
	const char *slash = strrchr(k, '/');

	return slash != NULL ? atol(slash + 1) : -1;
}

static void
on_arrive(json_t *reply, void *priv)
{
	struct req *r = priv;
	json_t *kvs, *kv;
	long long rev;
	size_t i;

	if (reply != NULL) {
		rev = ej_revision(reply);
		/* The arrivals at REV: those listed, and no others. */
		ac_rdvarr_news(r->key, r->gen, -1, NULL, rev, 0);
		kvs = ej_kvs(reply, json_is_true(json_object_get(reply,
		    "succeeded")) ? 1 : 0);
		json_array_foreach(kvs, i, kv) {
			size_t kl, vl;
			char *k = ej_kv_field(kv, "key", &kl), *v = ej_kv_field(kv, "value", &vl);

			if (k != NULL && v != NULL)
				ac_rdvarr_news(r->key, r->gen, node_of(k), v, rev,
				    ac_json_i64(kv, "mod_revision"));
			free(k);
			free(v);
		}
		ac_rdvarr_settle(r->key, r->gen);
	}
	post_done(r);
}

/* Room for one more seen in the buckets (doubled when full). */
static void
seen_room(void)
{
	size_t n = X.seen_nb ? 2 * X.seen_nb : 64;
	struct seen **b;

	if (X.nseen < X.seen_nb || (b = calloc(n, sizeof(*b))) == NULL)
		return;		/* a failed growth: longer chains, still right */
	for (struct seen *s = X.seen; s != NULL; s = s->next) {
		size_t i = ac_key_hash(s->key) % n;

		s->hnext = b[i];
		b[i] = s;
	}
	free(X.seen_b);
	X.seen_b = b;
	X.seen_nb = n;
}

static struct seen *
seen_of(const char *key)
{
	struct seen *s;
	size_t i;

	if (X.seen_nb > 0)
		for (s = X.seen_b[ac_key_hash(key) % X.seen_nb]; s != NULL;
		    s = s->hnext)
			if (strcmp(s->key, key) == 0)
				return s;
	seen_room();
	if (X.seen_nb == 0 || (s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->acked = s->sending = s->said = s->del = -1;
	s->next = X.seen;
	X.seen = s;
	i = ac_key_hash(key) % X.seen_nb;
	s->hnext = X.seen_b[i];
	X.seen_b[i] = s;
	X.nseen++;
	return s;
}

/*
 * Generation GEN of result KEY is over here without this helper reading it
 * (a replaced helper's journal replay): a node said it read it before, or
 * every rank here moved past it. Nothing is said to etcd for it: what this
 * node said there may be later (the helper before said it read GEN+1), and
 * saying GEN now would lower it. A result this node then waits for, deleted
 * as read, would be waited for until the deadline (etcd.keys
 * testHelperKilledAfterResults, 1 in 8 under load). Later acks say at
 * least GEN (said), also after a lost lease.
 */
static void
over_unread(const char *key, int64_t gen)
{
	struct seen *s = seen_of(key);

	if (s != NULL && s->acked < gen)
		s->acked = gen;
	if (s != NULL && s->said < gen)
		s->said = gen;
}

/*
 * etcd lost this helper's lease, and with it every arrival we put: also
 * those of each name's last barrier that completed here, which a node that
 * had not yet read our arrival there still waits for (it completed here
 * because that node arrived; its watch or txn may not have seen ours yet).
 * Put it back if absent; nothing else (it completed here). An earlier
 * generation needs nothing: every node arrived at a later one, so left it.
 */
static void
repost_done(struct ac_job *j)
{
	char mine[KEY_MAX], fails[4096];
	size_t n;

	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next) {
		struct ac_coll *last = NULL;

		if (k->last_done != NULL && k->last_done->done)
			last = k->last_done;
		for (struct ac_coll *c = j->colls; c != NULL; c = c->next)
			if (c->done && strcmp(c->key, k->key) == 0 &&
			    (last == NULL || c->gen > last->gen))
				last = c;
		if (last == NULL || last->op != AC_OP_BARRIER ||
		    !ac_coll_cross(j, last) || last->narrived < j->lsize)
			continue;
		n = ac_fails_of(j->rank_of, last->status, j->lsize, fails, sizeof(fails));
		n = ac_rdvarr_value(j, last, fails, n, sizeof(fails));
		arr_key(mine, sizeof(mine), last->key, last->gen, j->node);
		ac_econn_call("/v3/kv/txn", ej_txn(json_pack("[o]",
		    ej_cmp_absent(mine)), json_pack("[o]", op_put(mine, fails, n)),
		    json_array()), NULL, NULL);
	}
}

/* This node's ranks all arrived at barrier C: one txn posts and reads. */
static void
x_arrive(struct ac_job *j, struct ac_coll *c)
{
	char mine[KEY_MAX], gen[KEY_MAX], old[KEY_MAX], fails[4096];
	size_t n = 0;
	struct req *r;
	struct ac_coll *prev;
	json_t *ops;

	if (!ac_rdvproto_posting(j, c) || post_busy(c) || (r = new_req(c)) == NULL)
		return;		/* sweep() posts it once registered */
	n = ac_fails_of(j->rank_of, c->status, j->lsize, fails, sizeof(fails));
	n = ac_rdvarr_value(j, c, fails, n, sizeof(fails));
	arr_key(mine, sizeof(mine), c->key, c->gen, j->node);
	keyname(gen, sizeof(gen), "arr", c->key, c->gen);
	ops = json_pack("[o, o]", op_put(mine, fails, n), ej_range(gen, 1));
	/*
	 * Generation GEN-1 completed here: every node's ranks all arrived
	 * there, so every rank of the job has left GEN-2 and none will wait
	 * there again. Its arrivals go in this txn (after the range, whose
	 * index on_arrive() reads), so a long loop keeps two generations.
	 */
	if (c->gen >= 2 && (prev = ac_job_find(j, c->key, c->gen - 1)) != NULL &&
	    prev->done) {
		keyname(old, sizeof(old), "arr", c->key, c->gen - 2);
		json_array_append_new(ops, ej_delete(old, NULL));
		keyname(old, sizeof(old), "wd", c->key, c->gen - 2);
		json_array_append_new(ops, ej_delete(old, NULL));
	}
	post_send(r, ej_txn(json_pack("[o]", ej_cmp_absent(mine)), ops,
	    json_pack("[o]", ej_range(gen, 1))), on_arrive);
}

static void
on_withdrawn(json_t *reply, void *priv)
{
	struct req *r = priv;
	struct ac_coll *c;

	/* Unanswered: the sweep after the reconnect sends it again. Answered:
	 * withdrawn, whatever was asked meanwhile (held back: post_done). */
	if (reply != NULL && (c = ac_job_find(X.job, r->key, r->gen)) != NULL) {
		c->xwd = 0;
		ac_job_gc(X.job);
	}
	post_done(r);
}

/*
 * A local rank left barrier C after this node had posted its arrival: the
 * arrival is deleted and a wd/ key put in one txn (the watch brings no
 * deletes). Every node orders it among the arrivals by its revision, so all
 * decide alike: a node that saw every arrival before it passed, and so does
 * this one; after it, nobody passes until this node posts again.
 */
static void
x_withdraw(struct ac_job *j, struct ac_coll *c)
{
	char key[KEY_MAX], wd[KEY_MAX];
	struct req *r;

	if (!ready() || post_busy(c) || (r = new_req(c)) == NULL)
		return;
	arr_key(key, sizeof(key), c->key, c->gen, j->node);
	wd_key(wd, sizeof(wd), c->key, c->gen, j->node);
	post_send(r, ej_txn(json_array(), json_pack("[o, o]", ej_delete(key, ""),
	    op_put(wd, "", 0)), json_array()), on_withdrawn);
}

static void
ul_push(struct ulist *l, struct upload *u)
{
	u->prev = NULL;
	u->next = l->head;
	if (l->head != NULL)
		l->head->prev = u;
	else
		l->tail = u;
	l->head = u;
	l->bytes += u->len + sizeof(*u);
	u->on = l;
}

static void
ul_drop(struct upload *u)
{
	struct ulist *l = u->on;

	if (l == NULL)
		return;
	if (u->prev != NULL)
		u->prev->next = u->next;
	else
		l->head = u->next;
	if (u->next != NULL)
		u->next->prev = u->prev;
	else
		l->tail = u->prev;
	l->bytes -= u->len + sizeof(*u);
	u->next = u->prev = NULL;
	u->on = NULL;
}

/* U's put is out, or not: at most UPLOADS_BUSY are. */
static void
set_busy(struct upload *u, int busy)
{
	if (u->busy != busy)
		X.nbusy += busy ? 1 : -1;
	u->busy = busy;
}

static void
upload_free(struct upload *u)
{
	set_busy(u, 0);
	ul_drop(u);
	if (u->kept != NULL)
		ac_rdvkeep_answered(u->kept, 0);
	else
		free(u->v);
	free(u);
}

/* U is in etcd: kept to write again (rdvkeep.c), not by age: a node may
 * read a result any time later (it sleeps, it is slow), and a lease etcd
 * loses takes every result we wrote, however old (etcd.lease
 * testLeaseExpiredUnderResults). Its name's counter of those under way
 * goes: that of the kept ones says now, and is reset when it is dropped
 * (a sweep may write it again then). */
static void
upload_written(struct upload *u)
{
	struct ac_keygen *k = ac_job_key(X.job, u->key);

	if (u->kept == NULL) {
		ac_rdvkeep_add(u->key, u->gen, u->v, u->len, 1);
		if (k != NULL && k->xposted == u->gen + 1)
			k->xposted = 0;
	}
	upload_free(u);
}

static void upload_next(struct upload *u);

/* A pass' kept result, written again (our lease was lost, or our run
 * moved): the pass holds it until this upload ends. */
static void
rewrite(struct ac_kept *k)
{
	struct upload *u;

	/* An earlier pass' upload of it is out still: repost_lost() made it
	 * start over (a second loss queued every one twice: review). */
	if (k->refs > 1 || (u = calloc(1, sizeof(*u))) == NULL) {
		ac_rdvkeep_answered(k, 0);
		return;
	}
	snprintf(u->key, sizeof(u->key), "%s", k->key);
	u->gen = k->gen;
	u->v = k->v;
	u->len = k->len;
	u->kept = k;
	u->nparts = u->len > PART_MAX ? (u->len + PART_MAX - 1) / PART_MAX : 0;
	ul_push(&X.uploads, u);
	if (ready())
		upload_next(u);
}

/* The prefix of result KEY's seen keys (seen_key), one a node. */
static void
seen_prefix(char *buf, size_t len, const char *key)
{
	snprintf(buf, len, "%ss%ld/%s/", X.base, X.runid->run, key);
}

/*
 * Has every node said it read generation GEN? Response I of txn REPLY is an
 * ej_range_min of the seen keys: their count, and the least. MINE: this
 * node's own key is among them (else the others alone must say so). One
 * range, not a compare a node: etcd refuses a txn of more operations than
 * its --max-txn-ops (128 by default), and at 130 nodes every result and
 * every ack was refused, for ever (review of etcd.keys).
 */
static int
all_read(json_t *reply, int i, int64_t gen, int mine)
{
	json_t *kv = json_array_get(ej_kvs(reply, i), 0);
	char *v;
	size_t vl;
	int yes;

	if (reply == NULL || kv == NULL ||
	    ej_count(reply, i) != X.job->nnodes - (mine ? 0 : 1) ||
	    (v = ej_kv_field(kv, "value", &vl)) == NULL)
		return 0;
	yes = vl == 20 && strtoll(v, NULL, 10) >= gen;
	free(v);
	return yes;
}

/* Delete result KEY's generations FROM to TO (not included), and their parts. */
static json_t *
delete_results(const char *key, int64_t from, int64_t to)
{
	char dfrom[KEY_MAX], dto[KEY_MAX], parts[KEY_MAX];
	char pfrom[KEY_MAX + 24], pto[KEY_MAX + 24];

	done_key(dfrom, sizeof(dfrom), key, from);
	done_key(dto, sizeof(dto), key, to);
	part_key(parts, sizeof(parts), key, -1, 0);
	snprintf(pfrom, sizeof(pfrom), "%s%020" PRId64, parts, from);
	snprintf(pto, sizeof(pto), "%s%020" PRId64, parts, to);
	return ej_txn(json_array(), json_pack("[o, o]", ej_delete(dfrom, dto),
	    ej_delete(pfrom, pto)), json_array());
}

static void on_upload(json_t *reply, void *priv);
static void uploads(void);

/*
 * The next put of U: a part, or the result's key (the value itself, or
 * "P PARTS BYTES" once every part is in). The same txn reads the seen keys:
 * when every other node has read U (a replaced helper publishes its
 * journal's results again, a lost lease writes them again), what was put
 * is deleted again and U is over. Put back, a result every node read
 * stayed in etcd for the lease's lifetime (etcd.keys
 * testSourceKilledAfterBigResults, etcd.lease testLeaseLostAfterResultsRead).
 * A last reader that says so after this txn deletes it itself (acks).
 */
static void
upload_next(struct upload *u)
{
	char key[KEY_MAX], head[64], seen[KEY_MAX], mine[KEY_MAX];
	json_t *put;

	if (!u->busy && X.nbusy >= UPLOADS_BUSY)
		return;		/* its turn comes (uploads()) */
	if (u->part < u->nparts) {
		size_t off = u->part * PART_MAX;

		part_key(key, sizeof(key), u->key, u->gen, u->part);
		put = op_put(key, u->v + off, u->len - off < PART_MAX ?
		    u->len - off : PART_MAX);
	} else {
		done_key(key, sizeof(key), u->key, u->gen);
		put = u->nparts == 0 ? op_put(key, u->v, u->len) : op_put(key,
		    head, (size_t)snprintf(head, sizeof(head), "P %zu %zu",
		    u->nparts, u->len));
	}
	seen_prefix(seen, sizeof(seen), u->key);
	seen_key(mine, sizeof(mine), u->key, X.job->node);
	set_busy(u, 1);
	if (ac_econn_call_large("/v3/kv/txn", ej_txn(json_array(),
	    json_pack("[o, o, o]", put, ej_range_min(seen), ej_range(mine, 0)),
	    json_array()), on_upload, u) == -1)
		set_busy(u, 0);	/* down: sweep() starts it again */
}

static void upload_done(json_t *reply, struct upload *u);

/* A put of an upload answered: the next step of it, and the next waiting
 * upload's turn. */
static void
on_upload(json_t *reply, void *priv)
{
	upload_done(reply, priv);
	uploads();
}

static void
upload_done(json_t *reply, struct upload *u)
{
	const char *why = ac_econn_refusal();
	char key[KEY_MAX], text[512];

	if (reply == NULL && why != NULL) {
		/* Not even a part fits (etcd's limit was lowered): say so to
		 * every node, whose waiters fail at once rather than at their
		 * deadline. */
		snprintf(text, sizeof(text), "F etcd refused a result of %zu "
		    "bytes as larger than its request limit (its "
		    "--max-request-bytes; accelctl writes parts of %d KiB): %s",
		    u->len, PART_MAX >> 10, why);
		ac_log("rendezvous: %s generation %" PRId64 ": %s", u->key,
		    u->gen, text + 2);
		done_key(key, sizeof(key), u->key, u->gen);
		ac_econn_call("/v3/kv/txn", ej_txn(json_array(), json_pack("[o]",
		    op_put(key, text, strlen(text))), json_array()), NULL, NULL);
	}
	set_busy(u, 0);
	if (reply == NULL && why == NULL) {
		u->part = 0;	/* reset: sweep() writes it again */
		u->restart = 0;
		return;
	}
	if (reply != NULL && all_read(reply, 1, u->gen, ej_kvs(reply, 2) != NULL &&
	    json_array_size(ej_kvs(reply, 2)) > 0)) {
		struct seen *s = seen_of(u->key);

		/* Read by all up to U, and so every earlier one. A delete
		 * in flight may have gone before this put (a part is large,
		 * a delete small): send it again once answered, or the part
		 * stayed for the lease (etcd.keys
		 * testSourceKilledAfterBigResults, under load). */
		if (s != NULL && s->del < u->gen) {
			s->del = u->gen;
			X.deletes_due = 1;
		}
		if (s != NULL && s->deleting)
			s->again = 1;
		if (u->kept != NULL)	/* nobody needs it written again */
			ac_rdvkeep_forget(u->kept);
		upload_free(u);
		deletes();
		return;
	}
	if (reply == NULL) {
		upload_free(u);		/* refused for good */
		return;
	}
	if (u->restart) {
		/* Etcd lost our keys while this put was out: the parts put
		 * before went with them (a reader then found the key and no
		 * part 0, for good: seen with del --prefix mid-upload). */
		u->restart = 0;
		u->part = 0;
		upload_next(u);
		return;
	}
	if (u->part++ >= u->nparts) {
		upload_written(u);
		return;
	}
	upload_next(u);
}

/* Write every result not written yet (once registered, after a reset). */
static void
uploads(void)
{
	/* Newest first; past at most the UPLOADS_BUSY under way. */
	for (struct upload *u = X.uploads.head; u != NULL && ready() &&
	    X.nbusy < UPLOADS_BUSY; u = u->next)
		if (!u->busy)
			upload_next(u);
}

/* A local source's result (or death): one put that every node watches, after
 * its parts when it is larger than one request may be. */
static void
x_publish(struct ac_job *j, struct ac_coll *c)
{
	struct ac_keygen *k = ac_job_key(j, c->key);
	struct upload *u, *oldest;

	/* Under way, waiting for etcd, or written and kept (etcd has it
	 * while our lease lives: written again when it does not), which the
	 * name's counters tell without a walk: each sweep after a reconnect added
	 * another copy, and a walk per result was a replay's square. */
	if (k != NULL && (c->gen < k->xkept || c->gen < k->xposted))
		return;
	/* While etcd is away, a source that runs ahead is held to this. */
	for (oldest = X.uploads.tail; oldest != NULL && oldest->busy;
	    oldest = oldest->prev)
		;
	if (X.uploads.bytes > UPLOADS_MAX && oldest != NULL) {
		ac_log("rendezvous: %s generation %" PRId64 " dropped "
		    "unwritten: more than %d MiB of results wait for etcd",
		    oldest->key, oldest->gen, UPLOADS_MAX >> 20);
		upload_free(oldest);
	}
	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (u->v = ac_xvalue_make(c, &u->len)) == NULL) {
		free(u);
		return;
	}
	snprintf(u->key, sizeof(u->key), "%s", c->key);
	u->gen = c->gen;
	u->nparts = u->len > PART_MAX ? (u->len + PART_MAX - 1) / PART_MAX : 0;
	ul_push(&X.uploads, u);
	if (k != NULL)
		k->xposted = c->gen + 1;
	if (ready())
		upload_next(u);
}

static void
on_want(json_t *reply, void *priv)
{
	struct req *r = priv;
	json_t *kv = json_array_get(ej_kvs(reply, 0), 0);
	json_t *seen = json_array_get(ej_kvs(reply, 1), 0);
	size_t vl;
	char *v;

	if (kv != NULL) {
		if ((v = ej_kv_field(kv, "value", &vl)) != NULL)
			got_value(r->key, r->gen, v, vl);
		free(v);
	} else if (seen != NULL && (v = ej_kv_field(seen, "value", &vl)) != NULL) {
		struct ac_result none = { .failed = "" };

		/* Gone, and this node said every rank of it had read it: a
		 * helper that replaced a killed one replays it from its
		 * journal. Nobody here should wait there again: it is over.
		 * A rank that does (its reply was cut with the helper that
		 * sent it) fails (125) rather than read an empty result. */
		if (strtoll(v, NULL, 10) >= r->gen) {
			struct ac_coll *c = ac_job_find(X.job, r->key, r->gen);
			char why[192];

			over_unread(r->key, strtoll(v, NULL, 10));
			snprintf(why, sizeof(why), "its result (generation %"
			    PRId64 ") was read by every node and deleted from "
			    "etcd, and this rank asked again (its helper was "
			    "replaced while answering it?)", r->gen);
			if (c != NULL && !c->done && X.job->failed != NULL)
				X.job->failed(X.job, c, why);
			ac_job_remote_done(X.job, r->key, r->gen, &none);
		}
		free(v);
	}
	free(r);
}

/* A result op whose source may be on another node: is it written? If not,
 * the watch brings it. The same txn reads what this node said it read. */
static void
x_want(struct ac_job *j, struct ac_coll *c)
{
	char key[KEY_MAX], seen[KEY_MAX];
	struct req *r;

	if (!ac_rdvproto_posting(j, c) || (r = new_req(c)) == NULL)
		return;
	done_key(key, sizeof(key), c->key, c->gen);
	seen_key(seen, sizeof(seen), c->key, j->node);
	if (ac_econn_call("/v3/kv/txn", ej_txn(json_array(), json_pack("[o, o]",
	    ej_range(key, 0), ej_range(seen, 0)), json_array()), on_want, r) == -1)
		free(r);
}

/* --- deleting results that every node has read --- */

static void
on_seen(json_t *reply, void *priv)
{
	struct seen *s = priv;

	/* Sent before etcd lost our keys: it may have gone with them, so
	 * it is said again (acked stays as repost_lost() left it). */
	if (reply != NULL && s->sending > s->acked &&
	    s->sending_loss == X.losses)
		s->acked = s->sending;
	if (reply != NULL && s->sending > s->said)
		s->said = s->sending;
	if (reply != NULL && all_read(reply, 1, s->sending, 1) &&
	    s->sending > s->del) {
		s->del = s->sending;	/* acks() deletes, until it is done */
		X.deletes_due = 1;
	}
	/* Not said (etcd away, or it lost our keys): a walk says it again. */
	if (reply == NULL || s->acked < s->sending)
		X.acks_due = 1;
	s->sending = -1;	/* reset: said again once registered */
	if (X.nacks > 0)
		X.nacks--;
}

static void
on_deleted(json_t *reply, void *priv)
{
	struct seen *s = priv;

	if (reply != NULL && s->del == s->deleting_gen && !s->again)
		s->del = -1;
	if (reply != NULL)
		s->again = 0;
	s->deleting = 0;
	if (s->del >= 0)
		X.deletes_due = 1;	/* failed, or a later one came */
}

/* Results every node has read, deleted: a second request after the ack
 * that saw it, sent again until it is answered (one lost left them for
 * the source's lease, a day). */
static void
deletes(void)
{
	/* Only when one is due: called every round of the loop, a walk of
	 * every name each time was a job of 20,000 names' square. */
	if (!X.deletes_due)
		return;
	X.deletes_due = 0;
	for (struct seen *s = X.seen; s != NULL; s = s->next)
		if (s->del >= 0 && !s->deleting) {
			s->deleting = 1;
			s->deleting_gen = s->del;
			if (ac_econn_call("/v3/kv/txn", delete_results(s->key, 0,
			    s->del + 1), on_deleted, s) == -1) {
				s->deleting = 0;
				X.deletes_due = 1;
			}
		}
}

/*
 * Every rank of this node has read generation GEN of result S->key (and so
 * every earlier one). One txn says so (20-digit generations: byte-wise
 * order is numeric) and reads every node's word (all_read); when each has
 * said GEN or later, a second deletes the result's generations up to GEN
 * and their parts. A node that is behind has not said so: what it has yet
 * to read stays. The last node to read a generation deletes it, whichever
 * that is; two that both see it delete twice, harmlessly. What a node said
 * never goes down (said), so what was read stays read between the two.
 */
static json_t *
ack_txn(struct seen *s, int64_t gen)
{
	char mine[KEY_MAX], v[24], seen[KEY_MAX];

	/* Never below what this node said (etcd lost our lease, or what
	 * it holds is a replaced helper's; over_unread). */
	snprintf(v, sizeof(v), "%020" PRId64, gen > s->said ? gen : s->said);
	seen_key(mine, sizeof(mine), s->key, X.job->node);
	seen_prefix(seen, sizeof(seen), s->key);
	return ej_txn(json_array(), json_pack("[o, o]", op_put(mine, v,
	    strlen(v)), ej_range_min(seen)), json_array());
}

/*
 * Results every rank of this node has read (coll.c keeps the last one of a
 * name once nobody waits there): say so. SYNC: the helper exits, and says
 * so now, blocking, a second at most in all.
 */
static void
acks(int sync)
{
	struct seen *s;
	long end = ac_now_ms() + 1000;

	if (!ready())
		return;
	if (!sync)
		deletes();
	/* A walk of every name starts after the job changed (or an ack was
	 * not said); one stopped at ACKS_BUSY goes on where it stopped. */
	if (!sync && (X.acks_due || X.acks_changes != X.job->changes)) {
		X.acks_due = 0;
		X.acks_changes = X.job->changes;
		X.acks_next = X.job->keys;
	}
	if (!sync && X.acks_next == NULL)
		return;
	/* Exiting: a delete that an answered ack found due is sent by the
	 * next round of the loop, which does not come now; sent and not yet
	 * answered, it is cut off. Left, the last result stayed in etcd for
	 * its source's lease, a day (etcd.keys testNodeBehindReadsEverything:
	 * launch stops the helpers as soon as the last rank has read). */
	for (s = sync ? X.seen : NULL; s != NULL; s = s->next)
		if (s->del >= 0 && ac_now_ms() < end &&
		    ac_econn_sync("/v3/kv/txn", delete_results(s->key, 0,
		    s->del + 1), end - ac_now_ms(), NULL) == 0)
			s->del = -1;
	for (struct ac_keygen *k = sync ? X.job->keys : X.acks_next; k != NULL;
	    k = k->next) {
		struct ac_coll *c = k->last_done;

		if (!sync && X.nacks >= ACKS_BUSY) {
			X.acks_next = k;	/* on_seen makes room */
			return;
		}
		if (c == NULL || c->op != AC_OP_RESULT || !ac_coll_cross(X.job, c) ||
		    !(c->done || c->src == AC_SRC_LOST) || c->narrived < X.job->lsize)
			continue;
		if ((s = seen_of(k->key)) == NULL || c->gen <= s->acked ||
		    (!sync && s->sending >= 0))
			continue;
		if (sync) {
			json_t *reply;

			if (ac_now_ms() >= end || ac_econn_sync("/v3/kv/txn",
			    ack_txn(s, c->gen), end - ac_now_ms(), &reply) == -1)
				return;
			if (all_read(reply, 1, c->gen, 1) && ac_now_ms() < end)
				ac_econn_sync("/v3/kv/txn", delete_results(s->key,
				    0, c->gen + 1), end - ac_now_ms(), NULL);
			json_decref(reply);
			s->acked = c->gen;
			if (s->said < c->gen)
				s->said = c->gen;
			continue;
		}
		s->sending = c->gen;
		s->sending_loss = X.losses;
		if (ac_econn_call("/v3/kv/txn", ack_txn(s, c->gen), on_seen,
		    s) == -1) {
			s->sending = -1;
			X.acks_due = 1;
		} else
			X.nacks++;
	}
	if (!sync)
		X.acks_next = NULL;
}

/* --- the watch --- */

/*
 * Watch the run's prefix from revision FROM, puts only (NODELETE): deleting
 * finished generations is then no traffic for the watchers (a deleted key
 * was an event to every node; at 16 nodes a barrier's watch traffic
 * doubled). A withdrawn arrival is announced by a put of its wd/ key
 * (s_unpost), and a reading (a txn's range) sees keys as they are.
 *
 * The one delete this node must see is of its own registration, on a
 * second watch in the same stream (deletes only): accelctl never deletes it
 * while registered, so it costs nothing in a healthy job, and whatever
 * takes the run's keys away takes it too (etcdctl del --prefix, a lease
 * revoked or expired). Unseen, a node passed a barrier on its own arrival,
 * gone, and one that arrived after waited until its deadline; an idle
 * source never wrote its results again (issue 18). lost_keys(). That watch
 * starts at MEMBER_FROM, after the registration that put the key: from the
 * prefix's revision it brought back a delete that registration had mended,
 * and registered twice.
 */
static void
watch_at(long run, long long from, long long member_from)
{
	char member[KEY_MAX];

	node_key(member, sizeof(member), "members", run, X.job->node);
	ac_econn_watch(json_pack("[{s:{s:o, s:o, s:o, s:[s]}}, {s:{s:o, s:o, "
	    "s:[s]}}]", "create_request", "key", ej_b64s(X.prefix), "range_end",
	    ej_prefix_end(X.prefix), "start_revision", ej_i64(from), "filters",
	    "NODELETE", "create_request", "key", ej_b64s(member),
	    "start_revision", ej_i64(member_from), "filters", "NOPUT"));
}

/*
 * Our registration in the run (members/NODE) is gone while we are
 * registered (HOW: deleted, as seen by the watch; absent, as read): etcd
 * lost the run's keys, ours at least. Register again (the counter is
 * raised back, the member key put back, a revoked lease granted again);
 * on_member() then finds it absent and posts everything again, as
 * xredis.c's lost_state() after a FLUSHALL.
 */
static void
lost_keys(const char *how)
{
	if (!ready())
		return;
	ac_log("rendezvous: node %ld's registration in run %ld of job %s "
	    "was %s in etcd; registering again and posting everything again",
	    X.job->node, X.runid->run, X.job->id, how);
	ac_rdvjoin_join(0);
}

/*
 * Etcd lost what this helper put there (its member key was absent when it
 * registered again in its run: lost_keys, etcd restarted empty, a lease
 * that expired): every result written goes to be written again, the last
 * arrival at each barrier name is put back (repost_done), and what this
 * node read is said again, as after a lost lease. Only the arrivals of
 * barriers in flight were posted again: a source that had gone idle never
 * learned that its results were gone, and its readers waited until their
 * deadline (etcd.outages testResultsDeletedUnderIdleSource).
 */
static void
repost_lost(void)
{
	X.acks_due = 1;
	X.lease_lost = 1;
	X.losses++;
	/* Uploads under way too: what they put so far may be gone. */
	for (struct upload *u = X.uploads.head; u != NULL; u = u->next)
		if (u->busy)
			u->restart = 1;
		else
			u->part = 0;
	X.rewrite = 1;
	for (struct seen *s = X.seen; s != NULL; s = s->next)
		s->acked = -1;
}

/* One event: a key under the run's prefix was put or deleted. */
static void
event(json_t *ev)
{
	json_t *kv = json_object_get(ev, "kv");
	int del = json_is_string(json_object_get(ev, "type")) &&
	    strcmp(json_string_value(json_object_get(ev, "type")), "DELETE") == 0;
	long long rev = ac_json_i64(kv, "mod_revision");
	size_t kl, vl, plen = strlen(X.prefix);
	char *k = ej_kv_field(kv, "key", &kl), *v = del ? strdup("") :
	    ej_kv_field(kv, "value", &vl), key[AC_KEY_MAX];
	const char *rest;
	long long gen;
	long node;

	if (del)
		vl = 0;
	if (k == NULL || v == NULL || strncmp(k, X.prefix, plen) != 0)
		goto out;
	rest = k + plen;
	/* The second watch's (watch_at): not counted in last_rev, which the
	 * prefix's watch alone resumes from. */
	if (del && strncmp(rest, "members/", 8) == 0) {
		if (atol(rest + 8) == X.job->node)
			lost_keys("deleted");
		goto out;
	}
	if (rev > X.last_rev)
		X.last_rev = rev;
	if (strncmp(rest, "arr/", 4) == 0 &&
	    sscanf(rest + 4, "%255[^/]/%lld/%ld", key, &gen, &node) == 3) {
		ac_rdvarr_news(key, gen, node, del ? NULL : v, rev, rev);
		ac_rdvarr_settle(key, gen);
	} else if (strncmp(rest, "wd/", 3) == 0 && !del &&
	    sscanf(rest + 3, "%255[^/]/%lld/%ld", key, &gen, &node) == 3) {
		/* Withdrawn as of REV. */
		ac_rdvarr_news(key, gen, node, NULL, rev, 0);
		ac_rdvarr_settle(key, gen);
	} else if (strncmp(rest, "done/", 5) == 0 && !del &&
	    sscanf(rest + 5, "%255[^/]/%lld", key, &gen) == 2)
		got_value(key, gen, v, vl);
	else if (strcmp(rest, "closed") == 0 && !del)
		ac_rdvjoin_closed();
	else if ((strncmp(rest, "nccl/", 5) == 0 || strncmp(rest, "nodes/", 6) == 0 ||
	    strncmp(rest, "ping/", 5) == 0 || strncmp(rest, "lost/", 5) == 0 ||
	    strncmp(rest, "where/", 6) == 0 || strncmp(rest, "dead/", 5) == 0 ||
	    strncmp(rest, "claim/", 6) == 0 || strcmp(rest, "abort") == 0) && !del)
		ac_rdvproto_told(rest, v, vl);	/* the protocol's keys */
out:
	free(k);
	free(v);
}

static void check_member(void);

static void
on_watch(json_t *msg)
{
	json_t *res = json_object_get(msg, "result"), *ev;
	long long compacted = ac_json_i64(res, "compact_revision");
	size_t i;

	if (res == NULL || !ready())
		return;
	if (compacted > 0) {
		/*
		 * Our revision is gone: watch again from the oldest one kept,
		 * and read everything again (what changed before it). Not from
		 * the response's header: etcd sends revision 0 there, and a
		 * watch from revision 1 was compacted again, for ever (the
		 * sweep of each turn hid it by completing barriers anyway).
		 */
		ac_log("rendezvous: revision %lld was compacted (oldest "
		    "kept %lld); reading again", X.last_rev + 1, compacted);
		X.last_rev = compacted - 1;
		watch_at(X.runid->run, compacted, compacted);
		sweep();
		ac_rdvproto_up();	/* its keys too: an abort, names, NCCL's id */
		check_member();	/* a delete before COMPACTED is not brought */
		return;
	}
	json_array_foreach(json_object_get(res, "events"), i, ev)
		event(ev);
}

/* Watch the run's prefix from after the last revision we saw (REG: the
 * registration's, when there is none, or when etcd restarted empty). */
static void
watch_from(long long reg)
{
	long long from = X.watch_run == X.runid->run && X.last_rev > 0 &&
	    X.last_rev <= reg ? X.last_rev + 1 : reg + 1;

	X.watch_run = X.runid->run;
	X.last_rev = from - 1;
	watch_at(X.runid->run, from, reg + 1);
}

/*
 * The end of the sweep (rdvproto.c posted what is in flight): what etcd may
 * not have of ours. A local source's results released here before we were
 * registered: the other nodes have not seen them yet.
 */
static void
swept(void)
{
	struct ac_job *j = X.job;

	for (struct ac_coll *c = j->colls; c != NULL; c = c->next)
		if (ac_coll_cross(j, c) && c->op == AC_OP_RESULT &&
		    (c->src == AC_SRC_DONE || c->src == AC_SRC_LOST) &&
		    ac_rdvproto_postable(c))
			x_publish(j, c);
	if (X.lease_lost) {
		X.lease_lost = 0;
		repost_done(j);
	}
	uploads();
	/* Every kept result again, but for those every node has read
	 * (upload_next's compares); or on with a pass left waiting. */
	if (X.rewrite) {
		X.rewrite = 0;
		ac_rdvkeep_pass(rewrite);
	} else
		ac_rdvkeep_resume();
	/* Results seen last: nodes still waiting for them must find them. */
	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next)
		if (k->last_done != NULL && ac_coll_cross(j, k->last_done) &&
		    ac_rdvproto_postable(k->last_done) &&
		    k->last_done->op == AC_OP_RESULT &&
		    (k->last_done->src == AC_SRC_DONE || k->last_done->src == AC_SRC_LOST))
			x_publish(j, k->last_done);
}

/* After a (re)registration: post again everything etcd may not have. */
static void
sweep(void)
{
	X.acks_due = 1;
	ac_rdvproto_sweep();
}

/* --- the run's registration (DESIGN-NOTES "Run identity"; rdvjoin.c) --- */

/* store.h's bind: registered in the run the identity names. */
static void
s_bind(int moved)
{
	X.acks_due = 1;
	if (moved) {
		/* What this node said it read was of another run. */
		for (struct seen *s = X.seen; s != NULL; s = s->next)
			s->acked = s->said = s->del = -1;
		/* What we wrote went under the other run's prefix (a source
		 * that moved to node 0's run: review). */
		X.rewrite = 1;
	}
	snprintf(X.prefix, sizeof(X.prefix), "%sr%ld/", X.base, X.runid->run);
	watch_from(X.join_rev);
	X.last_keepalive = X.last_check = ac_now_ms();
	X.epoch++;
}

struct reg {
	long		cur;		/* the counter as read */
	long long	mod;		/* its mod_revision (0: absent) */
	long		run;		/* the run asked for */
};

static struct reg R;

static void
nonce_str(char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIx64, X.runid->nonce);
}

/* The registration's answer: HOW in RUN, as of REPLY's revision. */
static void
answer(enum ac_join how, long run, json_t *reply)
{
	X.join_rev = ej_revision(reply);
	ac_econn_healthy();	/* etcd answers; a deadline now is a 124 */
	ac_rdvjoin_joined(how, run);
}

/* store.h's probe: RUN's keys named (the ping put, its pong read), and its
 * watch started from after our member key's put; its events are handled
 * once bound (on_watch asks ready). */
static void
s_probe(long run)
{
	snprintf(X.prefix, sizeof(X.prefix), "%sr%ld/", X.base, run);
	watch_at(run, X.join_rev + 1, X.join_rev + 1);
}

/* store.h's leave: node 0 of RUN did not answer; our place given back. */
static void
s_leave(long run)
{
	char member[KEY_MAX], ping[KEY_MAX];

	node_key(member, sizeof(member), "members", run, X.job->node);
	node_key(ping, sizeof(ping), "ping", run, X.job->node);
	ac_econn_call("/v3/kv/txn", ej_txn(json_array(), json_pack("[o, o]",
	    ej_delete(member, ""), ej_delete(ping, "")), json_array()), NULL, NULL);
}

/* The reply to putting our member key in run R.run (or finding it). */
static void
on_member(json_t *reply, void *priv)
{
	char nonce[24];
	json_t *kv;
	size_t vl;
	char *v;
	int mine;

	(void)priv;
	if (reply == NULL) {
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
		return;
	}
	if (json_is_true(json_object_get(reply, "succeeded"))) {
		if (X.runid->run == 0 && X.job->node != 0)
			answer(AC_JOIN_FRESH, R.run, reply);
		else {
			/* A run we knew, and our place there was free: etcd
			 * lost our keys. */
			repost_lost();
			answer(AC_JOIN_IN, R.run, reply);
		}
		return;
	}
	kv = json_array_get(ej_kvs(reply, 0), 0);
	v = kv != NULL ? ej_kv_field(kv, "value", &vl) : NULL;
	nonce_str(nonce, sizeof(nonce));
	mine = v != NULL && strcmp(v, nonce) == 0;
	free(v);
	if (X.runid->run == 0 && X.job->node != 0) {
		/* Fresh, not node 0: our place in the newest run is ours
		 * already (this lineage was killed before it knew its run), or
		 * taken (an earlier launch's run), or the counter moved. */
		if (mine)
			answer(AC_JOIN_FRESH, R.run, reply);
		else if (kv != NULL) {
			/* Held by another lineage: its holder's beat, which
			 * says whether it refused our claim (rdvjoin.c). */
			json_t *bkv = json_array_get(ej_kvs(reply, 1), 0);
			char *b = bkv != NULL ? ej_kv_field(bkv, "value", &vl) : NULL;

			X.join_rev = ej_revision(reply);
			ac_econn_healthy();
			ac_rdvjoin_held(R.run, b != NULL ? b : "", b != NULL ? vl : 0);
			free(b);
		} else
			s_join();
		return;
	}
	answer(mine ? AC_JOIN_IN : AC_JOIN_TAKEN, R.run, reply);
}

static void
put_member(long run)
{
	char member[KEY_MAX], counter[KEY_MAX], nonce[24], beat[KEY_MAX];
	char claim[KEY_MAX];
	json_t *cmp, *fail;

	R.run = run;
	node_key(member, sizeof(member), "members", run, X.job->node);
	snprintf(counter, sizeof(counter), "%srun", X.base);
	nonce_str(nonce, sizeof(nonce));
	cmp = json_pack("[o]", ej_cmp_absent(member));
	fail = json_pack("[o]", ej_range(member, 0));
	/* A fresh node joins the newest run only while it is the newest;
	 * where its place is held, the holder's beat is read and the
	 * holder told of the claim (rdvjoin.c: two helpers for one node). */
	if (X.runid->run == 0) {
		const char *me = ac_rdvjoin_claimant();

		json_array_append_new(cmp, ej_cmp_mod(counter, R.mod));
		snprintf(beat, sizeof(beat), "%sq%ld/beat/%ld", X.base, run,
		    X.job->node);
		node_key(claim, sizeof(claim), "claim", run, X.job->node);
		json_array_append_new(fail, ej_range(beat, 0));
		if (*me != '\0')
			json_array_append_new(fail, op_put(claim, me, strlen(me)));
	}
	if (ac_econn_call("/v3/kv/txn", ej_txn(cmp, json_pack("[o]", op_put(member,
	    nonce, strlen(nonce))), fail), on_member, NULL) == -1)
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
}

/* A txn of the registration that read the counter: PRIV 1, node 0 opened
 * run R.cur + 1; 0, a helper that knows its run raised the counter to it
 * (etcd lost it). Not succeeded: the counter moved: read it again. */
static void
on_counted(json_t *reply, void *priv)
{
	if (reply == NULL)
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
	else if (!json_is_true(json_object_get(reply, "succeeded")))
		s_join();
	else if (priv != NULL)
		answer(AC_JOIN_IN, R.cur + 1, reply);
	else
		put_member(X.runid->run);
}

/* Send a txn of the registration: if the counter is as read, OPS. */
static void
counted_txn(json_t *ops, int open)
{
	char counter[KEY_MAX];

	snprintf(counter, sizeof(counter), "%srun", X.base);
	if (ac_econn_call("/v3/kv/txn", ej_txn(json_pack("[o]", ej_cmp_mod(counter,
	    R.mod)), ops, json_array()), on_counted, open ? &R : NULL) == -1)
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
}

static void
on_counter(json_t *reply, void *priv)
{
	char counter[KEY_MAX], member[KEY_MAX], closed_key[KEY_MAX], nonce[24];
	char v[24];
	json_t *kv, *ops;
	long known = X.runid->run;

	(void)priv;
	if (reply == NULL) {
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
		return;
	}
	kv = json_array_get(ej_kvs(reply, -1), 0);
	R.cur = 0;
	R.mod = 0;
	if (kv != NULL) {
		size_t vl;
		char *s = ej_kv_field(kv, "value", &vl);

		R.cur = s != NULL ? atol(s) : 0;
		R.mod = ac_json_i64(kv, "mod_revision");
		free(s);
	}
	snprintf(counter, sizeof(counter), "%srun", X.base);
	if (known > 0 && R.cur >= known) {
		put_member(known);
	} else if (known > 0) {
		snprintf(v, sizeof(v), "%ld", known);
		counted_txn(json_pack("[o]", op_put(counter, v, strlen(v))), 0);
	} else if (X.job->node == 0) {
		/* Open the next run; tell the nodes of the one before. */
		snprintf(v, sizeof(v), "%ld", R.cur + 1);
		node_key(member, sizeof(member), "members", R.cur + 1, 0);
		nonce_str(nonce, sizeof(nonce));
		ops = json_pack("[o, o]", op_put(counter, v, strlen(v)),
		    op_put(member, nonce, strlen(nonce)));
		if (R.cur > 0) {
			snprintf(closed_key, sizeof(closed_key), "%sr%ld/closed",
			    X.base, R.cur);
			json_array_append_new(ops, op_put(closed_key, "1", 1));
		}
		counted_txn(ops, 1);
	} else if (R.cur == 0)
		answer(AC_JOIN_WAIT, 0, reply);
	else
		put_member(R.cur);
}

static void
on_grant(json_t *reply, void *priv)
{
	(void)priv;
	if (reply == NULL) {
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
		return;
	}
	X.lease = ac_json_i64(reply, "ID");
	if (X.lease == 0) {
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
		ac_econn_reset("lease/grant: no lease in the reply");
		return;
	}
	s_join();
}

/* store.h's join: a lease (granted once, again after its loss), the
 * counter read, then its txns. */
static void
s_join(void)
{
	char counter[KEY_MAX];
	int sent;

	if (X.lease == 0)
		sent = ac_econn_call("/v3/lease/grant", json_pack("{s:o}", "TTL",
		    ej_i64(X.ttl)), on_grant, NULL);
	else {
		snprintf(counter, sizeof(counter), "%srun", X.base);
		sent = ac_econn_call("/v3/kv/range", json_pack("{s:o}", "key",
		    ej_b64s(counter)), on_counter, NULL);
	}
	if (sent == -1)
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
}

/* --- econn.c's hooks --- */

static void
on_ready(void)
{
	ac_rdvjoin_connected();
}

static void
on_lease_lost(void)
{
	ac_log("rendezvous: etcd lost this helper's lease; granting "
	    "another and posting everything again");
	X.lease = 0;
	/* Our "read up to" keys went with it too. */
	repost_lost();
}

static void
on_keepalive(json_t *reply, void *priv)
{
	json_t *res = json_object_get(reply, "result");

	(void)priv;
	if (reply == NULL)
		return;
	/* A lease that expired comes back with no TTL. */
	if (ac_json_i64(res != NULL ? res : reply, "TTL") <= 0) {
		on_lease_lost();
		ac_econn_reset("the lease expired");
	}
}

/* The check's reply (ALIVE_MS): our member key, as of registration PRIV
 * (an epoch: a reply from before the last one says nothing of it). */
static void
on_check(json_t *reply, void *priv)
{
	json_t *kv = json_array_get(ej_kvs(reply, -1), 0);
	char nonce[24], *v;
	size_t vl;

	/* NULL: reset or failed already (econn.c). */
	if (reply == NULL || !ready() || (uintptr_t)priv != X.epoch)
		return;
	nonce_str(nonce, sizeof(nonce));
	v = kv != NULL ? ej_kv_field(kv, "value", &vl) : NULL;
	if (v == NULL || strcmp(v, nonce) != 0)
		lost_keys(v == NULL ? "absent" : "another helper's");
	free(v);
}

static void
check_member(void)
{
	char member[KEY_MAX];

	node_key(member, sizeof(member), "members", X.runid->run, X.job->node);
	ac_econn_call("/v3/kv/range", json_pack("{s:o}", "key", ej_b64s(member)),
	    on_check, (void *)(uintptr_t)X.epoch);
}

/* --- the transport's loop hooks --- */

/* --- store.h: the operations the protocol (rdvproto.c) asks of etcd --- */

struct sop {
	ac_store_cb	*cb;
	void		*priv;
};

static void
on_sput(json_t *reply, void *priv)
{
	struct sop *o = priv;
	json_t *kv;

	if (reply == NULL)
		o->cb(-1, NULL, 0, o->priv);
	else if (json_is_true(json_object_get(reply, "succeeded")))
		o->cb(1, "", 0, o->priv);
	else if ((kv = json_array_get(ej_kvs(reply, 0), 0)) != NULL) {
		size_t vl;
		char *v = ej_kv_field(kv, "value", &vl);

		o->cb(v != NULL ? 0 : -1, v, vl, o->priv);
		free(v);
	} else
		o->cb(-1, NULL, 0, o->priv);	/* deleted between: ask again */
	free(o);
}

/* A told put needs nothing more: every node's watch of the run's prefix
 * sees it, in revision order. */
static void
s_put(const char *key, const void *v, size_t len, int flags, ac_store_cb *cb,
    void *priv)
{
	char k[KEY_MAX];
	struct sop *o = NULL;
	json_t *cmp = json_array();

	if (!ac_rdvjoin_named() || (cb != NULL && (o = malloc(sizeof(*o))) == NULL)) {
		json_decref(cmp);
		if (cb != NULL)
			cb(-1, NULL, 0, priv);
		return;
	}
	if (o != NULL)
		*o = (struct sop){ cb, priv };
	proto_key(k, sizeof(k), key);
	if (flags & AC_PUT_ABSENT)
		json_array_append_new(cmp, ej_cmp_absent(k));
	if (ac_econn_call("/v3/kv/txn", ej_txn(cmp, json_pack("[o]", op_put(k,
	    v, len)), json_pack("[o]", ej_range(k, 0))), o != NULL ? on_sput :
	    on_ignore, o) == -1 && o != NULL) {
		free(o);
		cb(-1, NULL, 0, priv);
	}
}

static void
on_sget(json_t *reply, void *priv)
{
	struct sop *o = priv;
	json_t *kv = reply != NULL ? json_array_get(ej_kvs(reply, -1), 0) : NULL;

	if (reply == NULL)
		o->cb(-1, NULL, 0, o->priv);
	else if (kv == NULL)
		o->cb(0, NULL, 0, o->priv);
	else {
		size_t vl;
		char *v = ej_kv_field(kv, "value", &vl);

		o->cb(v != NULL ? 1 : -1, v, vl, o->priv);
		free(v);
	}
	free(o);
}

static void
s_get(const char *key, ac_store_cb *cb, void *priv)
{
	char k[KEY_MAX];
	struct sop *o;

	if (!ac_rdvjoin_named() || (o = malloc(sizeof(*o))) == NULL) {
		cb(-1, NULL, 0, priv);
		return;
	}
	*o = (struct sop){ cb, priv };
	proto_key(k, sizeof(k), key);
	if (ac_econn_call("/v3/kv/range", json_pack("{s:o}", "key", ej_b64s(k)),
	    on_sget, o) == -1) {
		free(o);
		cb(-1, NULL, 0, priv);
	}
}

struct slist {
	ac_store_list_cb *cb;
};

static void
on_slist(json_t *reply, void *priv)
{
	struct slist *l = priv;
	ac_store_list_cb *cb = l->cb;
	size_t i, plen = strlen(X.prefix);
	json_t *kv;

	free(l);
	json_array_foreach(reply != NULL ? ej_kvs(reply, -1) : NULL, i, kv) {
		size_t kl, vl;
		char *k = ej_kv_field(kv, "key", &kl), *v = ej_kv_field(kv, "value", &vl);

		if (k != NULL && v != NULL && strncmp(k, X.prefix, plen) == 0)
			cb(k + plen, v, vl);
		free(k);
		free(v);
	}
}

static void
s_list(const char *prefix, ac_store_list_cb *cb)
{
	char k[KEY_MAX];
	struct slist *l;

	if (!ready() || (l = malloc(sizeof(*l))) == NULL)
		return;
	l->cb = cb;
	keyname(k, sizeof(k), prefix, NULL, 0);
	if (ac_econn_call("/v3/kv/range", json_pack("{s:o, s:o}", "key",
	    ej_b64s(k), "range_end", ej_prefix_end(k)), on_slist, l) == -1)
		free(l);
}

static void
s_resync(void)
{
	sweep();
}

static long
x_timer(long now)
{
	long next, every, due, check, t, t2;
	int waiting;

	ac_rdvarr_gc();	/* arrivals of barriers no longer waited at here */
	acks(0);
	every = X.ttl * 1000 / 3;
	due = X.last_keepalive + every;
	if (ready() && X.lease != 0 && now >= due) {
		X.last_keepalive = now;
		due = now + every;
		ac_econn_call("/v3/lease/keepalive", json_pack("{s:o}", "ID",
		    ej_i64(X.lease)), on_keepalive, NULL);
	}
	/* While a node waits across nodes: the check (ALIVE_MS). */
	waiting = ready() && ac_job_waiting_across(X.job);
	check = X.last_check + ALIVE_MS;
	if (waiting && now >= check) {
		X.last_check = now;
		check = now + ALIVE_MS;
		check_member();
	}
	/* The protocol's (looks for nodes' names) may send, too. */
	t = ac_rdvproto_timer(now);
	/* Then libcurl's, for what we sent above. Its transfers done there
	 * deliver their answers (drain): one may set a timer of the
	 * protocol's (a "wait for node 0" answered: ask again in 10 ms),
	 * which the call before did not see. Missed, the helper slept until
	 * a client woke it, and a node waited for node 0 until its deadline
	 * (1 launch in 12 of 4 x 8 over etcd: tests/bench/etcd). So the two
	 * are asked in turn until libcurl delivers nothing new: a fixpoint.
	 * Bounded, since each round may send again: past 8 rounds the helper
	 * is woken at once (0) for the rest, never left asleep on it. */
	for (int round = 0; ; round++) {
		unsigned long seen = ac_econn_answers();

		next = ac_econn_timer(now);
		if (ac_econn_answers() == seen)
			break;
		t2 = ac_rdvproto_timer(now);
		if (t2 >= 0 && (t < 0 || t2 < t))
			t = t2;
		if (round == 8) {
			next = 0;
			break;
		}
	}
	if (t >= 0 && (next < 0 || t < next))
		next = t;
	if (ready() && X.lease != 0 && (next < 0 || due - now < next))
		next = due > now ? due - now : 0;
	if (waiting && (next < 0 || check - now < next))
		next = check > now ? check - now : 0;
	return next;
}

/* store.h's unpost: this node's arrival deleted, at once (the helper
 * exits). The watch brings no deletes: a put of wd/ says it. */
static int
s_unpost(const struct ac_coll *c)
{
	char key[KEY_MAX], wd[KEY_MAX];

	if (!ready())
		return -1;
	arr_key(key, sizeof(key), c->key, c->gen, X.job->node);
	wd_key(wd, sizeof(wd), c->key, c->gen, X.job->node);
	return ac_econn_sync("/v3/kv/txn", ej_txn(json_array(), json_pack(
	    "[o, o]", ej_delete(key, ""), op_put(wd, "", 0)), json_array()),
	    1000, NULL) == -1 ? -1 : 0;
}

/*
 * The helper exits: the arrivals and withdrawals still out are waited for
 * (the helper's loop has ended: this one runs etcd's alone), at most
 * DRAIN_MS, before the exit's own withdrawals (s_unpost), which go on a
 * connection of their own. Sent beside an arrival still out, one could be
 * applied first and the arrival put after it stood (a rank killed, its
 * helper stopped, etcd slow: the others passed on it). Past DRAIN_MS, what
 * is still out is left to etcd's order. (1 s was too short under ASan on a
 * busy machine for etcd.outages, which resumes etcd 0.3 s after the stop.)
 */
#define DRAIN_MS 3000
static void
drain_posts(void)
{
	long end = ac_now_ms() + DRAIN_MS;
	struct pollfd pfd[64];

	for (long now = ac_now_ms(); X.posts != NULL && ac_econn_up() &&
	    now < end; now = ac_now_ms()) {
		long t = ac_econn_timer(now);
		int n = ac_econn_fds(pfd, (int)(sizeof(pfd) / sizeof(pfd[0])));

		if (t < 0 || t > end - now)
			t = end - now;
		if (poll(pfd, (nfds_t)n, (int)t) > 0)
			ac_econn_events(pfd, n);
	}
}

static void
x_stop(void)
{
	drain_posts();
	ac_rdvproto_withdraw_all();
	acks(1);
	ac_econn_stop();	/* frees its requests, calling nobody */
	while (X.posts != NULL) {
		struct req *r = X.posts;

		X.posts = r->next;
		free(r);
	}
	while (X.uploads.head != NULL)
		upload_free(X.uploads.head);
	while (X.fetches != NULL)
		fetch_free(X.fetches);
	while (X.seen != NULL) {
		struct seen *s = X.seen;

		X.seen = s->next;
		free(s);
	}
	free(X.seen_b);
	X.seen_b = NULL;
	X.seen_nb = X.nseen = 0;
	ac_rdvproto_stop();
}

static const struct ac_xport xport = {
	.name = "etcd",
	.fds = ac_econn_fds,
	.events = ac_econn_events,
	.timer = x_timer,
	.describe = ac_rdvjoin_describe,
	.down = ac_econn_down,
	.stop = x_stop,
	.arrive = x_arrive,
	.publish = x_publish,
	.want = x_want,
	.abort = ac_rdvproto_abort,
	.lost = ac_rdvproto_lost,
	.where = ac_rdvproto_where,
	.waits = ac_rdvproto_waits,
	.hello = ac_rdvproto_hello,
	.node = ac_rdvproto_node,
	.expired = NULL,
	.withdraw = x_withdraw,
	.pending = ac_rdvjoin_pending,
	.look_by = ac_rdvproto_look_by,
};

static const struct ac_store store = {
	.name = "etcd", .up = ac_econn_up, .where = ac_econn_where,
	.down = ac_econn_down, .fail = ac_econn_fail, .join = s_join,
	.bind = s_bind, .probe = s_probe, .leave = s_leave, .put = s_put,
	.get = s_get, .list = s_list, .resync = s_resync, .over = over_unread,
	.swept = swept, .unpost = s_unpost,
};

static const struct ac_econn_hooks hooks = { on_ready, on_watch, on_lease_lost };

const struct ac_xport *
ac_xetcd_open(struct ac_job *j, const struct ac_etcd_url *u,
    struct ac_runid *rid, const struct ac_rdv **rdvp)
{
	char err[160];

	memset(&X, 0, sizeof(X));
	X.job = j;
	X.runid = rid;
	/* As Redis' key TTL: longer than any wait's deadline. Every client
	 * checked it (check_etcd); a helper run by hand keeps the default. */
	(void)ac_ttl_env("ACCELCTL_ETCD_TTL", &X.ttl, err, sizeof(err));
	snprintf(X.base, sizeof(X.base), "accelctl/%s/", j->id);
	snprintf(X.prefix, sizeof(X.prefix), "%sr%ld/", X.base, rid->run);
	ac_rdvproto_init(j, rid, &xport, &store);
	ac_econn_start(u, &hooks);
	*rdvp = ac_rdvproto_rdv();
	return &xport;
}
