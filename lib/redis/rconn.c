/* rconn.c: the helper's two connections to one Redis server: dial, AUTH/SELECT, backoff, reconnect.
 *
 * One connection carries commands, the other sits in XREAD BLOCK on the run's
 * stream of events, from the last entry it read, so that a release wakes the
 * helper without polling. (A third, on Redis Cluster, reaches the node that
 * imports the job's slot while it moves: ASK.) All are hiredis
 * async contexts driven by the helper's own poll(2) loop through hiredis'
 * event hooks: we only record what hiredis wants, and the loop asks.
 *
 * Every failure is one of two kinds (DESIGN.md §4). Transient: refused, reset,
 * closed, a connect that takes too long, a protocol-level error reply such as
 * LOADING, BUSY, MASTERDOWN, READONLY, OOM or UNBLOCKED: both connections are
 * closed and dialled again after a capped, jittered back-off, and the user's
 * ready hook posts again whatever Redis may have lost. Final: a refused AUTH,
 * NOPERM, an unknown command, a peer that does not speak RESP: the rendezvous
 * is down for good and says why in Redis' own words.
 *
 * hiredis frees a context itself when its connect fails (after the connect
 * callback) and when the server closes it (after the disconnect callback);
 * a context that is freed before it connected never reaches the disconnect
 * callback. So this file never frees or disconnects a context from inside a
 * hiredis callback: a callback only records what happened and asks for a
 * reset, and reset_now() frees what is left once hiredis has returned to us.
 * Both hiredis 0.14 (Debian 12) and 1.x are driven the same way; where they
 * differ (DESIGN-NOTES "hiredis versions") we rely on neither: our own flags
 * say which connection is connected, and keepalive is set on the socket.
 */
#define _GNU_SOURCE
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "keepalive.h"
#include "log.h"
#include "rcluster.h"
#include "rconn.h"
#include "rlast.h"
#include "rsentinel.h"

/* The command connection, the blocking read's, and Redis Cluster's
 * importing node while the job's slot moves (ASK): dialled when an ASK names
 * it, closed with the others. */
enum { CMD, BLK, ASKC, NCONN };

/* A connect that has not completed by then is retried (a host that drops SYNs). */
#define CONNECT_MS 5000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000
/* Redis Cluster: a node that hangs (SIGSTOP, a frozen host) keeps its
 * connections while the cluster promotes its replica; we would wait on it
 * until the deadline. So a command unanswered this long is a failure (the
 * seeds then redirect to the new master), and an idle connection is PINGed
 * this often. Not for one server (redis://, Sentinel): there a stall is
 * waited out, and Sentinel's +switch-master says when it is over. */
#define REPLY_MS 5000
/* Redis Cluster, while the job's slot moves: a command refused with TRYAGAIN
 * (its keys split between the two nodes) is sent again this much later, and
 * the blocking read, whose stream moved, reads it this often from the
 * importing node. The connections stay: nothing failed. */
#define MOVING_MS 100
/* ... doubling for a command refused again, to at most this: a slot left
 * half-moved (a reshard that crashed) costs a helper a few commands a second. */
#define MOVING_MAX_MS 500

struct call {
	ac_rconn_cb	*cb;
	void		*priv;
	const char	*pass;		/* error replies starting so reach cb */
	/* Where a cluster may answer ASK or TRYAGAIN: the command, to send
	 * again (argv NULL elsewhere). */
	int		 argc;
	const char	**argv;
	size_t		*len;
	int		 asked;		/* sent to the importing node */
	int		 tries;		/* refused with TRYAGAIN so far */
	long		 due;		/* ms: sent again then (TRYAGAIN) */
	struct call	*next;		/* in R.retry */
};

static struct {
	struct ac_rdv_url	 url;
	const struct ac_rconn_hooks *h;
	redisAsyncContext	*ac[NCONN];
	int			 want[NCONN][2];	/* [CMD|BLK|ASKC][read|write] */
	int			 connected[NCONN];	/* the connect callback said OK */
	int			 setup_left[NCONN];	/* AUTH/SELECT replies still due */
	long			 dialed;	/* ms */
	int			 up;		/* both connected and set up */
	int			 healthy;	/* the user's set-up succeeded */
	int			 reset;		/* close both at the next safe point */
	int			 closing;	/* closing on purpose: not a failure */
	int			 blocked;	/* an XREAD is pending */
	int			 attempts;
	long			 retry_at;
	int			 fatal;
	int			 started;
	int			 announced;	/* "connected" was logged */
	char			 down[1600];
	char			 logged[1600];	/* the last reason logged */
	long			 logged_at;
	int			 down_logged;	/* no "connected" logged since */
	char			 key[1024];	/* the blocking read's stream */
	char			 cursor[64];	/* the last entry read from it */
	char			 wake[1024];	/* a second stream, or "" */
	char			 wcursor[64];	/* "$" until an entry is read */
	/* Sentinel (rsentinel.c): the master's address is the sentinels'
	 * answer, asked at every (re)connect; R.url.host and port hold it. */
	int			 sentinel;
	int			 have_master;	/* the answer for this dial */
	int			 moved;		/* a server other than the last */
	char			 where0[600];	/* the URL's own where */
	int			 nown;		/* fds before the sentinels' */
	/* Redis Cluster (rcluster.c), and any TCP server, which may be a
	 * cluster's node: MOVED is followed; after a failure the seeds (the
	 * URL's hosts) are dialled in turn, and redirect to the job's slot. */
	int			 nseeds;
	int			 seedi;		/* the seed to dial next */
	struct ac_rdv_host	 seed0;		/* redis://'s one seed */
	int			 following;	/* dial follow next (MOVED) */
	int			 follows;	/* MOVED in a row, not healthy since */
	int			 pending[NCONN];	/* requests sent, not answered */
	long			 heard[NCONN];	/* ms: the last reply, or send from idle */
	struct ac_rdv_host	 follow;
	struct ac_rdv_host	 ask;		/* ASKC's node */
	int			 ask_drop;	/* close ASKC alone at the next safe point */
	int			 ask_fails;	/* ASKC failures since its last answer */
	long			 ask_at;	/* ms: not dialled again before */
	long			 ask_logged;	/* ms: its last failure logged */
	long			 moving_logged;	/* ms: "the slot is moving" logged */
	struct call		*retry;		/* TRYAGAIN: sent again at due */
	long			 blk_due;	/* ms: the read issued again then */
} R;

