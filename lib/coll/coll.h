/* coll.h: a node's view of one job: generations of every name, the collectives
 * in flight, their results, and the abort flag. No I/O: what is written down
 * of it (the journal, the history) reads its events (struct ac_coll_rec). */
#ifndef ACCELCTL_COLL_H
#define ACCELCTL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "xport.h"

enum ac_source_state { AC_SRC_NONE, AC_SRC_RUNNING, AC_SRC_DONE, AC_SRC_LOST };

/* The timing of one collective on this node, kept by coll.c while it is in
 * flight (microseconds of CLOCK_MONOTONIC, 0: not seen by this helper, as
 * after a restart that replayed it from the journal). */
struct ac_ctime {
	int64_t	*at;		/* [lsize] each local rank's arrival */
	int64_t	 posted;	/* handed to the other nodes (the last rank here) */
	int64_t	 finished;	/* the local source's CMD ended (FINISH) */
	int64_t	 released;	/* its result came: the waiters were sent it */
	/* Across nodes, as the transport's result says (-1: not known): the
	 * rank and node whose arrival completed it. */
	int64_t	 last_rank, last_node;
	/* Across nodes, from every node's own interval (ac_history_since):
	 * the spread from the first node's post to the last's, the node that
	 * posted first (it waited the longest), and the sum of the nodes'
	 * waits; across_us -1: not known (a node could not say, NCCL). */
	int64_t	 across_us, across_sum_us;
	long	 first_node;
	/* An arrival of it came from the journal's replay (a replaced
	 * helper): its times are partly unknown, so it leaves no record. */
	int	 replayed;
};


struct ac_coll {
	struct ac_coll	*next;
	struct ac_coll	*knext;			/* in flight, the same name */
	char		 key[AC_KEY_MAX];	/* "b:NAME", "c:NAME", "w:...", "m:..." */
	int		 op, scope;
	int64_t		 gen, source;		/* source: global rank, or local for node scope */
	long		 narrived;
	uint8_t		*arrived;		/* [lsize] */
	int64_t		*status;		/* [lsize] */
	int		 src;			/* enum ac_source_state */
	int		 done;			/* released: result below is final */
	int64_t		 result;
	char		 failed[512];		/* "1 (exit 3), 3 (exit 1)" */
	uint8_t		*payload;
	size_t		 paylen;
	long		 waiters;		/* connections attached */
	long		 since_ms;		/* first arrival, for status */
	int		 xsent;			/* handed to the cross-node transport */
	int		 xwd;			/* a withdrawal the transport owes */
	/* Completed here as over (ac_rdvproto_over), with an empty result of
	 * our own making: never published, it would stand for the real one. */
	int		 xover;
	char		 xmissing[256];		/* nodes not arrived, at our last look */
	/* When the store last said which nodes are missing, or that a result
	 * is not there (µs, wall clock; 0: never): a lost node fails this wait
	 * only on what was read after its loss was known (lost.c). */
	int64_t		 xlook_us;
	char		*xfailed;		/* the transport gave up on it: why */
	struct ac_ctime	 t;			/* its timing, for the record */
};

struct ac_job;

/*
 * What is written down of a job's events, told as they happen: the journal
 * (journal.c: every change, before any client hears of it) and the record
 * of who waited (history.c). coll.c calls these and includes neither, so
 * that the journal, the history and the trace read coll.c, a leaf, and not
 * the other way round; record.c holds the table the helper uses. NULL (a
 * job of a unit test), or any entry NULL: nothing is written of that.
 */
struct ac_coll_rec {
	void	(*shape)(struct ac_job *);
	void	(*hello)(struct ac_job *, long lrank, int64_t rank);
	void	(*arrive)(struct ac_job *, long lrank, int op, int scope,
		    int role, const char *key, uint64_t nonce, int64_t gen,
		    int64_t source, int64_t status);
	void	(*finish)(struct ac_job *, const struct ac_coll *);
	void	(*lost)(struct ac_job *, const struct ac_coll *);
	void	(*remote)(struct ac_job *, const struct ac_coll *);
	void	(*withdraw)(struct ac_job *, long lrank, const struct ac_coll *);
	void	(*abort)(struct ac_job *, long lrank, const char *reason);
	/* Live only (not while the journal replays): LRANK arrived at C,
	 * before C may complete; C was released; C, complete, is collected. */
	void	(*arrived)(const struct ac_job *, struct ac_coll *, long lrank);
	void	(*released)(struct ac_job *, const struct ac_coll *);
	void	(*collected)(const struct ac_job *, const struct ac_coll *);
};

