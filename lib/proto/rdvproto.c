/* rdvproto.c: the rendezvous protocol written once over a store: node names, the abort, NCCL's rendezvous, the sweep.
 *
 * Issue 19 moves the protocol out of the two stores into this file, piece by
 * piece. NCCL's rendezvous came first, because it was Redis' alone (a Lua
 * script in xredis.c), so that NCCL could not ride on etcd. Over store.h
 * these pieces are keys of the run, the same on every store:
 *
 *   ping/NODE, pong/NODE  a node joining the run fresh asks node 0 whether it
 *                      is alive (the store puts ping, told); node 0 answers
 *   nodes/NODE         "host: ranks 4, 5", for messages (put at hello, told)
 *   abort              "rank 3: reason", the first abort (put once, told)
 *   nccl/joined/NODE   this node joined the run's communicator (put once)
 *   nccl/id            node 0's ncclUniqueId, hex (put once, told)
 *   nccl/off           why NCCL is off for the rest of the run (the first reason, told)
 *
 * A node that finds its own joined key taken by another process (its helper
 * was restarted) cannot rejoin a communicator the others hold, so it turns
 * NCCL off for the run; its own key put again (an answer lost to a
 * reconnect) is still its own. The three steps are separate operations, not
 * one script: what one node reads before another writes is corrected by the
 * event of that write (told), which every node reads in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "kind.h"
#include "log.h"
#include "lost.h"
#include "rdvproto.h"
#include "rdvarr.h"
#include "rdvjoin.h"
#include "rdvkeep.h"
#include "rdvlive.h"
#include "xvalue.h"

#define KEY_MAX 64
/* Looks for the names of missing nodes: first after 100 ms, doubling to 5 s
 * (a node that never comes must not cost a read every round). */
#define NAMES_FIRST_MS	100
#define NAMES_MAX_MS	5000
/*
 * Which nodes a barrier waits for is read only when someone will read it,
 * not in an arrival (work in proportion to the nodes, at every one) nor half
 * a second into every barrier (a slow barrier cost every node a GET and an
 * EXPIRE: issue 35): LOOK_LEAD_MS before a progress line, a timeout or a
 * status answer is due (xport.h's look_by, asked by the helper's clients),
 * and every LOOK_MAX_MS while something waits, which also reads an event
 * the store may have trimmed and the abort. A barrier that completes before
 * any line is due costs no look at all; a timeout or status names the nodes
 * of the last look.
 */
#define LOOK_LEAD_MS	1500
#define LOOK_MAX_MS	10000
/* Once a node is lost, a collective posted is looked at this soon: whether
 * it waits for that node (exit 4) is known then. */
#define LOST_LOOK_MS	300

/* A collective this node posted to the store (an arrival, a read of a
 * result): those are what a look is about. */
struct posted {
	struct posted	*next;
	char		 key[AC_KEY_MAX];
	int64_t		 gen;
	int		 looks;		/* looks at it so far */
};

static struct {
	struct ac_job		*job;
	struct ac_runid		*rid;
	const struct ac_store	*st;
	const struct ac_xport	*x;	/* the store's collective steps */
	struct ac_rdv		 rdv;
	void			(*joined)(const char *, const char *, size_t);
	int			 join_pending;	/* asked; no id or "off" yet */
	char			 join_id[2 * 128 + 1];	/* hex; node 0's only */
	char			 off_pending[256];	/* to post, "" none */
	char			 me[48];	/* this process's mark on its joined key */
	int			 off;		/* NCCL is off for the run */
	int			 got_id;	/* the id was handed to NCCL */
	int			 quiet;		/* streamed collectives go by NCCL */
	unsigned		 epoch;		/* a join sent again: older answers are stale */
	char			**nodes;	/* [nnodes] "host: ranks ...", or NULL */
	char			**waits;	/* [nnodes] where its ranks wait, or NULL */
	long			 next_names;	/* ms: look again for unnamed missing nodes */
	long			 names_delay;	/* ms, doubling */
	struct posted		*posted;	/* barriers posted to, results waited for */
	long			 next_look;	/* ms: look at them again, or 0 */
	long			 last_look;	/* ms: the last look, or 0 */
} P;

