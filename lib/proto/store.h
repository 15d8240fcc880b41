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
 * rendezvous first, then the run identity; the operations grow with the
 * pieces.
 */
#ifndef ACCELCTL_STORE_H
#define ACCELCTL_STORE_H

#include <stddef.h>
#include <stdint.h>

struct ac_coll;

/* A key that begins with '~' is quiet: no node follows its events (etcd
 * keeps it outside the watched prefix; Redis streams only told puts). The
 * beats (rdvlive.c) are: a write each, not an event for every node. */
#define AC_KEY_QUIET	'~'

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
	/* The connection is up: a registration can be sent. Keys can be
	 * posted once it is answered (ac_rdvjoin_ready); put and get also
	 * work while the protocol probes a run joined fresh (probe below). */
	int	(*up)(void);
	/* Where it is ("127.0.0.1:6379"), and why it is down (NULL: up;
	 * *FINAL: for good), for status. */
	const char *(*where)(void);
	const char *(*down)(int *final);
	/* Fail for good with WHY (the node's place is another helper's). */
	void	(*fail)(const char *why);
	/*
	 * Register this node in its job's run (DESIGN-NOTES "Run identity"):
	 * the run the lineage knows (its struct ac_runid; 0: fresh) kept, or
	 * a fresh node 0's next run opened (the one before told it is
	 * closed), or a fresh node's free place taken in the newest run of
	 * this launch's node count. Answered once, ac_rdvjoin_joined.
	 */
	void	(*join)(void);
	/* Registered in the run the ac_runid names (MOVED: another than the
	 * one before): name its keys, follow its events. */
	void	(*bind)(int moved);
	/* Joined RUN fresh: name its keys and follow its events (a ping's
	 * pong) until bind, or leave: give the place back (its node 0 did
	 * not answer). */
	void	(*probe)(long run);
	void	(*leave)(long run);
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
	/* Optional: read which nodes C (a barrier this node posted, or a
	 * result it waits for) still waits for, into C's xmissing, and its
	 * result in case its event was trimmed (ac_rdvproto_look_soon
	 * schedules it). LATE: C's second look or a later one (half a
	 * second after its first at least). A
	 * store whose events say who arrived (etcd's watch of every node's
	 * key) needs none. */
	void	(*look)(struct ac_coll *c, int late);
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
};

#endif
