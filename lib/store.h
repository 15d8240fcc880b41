/* store.h: what the rendezvous protocol (rdvproto.c) asks of a store: a few operations on the run's keys.
 *
 * A store (xredis.c, xetcd.c) knows its keys' layout and its wire; the
 * protocol knows what the keys mean. Keys are named relative to this node's
 * run ("nccl/id", "nccl/joined/3"): the store adds its own prefix (Redis
 * "accelctl:{JOB}:rRUN:", etcd "accelctl/JOB/rRUN/") and lifetime (Redis'
 * TTL, etcd's lease). What a store must guarantee is in DESIGN-NOTES ("One
 * protocol over small stores").
 *
 * The protocol moves onto this interface piece by piece (issue 19): NCCL's
 * rendezvous first; the operations grow with the pieces.
 */
#ifndef ACCELCTL_STORE_H
#define ACCELCTL_STORE_H

#include <stddef.h>
#include <stdint.h>

struct ac_coll;

/* put's flags. */
#define AC_PUT_ABSENT	0x1	/* only where the key does not exist */
#define AC_PUT_TELL	0x2	/* every node's store reads an event of it (rdvproto_told) */

/*
 * An operation's answer. OK: 1 done (put) or found (get); 0 not: the key
 * exists already (a put with AC_PUT_ABSENT: V is its value) or does not
 * (get); -1 no answer (the store went down: it calls ac_rdvproto_up once it
 * is back in its run, and the protocol sends again what it still needs).
 * V is borrowed for the call.
 */
typedef void ac_store_cb(int ok, const char *v, size_t len, void *priv);
/* One key of a list: KEY relative to the run, its value V (LEN bytes). */
typedef void ac_store_list_cb(const char *key, const char *v, size_t len);

struct ac_store {
	const char	*name;
	/* In a run, over a connection that is up: keys can be named. put
	 * and get also work while the store probes a run it joined fresh
	 * (ac_rdvproto_probe), its keys those of that run. */
	int	(*ready)(void);
	/* Put V (LEN bytes) at KEY, with FLAGS; CB may be NULL. */
	void	(*put)(const char *key, const void *v, size_t len, int flags,
		    ac_store_cb *cb, void *priv);
	/* Read KEY. */
	void	(*get)(const char *key, ac_store_cb *cb, void *priv);
	/* Optional: read every key under PREFIX ("nodes/"), CB once per key
	 * (nothing when down). A store whose events bring a new follower the
	 * run's earlier told puts (Redis: the stream, read from its start)
	 * needs none; one whose events start at its registration (etcd's
	 * watch) reads them so, in one request, not a key at a time. */
	void	(*list)(const char *prefix, ac_store_list_cb *cb);
	/* Post again everything in flight and the last results (a
	 * collective another transport carried is now this one's). */
	void	(*resync)(void);
	/* Optional: generation GEN of result KEY is over here without this
	 * helper reading it (ac_rdvproto_over; etcd: counted as said read). */
	void	(*over)(const char *key, int64_t gen);
	/* Optional: the end of the sweep (ac_rdvproto_sweep), what the store
	 * posts again of its own: kept results, each name's last result. */
	void	(*swept)(void);
	/* Optional: take back this node's arrival at barrier C at once (the
	 * helper exits: ac_rdvproto_withdraw_all), waiting a second at most;
	 * 0, or -1 when the store cannot (down: stop asking). */
	int	(*unpost)(const struct ac_coll *c);
	/* Register again, fresh, in node 0's newest run: nothing is posted
	 * until that is answered (the run we were in is closed). */
	void	(*rejoin)(void);
};

#endif