static void send_off(void);
static long names_timer(long now);
static long look_timer(long now);

static void
deliver(const char *state, const char *v, size_t len)
{
	if (strcmp(state, "off") == 0) {
		P.join_pending = 0;
		P.off = 1;
	} else if (strcmp(state, "id") == 0)
		P.got_id = 1;
	if (P.joined != NULL)
		P.joined(state, v, len);
}

static void
on_id(int ok, const char *v, size_t len, void *priv)
{
	if ((unsigned)(size_t)priv != P.epoch || ok == -1)
		return;		/* down: sent again when the store is up */
	P.join_pending = 0;
	if (ok == 1)
		deliver("id", v, len);
	else	/* node 0 has not posted it: its event will tell */
		ac_log("NCCL: waiting for node 0 to post the communicator's id");
}

static void
on_off(int ok, const char *v, size_t len, void *priv)
{
	if ((unsigned)(size_t)priv == P.epoch && ok == 1)
		deliver("off", v, len);
}

static void
on_joined(int ok, const char *v, size_t len, void *priv)
{
	void *e = priv;

	if ((unsigned)(size_t)priv != P.epoch || ok == -1)
		return;
	if (ok == 0 && !(len == strlen(P.me) && memcmp(v, P.me, len) == 0)) {
		char why[128];

		snprintf(why, sizeof(why), "node %ld joined before (its helper "
		    "restarted)", P.job->node);
		snprintf(P.off_pending, sizeof(P.off_pending), "%s", why);
		send_off();
		deliver("off", why, strlen(why));
		return;
	}
	if (P.join_id[0] != '\0')
		P.st->put("nccl/id", P.join_id, strlen(P.join_id),
		    AC_PUT_ABSENT | AC_PUT_TELL, NULL, NULL);
	/* Node 0's own put comes first on the same connection, or its
	 * event after a put of another node 0 lineage: either way the id
	 * that stays is the first. */
	P.st->get("nccl/id", on_id, e);
}

static void
send_join(void)
{
	char key[KEY_MAX];
	void *e;

	if (!ac_rdvjoin_ready() || !P.join_pending)
		return;
	e = (void *)(size_t)++P.epoch;
	P.st->get("nccl/off", on_off, e);
	snprintf(key, sizeof(key), "nccl/joined/%ld", P.job->node);
	P.st->put(key, P.me, strlen(P.me), AC_PUT_ABSENT, on_joined, e);
}

static void
on_off_put(int ok, const char *v, size_t len, void *priv)
{
	(void)v;
	(void)len;
	(void)priv;
	/* Posted (or another reason was first, which every node reads). */
	if (ok != -1)
		P.off_pending[0] = '\0';
}

static void
send_off(void)
{
	if (P.off_pending[0] == '\0' || !ac_rdvjoin_ready())
		return;
	P.st->put("nccl/off", P.off_pending, strlen(P.off_pending),
	    AC_PUT_ABSENT | AC_PUT_TELL, on_off_put, NULL);
}

/* --- node names: "host: ranks 4, 5" in the other nodes' messages --- */

static void
set_node(long node, const char *v, size_t len)
{
	char *copy;

	if (P.nodes == NULL || node < 0 || node >= P.job->nnodes ||
	    (copy = strndup(v, len)) == NULL)
		return;
	free(P.nodes[node]);
	P.nodes[node] = copy;
}

static void
on_node(int ok, const char *v, size_t len, void *priv)
{
	if (ok == 1)
		set_node((long)(size_t)priv, v, len);
}

static void
on_listed_node(const char *key, const char *v, size_t len)
{
	if (strncmp(key, "nodes/", 6) == 0)
		set_node(atol(key + 6), v, len);
}

