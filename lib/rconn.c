/* rconn.c: the helper's two connections to one Redis server: dial, AUTH/SELECT, backoff, reconnect.
 *
 * One connection carries commands, the other sits in XREAD BLOCK on the run's
 * stream of events, from the last entry it read, so that a release wakes the
 * helper without polling. Both are hiredis
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

#include <sys/time.h>

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
#include "rsentinel.h"

enum { CMD, BLK };

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

struct call {
	ac_rconn_cb	*cb;
	void		*priv;
	const char	*pass;		/* error replies starting so reach cb */
};

static struct {
	struct ac_rdv_url	 url;
	const struct ac_rconn_hooks *h;
	redisAsyncContext	*ac[2];
	int			 want[2][2];	/* [CMD|BLK][read|write] */
	int			 connected[2];	/* the connect callback said OK */
	int			 setup_left[2];	/* AUTH/SELECT replies still due */
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
	char			 down[1024];
	char			 logged[1024];	/* the last reason logged */
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
	int			 pending;	/* commands sent, not answered */
	long			 heard;		/* ms: the last reply, or send from idle */
	struct ac_rdv_host	 follow;
} R;

static const int index_of[2] = { CMD, BLK };

/* hiredis' event hooks: remember what it wants; the helper's poll asks. */
#define HOOK(name, i, rw, v)						\
	static void name(void *p) { (void)p; R.want[i][rw] = v; }
HOOK(cmd_add_read, CMD, 0, 1) HOOK(cmd_del_read, CMD, 0, 0)
HOOK(cmd_add_write, CMD, 1, 1) HOOK(cmd_del_write, CMD, 1, 0)
HOOK(blk_add_read, BLK, 0, 1) HOOK(blk_del_read, BLK, 0, 0)
HOOK(blk_add_write, BLK, 1, 1) HOOK(blk_del_write, BLK, 1, 0)
static void cmd_cleanup(void *p) { (void)p; R.want[CMD][0] = R.want[CMD][1] = 0; }
static void blk_cleanup(void *p) { (void)p; R.want[BLK][0] = R.want[BLK][1] = 0; }

static int
which(const redisAsyncContext *ac)
{
	return ac == R.ac[CMD] ? CMD : ac == R.ac[BLK] ? BLK : -1;
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
	snprintf(R.down, sizeof(R.down), "%s: %s%.300s", R.url.where, what, why);
	log_reason(R.down, 1);
	R.fatal = 1;
	R.up = R.healthy = 0;
	R.reset = 1;
}