static const int index_of[NCONN] = { CMD, BLK, ASKC };

/* hiredis' event hooks: remember what it wants; the helper's poll asks. */
#define HOOK(name, i, rw, v)						\
	static void name(void *p) { (void)p; R.want[i][rw] = v; }
HOOK(cmd_add_read, CMD, 0, 1) HOOK(cmd_del_read, CMD, 0, 0)
HOOK(cmd_add_write, CMD, 1, 1) HOOK(cmd_del_write, CMD, 1, 0)
HOOK(blk_add_read, BLK, 0, 1) HOOK(blk_del_read, BLK, 0, 0)
HOOK(blk_add_write, BLK, 1, 1) HOOK(blk_del_write, BLK, 1, 0)
HOOK(ask_add_read, ASKC, 0, 1) HOOK(ask_del_read, ASKC, 0, 0)
HOOK(ask_add_write, ASKC, 1, 1) HOOK(ask_del_write, ASKC, 1, 0)
static void cmd_cleanup(void *p) { (void)p; R.want[CMD][0] = R.want[CMD][1] = 0; }
static void blk_cleanup(void *p) { (void)p; R.want[BLK][0] = R.want[BLK][1] = 0; }
static void ask_cleanup(void *p) { (void)p; R.want[ASKC][0] = R.want[ASKC][1] = 0; }

static int
which(const redisAsyncContext *ac)
{
	for (int i = 0; i < NCONN; i++)
		if (ac == R.ac[i])
			return i;
	return -1;
}

static int
contains(const char *text, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strstr(text, *list) != NULL)
			return 1;
	return 0;
}

/* Errors that waiting cannot mend: Redis refuses us, not a state it is in. */
static const char *const final_errors[] = { "NOPERM", "WRONGPASS", "NOAUTH",
    "unknown command", "unknown subcommand", "invalid password",
    "can't run this command",	/* Redis 7.0: an ACL denies a script's call */
    "without any password configured", "invalid username-password",
    "DB index is out of range", "invalid DB index", NULL };
/* Errors of a state Redis leaves by itself (or an operator fixes). */
static const char *const transient_errors[] = { "LOADING", "BUSY", "MASTERDOWN",
    "READONLY", "OOM", "UNBLOCKED", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS",
    "max number of clients", NULL };

int
ac_rconn_final_error(const char *text)
{
	return contains(text, final_errors);
}

static void
log_reason(const char *text, int final)
{
	long now = ac_now_ms();

	/* Once per reason while down, and at most one failure every 10 s: a
	 * Redis that flaps for an hour is a few lines; down() has the last. */
	if ((R.down_logged && strcmp(R.logged, text) == 0) ||
	    (!final && R.logged_at != 0 && now - R.logged_at < 10000))
		return;
	snprintf(R.logged, sizeof(R.logged), "%s", text);
	R.logged_at = now;
	R.down_logged = 1;
	ac_log("rendezvous %s", text);
}

static void go_fatal(const char *what, const char *why);

static const struct ac_rdv_host *
seed(int i)
{
	return R.url.cluster ? &R.url.hosts[i] : &R.seed0;
}

/* The server dialled next: where MOVED said, else the next seed. */
static void
next_target(void)
{
	const struct ac_rdv_host *t = R.following ? &R.follow : seed(R.seedi);
	char hp[300];

	if (!R.following)
		R.seedi = (R.seedi + 1) % R.nseeds;
	R.following = 0;
	if (strcmp(t->host, R.url.host) == 0 && t->port == R.url.port)
		return;
	R.moved = 1;
	snprintf(R.url.host, sizeof(R.url.host), "%s", t->host);
	R.url.port = t->port;
	snprintf(R.url.where, sizeof(R.url.where), "%s%s",
	    R.url.cluster ? "cluster node " : "", ac_rdv_hostport(t->host,
	    t->port, hp, sizeof(hp)));
}

/* A transient failure: close both, dial again after a back-off. */
static void
went_down(const char *why)
{
	long backoff = BACKOFF_MIN_MS << (R.attempts < 5 ? R.attempts : 5);

	int pick = !R.reset && R.nseeds > 0;

	if (R.fatal || R.closing)
		return;
	if (backoff > BACKOFF_MAX_MS)
		backoff = BACKOFF_MAX_MS;
	/* Up to a quarter more, so that many nodes do not dial in step. */
	backoff += random() % (backoff / 4 + 1);
	snprintf(R.down, sizeof(R.down), "%s: %s", R.url.where, why);
	log_reason(R.down, 0);
	if (pick)
		next_target();
	R.up = R.healthy = 0;
	R.reset = 1;
	R.attempts++;
	R.retry_at = ac_now_ms() + backoff;
	R.have_master = 0;	/* the sentinels are asked again */
}

/* A failover: close both and dial the new master at once. */
static void
redial_now(const char *why)
{
	went_down(why);
	R.attempts = 0;
	R.retry_at = ac_now_ms();
}

/* MOVED: the job's slot is H's now; dial it at once, whatever failed
 * before (a seed that answers MOVED after a failover points at the new
 * master), up to 3 times in a row before a connection stays up: MOVED
 * ping-pong between two nodes that disagree backs off as any failure does. */