void
ac_rdvproto_hello(struct ac_job *j)
{
	char key[KEY_MAX], host[128], info[4096];
	size_t n;

	/* Only a whole node: the other nodes keep what they read. */
	for (long l = 0; l < j->lsize; l++)
		if (j->rank_of[l] < 0)
			return;
	if (!ac_rdvjoin_ready())
		return;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	n = (size_t)snprintf(info, sizeof(info), "%s: rank%s", host,
	    j->lsize > 1 ? "s" : "");
	for (long l = 0; l < j->lsize && n < sizeof(info) - 24; l++)
		n += (size_t)snprintf(info + n, sizeof(info) - n, "%s %lld",
		    l ? "," : "", (long long)j->rank_of[l]);
	snprintf(key, sizeof(key), "nodes/%ld", j->node);
	set_node(j->node, info, n);
	P.st->put(key, info, n, AC_PUT_TELL, NULL, NULL);
}

const char *
ac_rdvproto_node(long node)
{
	return P.nodes != NULL && node >= 0 && node < P.job->nnodes ?
	    P.nodes[node] : NULL;
}

/* The node whose name ("host: ranks 4, 5") lists global rank R, or -1
 * (not known: a node whose ranks have not all said who they are). */
static long
node_of(const struct ac_job *j, int64_t r)
{
	for (long n = 0; P.nodes != NULL && n < j->nnodes; n++) {
		const char *p = P.nodes[n] != NULL ? strstr(P.nodes[n], ": rank") : NULL;

		if (p == NULL)
			continue;
		for (p += 6; *p != '\0';) {
			char *end;
			long long v;

			while (*p == 's' || *p == ' ' || *p == ',')
				p++;
			v = strtoll(p, &end, 10);
			if (end == p)
				break;
			if (v == r)
				return n;
			p = end;
		}
	}
	return -1;
}

static void
on_listed_dead(const char *key, const char *v, size_t len)
{
	(void)ac_rdvlive_told(key, v, len);
}

/* rdvlive.c's: a node is lost; what the waits miss is read now. */
static void
look_now(void)
{
	ac_rdvproto_look_in(0);
}

/* Read the names of the nodes missing at our waits that we cannot name
 * (their told put came before we followed the run's events); 1 if any. */
static int
look_names(int read)
{
	int any = 0;

	for (struct ac_coll *c = P.job->colls; c != NULL; c = c->next) {
		if (!ac_coll_cross(P.job, c) || c->done || c->xmissing[0] == '\0')
			continue;
		for (const char *p = c->xmissing; *p != '\0';) {
			char *end, key[KEY_MAX];
			long node = strtol(p, &end, 10);

			if (end == p)
				break;
			if (ac_rdvproto_node(node) == NULL) {
				any = 1;
				if (!read)
					return 1;
				snprintf(key, sizeof(key), "nodes/%ld", node);
				P.st->get(key, on_node, (void *)(size_t)node);
			}
			for (p = end; *p == ',' || *p == ' '; p++)
				;
		}
	}
	return any;
}

long
ac_rdvproto_timer(long now)
{
	long t = ac_rdvjoin_timer(now), n;

	if ((n = names_timer(now)) >= 0 && (t < 0 || n < t))
		t = n;
	if ((n = look_timer(now)) >= 0 && (t < 0 || n < t))
		t = n;
	if ((n = ac_rdvlive_timer(now)) >= 0 && (t < 0 || n < t))
		t = n;
	return t;
}

static long
names_timer(long now)
{
	/* A store that lists (etcd) brought the names put before it followed
	 * the run (at up) and its events bring the rest: nothing to look for.
	 * One whose events may be trimmed (Redis' capped stream) reads the
	 * names it misses. */
	if (P.st->list != NULL || !ac_rdvjoin_ready() || !look_names(0))
		return -1;
	if (now >= P.next_names) {
		P.next_names = now + P.names_delay;
		P.names_delay = P.names_delay < NAMES_MAX_MS / 2 ?
		    2 * P.names_delay : NAMES_MAX_MS;
		(void)look_names(1);
	}
	return P.next_names - now;
}