/* Close what is left of both connections, outside any hiredis callback. */
static void
reset_now(void)
{
	if (!R.reset)
		return;
	R.reset = 0;
	R.closing = 1;
	for (int i = 0; i < 2; i++) {
		redisAsyncContext *ac = R.ac[i];

		R.ac[i] = NULL;
		if (ac != NULL)
			redisAsyncFree(ac);	/* pending callbacks get NULL */
		R.connected[i] = 0;
		R.want[i][0] = R.want[i][1] = 0;
	}
	R.closing = 0;
	R.up = 0;
	R.blocked = 0;
	R.pending = 0;
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
	if (ac->err == REDIS_ERR_PROTOCOL)
		go_fatal("not a Redis server: ", ac->errstr);
	else
		went_down(ac->errstr[0] ? ac->errstr : "connection closed");
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
		went_down(ac->errstr[0] ? ac->errstr : "cannot connect");
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
	    redisAsyncConnect(R.url.host, R.url.port);
	const void *p = &index_of[i];

	if (ac == NULL) {
		went_down("out of memory");
		return NULL;
	}
	if (ac->err) {
		went_down(ac->errstr);
		redisAsyncFree(ac);
		return NULL;
	}
	if (!R.url.path[0] && ac->c.fd >= 0)
		ac_keepalive(ac->c.fd);
	ac->ev.data = NULL;
	ac->ev.addRead = i == BLK ? blk_add_read : cmd_add_read;
	ac->ev.delRead = i == BLK ? blk_del_read : cmd_del_read;
	ac->ev.addWrite = i == BLK ? blk_add_write : cmd_add_write;
	ac->ev.delWrite = i == BLK ? blk_del_write : cmd_del_write;
	ac->ev.cleanup = i == BLK ? blk_cleanup : cmd_cleanup;
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

/* A reply on the command connection: errors are ours to handle. */
static void
on_reply(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	struct call *c = priv;

	(void)ac;
	if (R.pending > 0)
		R.pending--;
	R.heard = ac_now_ms();
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR && R.nseeds > 0) {
		struct ac_rdv_host h;

		if (ac_rcluster_moved(reply->str, R.url.host, &h)) {
			follow(&h, reply->str);
			c->cb(NULL, c->priv);
			free(c);
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

	if (!R.up || R.reset || R.ac[CMD] == NULL || (c = malloc(sizeof(*c))) == NULL)
		return -1;
	c->cb = cb;
	c->priv = priv;
	c->pass = pass;
	if (redisAsyncCommandArgv(R.ac[CMD], on_reply, c, argc, argv, len) !=
	    REDIS_OK) {
		free(c);
		return -1;
	}
	if (R.pending++ == 0)
		R.heard = ac_now_ms();
	return 0;
}

/*
 * XREAD's answer: {{stream, {{id, {field, value, ...}}, ...}}, ...}, a
 * stream only when it has entries. Every entry goes to the user's hook for
 * its stream, in order; the stream's cursor moves past it, so the next read
 * starts where this one ended.
 */
static void
on_block(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;

	(void)ac;
	(void)priv;
	R.blocked = 0;
	if (reply == NULL)
		return;		/* closed: issued again once reconnected */
	if (reply->type == REDIS_REPLY_ERROR) {
		struct ac_rdv_host h;

		/* The stream's slot moved: follow it. (ASK, a slot that
		 * is moving, is a transient error, as below.) */
		if (R.nseeds > 0 && ac_rcluster_moved(reply->str, R.url.host, &h)) {
			follow(&h, reply->str);
			return;
		}
		/* UNBLOCKED (CLIENT UNBLOCK ... ERROR, a failover): transient. */
		if (ac_rconn_final_error(reply->str))
			go_fatal("refused: ", reply->str);
		else
			went_down(reply->str);
		return;
	}
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
	issue_block();
}

static void
issue_block(void)
{
	int ok;

	if (!R.up || R.reset || R.blocked || R.key[0] == '\0' || R.ac[BLK] == NULL)
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

	for (int i = 0; i < 2 && n < room; i++) {
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
	for (int i = 0; i < 2; i++)
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
	return R.url.cluster ? cluster_timer(now) : -1;
}

static void on_pong(redisReply *reply, void *priv) { (void)reply; (void)priv; }

/* Cluster: no answer in REPLY_MS is a failure; an idle connection is PINGed. */
static long
cluster_timer(long now)
{
	static const char *ping[] = { "PING" };
	long left = R.heard + REPLY_MS - now;

	if (R.pending > 0 && left <= 0) {
		char why[160];

		snprintf(why, sizeof(why), "no answer in %d s", REPLY_MS / 1000);
		went_down(why);
		reset_now();
		return R.retry_at > now ? R.retry_at - now : BACKOFF_MIN_MS;
	}
	if (R.pending == 0 && left <= 0 && ac_rconn_cmd(on_pong, NULL, 1, ping,
	    NULL) == 0)
		left = REPLY_MS;
	return left > 0 ? left : BACKOFF_MIN_MS;
}

int
ac_rconn_sync(int argc, const char **argv, const size_t *len, long timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	redisContext *c;
	redisReply *r;
	int ok = 0;

	if (!R.started || R.fatal || !R.healthy)
		return -1;
	c = R.url.path[0] ? redisConnectUnixWithTimeout(R.url.path, tv) :
	    redisConnectWithTimeout(R.url.host, R.url.port, tv);
	if (c == NULL || c->err || redisSetTimeout(c, tv) != REDIS_OK)
		goto out;
	if (R.url.password[0]) {
		r = R.url.user[0] ? redisCommand(c, "AUTH %s %s", R.url.user,
		    R.url.password) : redisCommand(c, "AUTH %s", R.url.password);
		if (r == NULL || r->type == REDIS_REPLY_ERROR) {
			if (r != NULL)
				freeReplyObject(r);
			goto out;
		}
		freeReplyObject(r);
	}
	if (R.url.db != 0) {
		if ((r = redisCommand(c, "SELECT %d", R.url.db)) == NULL)
			goto out;
		freeReplyObject(r);
	}
	if ((r = redisCommandArgv(c, argc, argv, len)) != NULL) {
		ok = r->type != REDIS_REPLY_ERROR;
		freeReplyObject(r);
	}
out:
	if (c != NULL)
		redisFree(c);
	return ok ? 0 : -1;
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
