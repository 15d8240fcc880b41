/* runjoin.c: a helper that joined a run fresh and learns it is closed: stay, or leave for node 0's.
 *
 * A fresh node k joins the newest run of its job id when its place there is
 * free; when node 0 of its own launch opens a newer run, the one it joined
 * was an earlier launch's (DESIGN-NOTES "Run identity"). Both transports
 * decide the same way here.
 */
#include "coll.h"
#include "log.h"
#include "runjoin.h"
#include "xport.h"

int
ac_runjoin_closed(struct ac_runjoin *rj, struct ac_runid *rid,
    const struct ac_job *j, int posting)
{
	/* Only a run joined fresh where nothing completed can be a mistake. */
	if (rj->fresh == 0 || rj->fresh != rid->run || rj->progressed)
		return 0;
	/*
	 * No rank waits here: a helper whose ranks all left has nothing to
	 * carry over, and stays (an earlier launch's idle helper must not take
	 * a place in the new run); one whose ranks have not come yet (started
	 * by a prolog or `helper start`) leaves when the first of them posts.
	 */
	if (!posting && !ac_job_waiting_across(j)) {
		rj->closed_seen = rid->run;
		return 0;
	}
	ac_log("rendezvous: run %ld of job %s was an earlier launch's; "
	    "joining node 0's", rid->run, j->id);
	rj->fresh = 0;
	rj->closed_seen = 0;
	rid->run = 0;
	return 1;
}

int
ac_runjoin_posting(struct ac_runjoin *rj, struct ac_runid *rid,
    const struct ac_job *j)
{
	if (rj->closed_seen == 0 || rj->closed_seen != rid->run)
		return 0;
	rj->closed_seen = 0;
	return ac_runjoin_closed(rj, rid, j, 1);
}
