/* rdvjoin.c: a store's place in the job's run, written once: register, wait for node 0, probe a run joined fresh, leave a closed one, status' words.
 *
 * DESIGN-NOTES "Run identity". A store sends one registration (store.h's
 * join) and answers it with what it found (ac_rdvjoin_joined: in a run,
 * joined one fresh, wait for node 0, the place taken); what follows is
 * decided here, the same over every store: the waits and their back-off, the
 * probe of a run joined fresh (is its node 0 alive?), the run identity saved,
 * the sweep, and leaving a run that was an earlier launch's. Both rerun
 * guards hold so for every store: the node count (the store's registration
 * refuses a run of another size) and node 0's liveness (the probe here).
 * Before issue 19 each store had its own copy, and they drifted: Redis waited
 * with a back-off, etcd every 250 ms; etcd saved the lineage's nonce before
 * its first registration, Redis did not; only etcd's status said a probe was
 * under way.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "duration.h"
#include "log.h"
#include "rdvjoin.h"

#define KEY_MAX 64
/* How long a node joining a run fresh waits for that run's node 0 to answer
 * its ping, and how often it reads the answer meanwhile. */
#define PROBE_MS	3000
#define PROBE_POLL_MS	50
/* Waiting for node 0 to open the run: asked again after 10 ms, doubling to
 * a second (nodes start together, mostly; one that starts late must not
 * cost the store a registration every 10 ms); after a probe no node 0
 * answered, 250 ms. */
#define WAIT_FIRST_MS	10
#define WAIT_MAX_MS	1000
#define WAIT_PROBED_MS	250

static struct {
	struct ac_job		*job;
	struct ac_runid		*rid;
	const struct ac_store	*st;
	void		(*up)(void);	/* in the run: rdvproto.c's sweep */
	int	 in;		/* registered in rid->run (over the connection up) */
	int	 pending;	/* a registration is out (or its run probed) */
	int	 again;		/* asked while one was out: sent at its answer */
	int	 wait;		/* told to wait for node 0 to open the run */
	long	 retry;		/* ms: register again (wait) */
	long	 delay;		/* ms, doubling */
	int	 nonce_saved;	/* the lineage's nonce is on disk */
	/* The run joined fresh, and what was seen there (leave a closed one). */
	long	 fresh;		/* the run we joined fresh (not opened), or 0 */
	long	 closed_seen;	/* told it is closed while no rank of ours waited */
	int	 progressed;	/* a cross-node collective completed in it */
	/* The probe of a run joined fresh. */
	long	 probing;	/* the run whose node 0 we ask, or 0 */
	long	 probe_said;	/* the run whose silent node 0 was logged */
	char	 probe_nonce[40];
	long	 probe_end, probe_next;	/* ms */
	int	 probe_busy;	/* a read of the answer is out */
	unsigned probe_epoch;	/* a new probe: older answers are stale */
	long	 claimed_at;	/* ms: the last claim left (ac_rdvjoin_claimant) */
} J;

void
ac_rdvjoin_init(struct ac_job *j, struct ac_runid *rid,
    const struct ac_store *s, void (*in)(void))
{
	memset(&J, 0, sizeof(J));
	J.job = j;
	J.rid = rid;
	J.st = s;
	J.up = in;
}

int
ac_rdvjoin_ready(void)
{
	return J.st != NULL && J.in && J.st->up();
}

int
ac_rdvjoin_named(void)
{
	return J.st != NULL && (J.in || J.probing != 0) && J.st->up();
}

int
ac_rdvjoin_joining(void)
{
	return J.pending;
}

/* --- the registration --- */

void
ac_rdvjoin_join(int keep)
{
	if (!keep)
		J.in = 0;
	if (!J.st->up())
		return;		/* registered at the next connect */
	if (J.pending) {
		/* Its answer is of what we knew before: this one follows. */
		J.again = 1;
		return;
	}
	/*
	 * A fresh lineage's nonce is on disk before the store holds it: a
	 * helper that replaces this one, killed before it knew its run,
	 * finds its place as its own instead of taken (helper.c keeps run 0
	 * as unknown).
	 */
	if (J.rid->run == 0 && !J.nonce_saved && J.rid->save != NULL) {
		J.rid->save(J.rid);
		J.nonce_saved = 1;
	}
	J.pending = 1;
	J.st->join();
}

static void probe_stop(void);

void
ac_rdvjoin_connected(void)
{
	J.in = 0;
	J.pending = 0;
	J.again = 0;
	J.probing = 0;
	probe_stop();
	ac_rdvjoin_join(0);
}

