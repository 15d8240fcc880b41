/* rdvlive.c: node liveness over any store: each helper's beat, a ring of watchers, and lost nodes named (exit 4).
 *
 * A node that dies whole (its helper and its ranks: a panic, power, a
 * fence) says nothing, and its peers waited for it to their deadline, 30
 * minutes by default, with a line that blamed nobody (issue 36). Written
 * once here, for every store, with three of store.h's primitives:
 *
 *   ~beat/NODE   "SEQ BOUNDms PID HOST": put by the node's helper every third of the
 *                bound (ACCELCTL_NODE_TIMEOUT, 30 s), SEQ counting up. Quiet
 *                ('~'): no node follows its events, so a beat costs one
 *                small write and nothing for the other nodes.
 *   dead/NODE    "TEXT": a watcher found NODE silent; put where absent, told:
 *                every node reads it once, the first words stay.
 *
 * Watching: each node reads the beats of the next two nodes after it (in
 * node order, round the ring, skipping the dead) every eighth of the bound,
 * two small reads, whatever the number of nodes: nothing per rank, and a
 * node's cost does not grow with the job. A node is silent when the value of
 * its beat has not changed for SILENT of the watcher's own clock (no
 * comparison of two hosts' clocks). SILENT is the bound less two reads: a
 * beat written just before the node died is first seen a read later at
 * worst, and found unchanged a read after SILENT, so the node is named
 * within the bound of its death; a live node's beat changes every third of
 * the bound, which leaves it most of a third to be late (a busy host).
 *
 * A store that is away is not a dead node: when the store is back (ac_rdvlive_up) or
 * answers a read or a beat late (a stall, a failover), every node's silence
 * counts again from then, so each has a whole bound before anyone is named.
 * A node never seen (its helper not started yet: ranks start late, at their
 * first barrier) is not watched until it beats once. A helper replaced on a
 * live node beats anew: its value changes, the node lives on.
 *
 * What a lost node ends is lost.c's (ac_lost_node): waits across nodes that
 * the store, read after the loss was known, says the node has not arrived at,
 * or whose result's source is on it. Declared lost, a node is lost for the
 * rest of the run. A node that reads itself declared (its helper was stopped
 * or cut off) gives the store a bound to bring what it still owes (a
 * barrier the others completed on its arrival passes), then ends the
 * barriers that still miss another node: those the others left.
 *
 * Silence is measured on the beat, which comes every third of the bound: a
 * helper frozen for about half of the bound, just after a beat, may be
 * declared lost (the price of naming a dead node within the bound); a
 * helper killed on a live node whose ranks do not call accelctl again within
 * the bound (they compute) leaves its node silent, and lost. Nodes that set
 * different bounds are watched with the longer (each beat says its own).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "duration.h"
#include "log.h"
#include "lost.h"
#include "rdvjoin.h"
#include "rdvlive.h"
#include "ttl.h"

/* Each node watches this many others. */
#define WATCHERS	2
/* While a node is lost and waits go on, the waits it may end are asked
 * again this often (in memory: what the store said since). */
#define RECHECK_MS	500
/* A store without looks (etcd: its events are in order) is taken to have
 * answered a result's read this long after the result was asked for. */
#define RESULT_READ_MS	2000

enum { UNKNOWN, ALIVE, DEAD };

struct peer {
	uint64_t	hash;		/* of its beat's value */
	long		seen_ms;	/* when that value was first read here */
	long		sent_ms;	/* a read of it out since, or 0 */
	int		st;
	long		bound_ms;	/* the bound its helper says it keeps, 0 not known */
	char		who[80];	/* "PID HOST" of its last beat */
	char		*dead;		/* DEAD: the words it was declared in */
};

static struct {
	struct ac_job		*job;
	const struct ac_store	*st;
	void			(*look)(void);
	long			 bound_ms, beat_ms, read_ms, silent_ms;
	struct peer		*peers;		/* [nnodes] */
	long			 seq;
	long			 next_beat, next_read, next_check;
	long			 beat_sent;	/* ms, 0: none out */
	uintptr_t		 epoch;		/* bumped at up: older answers are stale */
	long			 nlost;
	long			 self_look;	/* ms: look again once this node's own loss has had its bound, or 0 */
	char			 me[96];	/* "PID HOST" */
	char			 dup[24];	/* a claimant refused: its nonce, said in the beat */
	char			*dup_why;	/* ... and why the store fails once that beat is put */
} L;

