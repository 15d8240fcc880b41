/* runjoin.h: a helper that joined a run fresh and learns it is closed: stay, or leave for node 0's. */
#ifndef ACCELCTL_RUNJOIN_H
#define ACCELCTL_RUNJOIN_H

struct ac_job;
struct ac_runid;

/* What a transport keeps of the run it registered in (DESIGN-NOTES "Run identity"). */
struct ac_runjoin {
	long	fresh;		/* the run we joined fresh (not opened), or 0 */
	long	closed_seen;	/* told it is closed while no rank of ours waited */
	int	progressed;	/* a cross-node collective completed in it */
};

/*
 * Node 0 opened a newer run: RID's is closed. POSTING: a rank of ours posts
 * now. 1 when the helper must leave it (RID's run is now 0): the caller
 * registers again, fresh.
 */
int	ac_runjoin_closed(struct ac_runjoin *rj, struct ac_runid *rid,
	    const struct ac_job *j, int posting);
/* A rank of ours posts: leave a run we were told is closed before any rank
 * waited (1, as ac_runjoin_closed), else 0. */
int	ac_runjoin_posting(struct ac_runjoin *rj, struct ac_runid *rid,
	    const struct ac_job *j);

#endif