/* Registered in RUN (FRESH: joined it fresh, and its node 0 answered). */
static void
in_run(long run, int fresh)
{
	int moved = run != J.rid->run;

	J.pending = 0;
	J.wait = 0;
	J.delay = 0;
	J.probing = 0;
	J.probe_said = 0;
	if (moved) {
		if (J.rid->run != 0)
			ac_log("rendezvous: run %ld of job %s", run, J.job->id);
		J.rid->run = run;
		if (J.rid->save != NULL)
			J.rid->save(J.rid);
	}
	J.in = 1;
	if (fresh)
		J.fresh = run;
	J.st->bind(moved);
	J.up();	/* what is owed goes out: sweep, then the store's own */
}

/* Wait DELAY ms for node 0 to open this launch's run (the newest, RUN, is
 * not ours), then register again. */
static void
wait_for_node0(long run, long delay)
{
	J.pending = 0;
	if (!J.wait)
		ac_log("rendezvous: waiting for node 0 to open this launch's run "
		    "of job %s (the newest, %ld, is not ours)", J.job->id, run);
	J.wait = 1;
	J.delay = delay;
	J.retry = ac_now_ms() + delay;
}

static void probe(long run);

void
ac_rdvjoin_joined(enum ac_join how, long run)
{
	char why[600];

	if (!J.pending)
		return;		/* given up by a reconnect */
	if (how != AC_JOIN_DOWN && J.again) {
		J.again = 0;
		J.pending = 0;
		ac_rdvjoin_join(J.in);
		return;
	}
	J.again = 0;
	switch (how) {
	case AC_JOIN_DOWN:
		J.pending = 0;		/* registered at the next connect */
		break;
	case AC_JOIN_TAKEN:
		J.pending = 0;
		snprintf(why, sizeof(why), "node %ld's place in run %ld of job %s "
		    "was taken by another helper (a second run under the same "
		    "ACCELCTL_JOB_ID?)", J.job->node, run, J.job->id);
		J.st->fail(why);
		break;
	case AC_JOIN_WAIT:
		wait_for_node0(run, J.delay == 0 ? WAIT_FIRST_MS :
		    J.delay < WAIT_MAX_MS / 2 ? 2 * J.delay : WAIT_MAX_MS);
		break;
	case AC_JOIN_FRESH:
		/* J.wait stays: a wait said once is not said again at
		 * each probe no node 0 answers (review of issue 19). */
		J.delay = 0;
		probe(run);		/* J.pending stays set */
		break;
	case AC_JOIN_IN:
		in_run(run, 0);
		break;
	}
}

/* --- two helpers that claim one node --- */

/*
 * Two hosts given one node rank (a wrong ACCELCTL_NODE_RANK, torchrun's
 * --node_rank twice), or two launches at once under one job id: a second
 * fresh helper for a node finds its place in the newest run held by
 * another lineage. That is also what an earlier launch's idle helper looks
 * like, whose place this launch's node 0 frees by opening a newer run, so
 * the newcomer waited, and its ranks to their deadline. Now its
 * registration leaves a claim for the holder (claim/NODE, told in that
 * run: "NONCE PID HOST"). A holder whose ranks run refuses it: its beat
 * says " dup NONCE", then it fails; the newcomer reads that beat with its
 * next registration (a second at most) and fails too, each naming the
 * other. An idle holder says nothing, and the newcomer waits as before.
 */
/* A claim is left at most this often while a registration is answered
 * "held" again and again (once a second, waiting for node 0): each is an
 * event for every node of that run (second review). */
#define CLAIM_EVERY_MS	5000

const char *
ac_rdvjoin_claimant(void)
{
	static char me[120];
	char host[64];
	long now = ac_now_ms();

	if (J.claimed_at != 0 && now - J.claimed_at < CLAIM_EVERY_MS)
		return "";
	J.claimed_at = now;
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(me, sizeof(me), "%016" PRIx64 " %ld %s", J.rid->nonce,
	    (long)getpid(), host);
	return me;
}

/* "node 1 of job J is claimed by two helpers: this one and pid P on host
 * H, TAIL (...)": on one host, two helpers for one node are ranks in
 * separate containers, and the words say what to set (second review). */
static void
claim_words(char *why, size_t len, long pid, const char *host,
    const char *tail)
{
	char me[256];

	if (gethostname(me, sizeof(me)) == -1)
		me[0] = '\0';
	me[sizeof(me) - 1] = '\0';
	snprintf(why, len, "node %ld of job %s is claimed by two helpers: this "
	    "one and pid %ld on host %s, %s (%s)", J.job->node, J.job->id, pid,
	    host, tail, strcmp(me, host) == 0 ? "on this host: ranks of one "
	    "node in separate containers, without the host's network or a "
	    "shared /tmp? Give them one network namespace (podman --network "
	    "host), or set ACCELCTL_RUNTIME_DIR to a directory they all see" :
	    "two hosts given one node rank, or two launches at once under one "
	    "job id?");
}