static void
follow(const struct ac_rdv_host *h, const char *why)
{
	if (R.reset || R.fatal)
		return;
	R.follow = *h;
	R.following = 1;
	went_down(why);
	if (++R.follows <= 3)
		R.retry_at = ac_now_ms();
}

/* A final failure: no more dialling; waiters fail now with Redis' words. */
static void
go_fatal(const char *what, const char *why)
{
	if (R.fatal || R.closing)
		return;
	snprintf(R.down, sizeof(R.down), "%s: %s%.700s", R.url.where, what, why);
	log_reason(R.down, 1);
	R.fatal = 1;
	R.up = R.healthy = 0;
	R.reset = 1;
}

/* Close what is left of both connections, outside any hiredis callback. */
static void ask_drop_now(void);

static void
reset_now(void)
{
	ask_drop_now();
	if (!R.reset)
		return;
	R.reset = 0;
	R.closing = 1;
	for (int i = 0; i < NCONN; i++) {
		redisAsyncContext *ac = R.ac[i];

		R.ac[i] = NULL;
		if (ac != NULL)
			redisAsyncFree(ac);	/* pending callbacks get NULL */
		R.connected[i] = 0;
		R.want[i][0] = R.want[i][1] = 0;
	}
	/* What waited to be sent again gets no reply either: the sweep that
	 * follows the reconnect posts it again. */
	while (R.retry != NULL) {
		struct call *c = R.retry;

		R.retry = c->next;
		if (c->cb != NULL)
			c->cb(NULL, c->priv);
		free(c);
	}
	R.closing = 0;
	R.up = 0;
	R.blocked = 0;
	R.blk_due = 0;
	memset(R.pending, 0, sizeof(R.pending));
	R.ask_drop = 0;
}

static void ask_failed(const char *why);

/* Connection I failed (WHY): the importing node's alone, or both others. */
static void
conn_failed(int i, const char *why)
{
	if (i == ASKC)
		ask_failed(why);
	else
		went_down(why);
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
	int i = which(ac);

	(void)status;
	if (i < 0)
		return;
	R.ac[i] = NULL;		/* hiredis frees it when we return */
	R.connected[i] = 0;
	if (ac->err == REDIS_ERR_PROTOCOL && i != ASKC)
		go_fatal("not a Redis server: ", ac->errstr);
	else
		conn_failed(i, ac->errstr[0] ? ac->errstr : "connection closed");
}

static void issue_block(void);

static void
maybe_up(void)
{
	if (R.up || R.fatal || R.reset || !R.connected[CMD] || !R.connected[BLK] ||
	    R.setup_left[CMD] > 0 || R.setup_left[BLK] > 0)
		return;
	R.up = 1;
	/*
	 * Another server (a failover, a moved slot): nothing of the old one's
	 * stream is assumed. Replication is asynchronous, so the new one may
	 * lack entries we read, and its clock, which names its new entries,
	 * may be behind our cursor: read its stream from the start (every
	 * entry is idempotent; the run's stream is capped).
	 */
	if (R.moved) {
		R.moved = 0;
		snprintf(R.cursor, sizeof(R.cursor), "0-0");
		snprintf(R.wcursor, sizeof(R.wcursor), "$");
	}
	issue_block();
	if (R.h->ready != NULL)
		R.h->ready();
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
	int i = which(ac);

	if (i < 0)
		return;
	if (status != REDIS_OK) {
		R.ac[i] = NULL;		/* hiredis frees it when we return */
		R.connected[i] = 0;
		conn_failed(i, ac->errstr[0] ? ac->errstr : "cannot connect");
		return;
	}
	/* Our own flag, rather than hiredis' REDIS_CONNECTED: a context is
	 * ours to judge only through the callbacks it gave us. */
	R.connected[i] = 1;
	maybe_up();
}

/* AUTH and SELECT: a refusal is final (a wrong password does not get better). */
static void
on_setup(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	int i = *(const int *)priv;

	(void)ac;
	if (reply == NULL)
		return;		/* closed: the reconnect sets up again */
	if (reply->type == REDIS_REPLY_ERROR && i == ASKC) {
		ask_failed(reply->str);	/* its commands come back (NOAUTH) */
		return;
	}
	if (reply->type == REDIS_REPLY_ERROR) {
		if (contains(reply->str, transient_errors))
			went_down(reply->str);
		else
			go_fatal("authentication failed: ", reply->str);
		return;
	}
	R.setup_left[i]--;
	maybe_up();
}

/*
 * ROLE, after AUTH and SELECT, where the sentinels named the server: a
 * sentinel's answer may be stale (a failover under way, a demoted master
 * back as a replica), so the server must say it is the master. A user whose
 * ACL denies ROLE goes on: a replica's READONLY says the same, later.
 */
static void
on_role(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	int i = *(const int *)priv;
	static int said;
	char why[400];

	(void)ac;
	if (reply == NULL)
		return;
	if (reply->type == REDIS_REPLY_ERROR && (strstr(reply->str, "NOPERM") ||
	    strstr(reply->str, "unknown command"))) {
		if (!said++)
			ac_log("rendezvous %s: ROLE is denied or renamed; a "
			    "replica is told by its READONLY", R.url.where);
	} else if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    strcmp(reply->element[0]->str, "master") != 0) {
		snprintf(why, sizeof(why), "%s:%d is not the master (ROLE: %.40s); "
		    "asking the sentinels again", R.url.host, R.url.port,
		    reply->type == REDIS_REPLY_ERROR ? reply->str :
		    reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
		    reply->element[0]->type == REDIS_REPLY_STRING ?
		    reply->element[0]->str : "?");
		ac_rsent_distrust();
		went_down(why);
		return;
	}
	R.setup_left[i]--;
	maybe_up();
}

