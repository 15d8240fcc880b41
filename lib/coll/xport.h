/* xport.h: the cross-node transport interface: what the helper's loop knows of a transport.
 *
 * A transport carries a job's collectives between the node helpers (Redis,
 * NCCL, ...). The helper's loop knows it only through struct ac_xport, as a
 * hiredis adapter knows an event loop through five hooks: the descriptors it
 * wants polled, its next timer, the handling of what poll(2) reported, a line
 * for status, whether it is down (and whether waiting can help), stop, and the
 * collective steps that coll.c calls. Transports are rows of one table
 * (transport.c), which is also the one place where a job's transport is
 * chosen. A new transport is one file and one row.
 */
#ifndef ACCELCTL_XPORT_H
#define ACCELCTL_XPORT_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/* ACCELCTL_TRANSPORT: auto (unset or empty), redis or nccl (parsed in
 * transport.c; here because a transport is told it). */
enum ac_tsetting { AC_TSET_AUTO, AC_TSET_REDIS, AC_TSET_NCCL };

struct ac_job;
struct ac_coll;
struct ac_lost;

/* A collective's outcome as it crosses from a transport into coll.c. */
struct ac_result {
	int		 lost;		/* the source died: waiters exit 3 */
	int64_t		 status;
	const char	*failed;	/* "1 (exit 3), 3 (exit 1)", or "" */
	const uint8_t	*payload;	/* borrowed: coll.c copies it */
	size_t		 paylen;
	/* A barrier's: the node whose arrival completed it and that node's
	 * last rank to arrive (history.c), when the store says (last_known). */
	int		 last_known;
	long		 last_node;
	int64_t		 last_rank;
	/* Across nodes, from each node's own interval (ac_history_since): the
	 * spread of their posts, who posted first, the sum of their waits. */
	int		 wait_known;
	int64_t		 across_ms, across_sum_ms;
	long		 first_node;
};

struct ac_xport {
	const char	*name;
	/* Add the descriptors to watch to PFD (room for ROOM); how many. */
	int		(*fds)(struct pollfd *pfd, int room);
	/* What poll(2) reported on the N descriptors fds() added. */
	void		(*events)(const struct pollfd *pfd, int n);
	/* Work due at NOW (ms); ms until it wants to run again, or -1. */
	long		(*timer)(long now);
	/* One line for "accelctl status": the transport and its state. */
	void		(*describe)(char *buf, size_t len);
	/*
	 * NULL while the transport can carry collectives; else why not
	 * ("host:port: why", never a password). *FINAL set when waiting cannot
	 * help (a refused password): waiters fail at once, not at the deadline.
	 */
	const char	*(*down)(int *final);
	void		(*stop)(void);

	/* The collective steps; all may be called while down: the transport
	 * catches up when it is up again. */
	void	(*arrive)(struct ac_job *, struct ac_coll *);	/* local ranks all arrived */
	void	(*publish)(struct ac_job *, struct ac_coll *);	/* a local source's result */
	void	(*want)(struct ac_job *, struct ac_coll *);	/* the source may be elsewhere */
	void	(*abort)(struct ac_job *);			/* a local rank aborted */
	void	(*hello)(struct ac_job *);			/* a rank said who it is */
	const char *(*node)(long node);				/* "host: ranks 4, 5", or NULL */
	/* Optional: a waiter's deadline passed at C (a transport that cannot
	 * withdraw a collective gives up its channel). */
	void	(*expired)(struct ac_job *, struct ac_coll *);
	/* Optional: take back this node's arrival at barrier C, posted
	 * before (a local rank left it); C->xwd is set until the transport
	 * has said so, and a transport without this hook keeps the arrival. */
	void	(*withdraw)(struct ac_job *, struct ac_coll *);
	/* Optional: a rank of this node is gone for good (lost.h): tell the
	 * other nodes, after everything posted before. */
	void	(*lost)(struct ac_job *, const struct ac_lost *);
	/* Optional: where this node's ranks wait (where.c's record, "RANK GEN
	 * KEY" lines), told to the other nodes; and the last record another
	 * node told, or NULL. */
	void	(*where)(struct ac_job *, const char *record);
	const char *(*waits)(long node);
	/* Optional: while up but not in the run (the arrivals wait to be
	 * posted), what this node waits for ("node 0 to open this launch's
	 * run"); else NULL. A timeout names it, not "other nodes". */
	const char *(*pending)(void);
	/* Optional: a line that names what this node waits for (a progress
	 * line, a timeout, status) is due at DUE (ms): read it from the store
	 * before then. When the transport will (ms), for the caller's poll;
	 * -1 when it has nothing to read. Nothing is read sooner than needed:
	 * a barrier that completes before any line is due costs no look.
	 * DUE 0: an answer due now that should be fresh (status): read at
	 * once, whatever was read for the last line. */
	long	(*look_by)(long due);
};

/*
 * What a transport that rides on a rendezvous (NCCL) asks of it, and nothing
 * of its internals: its collective steps (the fallback), posting and waiting
 * for the communicator's id, and "off".
 */
struct ac_rdv {
	const struct ac_xport *x;
	/*
	 * Join the communicator of this run; node 0 passes the id it made (hex),
	 * the others NULL. JOINED is called with "id" and the id in hex, or
	 * "off" and why (the transport is off for the rest of the run); it may
	 * be called again later (the id posted, "off" from another node). Sent
	 * again after a reconnect until answered.
	 */
	void	(*join)(const char *idhex,
		    void (*joined)(const char *state, const char *value, size_t len));
	/* Off for the whole run: record WHY and tell every node. */
	void	(*off)(const char *why);
	/* ON: another transport carries the streamed collectives. */
	void	(*quiet)(int on);
	/* Post again everything in flight and the last results (a fallback). */
	void	(*resync)(void);
};

/*
 * Who this run is, so that a run never passes on an earlier run's state under
 * the same job id (transport.c, DESIGN-NOTES "Run identity"): a random NONCE
 * of this node's helper lineage and the RUN number the rendezvous gave it (0
 * until it did). SAVE keeps them beside the journal for a restarted helper.
 */
struct ac_runid {
	uint64_t	 nonce;
	long		 run;
	void		(*save)(const struct ac_runid *);
};

/* What every transport is started with. */
struct ac_xstart {
	const char	*url;		/* ACCELCTL_RENDEZVOUS, or NULL */
	const char	*password_file;	/* ACCELCTL_REDIS_PASSWORD_FILE, or NULL */
	int		 setting;	/* enum ac_tsetting (ACCELCTL_TRANSPORT) */
	struct ac_runid	*runid;
};

/*
 * What every rank checks before it waits (so that a mistake is exit 2 on
 * every rank at once): URL names a transport of this build, and that
 * transport's own checks pass. 0, or -1 with a reason in ERR (never a
 * password).
 */
int ac_transport_check(const char *url, const char *password_file, char *err,
    size_t errlen);

/*
 * Choose job J's transport from S and start it; sets J->x, or leaves it NULL
 * when the job needs none (one node). 0, or -1 with a reason in ERR (the
 * job's cross-node waits then fail with it).
 */
int ac_transport_open(struct ac_job *j, const struct ac_xstart *s, char *err,
    size_t errlen);

#endif