/* --- looks: which nodes a barrier still waits for (store.h's look) --- */

/* Drop what is released or forgotten from the posted list at PP on. */
static struct posted **
posted_next(struct posted **pp)
{
	struct posted *p;

	while ((p = *pp) != NULL) {
		const struct ac_coll *c = ac_job_find(P.job, p->key, p->gen);

		if (c != NULL && !c->done)
			return pp;
		*pp = p->next;
		free(p);
	}
	return pp;
}

int
ac_rdvproto_posted(const struct ac_coll *c)
{
	struct posted **pp, *p;

	for (pp = posted_next(&P.posted); *pp != NULL;
	    pp = posted_next(&(*pp)->next))
		if ((*pp)->gen == c->gen && strcmp((*pp)->key, c->key) == 0)
			return 1;
	if ((p = malloc(sizeof(*p))) != NULL) {
		snprintf(p->key, sizeof(p->key), "%s", c->key);
		p->gen = c->gen;
		p->looks = 0;
		p->next = P.posted;
		P.posted = p;
		/* Its lines are its own: a look for another collective's
		 * line (look_by) does not stand for one before its own. */
		P.last_look = 0;
		/* A node is lost: whether this one misses it is read now. */
		if (ac_rdvlive_any_lost())
			ac_rdvproto_look_in(LOST_LOOK_MS);
	}
	return 0;
}

void
ac_rdvproto_look_soon(void)
{
	long at = ac_now_ms() + LOOK_MAX_MS;

	if (P.next_look == 0 || at < P.next_look)
		P.next_look = at;
}

void
ac_rdvproto_look_in(long ms)
{
	long at = ac_now_ms() + ms;

	if (P.next_look == 0 || at < P.next_look)
		P.next_look = at;
}

long
ac_rdvproto_look_by(long due)
{
	long now = ac_now_ms(), at = due > 0 ? due - LOOK_LEAD_MS : now;

	/* Not ready (joining, reconnecting): nothing can be read now, and
	 * the sweep after the reconnect posts again; a time in the past here
	 * would spin the helper's loop until then. */
	if (P.st == NULL || P.st->look == NULL || P.posted == NULL ||
	    !ac_rdvjoin_ready())
		return -1;
	/* Looked already for this line (the clients ask at every pass of the
	 * helper's loop, with the same due until the line is sent). */
	if (due > 0 && P.last_look != 0 && at <= P.last_look)
		return P.next_look > now ? P.next_look : -1;
	if (at < now)
		at = now;
	if (P.next_look == 0 || at < P.next_look)
		P.next_look = at;
	return P.next_look;
}

/*
 * Look at every barrier this node posted and still waits at, and every
 * result it waits for (an event may be trimmed before a node that is slow
 * reads it: the store's look reads the result too); 1 if any. From a
 * collective's second look on (late: a look after the first) the abort is
 * read as well (its event may have been trimmed): a
 * barrier that completes in its first seconds costs no more than the
 * store's look. Late is each collective's own, not the schedule's: posts
 * of other barriers reset the schedule, and a node that posted every
 * half second never looked at any barrier late (review of issue 19).
 */
static int
look(void)
{
	int late, any = 0, any_late = 0;
	struct posted **pp;

	for (pp = posted_next(&P.posted); *pp != NULL;
	    pp = posted_next(&(*pp)->next)) {
		struct ac_coll *c = ac_job_find(P.job, (*pp)->key, (*pp)->gen);

		if (c->waiters == 0)
			continue;
		any = 1;
		late = (*pp)->looks++ > 0;
		any_late |= late;
		P.st->look(c, late);
	}
	if (any_late)
		ac_rdvproto_read_abort();
	return any;
}

static long
look_timer(long now)
{
	if (P.st->look == NULL || !ac_rdvjoin_ready() || P.next_look == 0)
		return -1;
	if (now >= P.next_look) {
		P.last_look = now;
		if (!look()) {
			P.next_look = 0;
			return -1;
		}
		P.next_look = now + LOOK_MAX_MS;
	}
	return P.next_look - now;
}