static redisAsyncContext *
dial(int i)
{
	redisAsyncContext *ac = R.url.path[0] ? redisAsyncConnectUnix(R.url.path) :
	    i == ASKC ? redisAsyncConnect(R.ask.host, R.ask.port) :
	    redisAsyncConnect(R.url.host, R.url.port);
	const void *p = &index_of[i];
	static void (*const hooks[NCONN][5])(void *) = {
		{ cmd_add_read, cmd_del_read, cmd_add_write, cmd_del_write,
		    cmd_cleanup },
		{ blk_add_read, blk_del_read, blk_add_write, blk_del_write,
		    blk_cleanup },
		{ ask_add_read, ask_del_read, ask_add_write, ask_del_write,
		    ask_cleanup },
	};

	if (ac == NULL) {
		conn_failed(i, "out of memory");
		return NULL;
	}
	if (ac->err) {
		conn_failed(i, ac->errstr);
		redisAsyncFree(ac);
		return NULL;
	}
	if (!R.url.path[0] && ac->c.fd >= 0)
		ac_keepalive(ac->c.fd);
	ac->ev.data = NULL;
	ac->ev.addRead = hooks[i][0];
	ac->ev.delRead = hooks[i][1];
	ac->ev.addWrite = hooks[i][2];
	ac->ev.delWrite = hooks[i][3];
	ac->ev.cleanup = hooks[i][4];
	/* hiredis learns the connect's outcome when the socket is writable
	 * (1.x asks for that itself when the connect callback is set). */
	R.want[i][1] = 1;
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	/* Pipelined before anything else on this connection. */
	R.setup_left[i] = 0;
	if (R.url.password[0] && R.url.user[0]) {
		R.setup_left[i]++;
		redisAsyncCommand(ac, on_setup, (void *)p, "AUTH %s %s",
		    R.url.user, R.url.password);
	} else if (R.url.password[0]) {
		R.setup_left[i]++;
		redisAsyncCommand(ac, on_setup, (void *)p, "AUTH %s",
		    R.url.password);
	}
	if (R.url.db != 0) {
		R.setup_left[i]++;
		redisAsyncCommand(ac, on_setup, (void *)p, "SELECT %d", R.url.db);
	}
	if (R.sentinel) {
		R.setup_left[i]++;
		redisAsyncCommand(ac, on_role, (void *)p, "ROLE");
	}
	return ac;
}

static void
connect_both(long now)
{
	R.dialed = now;
	/* Behind Sentinel: the master's address first (found() dials). */
	if (R.sentinel && !R.have_master) {
		snprintf(R.url.where, sizeof(R.url.where), "%s", R.where0);
		ac_rsent_ask();
		return;
	}
	if ((R.ac[CMD] = dial(CMD)) != NULL)
		R.ac[BLK] = dial(BLK);
}

/* The sentinels' answer: the master is HOST:PORT. */
static void
found(const char *host, int port)
{
	char hp[300];
	int same = strcmp(host, R.url.host) == 0 && port == R.url.port;

	if (R.fatal || R.closing)
		return;
	if (R.ac[CMD] != NULL || R.ac[BLK] != NULL) {
		/* A check after the subscription came back: a failover
		 * missed meanwhile shows as another address. */
		if (!same) {
			char why[400];

			snprintf(why, sizeof(why), "the sentinels name %s:%d as "
			    "master '%s' now", host, port, R.url.master);
			redial_now(why);
		}
		return;
	}
	if (!same && R.url.host[0] != '\0')
		R.moved = 1;
	snprintf(R.url.host, sizeof(R.url.host), "%s", host);
	R.url.port = port;
	snprintf(R.url.where, sizeof(R.url.where), "master '%s' at %s",
	    R.url.master, ac_rdv_hostport(host, port, hp, sizeof(hp)));
	R.have_master = 1;
	R.retry_at = ac_now_ms();	/* dialled by the timer, outside hiredis */
}

/* No sentinel answered: down, asked again after a back-off. A check while
 * connected (the subscription came back) that finds no answer changes
 * nothing: the master we hold has said nothing against itself. */
static void
not_found(const char *why)
{
	if (R.ac[CMD] != NULL || R.ac[BLK] != NULL) {
		ac_log("rendezvous %s: checking with the sentinels: %s; staying",
		    R.url.where, why);
		return;
	}
	snprintf(R.url.where, sizeof(R.url.where), "%s", R.where0);
	went_down(why);
}

/* +switch-master: a failover happened (or, HOST NULL, may have: ask). */
static void
switched(const char *host, int port)
{
	char why[400];

	if (R.fatal || R.closing)
		return;
	if (host == NULL) {
		if (!ac_rsent_asking() && R.ac[CMD] != NULL)
			ac_rsent_ask();
		return;
	}
	if (strcmp(host, R.url.host) == 0 && port == R.url.port &&
	    R.ac[CMD] != NULL)
		return;
	snprintf(why, sizeof(why), "failover: the sentinels switched master "
	    "'%s' to %s:%d", R.url.master, host, port);
	redial_now(why);
}

static const struct ac_rsent_hooks sentinel_hooks = { found, not_found,
    switched };

void
ac_rconn_start(const struct ac_rdv_url *u, const struct ac_rconn_hooks *h)
{
	memset(&R, 0, sizeof(R));
	R.url = *u;
	R.h = h;
	R.started = 1;
	R.sentinel = u->nhosts > 0 && !u->cluster;
	if (u->cluster)
		R.nseeds = u->nhosts;
	else if (!R.sentinel && u->path[0] == '\0') {
		R.nseeds = 1;
		snprintf(R.seed0.host, sizeof(R.seed0.host), "%s", u->host);
		R.seed0.port = u->port;
	}
	R.seedi = R.nseeds > 1 ? 1 : 0;
	snprintf(R.where0, sizeof(R.where0), "%s", u->where);
	srandom((unsigned int)(ac_now_ms() ^ (long)getpid()));
	if (R.sentinel)
		ac_rsent_start(&R.url, &sentinel_hooks);
	connect_both(ac_now_ms());
}