struct ac_keygen {
	struct ac_keygen *next;			/* every name, newest first */
	struct ac_keygen *hnext;		/* the same hash bucket */
	char		  key[AC_KEY_MAX];
	int64_t		 *next_gen;		/* [lsize] */
	uint64_t	 *nonce;		/* [lsize] last arrival's nonce */
	int64_t		 *last_gen;		/* [lsize] */
	struct ac_coll	 *last_done;		/* kept for retries after a restart */
	/* This name's collectives in flight (through knext): a look-up
	 * walks them, not every collective of the job, so a replay of
	 * 20,000 names unread stays linear. */
	struct ac_coll	 *colls;
	/* The newest generation kept to post again (rdvkeep.c), plus one
	 * (0: none), so that keeping one is not a walk of them all. */
	int64_t		  xkept;
	/* The store's: the newest generation under way to be written, plus
	 * one (etcd: a result is kept once etcd has it). */
	int64_t		  xposted;
};

struct ac_job {
	char		  id[AC_KEY_MAX];
	long		  lsize, world, node, nnodes;	/* 0 until the first HELLO */
	int64_t		 *rank_of;		/* [lsize] global rank, -1 unknown */
	struct ac_keygen *keys;
	/* The names by hash: a journal of 20,000 names replays in linear
	 * time (a lookup per record), not in their square. */
	struct ac_keygen **kbuckets;
	size_t		  nkbuckets, nkeys;
	struct ac_coll	 *colls;
	size_t		  ncolls;		/* in the list above */
	/* Bumped by every arrival, result, withdrawal and collection: a
	 * transport's walk of every name waits for one (a walk each round of
	 * the loop was the square of a job of thousands of names). */
	unsigned long	  changes;
	char		 *aborted;		/* "rank 3: reason", or NULL */
	/* The rendezvous answered once in this job (a result came, or this
	 * helper saw it up): one that never did is a mistake (a wrong port),
	 * failed in seconds, not an outage waited out (hconn.c). */
	int		  xreached;
	/* Ranks gone for good (lost.c), newest first. */
	struct ac_lost	 *lost;
	int		  journal;		/* fd, -1 while replaying */
	const struct ac_coll_rec *rec;		/* see above; NULL: none */
	/* The journal replays: arrivals and releases are not live, and their
	 * times are not those of the record (history.c). */
	int		  replaying;
	/* The last live release of a barrier across nodes (µs), a moment every
	 * node shares; 0: none since this helper started (history.c:
	 * ac_history_since). */
	int64_t		  last_release;
	size_t		  journal_size;
	size_t		  journal_compacted;	/* its size after the last compaction */
	void		(*released)(struct ac_job *, struct ac_coll *);
	void		(*aborting)(struct ac_job *);
	/* A rank is gone (lost.c): the waits that need it end (exit 4). */
	void		(*gone)(struct ac_job *);
	/* The node of global rank R, as the rendezvous knows it (-1: not
	 * known); NULL: none. A result whose source's node is lost fails. */
	long		(*node_of)(const struct ac_job *, int64_t r);
	const struct ac_xport *x;		/* set when the job spans nodes */
	void		(*shaped)(struct ac_job *);	/* the shape became known */
	/* The transport carries a one-node job too (ACCELCTL_TRANSPORT=nccl). */
	int		  xlocal;
	/* The transport cannot complete C: its waiters fail (exit 125) with WHY. */
	void		(*failed)(struct ac_job *, struct ac_coll *, const char *why);
	/* Does a process of this node's ranks still run? NULL: assume so. A
	 * transport asks before it acts for the present launch only. */
	int		(*alive)(struct ac_job *);
};