void
ac_rdvjoin_held(long run, const char *beat, size_t len)
{
	char buf[200], mine[20], why[700], host[80] = "?", tail[64];
	const char *dup;
	long pid = 0;

	snprintf(buf, sizeof(buf), "%.*s", (int)len, beat);
	snprintf(mine, sizeof(mine), "%016" PRIx64, J.rid->nonce);
	if (J.pending && (dup = strstr(buf, " dup ")) != NULL &&
	    strncmp(dup + 5, mine, 16) == 0) {
		/* "SEQ BOUNDms PID HOST dup NONCE" */
		(void)sscanf(buf, "%*s %*s %ld %79s", &pid, host);
		J.pending = 0;
		snprintf(tail, sizeof(tail), "in run %ld, its ranks waiting", run);
		claim_words(why, sizeof(why), pid, host, tail);
		J.st->fail(why);
		return;
	}
	ac_rdvjoin_joined(AC_JOIN_WAIT, run);
}

int
ac_rdvjoin_claimed(const char *key, const char *v, size_t len, char *nonce,
    char *why, size_t whylen)
{
	char buf[200], mine[20], host[80] = "?";
	long pid = 0;

	if (strncmp(key, "claim/", 6) != 0)
		return 0;
	snprintf(buf, sizeof(buf), "%.*s", (int)len, v);
	snprintf(mine, sizeof(mine), "%016" PRIx64, J.rid->nonce);
	/* Refused only while a rank of ours waits across nodes: that is
	 * this launch at work. An earlier launch's idle helper (whose rank's
	 * launcher may live on: j->alive counts it) gives the place up; a
	 * holder between two waits refuses the claim repeated at its next
	 * (second review). */
	if (atol(key + 6) != J.job->node || !J.in ||
	    sscanf(buf, "%16s %ld %79s", nonce, &pid, host) < 2 ||
	    strcmp(nonce, mine) == 0 || !ac_job_waiting_across(J.job))
		return 0;
	claim_words(why, whylen, pid, host, "which joins now");
	return 1;
}

/* --- node 0's liveness: a node joining a run fresh asks it --- */

/*
 * A node other than 0 that took its free place in the newest run fresh may
 * be in an earlier launch's run whose node 0 was killed (SIGKILL: its
 * arrivals never withdrawn, its keys alive for a TTL or a lease): counting
 * there would pass on a dead node's arrival. So before it counts (nothing
 * posted, the run's events not followed as its own) it puts ping/NODE with
 * its nonce, told to the run, and reads pong/NODE every PROBE_POLL_MS until
 * PROBE_MS; node 0 answers the ping with pong/NODE (ac_rdvjoin_ping). A live
 * node 0 of this launch answers at once; one of a launch that died never
 * does, and the place is given back (store.h's leave) to wait for this
 * launch's node 0. A live node 0 of an earlier launch (idle) answers: the
 * run is left when this launch's node 0 opens its own (ac_rdvjoin_closed).
 * The store names the probed run's keys meanwhile (store.h's probe).
 */
static void
probe(long run)
{
	char key[KEY_MAX];
	long now = ac_now_ms();

	J.probing = run;
	J.st->probe(run);
	J.probe_epoch++;
	J.probe_busy = 0;
	J.probe_end = now + PROBE_MS;
	J.probe_next = now + PROBE_POLL_MS;
	/* The lineage's nonce and this probe's number: a pong left from an
	 * earlier probe (nobody deletes it) answers no later one. */
	snprintf(J.probe_nonce, sizeof(J.probe_nonce), "%016llx.%u",
	    (unsigned long long)J.rid->nonce, J.probe_epoch);
	snprintf(key, sizeof(key), "ping/%ld", J.job->node);
	J.st->put(key, J.probe_nonce, strlen(J.probe_nonce), AC_PUT_TELL,
	    NULL, NULL);
}

static void
probe_stop(void)
{
	J.probe_epoch++;
	J.probe_busy = 0;
}

/* Run J.probing's node 0 answered (ALIVE), or did not in PROBE_MS. */
static void
probed(int alive)
{
	long run = J.probing;

	probe_stop();
	if (alive) {
		in_run(run, 1);
		return;
	}
	J.st->leave(run);
	/* Said once a run, and the wait once (wait_for_node0): a probe
	 * every 3.25 s said both each time (review of issue 19). */
	if (J.probe_said != run)
		ac_log("rendezvous: node 0 of run %ld of job %s did not answer: "
		    "an earlier launch's run", run, J.job->id);
	J.probe_said = run;
	J.probing = 0;
	wait_for_node0(run, WAIT_PROBED_MS);
}

static void
on_pong(int ok, const char *v, size_t len, void *priv)
{
	if ((unsigned)(size_t)priv != J.probe_epoch || J.probing == 0)
		return;
	J.probe_busy = 0;
	if (ok == 1 && len == strlen(J.probe_nonce) &&
	    memcmp(v, J.probe_nonce, len) == 0)
		probed(1);
}