static void on_reply(redisAsyncContext *ac, void *r, void *priv);
static void on_asking(redisAsyncContext *ac, void *r, void *priv) { (void)ac; (void)r; (void)priv; }

/*
 * The importing node named by an ASK (H), for one command or read while the
 * job's slot moves: its connection, dialled now if need be (AUTH pipelined
 * before, as on the others), with ASKING sent first. NULL when it cannot be
 * now: it failed, and its back-off has not passed; it is open to another node
 * (an earlier move, given up or done: closed at the next safe point once
 * nothing waits on it, not counted as a failure): the caller waits and tries
 * again.
 */
static redisAsyncContext *
asking(const struct ac_rdv_host *h)
{
	if (R.ac[ASKC] != NULL && (strcmp(R.ask.host, h->host) != 0 ||
	    R.ask.port != h->port)) {
		if (R.pending[ASKC] == 0)
			R.ask_drop = 1;
		return NULL;
	}
	if (R.ask_drop || ac_now_ms() < R.ask_at)
		return NULL;
	if (R.ac[ASKC] == NULL) {
		R.ask = *h;
		if ((R.ac[ASKC] = dial(ASKC)) == NULL)
			return NULL;
	}
	if (redisAsyncCommand(R.ac[ASKC], on_asking, NULL, "ASKING") != REDIS_OK)
		return NULL;
	return R.ac[ASKC];
}

/* A request sent on connection I: counted until answered (cluster_timer). */
static void
sent(int i)
{
	if (R.pending[i]++ == 0)
		R.heard[i] = ac_now_ms();
}

/* ... and answered (or dropped). */
static void
answered(int i)
{
	if (R.pending[i] > 0)
		R.pending[i]--;
	R.heard[i] = ac_now_ms();
}

/* Send C (again) on AC; -1 when hiredis refuses (the connection is going). */
static int
send_call(redisAsyncContext *ac, struct call *c)
{
	if (redisAsyncCommandArgv(ac, on_reply, c, c->argc, c->argv, c->len) !=
	    REDIS_OK)
		return -1;
	c->asked = ac == R.ac[ASKC];
	sent(c->asked ? ASKC : CMD);
	return 0;
}

/* The delay after the importing node's connection failed (N in a row). */
static long
ask_delay(void)
{
	long d = MOVING_MS << (R.ask_fails < 5 ? R.ask_fails : 5);

	return d < BACKOFF_MAX_MS ? d : BACKOFF_MAX_MS;
}

/*
 * TRYAGAIN, or the importing node's connection lost under it: C goes to the
 * back of the queue, sent again on the slot's node in MOVING_MS (doubling
 * for each TRYAGAIN, to MOVING_MAX_MS), or after the importing node's back-off,
 * in the order the commands were refused. A slot that stays half-moved is
 * said once every 10 s.
 */
static void
retry_later(struct call *c, int lost)
{
	long now = ac_now_ms(), d = MOVING_MS << (c->tries < 3 ? c->tries : 3);
	struct call **at = &R.retry;

	if (d > MOVING_MAX_MS)
		d = MOVING_MAX_MS;
	if (lost && d < ask_delay())
		d = ask_delay();
	c->tries++;
	if (!lost && c->tries > 1 && now - R.moving_logged >= 10000) {
		R.moving_logged = now;
		ac_log("rendezvous %s: the job's slot is moving; commands whose "
		    "keys are split (TRYAGAIN) are sent again until it has moved",
		    R.url.where);
	}
	c->due = now + d;
	c->asked = 0;
	/* By due time, after those due as soon (in the order refused): a call
	 * that waits out the importing node's back-off does not hold back
	 * TRYAGAIN's, due sooner. */
	while (*at != NULL && (*at)->due <= c->due)
		at = &(*at)->next;
	c->next = *at;
	*at = c;
}

/* The importing node's connection failed (WHY): it alone is closed, at the
 * next safe point; what it carried is sent again after a back-off. */
static void
ask_failed(const char *why)
{
	char hp[300];
	long now = ac_now_ms();

	if (R.fatal || R.closing || R.reset)
		return;
	if (now - R.ask_logged >= 10000) {
		R.ask_logged = now;
		ac_log("rendezvous %s: the node importing the job's slot, %s: %s",
		    R.url.where, ac_rdv_hostport(R.ask.host, R.ask.port, hp,
		    sizeof(hp)), why);
	}
	R.ask_fails++;
	R.ask_at = now + ask_delay();
	R.ask_drop = 1;
}

/* Close the importing node's connection alone (ask_failed), outside any
 * hiredis callback: its callbacks get NULL, and what they carried waits. */
static void
ask_drop_now(void)
{
	redisAsyncContext *ac = R.ac[ASKC];

	if (!R.ask_drop)
		return;
	R.ask_drop = 0;
	R.ac[ASKC] = NULL;
	R.connected[ASKC] = 0;
	R.want[ASKC][0] = R.want[ASKC][1] = 0;
	R.pending[ASKC] = 0;
	if (ac != NULL)
		redisAsyncFree(ac);
}

/*
 * A reply on the command connection, or on the importing node's. Errors are
 * ours to handle: MOVED dials the slot's node; ASK sends the command once to
 * the importing node (after ASKING, no new slot map: the move is not over);
 * TRYAGAIN (a command whose keys are split between the two nodes) sends it
 * again later, the connections kept.
 */