/* Is KEY a collective's key: "b:", "c:", "w:", "m:" or "k:", then 1 or more
 * of A-Z a-z 0-9 . _ : -? Everything else is refused, live and on replay. */
int  ac_key_valid(const char *key);
/* Does a rank of this node wait now at a collective across nodes? */
int  ac_job_waiting_across(const struct ac_job *j);
/* Does collective C span nodes (a job-wide wait of a multi-node job)? */
int  ac_coll_cross(const struct ac_job *j, const struct ac_coll *c);
/* A name's hash (FNV-1a), for the tables that find names by it. */
size_t ac_key_hash(const char *key);
/* The counters of name KEY, or NULL when no rank used it yet. */
struct ac_keygen *ac_job_key(const struct ac_job *j, const char *key);
/* Find the collective KEY/GEN, in flight or the last one released. */
struct ac_coll *ac_job_find(struct ac_job *j, const char *key, int64_t gen);
/*
 * The transport's answer for a cross-node collective. Ignored when the
 * collective is unknown here or done already.
 */
void ac_job_remote_done(struct ac_job *j, const char *key, int64_t gen,
    const struct ac_result *r);
/* An abort that came from another node: remembered, not sent back. */
void ac_job_abort_remote(struct ac_job *j, const char *text);

/* Set the job's shape (from the first HELLO or the journal). -1 on no memory. */
int  ac_job_shape(struct ac_job *j, long lsize, long world, long node,
    long nnodes);
void ac_job_free(struct ac_job *j);
void ac_job_hello(struct ac_job *j, long lrank, int64_t rank);

/*
 * Local rank LRANK arrives at KEY. GEN -1: a new arrival (or, with the
 * NONCE of its last arrival, a retry whose ACK was lost); else a retry of the
 * known generation GEN after a helper restart. Returns the collective (done
 * already, maybe) or NULL on no memory or on an inconsistent request (*WHY).
 */
struct ac_coll *ac_job_arrive(struct ac_job *j, long lrank, int op, int scope,
    int role, const char *key, uint64_t nonce, int64_t gen, int64_t source,
    int64_t status, const char **why);
/* Set local rank LRANK's counters for KEY (a compacted journal's record).
 * -1 when the record is invalid (bad key, rank or generation). */
int  ac_job_counter(struct ac_job *j, long lrank, const char *key,
    int64_t next_gen, int64_t last_gen, uint64_t nonce);
/* The local rank that is C's source, or -1 (unknown, or on another node). */
long ac_coll_source_lrank(const struct ac_job *j, const struct ac_coll *c);
void ac_job_finish(struct ac_job *j, struct ac_coll *c, int64_t status,
    const uint8_t *p, size_t n);
void ac_job_source_lost(struct ac_job *j, struct ac_coll *c);
/*
 * Local rank LRANK left KEY/GEN before it completed (its process was killed,
 * its parent exited, its deadline passed): its arrival is taken back and its
 * count of KEY goes back to GEN, so that a restarted attempt under the same
 * job id neither passes on the dead process's arrival nor finds its
 * generations shifted (DESIGN.md §4). A barrier this node had posted across
 * nodes is withdrawn there too. 0, or -1 when nothing was taken back (C is
 * over, LRANK is its source, or the transport cannot withdraw).
 */
int  ac_job_withdraw(struct ac_job *j, long lrank, const char *key,
    int64_t gen);
void ac_job_abort(struct ac_job *j, long lrank, const char *reason);
/* Free collectives that are done, complete and have nobody attached. */
void ac_job_gc(struct ac_job *j);

/* "3/4 arrived; missing: rank 3 (node 0)" and the like, for C. */
void ac_coll_summary(const struct ac_job *j, const struct ac_coll *c,
    char *buf, size_t len);
/* 1 when a local rank of J never connected to this helper. */
int  ac_job_unseen(const struct ac_job *j);
/* The text of "accelctl status": one line per collective in flight. */
void ac_job_status(const struct ac_job *j, char *buf, size_t len);

#endif