/* --- the abort: the first one stays, and every node is told --- */

void
ac_rdvproto_abort(struct ac_job *j)
{
	if (j->aborted != NULL)
		P.st->put("abort", j->aborted, strlen(j->aborted),
		    AC_PUT_ABSENT | AC_PUT_TELL, NULL, NULL);
}

static void
on_abort(int ok, const char *v, size_t len, void *priv)
{
	char *text;

	(void)priv;
	if (ok == 1 && (text = strndup(v, len)) != NULL) {
		ac_job_abort_remote(P.job, text);
		free(text);
	}
}

void
ac_rdvproto_read_abort(void)
{
	if (ac_rdvjoin_ready())
		P.st->get("abort", on_abort, NULL);
}

/* --- gone ranks (lost.h): a node tells of its own, every node reads them --- */

void
ac_rdvproto_lost(struct ac_job *j, const struct ac_lost *l)
{
	char key[KEY_MAX], *v;
	size_t fl, n;

	/* An aborted job is over for every rank, now and later, and the abort
	 * says why: a rank that aborted and then exited is no news for the
	 * other nodes. Told, it raced the abort there (both posted again at
	 * a reconnect; the store's answers come in any order) and a waiter
	 * said "lost: rank 0 exited with 0" (etcd.abort.4). */
	if (l == NULL || j->aborted != NULL)
		return;
	/* "DIED NODE LRANK FULL\nTEXT\nFRONTIER" (lost.h). */
	fl = l->frontier != NULL ? strlen(l->frontier) : 0;
	if ((v = malloc(fl + sizeof(l->text) + 96)) == NULL)
		return;
	n = (size_t)sprintf(v, "%lld %ld %ld %d\n%s\n", (long long)l->died_us,
	    l->node, l->lrank, l->full, l->text);
	if (fl > 0)
		memcpy(v + n, l->frontier, fl + 1);
	snprintf(key, sizeof(key), "lost/%lld", (long long)l->rank);
	/* Overwritten: a rank of a later attempt gone again is news. */
	P.st->put(key, v, n + fl, AC_PUT_TELL, NULL, NULL);
	free(v);
}

/* Another node's rank is gone (ac_rdvproto_lost's value). */
static void
on_lost(const char *key, const char *v, size_t len)
{
	char *buf, *end, *text, *nl, *frontier;
	long long rank = strtoll(key + 5, &end, 10), died;
	long node, lrank;
	int full;

	if (*end != '\0' || rank < 0 || rank >= P.job->world ||
	    (buf = strndup(v, len)) == NULL)
		return;
	if (sscanf(buf, "%lld %ld %ld %d", &died, &node, &lrank, &full) != 4 ||
	    (text = strchr(buf, '\n')) == NULL || node == P.job->node) {
		/* Our own, read back, is known already. */
		free(buf);
		return;
	}
	text++;
	if ((nl = strchr(text, '\n')) != NULL) {
		*nl = '\0';
		frontier = nl + 1;
	} else
		frontier = NULL;
	if (ac_lost_add(P.job, rank, node, lrank, died, text, frontier,
	    full) == 1) {
		ac_log("%s", text);
		if (P.job->gone != NULL)
			P.job->gone(P.job);
	}
	free(buf);
}

static void
on_listed_lost(const char *key, const char *v, size_t len)
{
	on_lost(key, v, len);
}

/* --- where a node's ranks wait (where.c), for the waits that lack them --- */

void
ac_rdvproto_where(struct ac_job *j, const char *record)
{
	char key[KEY_MAX];

	snprintf(key, sizeof(key), "where/%ld", j->node);
	P.st->put(key, record, strlen(record), AC_PUT_TELL, NULL, NULL);
}

static void
set_waits(long node, const char *v, size_t len)
{
	char *copy;

	if (P.waits == NULL || node < 0 || node >= P.job->nnodes ||
	    node == P.job->node || (copy = strndup(v, len)) == NULL)
		return;
	free(P.waits[node]);
	P.waits[node] = copy;
}