static void
on_reply(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	struct call *c = priv;

	(void)ac;
	answered(c->asked ? ASKC : CMD);
	if (c->asked) {
		/* The importing node's connection was lost, not the others:
		 * this command waits and goes again. */
		if (reply == NULL && !R.reset && !R.closing && !R.fatal) {
			retry_later(c, 1);
			return;
		}
		if (reply != NULL && reply->type != REDIS_REPLY_ERROR)
			R.ask_fails = 0;
	}
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR && R.nseeds > 0) {
		struct ac_rdv_host h;
		redisAsyncContext *to;

		switch (ac_rcluster_redirect(reply->str, R.url.host, &h)) {
		case AC_REDIRECT_MOVED:
			follow(&h, reply->str);
			c->cb(NULL, c->priv);
			free(c);
			return;
		case AC_REDIRECT_ASK:
			/* Once: an importing node that sends us on has
			 * lost track, and a reconnect asks the seeds. Its
			 * connection not to be had now: wait, and again. */
			if (c->argv != NULL && !c->asked && !R.reset) {
				if ((to = asking(&h)) == NULL ||
				    send_call(to, c) == -1)
					retry_later(c, 1);
				return;
			}
			break;
		default:
			if (c->argv != NULL && !R.reset &&
			    strncmp(reply->str, "TRYAGAIN", 8) == 0) {
				retry_later(c, 0);
				return;
			}
		}
		/* Any other refusal by the importing node (OOM, LOADING,
		 * NOAUTH, an ASK of its own) is its connection's failure, not
		 * the slot's node's: that one is closed, and this goes again. */
		if (c->asked && c->argv != NULL && !R.reset && (c->pass == NULL ||
		    strncmp(reply->str, c->pass, strlen(c->pass)) != 0)) {
			ask_failed(reply->str);
			retry_later(c, 1);
			return;
		}
	}
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR &&
	    (c->pass == NULL || strncmp(reply->str, c->pass, strlen(c->pass)) != 0)) {
		if (ac_rconn_final_error(reply->str))
			go_fatal("refused: ", reply->str);
		else
			went_down(reply->str);
		reply = NULL;
	}
	c->cb(reply, c->priv);
	free(c);
}

/* The queue of TRYAGAIN's commands: send those due; ms to the next, or -1. */
static long
retry_timer(long now)
{
	while (R.retry != NULL && R.retry->due <= now && R.up && !R.reset) {
		struct call *c = R.retry;

		R.retry = c->next;
		if (send_call(R.ac[CMD], c) == -1) {
			went_down("cannot send a command again");
			c->cb(NULL, c->priv);
			free(c);
		}
	}
	return R.retry != NULL ? R.retry->due > now ? R.retry->due - now : 0 :
	    -1;
}

int
ac_rconn_cmd(ac_rconn_cb *cb, void *priv, int argc, const char **argv,
    const size_t *len)
{
	return ac_rconn_cmd_pass(NULL, cb, priv, argc, argv, len);
}

int
ac_rconn_cmd_pass(const char *pass, ac_rconn_cb *cb, void *priv, int argc,
    const char **argv, const size_t *len)
{
	struct call *c;
	size_t total = 0, room = 0;
	char *buf;

	if (argc <= 0 || !R.up || R.reset || R.ac[CMD] == NULL)
		return -1;
	/* Where a cluster may answer ASK or TRYAGAIN, keep a copy of the
	 * command (one block with the call) to send it again. */
	if (R.nseeds > 0) {
		for (int i = 0; i < argc; i++)
			total += len != NULL ? len[i] : strlen(argv[i]);
		room = (size_t)argc * (sizeof(char *) + sizeof(size_t)) + total;
	}
	if ((c = calloc(1, sizeof(*c) + room)) == NULL)
		return -1;
	c->cb = cb;
	c->priv = priv;
	c->pass = pass;
	c->argc = argc;
	c->argv = argv;
	c->len = (size_t *)len;
	if (R.nseeds > 0) {
		c->len = (size_t *)(c + 1);
		c->argv = (const char **)(c->len + argc);
		buf = (char *)(c->argv + argc);
		for (int i = 0; i < argc; i++) {
			c->len[i] = len != NULL ? len[i] : strlen(argv[i]);
			memcpy(buf, argv[i], c->len[i]);
			c->argv[i] = buf;
			buf += c->len[i];
		}
	}
	if (send_call(R.ac[CMD], c) == -1) {
		free(c);
		return -1;
	}
	if (R.nseeds == 0)
		c->argv = NULL;		/* the caller's: not kept */
	return 0;
}

static void on_block(redisAsyncContext *ac, void *r, void *priv);

/*
 * An error in answer to the blocking read. MOVED: the slot's node is another,
 * dial it. While the slot moves (cluster), ASK: the stream is on the
 * importing node now, read it there once (ASKING, no BLOCK: that connection
 * carries commands too), and again from here in MOVING_MS; TRYAGAIN (the
 * stream and the wake stream on two nodes): read again in MOVING_MS. Else
 * (UNBLOCKED: CLIENT UNBLOCK ... ERROR, a failover) transient, or final.
 */
static void
block_error(const char *text)
{
	struct ac_rdv_host h;
	redisAsyncContext *to;

	if (R.nseeds > 0 && !R.reset) {
		switch (ac_rcluster_redirect(text, R.url.host, &h)) {
		case AC_REDIRECT_MOVED:
			follow(&h, text);
			return;
		case AC_REDIRECT_ASK:
			if ((to = asking(&h)) != NULL && redisAsyncCommand(to,
			    on_block, &R.ask, "XREAD STREAMS %s %s", R.key,
			    R.cursor) == REDIS_OK) {
				sent(ASKC);
				R.blocked = 1;
			} else
				R.blk_due = ac_now_ms() + ask_delay();
			return;
		default:
			if (strncmp(text, "TRYAGAIN", 8) == 0) {
				R.blk_due = ac_now_ms() + MOVING_MS;
				return;
			}
		}
	}
	if (ac_rconn_final_error(text))
		go_fatal("refused: ", text);
	else
		went_down(text);
}