static long
probe_timer(long now)
{
	char key[KEY_MAX];

	if (J.probing == 0 || !J.st->up())
		return -1;
	if (now >= J.probe_end) {
		probed(0);
		return -1;
	}
	if (now >= J.probe_next && !J.probe_busy) {
		J.probe_next = now + PROBE_POLL_MS;
		J.probe_busy = 1;
		snprintf(key, sizeof(key), "pong/%ld", J.job->node);
		J.st->get(key, on_pong, (void *)(size_t)J.probe_epoch);
	}
	/* A read out: its answer comes by the store's descriptor, the end by
	 * the clock (a time already past was no time at all to the loop). */
	if (J.probe_busy || J.probe_next >= J.probe_end)
		return J.probe_end - now;
	return J.probe_next - now;
}

/*
 * Node 0's answer to a node that joins its run fresh and asks whether it is
 * alive. Not a node this job does not have (a launch of more nodes under the
 * same job id): its place is no place in our run.
 */
void
ac_rdvjoin_ping(long node, const char *v, size_t len)
{
	char key[KEY_MAX];

	if (J.job->node != 0 || node <= 0 || node >= J.job->nnodes)
		return;
	snprintf(key, sizeof(key), "pong/%ld", node);
	J.st->put(key, v, len, 0, NULL, NULL);
}

long
ac_rdvjoin_timer(long now)
{
	long t = probe_timer(now);

	/* Not registered yet: node 0 has not opened this launch's run. */
	if (J.st->up() && !J.in && !J.pending && J.wait) {
		if (now >= J.retry) {
			ac_rdvjoin_join(0);
			return t;
		}
		if (t < 0 || J.retry - now < t)
			t = J.retry - now;
	}
	return t;
}

/* --- a run joined fresh that node 0 closed --- */

/*
 * A fresh node k joins the newest run of its job id when its place there is
 * free; when node 0 of its own launch opens a newer run, the one it joined
 * was an earlier launch's. POSTING: a rank of ours posts now. 1 when the
 * helper leaves it: it registers again, fresh, and nothing is posted until
 * that is answered.
 */
static int
leave_closed(int posting)
{
	/* Only a run joined fresh where nothing completed can be a mistake. */
	if (J.fresh == 0 || J.fresh != J.rid->run || J.progressed)
		return 0;
	/*
	 * No rank waits here: a helper whose ranks all left has nothing to
	 * carry over, and stays (an earlier launch's idle helper must not take
	 * a place in the new run); one whose ranks have not come yet (started
	 * by a prolog or `helper start`) leaves when the first of them posts.
	 */
	if (!posting && !ac_job_waiting_across(J.job)) {
		J.closed_seen = J.rid->run;
		return 0;
	}
	ac_log("rendezvous: run %ld of job %s was an earlier launch's; "
	    "joining node 0's", J.rid->run, J.job->id);
	J.fresh = 0;
	J.closed_seen = 0;
	J.rid->run = 0;
	ac_rdvjoin_join(0);
	return 1;
}

void
ac_rdvjoin_closed(void)
{
	(void)leave_closed(0);
}

int
ac_rdvjoin_moved_on(void)
{
	if (J.closed_seen == 0 || J.closed_seen != J.rid->run)
		return 0;
	J.closed_seen = 0;
	return leave_closed(1);
}

void
ac_rdvjoin_progressed(void)
{
	J.progressed = 1;
}

/* --- status --- */

/* What a barrier that timed out here waits for, while it is not posted. */
const char *
ac_rdvjoin_pending(void)
{
	static char buf[96];

	if (J.st == NULL || ac_rdvjoin_ready() || !J.st->up())
		return NULL;	/* in the run, or down (said as unreachable) */
	if (J.probing != 0)
		snprintf(buf, sizeof(buf), "node 0 of run %ld to answer (is it "
		    "alive?)", J.probing);
	else if (J.wait)
		snprintf(buf, sizeof(buf), "node 0 to open this launch's run");
	else
		snprintf(buf, sizeof(buf), "this node's registration");
	return buf;
}

void
ac_rdvjoin_describe(char *buf, size_t len)
{
	int final;
	const char *down = J.st->down(&final), *name = J.st->name;

	if (down != NULL)
		snprintf(buf, len, "%s (%s: %s)", name, final ? "failed" : "down",
		    down);
	else if (J.probing != 0)
		snprintf(buf, len, "%s (%s, joining run %ld: is its node 0 "
		    "alive?)", name, J.st->where(), J.probing);
	else if (J.wait)
		snprintf(buf, len, "%s (%s, waiting for node 0 to open this "
		    "launch's run)", name, J.st->where());
	else
		snprintf(buf, len, "%s (%s, run %ld)", name, J.st->where(),
		    J.rid->run);
}