/* The bound P is watched with: the longer of its own and this node's. */
static long
bound_of(const struct peer *p)
{
	return p->bound_ms > L.bound_ms ? p->bound_ms : L.bound_ms;
}

static uint64_t
hash(const char *v, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)v[i]) * 1099511628211ULL;
	return h;
}

void
ac_rdvlive_init(struct ac_job *j, const struct ac_store *s, void (*look)(void))
{
	char err[256], host[64];
	long secs;

	ac_rdvlive_stop();
	if (j->nnodes <= 1)
		return;
	if ((L.peers = calloc((size_t)j->nnodes, sizeof(*L.peers))) == NULL)
		return;
	/* Every rank checked it before it came (exit 2): a helper started
	 * by hand keeps the default, and says so. */
	if (ac_node_timeout_env(&secs, err, sizeof(err)) == -1)
		ac_log("%s: the default, %lds, is used", err, secs);
	L.job = j;
	L.st = s;
	L.look = look;
	L.bound_ms = secs * 1000;
	L.beat_ms = L.bound_ms / 3;
	L.read_ms = L.bound_ms / 8;
	L.silent_ms = L.bound_ms - 2 * L.read_ms;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(L.me, sizeof(L.me), "%ld %s", (long)getpid(), host);
}

void
ac_rdvlive_stop(void)
{
	for (long n = 0; L.peers != NULL && n < L.job->nnodes; n++)
		free(L.peers[n].dead);
	free(L.peers);
	free(L.dup_why);
	memset(&L, 0, sizeof(L));
}

long
ac_rdvlive_bound(void)
{
	return L.peers != NULL ? L.bound_ms / 1000 : 0;
}

int
ac_rdvlive_any_lost(void)
{
	return L.nlost > 0;
}

/* The store was away or late: every node's silence counts from NOW. */
static void
again_from(long now)
{
	for (long n = 0; n < L.job->nnodes; n++) {
		L.peers[n].seen_ms = now;
		L.peers[n].sent_ms = 0;
	}
}

void
ac_rdvlive_up(void)
{
	long now = ac_now_ms();

	if (L.peers == NULL)
		return;
	L.epoch++;
	L.beat_sent = 0;
	L.next_beat = now;
	L.next_read = now + L.read_ms;
	again_from(now);
	/* The losses known here, told again (where absent): a store that
	 * lost them (restarted empty) would leave a helper that joins now,
	 * outside the dead node's ring, without them. */
	for (long n = 0; n < L.job->nnodes; n++) {
		char key[48];

		if (L.peers[n].dead == NULL)
			continue;
		snprintf(key, sizeof(key), "dead/%ld", n);
		L.st->put(key, L.peers[n].dead, strlen(L.peers[n].dead),
		    AC_PUT_ABSENT | AC_PUT_TELL, NULL, NULL);
	}
}

/* --- this node's beat --- */

static void
on_beat(int ok, const char *v, size_t len, void *priv)
{
	long now = ac_now_ms();

	(void)v;
	(void)len;
	if ((uintptr_t)priv != L.epoch || L.peers == NULL)
		return;
	/* Answered late: the store stalled, and so did every node's beat. */
	if (ok != -1 && now - L.beat_sent > L.read_ms)
		again_from(now);
	L.beat_sent = 0;
}

/* The beat that says " dup NONCE" is in the store (or cannot be): now
 * fail. Its own answer, not any beat's: one already out says nothing of
 * the refusal (second review). The store's failure may stop everything. */
static void
on_refused(int ok, const char *v, size_t len, void *priv)
{
	(void)ok;
	(void)v;
	(void)len;
	(void)priv;	/* a store that went away meanwhile: fail all the same */
	if (L.peers == NULL || L.dup_why == NULL)
		return;
	L.st->fail(L.dup_why);
}