/*
 * XREAD's answer: {{stream, {{id, {field, value, ...}}, ...}}, ...}, a
 * stream only when it has entries. Every entry goes to the user's hook for
 * its stream, in order; the stream's cursor moves past it, so the next read
 * starts where this one ended.
 */
static void
entries(const redisReply *reply)
{
	for (size_t s = 0; reply->type == REDIS_REPLY_ARRAY &&
	    s < reply->elements; s++) {
		redisReply *st = reply->element[s], *ents;
		char *cursor;
		void (*hook)(const char *, size_t);

		if (st->type != REDIS_REPLY_ARRAY || st->elements != 2 ||
		    st->element[0]->type != REDIS_REPLY_STRING ||
		    (ents = st->element[1])->type != REDIS_REPLY_ARRAY)
			continue;
		if (strcmp(st->element[0]->str, R.key) == 0) {
			cursor = R.cursor;
			hook = R.h->entry;
		} else if (R.wake[0] != '\0' &&
		    strcmp(st->element[0]->str, R.wake) == 0) {
			cursor = R.wcursor;
			hook = R.h->wake;
		} else
			continue;
		for (size_t i = 0; i < ents->elements; i++) {
			redisReply *e = ents->element[i], *f;

			if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
			    e->element[0]->type != REDIS_REPLY_STRING ||
			    e->element[0]->len >= sizeof(R.cursor))
				continue;
			memcpy(cursor, e->element[0]->str, e->element[0]->len);
			cursor[e->element[0]->len] = '\0';
			f = e->element[1];
			if (f->type == REDIS_REPLY_ARRAY && f->elements == 2 &&
			    f->element[1]->type == REDIS_REPLY_STRING &&
			    hook != NULL)
				hook(f->element[1]->str, f->element[1]->len);
		}
	}
}

/*
 * The blocking read's answer, or (PRIV not NULL) the read on the importing
 * node, after which the next read goes to the slot's node in MOVING_MS (it
 * sends us there again while the stream is away). An ASK from the importing
 * node itself (it lost track) is not followed: the read waits MOVING_MS.
 */
static void
on_block(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;

	(void)ac;
	R.blocked = 0;
	if (priv != NULL)
		answered(ASKC);
	if (reply == NULL) {
		/* Closed: issued again once reconnected, or, where the
		 * importing node's connection alone was lost, after its
		 * back-off. */
		if (priv != NULL && !R.reset && !R.closing && !R.fatal)
			R.blk_due = ac_now_ms() + ask_delay();
		return;
	}
	if (reply->type != REDIS_REPLY_ERROR) {
		entries(reply);
		if (priv != NULL)
			R.ask_fails = 0;
	} else if (priv == NULL || strncmp(reply->str, "TRYAGAIN", 8) == 0 ||
	    ac_rcluster_redirect(reply->str, R.url.host, NULL) ==
	    AC_REDIRECT_MOVED) {
		block_error(reply->str);
		return;
	} else if (ac_rcluster_redirect(reply->str, R.url.host, NULL) !=
	    AC_REDIRECT_ASK)
		ask_failed(reply->str);	/* the importing node's refusal */
	if (priv != NULL)
		R.blk_due = ac_now_ms() + (reply->type == REDIS_REPLY_ERROR ?
		    ask_delay() : MOVING_MS);
	else
		issue_block();
}

static void
issue_block(void)
{
	int ok;

	if (!R.up || R.reset || R.blocked || R.key[0] == '\0' || R.ac[BLK] == NULL ||
	    R.blk_due != 0)
		return;
	if (R.wake[0] != '\0')
		ok = redisAsyncCommand(R.ac[BLK], on_block, NULL,
		    "XREAD BLOCK 0 STREAMS %s %s %s %s", R.key, R.wake, R.cursor,
		    R.wcursor) == REDIS_OK;
	else
		ok = redisAsyncCommand(R.ac[BLK], on_block, NULL,
		    "XREAD BLOCK 0 STREAMS %s %s", R.key, R.cursor) == REDIS_OK;
	if (ok)
		R.blocked = 1;
}

void
ac_rconn_block(const char *key, const char *wake)
{
	if (wake == NULL)
		wake = "";
	if (strcmp(R.key, key) == 0 && strcmp(R.wake, wake) == 0) {
		issue_block();
		return;
	}
	/* A new stream is read from its start (entries posted before we
	 * listened are ours too); a read of the old one that is pending
	 * starts over on the new one. The wake stream only from now on: what
	 * it said before, the set-up that follows a connect has done. */
	if (strcmp(R.key, key) != 0) {
		snprintf(R.key, sizeof(R.key), "%s", key);
		snprintf(R.cursor, sizeof(R.cursor), "0-0");
	}
	if (strcmp(R.wake, wake) != 0) {
		snprintf(R.wake, sizeof(R.wake), "%s", wake);
		snprintf(R.wcursor, sizeof(R.wcursor), "$");
	}
	if (R.blocked)
		went_down("the blocking read changed streams");
	else
		issue_block();
}

int
ac_rconn_fds(struct pollfd *pfd, int room)
{
	int n = 0;

	for (int i = 0; i < NCONN && n < room; i++) {
		if (R.ac[i] == NULL || R.ac[i]->c.fd < 0)
			continue;
		pfd[n].fd = R.ac[i]->c.fd;
		pfd[n].events = (short)((R.want[i][0] ? POLLIN : 0) |
		    (R.want[i][1] ? POLLOUT : 0));
		pfd[n].revents = 0;
		n++;
	}
	R.nown = n;
	if (R.sentinel)
		n += ac_rsent_fds(pfd + n, room - n);
	return n;
}