const char *
ac_rdvproto_waits(long node)
{
	return P.waits != NULL && node >= 0 && node < P.job->nnodes ?
	    P.waits[node] : NULL;
}

/* --- struct ac_rdv: what NCCL asks of the rendezvous (xport.h) --- */

static void
r_join(const char *idhex, void (*joined)(const char *, const char *, size_t))
{
	P.joined = joined;
	P.join_pending = 1;
	snprintf(P.join_id, sizeof(P.join_id), "%s", idhex != NULL ? idhex : "");
	send_join();
}

static void
r_off(const char *why)
{
	snprintf(P.off_pending, sizeof(P.off_pending), "%s", why);
	P.join_pending = 0;
	P.off = 1;
	send_off();
}

static void
r_quiet(int on)
{
	P.quiet = on;
}

static void
r_resync(void)
{
	if (ac_rdvjoin_ready())
		P.st->resync();
}

/* --- the run the store is in, and the results it brings --- */

/*
 * A result of the run (xvalue.c's form: "R status\nfailed\npayload", or "L",
 * the source died) into coll.c. Only a collective we wait for counts as
 * progress in the run: a store replays old results (Redis' stream read from
 * its start, etcd's watch from an older revision), and a fresh joiner must
 * still leave a closed run.
 */
void
ac_rdvproto_deliver(const char *key, int64_t gen, const char *v, size_t len)
{
	const struct ac_coll *c = ac_job_find(P.job, key, gen);
	struct ac_result r;
	char failed[512];

	if (c == NULL || c->done)
		return;
	ac_rdvjoin_progressed();
	if (ac_xvalue_read(v, len, &r, failed, sizeof(failed)) == 0)
		ac_job_remote_done(P.job, key, gen, &r);
}

/* --- what is over, and the sweep after a (re)registration --- */

/*
 * Has every rank of this node arrived at a later generation of C's name
 * since C? Then C is a journal's memory of a collective that is over here (a
 * helper that replaced a killed one replays every arrival; the journal's R
 * record of its release may be missing): nobody here waits there again, and
 * the store may have lost or deleted its keys, as no node needs them. It is
 * completed here, without the store. Posted again, it put back an arrival
 * no node would join, and stayed in flight for good (a phantom in status;
 * etcd knew this, Redis posted every one: t_recovery
 * testOverBarriersNotPostedAgain over both stores).
 */
int
ac_rdvproto_over(struct ac_job *j, struct ac_coll *c)
{
	struct ac_result none = { 0 };
	struct ac_keygen *k = ac_job_key(j, c->key);

	if (k == NULL || c->done)
		return 0;
	for (long l = 0; l < j->lsize; l++)
		if (k->next_gen[l] <= c->gen + 1)
			return 0;
	none.failed = "";
	if (c->op == AC_OP_RESULT && P.st->over != NULL)
		P.st->over(c->key, c->gen);
	c->xover = 1;
	ac_job_remote_done(j, c->key, c->gen, &none);
	return 1;
}

/*
 * May a store's step post C now (its arrival, or a read of its result)? Not
 * while the store is not in its run (the sweep posts it once registered),
 * not when the rank's post leaves a run told closed (rejoin: the sweep posts
 * it in node 0's), and not when C is over here (completed on the spot).
 */
int
ac_rdvproto_posting(struct ac_job *j, struct ac_coll *c)
{
	return ac_rdvjoin_ready() && !ac_rdvjoin_moved_on() && !ac_rdvproto_over(j, c);
}

/* May C's result be posted again (a sweep's last results)? Not one made up
 * here for a collective that was over (Redis' plain SET put an empty value
 * over a broadcast's, and a barrier's failures became status 0, for every
 * node that read it later: review of issue 19). */
int
ac_rdvproto_postable(const struct ac_coll *c)
{
	return c->done && !c->xover && !ac_rdvproto_elsewhere(c->key);
}