int
ac_rdvlive_refuse(const char *nonce, const char *why)
{
	char v[200], key[48];
	int n;

	if (L.peers == NULL || L.dup_why != NULL)
		return L.peers != NULL;
	snprintf(L.dup, sizeof(L.dup), "%.16s", nonce);
	if ((L.dup_why = strdup(why)) == NULL)
		return 0;
	n = snprintf(v, sizeof(v), "%ld %ldms %s dup %s", ++L.seq, L.bound_ms,
	    L.me, L.dup);
	snprintf(key, sizeof(key), "~beat/%ld", L.job->node);
	L.st->put(key, v, (size_t)n, 0, on_refused, NULL);
	return 1;
}

static void
beat(long now)
{
	char v[200];
	int n = snprintf(v, sizeof(v), "%ld %ldms %s%s%s", ++L.seq, L.bound_ms,
	    L.me, L.dup[0] != '\0' ? " dup " : "", L.dup);
	char key[48];

	snprintf(key, sizeof(key), "~beat/%ld", L.job->node);
	L.beat_sent = now;
	L.next_beat = now + L.beat_ms;
	L.st->put(key, v, (size_t)n, 0, on_beat, (void *)L.epoch);
}

/* --- lost nodes --- */

/* NODE is lost, in TEXT's words: the waits it ends are told. */
static void
mark(long node, const char *text)
{
	char self[768];

	int64_t now = ac_wall_us(), after = now;

	if (node < 0 || node >= L.job->nnodes)
		return;
	L.peers[node].st = DEAD;
	if (L.peers[node].dead == NULL)
		L.peers[node].dead = strdup(text);
	if (node == L.job->node) {
		/* What the store still brings in a bound (a barrier completed
		 * on this node's arrival) decides first, and a look after it. */
		after = now + (int64_t)L.bound_ms * 1000;
		L.self_look = ac_now_ms() + L.bound_ms + 1;
		snprintf(self, sizeof(self), "this node (%ld) was declared lost "
		    "by the others (%.500s): was its helper stopped, or cut off "
		    "from the rendezvous, for half of ACCELCTL_NODE_TIMEOUT or "
		    "more?", node, text);
		text = self;
	}
	if (ac_lost_node(L.job, node, now, after, text) != 1)
		return;
	L.nlost++;
	ac_log("%s", text);
	L.next_check = 0;
	/* What the waits miss is read now, not at the next line. */
	if (L.look != NULL)
		L.look();
	if (L.job->gone != NULL)
		L.job->gone(L.job);
}

static void
on_declared(int ok, const char *v, size_t len, void *priv)
{
	char text[512];

	/* Declared before by another watcher: its words. */
	if (ok == 0 && L.peers != NULL) {
		snprintf(text, sizeof(text), "%.*s", (int)len, v);
		mark((long)(uintptr_t)priv, text);
	}
}

static void
declare(long node, long now)
{
	struct peer *p = &L.peers[node];
	char key[48], text[512], host[80] = "?";
	long pid = 0;

	(void)sscanf(p->who, "%ld %79s", &pid, host);
	snprintf(text, sizeof(text), "node %ld (host %s, helper pid %ld) is "
	    "gone: no sign of life for %lds (ACCELCTL_NODE_TIMEOUT %lds)",
	    node, host, pid, (now - p->seen_ms + 999) / 1000, bound_of(p) / 1000);
	snprintf(key, sizeof(key), "dead/%ld", node);
	L.st->put(key, text, strlen(text), AC_PUT_ABSENT | AC_PUT_TELL,
	    on_declared, (void *)(uintptr_t)node);
	mark(node, text);
}

int
ac_rdvlive_told(const char *key, const char *v, size_t len)
{
	char text[512];

	if (strncmp(key, "dead/", 5) != 0)
		return 0;
	if (L.peers != NULL) {
		snprintf(text, sizeof(text), "%.*s", (int)len, v);
		mark(atol(key + 5), text);
	}
	return 1;
}

/* --- watching the ring --- */


