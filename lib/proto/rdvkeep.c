/* rdvkeep.c: the results this node published, kept to write again should the store lose them (one policy for every store).
 *
 * A node may wait for a generation its source's node passed long ago (it
 * slept, it is slow), and a store may lose every key meanwhile: Redis
 * restarted empty, FLUSHALL, a failover to a replica behind, a TTL run out;
 * etcd a lease it let expire. The source's node is the one that can write
 * its results again. What it keeps is bounded by size, not by age (Redis
 * dropped them by age and etcd did not, until issue 19; etcd.lease
 * testLeaseExpiredUnderResults read a result older than the TTL). How a
 * store finds out what it lost is its own: Redis renews each kept key in a
 * pass (an EXPIRE answered 0 is a key gone: written again), etcd writes
 * every kept result again when its lease is lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdvjoin.h"
#include "rdvkeep.h"

static struct {
	struct ac_job	*job;
	struct ac_kept	*head, *tail;
	size_t		 bytes;
	struct ac_kept	*next;		/* the pass is on here, or NULL */
	void		(*each)(struct ac_kept *);
	int		 out;		/* requests out, of every pass */
	uintptr_t	 epoch;		/* the pass's */
	/* rdvproto.c's: does another transport carry KEY's kind now? */
	int		(*elsewhere)(const char *key);
} K;

void
ac_rdvkeep_init(struct ac_job *j, int (*elsewhere)(const char *key))
{
	ac_rdvkeep_stop();
	K.job = j;
	K.elsewhere = elsewhere;
}

static void
unref(struct ac_kept *k)
{
	if (--k->refs > 0 || !k->dead)
		return;
	free(k->v);
	free(k);
}

/* K off the list: freed now, or when the last reply for it comes. */
static void
drop(struct ac_kept *k)
{
	struct ac_keygen *g = K.job != NULL ? ac_job_key(K.job, k->key) : NULL;

	if (K.next == k)
		K.next = k->next;
	if (k->prev != NULL)
		k->prev->next = k->next;
	else
		K.head = k->next;
	if (k->next != NULL)
		k->next->prev = k->prev;
	else
		K.tail = k->prev;
	K.bytes -= k->len + sizeof(*k);
	/* The name's newest kept one gone: a later publish may keep it again. */
	if (g != NULL && g->xkept == k->gen + 1)
		g->xkept = 0;
	k->dead = 1;
	k->refs++;
	unref(k);
}

void
ac_rdvkeep_stop(void)
{
	while (K.head != NULL)
		drop(K.head);
	memset(&K, 0, sizeof(K));
}

void
ac_rdvkeep_add(const char *key, int64_t gen, const void *v, size_t len,
    int any_order)
{
	struct ac_keygen *g = ac_job_key(K.job, key);
	struct ac_kept *k;

	if (g != NULL && gen < g->xkept && !any_order)
		return;
	if ((k = calloc(1, sizeof(*k))) == NULL ||
	    (k->v = malloc(len + 1)) == NULL) {
		free(k);
		return;		/* not kept: what a store lost stays lost */
	}
	if (g != NULL && gen + 1 > g->xkept)
		g->xkept = gen + 1;
	snprintf(k->key, sizeof(k->key), "%s", key);
	k->gen = gen;
	memcpy(k->v, v, len);
	k->v[len] = '\0';
	k->len = len;
	k->next = K.head;
	if (K.head != NULL)
		K.head->prev = k;
	else
		K.tail = k;
	K.head = k;
	K.bytes += len + sizeof(*k);
	/* The oldest go first; the newest stays, however large. */
	while (K.bytes > AC_KEEP_MAX && K.tail != k)
		drop(K.tail);
}

int
ac_rdvkeep_any(void)
{
	return K.head != NULL;
}

/* The next kept results of the pass, up to AC_KEEP_BUSY out. */
static void
pump(void)
{
	while (K.next != NULL && K.out < AC_KEEP_BUSY && ac_rdvjoin_ready()) {
		struct ac_kept *k = K.next;

		K.next = k->next;
		if (K.elsewhere(k->key))
			continue;
		K.out++;
		k->refs++;
		k->epoch = K.epoch;
		K.each(k);
	}
}

void
ac_rdvkeep_pass(void (*each)(struct ac_kept *))
{
	K.each = each;
	K.next = K.head;
	K.epoch++;
	pump();
}

int
ac_rdvkeep_passing(void)
{
	return K.next != NULL;
}

void
ac_rdvkeep_answered(struct ac_kept *k, int down)
{
	K.out--;
	if (down && k->epoch == K.epoch)
		K.next = NULL;	/* the sweep after the reconnect starts over */
	unref(k);
	pump();
}

void
ac_rdvkeep_resume(void)
{
	pump();
}

void
ac_rdvkeep_forget(struct ac_kept *k)
{
	if (!k->dead)
		drop(k);
}