/*
 * After a (re)registration: post again every collective in flight here
 * that the store may have lost, one step each (a walk of the job's
 * collectives, linear: what is over is known from the counters), then what
 * the store keeps of its own (its kept results, the last results of every
 * name). The abort and this node's name: ac_rdvproto_up.
 */
void
ac_rdvproto_sweep(void)
{
	struct ac_job *j = P.job;
	struct ac_coll *c, *next;

	/* The steps that post an arrival or ask for a result (arrive, want)
	 * ask ac_rdvproto_over first; a local source's result is never over
	 * here: completed so, its payload was lost, and an empty one posted. */
	for (c = j->colls; c != NULL; c = next) {
		next = c->next;
		if (!ac_coll_cross(j, c) || c->done || ac_rdvproto_elsewhere(c->key))
			continue;
		if (c->op == AC_OP_BARRIER && c->narrived == j->lsize)
			P.x->arrive(j, c);
		else if (c->op == AC_OP_BARRIER && c->xwd && P.x->withdraw != NULL)
			P.x->withdraw(j, c);
		else if (c->op == AC_OP_RESULT && (c->src == AC_SRC_DONE ||
		    c->src == AC_SRC_LOST))
			P.x->publish(j, c);
		else if (c->op == AC_OP_RESULT)
			P.x->want(j, c);
	}
	if (P.st->swept != NULL)
		P.st->swept();
}

/*
 * The helper exits (idle, stopped, signalled): its ranks wait nowhere any
 * more. The arrivals it posted at barriers that did not complete are taken
 * back, so that a later launch under the same job id that joins this run by
 * mistake cannot pass on them (DESIGN-NOTES "Run identity"). A helper that
 * replaces this one posts them again from its journal.
 */
void
ac_rdvproto_withdraw_all(void)
{
	struct ac_job *j = P.job;

	if (j == NULL || P.st->unpost == NULL)
		return;
	for (struct ac_coll *c = j->colls; c != NULL; c = c->next) {
		if (!ac_coll_cross(j, c) || c->done || c->op != AC_OP_BARRIER ||
		    (c->narrived < j->lsize && !c->xwd))
			continue;
		if (P.st->unpost(c) == -1)
			return;
	}
}

/* --- the store's side --- */

/* In the run over a connection that is up (rdvjoin.c calls it): post again
 * what is in flight, then what the protocol still owes the other nodes. */
static void
in_run(void)
{
	ac_rdvproto_sweep();
	ac_rdvproto_up();
}

void
ac_rdvproto_init(struct ac_job *j, struct ac_runid *rid,
    const struct ac_xport *x, const struct ac_store *s)
{
	ac_rdvproto_stop();
	P.job = j;
	P.rid = rid;
	P.st = s;
	P.x = x;
	P.nodes = calloc((size_t)(j->nnodes > 0 ? j->nnodes : 1), sizeof(*P.nodes));
	P.waits = calloc((size_t)(j->nnodes > 0 ? j->nnodes : 1), sizeof(*P.waits));
	P.names_delay = NAMES_FIRST_MS;
	ac_rdvjoin_init(j, rid, s, in_run);
	ac_rdvkeep_init(j, ac_rdvproto_elsewhere);
	ac_rdvarr_init(j);
	ac_rdvlive_init(j, s, look_now);
	j->node_of = node_of;
	P.rdv = (struct ac_rdv){ x, r_join, r_off, r_quiet, r_resync };
	/* Not the lineage's nonce: a restarted helper must see its joined
	 * key as another's, and this process its own after a reconnect. */
	snprintf(P.me, sizeof(P.me), "%ld.%ld", (long)getpid(), ac_now_ms());
}

void
ac_rdvproto_stop(void)
{
	for (long n = 0; P.nodes != NULL && n < P.job->nnodes; n++)
		free(P.nodes[n]);
	free(P.nodes);
	for (long n = 0; P.waits != NULL && n < P.job->nnodes; n++)
		free(P.waits[n]);
	free(P.waits);
	while (P.posted != NULL) {
		struct posted *p = P.posted;

		P.posted = p->next;
		free(p);
	}
	ac_rdvkeep_stop();
	ac_rdvarr_stop();
	ac_rdvlive_stop();
	if (P.job != NULL)
		P.job->node_of = NULL;
	memset(&P, 0, sizeof(P));
}