static void
on_read(int ok, const char *v, size_t len, void *priv)
{
	uintptr_t u = (uintptr_t)priv;
	long node = (long)(u & 0xffffff), now = ac_now_ms();
	struct peer *p;
	uint64_t h;

	if (L.peers == NULL || u >> 24 != (L.epoch & 0xff) ||
	    node >= L.job->nnodes)
		return;
	p = &L.peers[node];
	if (p->sent_ms == 0)
		return;		/* the store was late meanwhile: counted again */
	if (ok != -1 && now - p->sent_ms > L.read_ms) {
		again_from(now);
		return;
	}
	p->sent_ms = 0;
	if (ok == -1 || p->st == DEAD)
		return;
	if (ok == 1 && ((h = hash(v, len)) != p->hash || p->st == UNKNOWN)) {
		char buf[160];
		long long seq;
		long bound;
		int at = 0;

		p->hash = h;
		p->seen_ms = now;
		p->st = ALIVE;
		/* "SEQ BOUNDms PID HOST": its bound (one the parser could
		 * have given, else not known: its own is used), and who. */
		snprintf(buf, sizeof(buf), "%.*s", (int)len, v);
		if (sscanf(buf, "%lld %ldms %n", &seq, &bound, &at) == 2 && at > 0) {
			p->bound_ms = bound >= 3000 && bound <= 86400000 ? bound : 0;
			snprintf(p->who, sizeof(p->who), "%s", buf + at);
		} else
			p->bound_ms = 0;
		return;
	}
	/* Unchanged, or gone from a store that lost it and was not away
	 * (an eviction): silent, for the longer of the two nodes' bounds
	 * (a node set apart with a longer one beats less often). */
	if (p->st == ALIVE && now - p->seen_ms >= bound_of(p) - 2 * L.read_ms)
		declare(node, now);
}

static void
watch(long now)
{
	long n = L.job->nnodes, me = L.job->node, picked = 0;
	char key[48];

	for (long i = 1; i < n && picked < WATCHERS; i++) {
		long node = (me + i) % n;
		struct peer *p = &L.peers[node];

		if (p->st == DEAD)
			continue;
		picked++;
		/* The last read still out: waited for, a bound at most (an
		 * answer the store never gave is a store away). */
		if (p->sent_ms != 0 && now - p->sent_ms <= L.bound_ms)
			continue;
		if (p->sent_ms != 0)
			again_from(now);
		p->sent_ms = now;
		snprintf(key, sizeof(key), "~beat/%ld", node);
		L.st->get(key, on_read, (void *)(((L.epoch & 0xff) << 24) |
		    (uintptr_t)node));
	}
}

/* The waits a lost node may end, asked again on what was read since. */
static void
recheck(long now)
{
	int waits = 0;

	for (struct ac_coll *c = L.job->colls; c != NULL; c = c->next) {
		if (c->done || c->waiters == 0 || !ac_coll_cross(L.job, c))
			continue;
		waits = 1;
		/*
		 * A store whose events are in order (no looks: etcd's watch)
		 * brought what the lost node wrote before it died ahead of
		 * the news of its loss: a barrier's missing nodes, once its
		 * arrivals were read at all, are as of now; a result asked
		 * for a while ago that has not come will not.
		 */
		if (L.st->look == NULL && (c->op == AC_OP_BARRIER ?
		    c->xlook_us != 0 : now - c->since_ms >= RESULT_READ_MS))
			c->xlook_us = ac_wall_us();
	}
	if (waits && L.job->gone != NULL)
		L.job->gone(L.job);
	L.next_check = waits ? now + RECHECK_MS : 0;
}

long
ac_rdvlive_timer(long now)
{
	long t, nb;

	if (L.peers == NULL || !ac_rdvjoin_ready())
		return -1;
	/* A beat never answered (a store that dropped it) is not waited for
	 * past a bound: the next goes out. */
	if (now >= L.next_beat && (L.beat_sent == 0 ||
	    now - L.beat_sent > L.bound_ms))
		beat(now);
	if (now >= L.next_read) {
		L.next_read = now + L.read_ms;
		watch(now);
	}
	if (L.self_look != 0 && now >= L.self_look) {
		L.self_look = 0;
		if (L.look != NULL)
			L.look();
		L.next_check = 0;
	}
	if (L.nlost > 0 && now >= L.next_check)
		recheck(now);
	nb = L.beat_sent != 0 && L.beat_sent + L.bound_ms > L.next_beat ?
	    L.beat_sent + L.bound_ms : L.next_beat;
	t = (nb < L.next_read ? nb : L.next_read) - now;
	if (L.nlost > 0 && L.next_check != 0 && L.next_check - now < t)
		t = L.next_check - now;
	if (L.self_look != 0 && L.self_look - now < t)
		t = L.self_look - now;
	return t > 0 ? t : 0;
}