static redisAsyncContext *
by_fd(int fd)
{
	for (int i = 0; i < NCONN; i++)
		if (R.ac[i] != NULL && R.ac[i]->c.fd == fd)
			return R.ac[i];
	return NULL;
}

void
ac_rconn_events(const struct pollfd *pfd, int n)
{
	if (R.sentinel && n > R.nown)
		ac_rsent_events(pfd + R.nown, n - R.nown);
	if (n > R.nown)
		n = R.nown;
	for (int i = 0; i < n; i++) {
		/* Look the context up again each time: a callback may have
		 * ended it (hiredis frees it as it returns). */
		redisAsyncContext *ac = by_fd(pfd[i].fd);

		if (ac != NULL && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			redisAsyncHandleRead(ac);
		if ((ac = by_fd(pfd[i].fd)) != NULL && (pfd[i].revents & POLLOUT))
			redisAsyncHandleWrite(ac);
		if (R.reset)
			break;	/* the rest may be closing: next round */
	}
	reset_now();
}

static long
sooner(long a, long b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static long conn_timer(long now);
static long cluster_timer(long now);

long
ac_rconn_timer(long now)
{
	long t = R.sentinel && R.started && !R.fatal ? ac_rsent_timer(now) : -1;

	return sooner(t, conn_timer(now));
}

static long
conn_timer(long now)
{
	long t;

	reset_now();
	if (!R.started || R.fatal)
		return -1;
	if (R.ac[CMD] == NULL && R.ac[BLK] == NULL) {
		if (now < R.retry_at)
			return R.retry_at - now;
		connect_both(now);
		reset_now();
		if (R.ac[CMD] == NULL) {
			/* The sentinels are being asked: their answer wakes us. */
			if (R.sentinel && ac_rsent_asking())
				return -1;
			return R.retry_at > now ? R.retry_at - now : BACKOFF_MIN_MS;
		}
	}
	if (!R.up) {
		long left = R.dialed + CONNECT_MS - now;

		if (left > 0)
			return left;
		went_down(R.connected[CMD] && R.connected[BLK] ?
		    "no answer to AUTH/SELECT" : "timed out connecting");
		reset_now();
		return R.retry_at > now ? R.retry_at - now : BACKOFF_MIN_MS;
	}
	if (R.blk_due != 0 && R.blk_due <= now) {
		R.blk_due = 0;
		issue_block();
	}
	t = sooner(retry_timer(now), R.blk_due != 0 ? R.blk_due - now : -1);
	return sooner(t, R.url.cluster ? cluster_timer(now) : -1);
}

static void on_pong(redisReply *reply, void *priv) { (void)reply; (void)priv; }

/*
 * Cluster: a request on the command connection or the importing node's
 * unanswered for REPLY_MS is that connection's failure (conn_failed); an idle
 * command connection is PINGed.
 */
static long
cluster_timer(long now)
{
	static const char *ping[] = { "PING" };
	static const int watched[] = { CMD, ASKC };
	long next = -1;

	for (size_t k = 0; k < sizeof(watched) / sizeof(watched[0]); k++) {
		int i = watched[k];
		long left = R.heard[i] + REPLY_MS - now;

		if (R.pending[i] > 0 && left <= 0) {
			char why[64];

			snprintf(why, sizeof(why), "no answer in %d s",
			    REPLY_MS / 1000);
			conn_failed(i, why);
			reset_now();	/* both, or the importing node's */
			if (i == CMD)
				return R.retry_at > now ? R.retry_at - now :
				    BACKOFF_MIN_MS;
			continue;
		}
		if (i == CMD && R.pending[i] == 0 && left <= 0 &&
		    ac_rconn_cmd(on_pong, NULL, 1, ping, NULL) == 0)
			left = REPLY_MS;
		if (R.pending[i] > 0 || i == CMD)
			next = sooner(next, left > 0 ? left : BACKOFF_MIN_MS);
	}
	return next;
}

int
ac_rconn_sync(int argc, const char **argv, const size_t *len, long timeout_ms)
{
	if (!R.started || R.fatal || !R.healthy)
		return -1;
	return ac_rlast_cmd(&R.url, R.nseeds > 0, argc, argv, len, timeout_ms);
}

void
ac_rconn_stop(void)
{
	R.reset = 1;
	R.fatal = 1;		/* no more dialling */
	R.closing = 1;
	reset_now();
	if (R.sentinel)
		ac_rsent_stop();
	R.started = 0;
}

int
ac_rconn_up(void)
{
	return R.up && !R.reset;
}

void
ac_rconn_healthy(void)
{
	/* Logged the first time, and after each logged failure. */
	if (!R.healthy && (R.down_logged || !R.announced))
		ac_log("rendezvous %s: connected", R.url.where);
	R.announced = 1;
	R.down_logged = 0;
	R.healthy = 1;
	R.attempts = 0;
	R.follows = 0;
	R.down[0] = '\0';
}

void
ac_rconn_fail(const char *why)
{
	go_fatal("", why);
}

const char *
ac_rconn_down(int *final)
{
	static char buf[700];

	*final = R.fatal;
	if (R.healthy && !R.fatal)
		return NULL;
	if (R.down[0] != '\0')
		return R.down;
	snprintf(buf, sizeof(buf), "%s: %s", R.url.where, R.up ?
	    "no answer from Redis yet" : "not connected yet");
	return buf;
}

const char *
ac_rconn_where(void)
{
	return R.url.where;
}