const struct ac_rdv *
ac_rdvproto_rdv(void)
{
	return &P.rdv;
}

void
ac_rdvproto_up(void)
{
	/* What the store may have lost: our name, an abort (ours posted
	 * again, or another's whose event we missed while away). */
	ac_rdvproto_hello(P.job);
	/* The names put before we followed the run's events, at once where
	 * the store can list them (one request, not one per node). */
	if (P.st->list != NULL)
		P.st->list("nodes/", on_listed_node);
	if (P.job->aborted != NULL)
		ac_rdvproto_abort(P.job);
	else
		ac_rdvproto_read_abort();
	/* This node's gone ranks, told again (a store that lost them), and
	 * the others' where the store can list them. */
	for (const struct ac_lost *l = P.job->lost; l != NULL; l = l->next)
		if (l->node == P.job->node && l->rank >= 0)
			ac_rdvproto_lost(P.job, l);
	if (P.st->list != NULL)
		P.st->list("lost/", on_listed_lost);
	/* The nodes found lost while we were away (a store that streams its
	 * events from the run's start brings them again). */
	if (P.st->list != NULL)
		P.st->list("dead/", on_listed_dead);
	ac_rdvlive_up();
	P.names_delay = NAMES_FIRST_MS;
	P.next_names = ac_now_ms();
	send_off();
	/*
	 * Joining again: node 0 posts its id again (a store that lost it, by
	 * a restart empty, FLUSHALL or a failover, would leave a node that
	 * joins now waiting for an event nobody sends; put where absent:
	 * told once), and a node still waiting for the id reads it again
	 * (its event may have been lost with the store, or compacted, and the
	 * watch or stream resumes after it: review). Its own joined key put
	 * again is its own.
	 */
	if (P.joined != NULL && !P.off && (P.join_id[0] != '\0' || !P.got_id))
		P.join_pending = 1;
	if (P.joined != NULL)
		send_join();
}

/* claim/NODE: another helper claims this node (rdvjoin.c): refused while
 * this node's ranks run. Its arrivals are taken back first (the others must
 * not pass on a node that fails: they find it gone, exit 4), then the beat
 * says so, then this store fails. */
static void
on_claim(const char *key, const char *v, size_t len)
{
	char nonce[20], why[600];

	if (!ac_rdvjoin_claimed(key, v, len, nonce, why, sizeof(why)))
		return;
	ac_rdvproto_withdraw_all();
	if (!ac_rdvlive_refuse(nonce, why))
		P.st->fail(why);
}

void
ac_rdvproto_told(const char *key, const char *v, size_t len)
{
	if (strncmp(key, "claim/", 6) == 0)
		on_claim(key, v, len);
	else if (strncmp(key, "ping/", 5) == 0)
		ac_rdvjoin_ping(atol(key + 5), v, len);
	else if (strncmp(key, "nodes/", 6) == 0)
		set_node(atol(key + 6), v, len);
	else if (strcmp(key, "abort") == 0)
		on_abort(1, v, len, NULL);
	else if (strncmp(key, "lost/", 5) == 0)
		on_lost(key, v, len);
	else if (strncmp(key, "where/", 6) == 0)
		set_waits(atol(key + 6), v, len);
	else if (ac_rdvlive_told(key, v, len))
		;
	else if (strcmp(key, "nccl/id") == 0 && P.joined != NULL) {
		P.join_pending = 0;
		deliver("id", v, len);
	} else if (strcmp(key, "nccl/off") == 0)
		deliver("off", v, len);
}

int
ac_rdvproto_elsewhere(const char *key)
{
	const struct ac_kind *k = ac_kind_of(key);

	return P.quiet && k != NULL && k->streamed;
}
