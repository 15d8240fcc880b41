/* xredis.c: the cross-node step through a Redis rendezvous, inside the helper's loop.
 *
 * Only node helpers talk to Redis, over two persistent hiredis connections
 * driven by the helper's own poll(2) loop (hiredis' async API with our event
 * hooks): one for commands, one blocked in BLPOP on this node's inbox, so a
 * release wakes us without polling. Per barrier generation each node sends one
 * EVAL (a Lua script: record this node's outcome, and when it is the last
 * node, compute the result and push it into every node's inbox) and pops one
 * inbox entry: a constant number of commands per node, whatever the ranks.
 *
 * Keys: accelctl:{JOB}:KIND:KEY:GEN. The {JOB} hash tag puts a job's keys in
 * one slot, so the scripts are valid on Redis Cluster. Every key has a TTL,
 * and the generation in every key name means none is ever reused. An arrival
 * is a hash field per node (HSET), so a repeated one cannot count twice. After any
 * reconnect (Redis restarted without persistence, or a new helper) the helper
 * posts again what it knows: its arrivals in flight, the results it has seen
 * last, and an abort; nothing passes early, because a result is only written
 * when every node's arrival is in the set.
 */
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <errno.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "duration.h"
#include "transport.h"
#include "xredis.h"

/* Results up to this size travel inside the inbox entry; larger ones are fetched. */
#define INLINE_MAX 4096
#define KEY_MAX 1024

static struct {
	struct ac_job		*job;
	struct ac_rdv_url	 url;
	redisAsyncContext	*cmd, *blk;
	int			 want[2][2];	/* [cmd|blk][read|write] */
	int			 setup_left[2];	/* AUTH/SELECT replies still due */
	int			 up;		/* both connected */
	long			 retry_at;
	int			 attempts;
	int			 fatal;
	int			 stopping;	/* closing on purpose: not "down" */
	char			 down[1024];
	char			 prefix[AC_KEY_MAX + 32];
	long			 ttl;
	char			**nodes;	/* [nnodes] "host: ranks ..." from Redis */
	const struct ac_xredis_nccl *nccl;	/* the NCCL transport's hooks */
	int			 join_pending;	/* join again once connected */
	int			 quiet;		/* collectives go elsewhere (NCCL) */
	char			 off_pending[256];	/* NCCL off: tell once connected */
	char			 join_id[2 * 128 + 1];	/* hex; node 0's only */
} X;

/* Lua: record this node's arrival (a hash field per node: arriving twice
 * cannot count twice); if it is the last, write the result and tell every
 * node. KEYS: arrivals, done, inbox 0..n-1. ARGV: node, "rank:status ..." of
 * this node's failures, ttl, nnodes, "KEY GEN". Returns {1, result} or
 * {0, nodes arrived}. */
static const char arrive_lua[] =
"local ttl = tonumber(ARGV[3])\n"
"local done = redis.call('GET', KEYS[2])\n"
"if done then return {1, done} end\n"
"if redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) == 1 and\n"
"   redis.call('HLEN', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], ttl) end\n"
"local all = redis.call('HGETALL', KEYS[1])\n"
"if #all / 2 < tonumber(ARGV[4]) then\n"
"  local nodes = {} for i = 1, #all, 2 do nodes[#nodes + 1] = all[i] end\n"
"  return {0, nodes} end\n"
"local fails = {}\n"
"for i = 2, #all, 2 do\n"
"  for r, s in string.gmatch(all[i], '(%d+):(%d+)') do\n"
"    fails[#fails + 1] = {tonumber(r), s} end end\n"
"table.sort(fails, function(a, b) return a[1] < b[1] end)\n"
"local status, text = '0', {}\n"
"if #fails > 0 then status = fails[1][2] end\n"
"for i = 1, math.min(#fails, 40) do\n"
"  text[#text + 1] = fails[i][1] .. ' (exit ' .. fails[i][2] .. ')' end\n"
"if #fails > 40 then text[#text + 1] = 'and ' .. (#fails - 40) .. ' more' end\n"
"done = 'R ' .. status .. '\\n' .. table.concat(text, ', ') .. '\\n'\n"
"redis.call('SET', KEYS[2], done, 'EX', ttl)\n"
"for i = 3, #KEYS do redis.call('RPUSH', KEYS[i], ARGV[5] .. '\\n' .. done)\n"
"  redis.call('EXPIRE', KEYS[i], ttl) end\n"
"return {1, done}\n";

/* Lua: write a result (or an abort) and tell every node. KEYS: the result
 * key, inbox 0..n-1. ARGV: value, ttl, inbox entry. */
static const char publish_lua[] =
"local ttl = tonumber(ARGV[2])\n"
"redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)\n"
"for i = 2, #KEYS do redis.call('RPUSH', KEYS[i], ARGV[3])\n"
"  redis.call('EXPIRE', KEYS[i], ttl) end\n"
"return 1\n";

/* Lua: this node joins the NCCL communicator of the job (epoch 0). KEYS:
 * id, joined, off, inbox 0..n-1. ARGV: node, the id in hex (node 0's only,
 * else empty), ttl. A node that joined before (its helper was restarted)
 * cannot rejoin a communicator the others hold: it turns NCCL off for the
 * job. Returns {'id', hex}, {'wait', ''} (an 'I' entry in the inbox comes
 * when node 0 posts it) or {'off', why}. */
static const char join_lua[] =
"local ttl = tonumber(ARGV[3])\n"
"local off = redis.call('GET', KEYS[3])\n"
"if off then return {'off', off} end\n"
"if redis.call('HSETNX', KEYS[2], ARGV[1], '1') == 0 then\n"
"  off = 'node ' .. ARGV[1] .. ' joined before (its helper restarted)'\n"
"  redis.call('SET', KEYS[3], off, 'EX', ttl)\n"
"  for i = 4, #KEYS do redis.call('RPUSH', KEYS[i], 'N')\n"
"    redis.call('EXPIRE', KEYS[i], ttl) end\n"
"  return {'off', off} end\n"
"redis.call('EXPIRE', KEYS[2], ttl)\n"
"if ARGV[2] ~= '' and redis.call('SET', KEYS[1], ARGV[2], 'NX', 'EX', ttl) then\n"
"  for i = 4, #KEYS do redis.call('RPUSH', KEYS[i], 'I')\n"
"    redis.call('EXPIRE', KEYS[i], ttl) end end\n"
"local id = redis.call('GET', KEYS[1])\n"
"if id then return {'id', id} end\n"
"return {'wait', ''}\n";

/* Lua: NCCL is off for the rest of the job; tell every node. KEYS: off,
 * inbox 0..n-1. ARGV: why, ttl. The first reason stays. */
static const char off_lua[] =
"local ttl = tonumber(ARGV[2])\n"
"if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ttl) then return 0 end\n"
"for i = 2, #KEYS do redis.call('RPUSH', KEYS[i], 'N')\n"
"  redis.call('EXPIRE', KEYS[i], ttl) end\n"
"return 1\n";

struct req {
	char	key[AC_KEY_MAX];
	int64_t	gen;
};

static void sweep(void);
static void pop_inbox(void);
static void fetch_nodes(void);
static void x_hello(struct ac_job *j);
static const char *x_node(long node);
static void on_ignore(redisAsyncContext *ac, void *rp, void *priv);
static void fetch_off(void);

static void
keyname(char *buf, size_t len, const char *kind, const char *key, int64_t gen)
{
	if (key == NULL)
		snprintf(buf, len, "%s%s", X.prefix, kind);
	else
		snprintf(buf, len, "%s%s:%s:%" PRId64, X.prefix, kind, key, gen);
}

/* hiredis' event hooks: remember what it wants; the helper's poll asks. */
#define HOOK(name, i, rw, v)						\
	static void name(void *p) { (void)p; X.want[i][rw] = v; }
HOOK(cmd_add_read, 0, 0, 1) HOOK(cmd_del_read, 0, 0, 0)
HOOK(cmd_add_write, 0, 1, 1) HOOK(cmd_del_write, 0, 1, 0)
HOOK(blk_add_read, 1, 0, 1) HOOK(blk_del_read, 1, 0, 0)
HOOK(blk_add_write, 1, 1, 1) HOOK(blk_del_write, 1, 1, 0)
static void cmd_cleanup(void *p) { (void)p; X.want[0][0] = X.want[0][1] = 0; }
static void blk_cleanup(void *p) { (void)p; X.want[1][0] = X.want[1][1] = 0; }

static void
went_down(const char *why)
{
	long backoff = 100L << (X.attempts < 5 ? X.attempts : 5);

	if (X.fatal || X.stopping)
		return;
	if (X.up || X.down[0] == '\0')
		ac_helper_log("rendezvous %s: %s", X.url.where, why);
	snprintf(X.down, sizeof(X.down), "%s: %s", X.url.where, why);
	X.up = 0;
	/* Close the other connection too: both come back together. */
	if (X.cmd != NULL)
		redisAsyncDisconnect(X.cmd);
	if (X.blk != NULL)
		redisAsyncDisconnect(X.blk);
	X.attempts++;
	X.retry_at = ac_now_ms() + backoff;
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
	const char *why = ac->errstr[0] ? ac->errstr : "connection closed";

	(void)status;
	if (ac == X.cmd)
		X.cmd = NULL;
	if (ac == X.blk)
		X.blk = NULL;
	went_down(why);
}

/*
 * Up once both connections are connected and their AUTH and SELECT were
 * answered OK. Nothing else is sent before: a connection whose AUTH failed
 * still runs commands as Redis' default user, and a barrier released through
 * that user would pass a wrong password.
 */
static void
maybe_up(void)
{
	if (X.up || X.fatal || X.cmd == NULL || X.blk == NULL ||
	    !(X.cmd->c.flags & REDIS_CONNECTED) || !(X.blk->c.flags & REDIS_CONNECTED) ||
	    X.setup_left[0] > 0 || X.setup_left[1] > 0)
		return;
	ac_helper_log("rendezvous %s: connected", X.url.where);
	X.up = 1;
	X.attempts = 0;
	X.down[0] = '\0';
	sweep();
	pop_inbox();
	if (X.off_pending[0]) {
		char why[sizeof(X.off_pending)];

		memcpy(why, X.off_pending, sizeof(why));
		ac_xredis_nccl_off(why);
	}
	if (X.join_pending)
		ac_xredis_nccl_join(X.join_id[0] ? X.join_id : NULL);
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
	if (status != REDIS_OK) {
		if (ac == X.cmd)
			X.cmd = NULL;
		if (ac == X.blk)
			X.blk = NULL;
		went_down(ac->errstr[0] ? ac->errstr : "cannot connect");
		return;
	}
	maybe_up();
}

/* AUTH and SELECT: a refusal is final (a wrong password does not get better). */
static void
on_setup(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	int which = priv != NULL;

	(void)ac;
	if (reply == NULL)
		return;		/* disconnected: the reconnect sets up again */
	if (reply->type != REDIS_REPLY_ERROR) {
		X.setup_left[which]--;
		maybe_up();
		return;
	}
	/* The reply never echoes the password; keep it short anyway. */
	snprintf(X.down, sizeof(X.down), "%s: refused: %.200s", X.url.where,
	    reply->str);
	ac_helper_log("rendezvous %s", X.down);
	X.fatal = 1;
	X.up = 0;
	if (X.cmd != NULL)
		redisAsyncDisconnect(X.cmd);
	if (X.blk != NULL)
		redisAsyncDisconnect(X.blk);
}

static redisAsyncContext *
dial(int which)
{
	redisAsyncContext *ac = X.url.path[0] ? redisAsyncConnectUnix(X.url.path) :
	    redisAsyncConnect(X.url.host, X.url.port);

	if (ac == NULL)
		return NULL;
	if (ac->err) {
		went_down(ac->errstr);
		redisAsyncFree(ac);
		return NULL;
	}
	ac->ev.addRead = which ? blk_add_read : cmd_add_read;
	ac->ev.delRead = which ? blk_del_read : cmd_del_read;
	ac->ev.addWrite = which ? blk_add_write : cmd_add_write;
	ac->ev.delWrite = which ? blk_del_write : cmd_del_write;
	ac->ev.cleanup = which ? blk_cleanup : cmd_cleanup;
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	/* Pipelined before anything else on this connection; PRIV tells
	 * on_setup which connection answers (NULL: commands, else blocking). */
	void *which_p = which ? (void *)&X : NULL;
	X.setup_left[which] = 0;
	if (X.url.password[0] && X.url.user[0]) {
		X.setup_left[which]++;
		redisAsyncCommand(ac, on_setup, which_p, "AUTH %s %s", X.url.user,
		    X.url.password);
	} else if (X.url.password[0]) {
		X.setup_left[which]++;
		redisAsyncCommand(ac, on_setup, which_p, "AUTH %s", X.url.password);
	}
	if (X.url.db != 0) {
		X.setup_left[which]++;
		redisAsyncCommand(ac, on_setup, which_p, "SELECT %d", X.url.db);
	}
	/* hiredis waits for writability to learn the connect's outcome. */
	X.want[which][1] = 1;
	return ac;
}

static void
connect_both(void)
{
	if (X.fatal)
		return;
	if (X.cmd == NULL)
		X.cmd = dial(0);
	if (X.blk == NULL && X.cmd != NULL)
		X.blk = dial(1);
}

/* EVAL SCRIPT with KEYS (result key(s), then every node's inbox) and ARGV. */
static void
eval(redisCallbackFn *cb, void *priv, const char *script, int nkeys0,
    const char **keys0, int nargs, const char **args, const size_t *arglen)
{
	long nn = X.job->nnodes;
	int argc = 3 + nkeys0 + (int)nn + nargs, i = 0;
	const char **argv = calloc((size_t)argc, sizeof(*argv));
	size_t *len = calloc((size_t)argc, sizeof(*len));
	char (*inbox)[KEY_MAX] = calloc((size_t)nn, KEY_MAX);
	char nk[16];

	if (argv == NULL || len == NULL || inbox == NULL)
		goto out;
	snprintf(nk, sizeof(nk), "%d", nkeys0 + (int)nn);
	argv[i++] = "EVAL";
	argv[i++] = script;
	argv[i++] = nk;
	for (int k = 0; k < nkeys0; k++)
		argv[i++] = keys0[k];
	for (long n = 0; n < nn; n++) {
		char kind[32];

		snprintf(kind, sizeof(kind), "inbox:%ld", n);
		keyname(inbox[n], KEY_MAX, kind, NULL, 0);
		argv[i++] = inbox[n];
	}
	for (int a = 0; a < nargs; a++) {
		len[i] = arglen != NULL && arglen[a] != (size_t)-1 ? arglen[a] :
		    strlen(args[a]);
		argv[i++] = args[a];
	}
	for (int k = 0; k < i; k++)
		if (len[k] == 0 && (k < 3 + nkeys0 + (int)nn))
			len[k] = strlen(argv[k]);
	redisAsyncCommandArgv(X.cmd, cb, priv, argc, argv, len);
out:
	free(argv);
	free(len);
	free(inbox);
}

static struct req *
new_req(const struct ac_coll *c)
{
	struct req *r = malloc(sizeof(*r));

	if (r != NULL) {
		snprintf(r->key, sizeof(r->key), "%s", c->key);
		r->gen = c->gen;
	}
	return r;
}

static void
on_arrive(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp;
	struct req *r = priv;
	struct ac_coll *c;

	(void)ac;
	if (reply != NULL && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
	    reply->element[0]->type == REDIS_REPLY_INTEGER) {
		redisReply *v = reply->element[1];

		if (reply->element[0]->integer == 1 && v->type == REDIS_REPLY_STRING)
			ac_job_remote_done(X.job, r->key, r->gen, v->str, v->len);
		else if (v->type == REDIS_REPLY_ARRAY &&
		    (c = ac_job_find(X.job, r->key, r->gen)) != NULL) {
			/* Which nodes are missing, for timeouts and status. */
			size_t n = 0;
			c->xmissing[0] = '\0';
			for (long node = 0; node < X.job->nnodes; node++) {
				int seen = 0;
				for (size_t k = 0; k < v->elements; k++)
					if (v->element[k]->type == REDIS_REPLY_STRING &&
					    atol(v->element[k]->str) == node)
						seen = 1;
				if (!seen && n < sizeof(c->xmissing) - 24) {
					n += (size_t)snprintf(c->xmissing + n,
					    sizeof(c->xmissing) - n, "%s%ld",
					    n ? ", " : "", node);
					if (x_node(node) == NULL)
						fetch_nodes();
				}
			}
		}
	} else if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		ac_helper_log("rendezvous %s: %s", X.url.where, reply->str);
	free(r);
}

/* This node's ranks all arrived at barrier C: post this node's outcome. */
static void
x_arrive(struct ac_job *j, struct ac_coll *c)
{
	char arr[KEY_MAX], done[KEY_MAX], node[24], ttl[24], nn[24];
	char note[AC_KEY_MAX + 32], fails[4096];
	const char *keys[2] = { arr, done }, *args[5];
	size_t n = 0;
	struct req *r;

	if (!X.up || (r = new_req(c)) == NULL)
		return;	/* sweep() posts it once connected */
	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	keyname(done, sizeof(done), "done", c->key, c->gen);
	fails[0] = '\0';
	for (long l = 0; l < j->lsize && n < sizeof(fails) - 48; l++)
		if (c->status[l] != 0)
			n += (size_t)snprintf(fails + n, sizeof(fails) - n,
			    "%s%lld:%lld", n ? " " : "", (long long)(j->rank_of[l] >= 0 ?
			    j->rank_of[l] : l), (long long)c->status[l]);
	snprintf(node, sizeof(node), "%ld", j->node);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	snprintf(nn, sizeof(nn), "%ld", j->nnodes);
	snprintf(note, sizeof(note), "%s %" PRId64, c->key, c->gen);
	args[0] = node;
	args[1] = fails;
	args[2] = ttl;
	args[3] = nn;
	args[4] = note;
	eval(on_arrive, r, arrive_lua, 2, keys, 5, args, NULL);
}

static void
on_ignore(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp;

	(void)ac;
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		ac_helper_log("rendezvous %s: %s", X.url.where, reply->str);
	free(priv);
}

/* A local source's result (or death): write it and tell every node. */
static void
x_publish(struct ac_job *j, struct ac_coll *c)
{
	char done[KEY_MAX], ttl[24], head[600], *value, *entry;
	const char *keys[1] = { done }, *args[3];
	size_t hlen, vlen, elen, lens[3];

	(void)j;
	if (!X.up)
		return;
	keyname(done, sizeof(done), "done", c->key, c->gen);
	if (c->src == AC_SRC_LOST)
		hlen = (size_t)snprintf(head, sizeof(head), "L");
	else
		hlen = (size_t)snprintf(head, sizeof(head), "R %lld\n%s\n",
		    (long long)c->result, c->failed);
	vlen = hlen + (c->src == AC_SRC_LOST ? 0 : c->paylen);
	if ((value = malloc(vlen + 1)) == NULL)
		return;
	memcpy(value, head, hlen);
	if (vlen > hlen)
		memcpy(value + hlen, c->payload, c->paylen);
	/* The inbox entry: "KEY GEN" and, when small, the value itself. */
	elen = (size_t)snprintf(NULL, 0, "%s %" PRId64, c->key, c->gen);
	if ((entry = malloc(elen + 2 + vlen)) == NULL) {
		free(value);
		return;
	}
	snprintf(entry, elen + 1, "%s %" PRId64, c->key, c->gen);
	if (vlen <= INLINE_MAX) {
		entry[elen++] = '\n';
		memcpy(entry + elen, value, vlen);
		elen += vlen;
	}
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = value;
	args[1] = ttl;
	args[2] = entry;
	lens[0] = vlen;
	lens[1] = (size_t)-1;
	lens[2] = elen;
	eval(on_ignore, NULL, publish_lua, 1, keys, 3, args, lens);
	free(value);
	free(entry);
}

static void
on_get_done(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp;
	struct req *r = priv;

	(void)ac;
	if (reply != NULL && reply->type == REDIS_REPLY_STRING)
		ac_job_remote_done(X.job, r->key, r->gen, reply->str, reply->len);
	free(r);
}

/* A result op whose source may be on another node: has it finished? */
static void
x_want(struct ac_job *j, struct ac_coll *c)
{
	char done[KEY_MAX];
	struct req *r;

	(void)j;
	if (!X.up || (r = new_req(c)) == NULL)
		return;
	keyname(done, sizeof(done), "done", c->key, c->gen);
	redisAsyncCommand(X.cmd, on_get_done, r, "GET %s", done);
}

static void
x_abort(struct ac_job *j)
{
	char key[KEY_MAX], ttl[24];
	const char *keys[1] = { key }, *args[3];

	if (!X.up)
		return;
	keyname(key, sizeof(key), "abort", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = j->aborted;
	args[1] = ttl;
	args[2] = "!";
	eval(on_ignore, NULL, publish_lua, 1, keys, 3, args, NULL);
}

static void
on_get_abort(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp;

	(void)ac;
	(void)priv;
	if (reply != NULL && reply->type == REDIS_REPLY_STRING)
		ac_job_abort_remote(X.job, reply->str);
}

/* One entry of our inbox: "!" (abort), or "KEY GEN" with maybe the value. */
static void
on_inbox(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp, *v;
	char key[AC_KEY_MAX], abort_key[KEY_MAX];
	long long gen;
	const char *nl;

	(void)ac;
	(void)priv;
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2)
		return;	/* disconnected: sweep() catches up */
	v = reply->element[1];
	if (v->type == REDIS_REPLY_STRING) {
		if (v->len == 1 && v->str[0] == 'I') {
			if (X.nccl != NULL)
				ac_xredis_nccl_fetch_id();
		} else if (v->len == 1 && v->str[0] == 'N') {
			if (X.nccl != NULL)
				fetch_off();
		} else if (v->len == 1 && v->str[0] == '!') {
			keyname(abort_key, sizeof(abort_key), "abort", NULL, 0);
			redisAsyncCommand(X.cmd, on_get_abort, NULL, "GET %s", abort_key);
		} else if (sscanf(v->str, "%255s %lld", key, &gen) == 2) {
			struct ac_coll *c = ac_job_find(X.job, key, gen);

			nl = memchr(v->str, '\n', v->len);
			if (nl != NULL)
				ac_job_remote_done(X.job, key, gen, nl + 1,
				    v->len - (size_t)(nl + 1 - v->str));
			else if (c != NULL && !c->done)
				x_want(X.job, c);
		}
	}
	pop_inbox();
}

static void
pop_inbox(void)
{
	char inbox[KEY_MAX], kind[32];

	if (X.blk == NULL)
		return;
	snprintf(kind, sizeof(kind), "inbox:%ld", X.job->node);
	keyname(inbox, sizeof(inbox), kind, NULL, 0);
	redisAsyncCommand(X.blk, on_inbox, NULL, "BLPOP %s 0", inbox);
}

#define SKIP(c) (X.quiet && ac_xn_carries((c)->op, (c)->key))

/* After a (re)connect: post again everything Redis may have lost. */
static void
sweep(void)
{
	struct ac_job *j = X.job;

	/* While NCCL carries the collectives, only those it does not carry. */
	for (struct ac_coll *c = j->colls; c != NULL; c = c->next) {
		if (!ac_coll_cross(j, c) || c->done || SKIP(c))
			continue;
		if (c->op == AC_OP_BARRIER && c->narrived == j->lsize)
			x_arrive(j, c);
		else if (c->op == AC_OP_RESULT && (c->src == AC_SRC_DONE ||
		    c->src == AC_SRC_LOST))
			x_publish(j, c);
		else if (c->op == AC_OP_RESULT)
			x_want(j, c);
	}
	/* Results seen last: nodes still waiting for them must find them. */
	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next)
		if (k->last_done != NULL && ac_coll_cross(j, k->last_done) &&
		    k->last_done->done && !SKIP(k->last_done))
			x_publish(j, k->last_done);
	for (struct ac_coll *c = j->colls; c != NULL; c = c->next)
		if (ac_coll_cross(j, c) && c->done && c->op == AC_OP_BARRIER && !SKIP(c))
			x_publish(j, c);
	if (j->aborted != NULL)
		x_abort(j);
	x_hello(j);
	fetch_nodes();
}

/* This node's host and ranks, for the other nodes' messages and status. */
static void
x_hello(struct ac_job *j)
{
	char key[KEY_MAX], host[128], info[4096], ttl[24];
	size_t n;

	/* Only a whole node: other nodes cache what they read. */
	for (long l = 0; l < j->lsize; l++)
		if (j->rank_of[l] < 0)
			return;
	if (!X.up)
		return;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	n = (size_t)snprintf(info, sizeof(info), "%s: rank%s", host,
	    j->lsize > 1 ? "s" : "");
	for (long l = 0; l < j->lsize && n < sizeof(info) - 24; l++)
		if (j->rank_of[l] >= 0)
			n += (size_t)snprintf(info + n, sizeof(info) - n, "%s %lld",
			    l ? "," : "", (long long)j->rank_of[l]);
	keyname(key, sizeof(key), "nodes", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	snprintf(host, sizeof(host), "%ld", j->node);
	redisAsyncCommand(X.cmd, on_ignore, NULL, "HSET %s %s %s", key, host, info);
	redisAsyncCommand(X.cmd, on_ignore, NULL, "EXPIRE %s %s", key, ttl);
}

static void
on_nodes(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp;

	(void)ac;
	(void)priv;
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY || X.nodes == NULL)
		return;
	for (size_t i = 0; i + 1 < reply->elements; i += 2) {
		long node;

		if (reply->element[i]->type != REDIS_REPLY_STRING ||
		    reply->element[i + 1]->type != REDIS_REPLY_STRING)
			continue;
		node = atol(reply->element[i]->str);
		if (node < 0 || node >= X.job->nnodes)
			continue;
		free(X.nodes[node]);
		X.nodes[node] = strdup(reply->element[i + 1]->str);
	}
}

/* Refresh the table of nodes (when a node we cannot name is missing). */
static void
fetch_nodes(void)
{
	char key[KEY_MAX];

	if (!X.up)
		return;
	keyname(key, sizeof(key), "nodes", NULL, 0);
	redisAsyncCommand(X.cmd, on_nodes, NULL, "HGETALL %s", key);
}

static const char *
x_node(long node)
{
	return X.nodes != NULL && node >= 0 && node < X.job->nnodes ?
	    X.nodes[node] : NULL;
}

static const struct ac_xops xops = { x_arrive, x_publish, x_want, x_abort,
    x_hello, x_node, NULL };

const struct ac_xops *
ac_xredis_ops(void)
{
	return &xops;
}

void
ac_xredis_resync(void)
{
	if (X.up)
		sweep();
}

void
ac_xredis_nccl_hooks(const struct ac_xredis_nccl *h)
{
	X.nccl = h;
}

static void
on_join(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp;

	(void)ac;
	(void)priv;
	if (reply == NULL)
		return;		/* disconnected: joined again once up */
	X.join_pending = 0;
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
	    reply->element[0]->type == REDIS_REPLY_STRING &&
	    reply->element[1]->type == REDIS_REPLY_STRING) {
		if (X.nccl != NULL)
			X.nccl->joined(reply->element[0]->str,
			    reply->element[1]->str, reply->element[1]->len);
	} else if (reply->type == REDIS_REPLY_ERROR && X.nccl != NULL)
		X.nccl->joined("off", reply->str, reply->len);
}

int
ac_xredis_nccl_join(const char *idhex)
{
	char id[KEY_MAX], joined[KEY_MAX], off[KEY_MAX], node[24], ttl[24];
	const char *keys[3] = { id, joined, off }, *args[3];

	X.join_pending = 1;
	snprintf(X.join_id, sizeof(X.join_id), "%s", idhex != NULL ? idhex : "");
	if (!X.up)
		return -1;
	keyname(id, sizeof(id), "nccl:0:id", NULL, 0);
	keyname(joined, sizeof(joined), "nccl:0:joined", NULL, 0);
	keyname(off, sizeof(off), "nccl:0:off", NULL, 0);
	snprintf(node, sizeof(node), "%ld", X.job->node);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = node;
	args[1] = X.join_id;
	args[2] = ttl;
	eval(on_join, NULL, join_lua, 3, keys, 3, args, NULL);
	return 0;
}

/* The reply to a GET of the NCCL keys; PRIV names which one ("id", "off"). */
static void
on_get_nccl(redisAsyncContext *ac, void *rp, void *priv)
{
	redisReply *reply = rp;

	(void)ac;
	if (reply != NULL && reply->type == REDIS_REPLY_STRING && X.nccl != NULL)
		X.nccl->joined(priv, reply->str, reply->len);
}

void
ac_xredis_nccl_fetch_id(void)
{
	char id[KEY_MAX];

	if (!X.up)
		return;
	keyname(id, sizeof(id), "nccl:0:id", NULL, 0);
	redisAsyncCommand(X.cmd, on_get_nccl, (void *)"id", "GET %s", id);
}

static void
fetch_off(void)
{
	char off[KEY_MAX];

	if (!X.up)
		return;
	keyname(off, sizeof(off), "nccl:0:off", NULL, 0);
	redisAsyncCommand(X.cmd, on_get_nccl, (void *)"off", "GET %s", off);
}

void
ac_xredis_quiet(int on)
{
	X.quiet = on;
}

void
ac_xredis_nccl_off(const char *why)
{
	char off[KEY_MAX], ttl[24];
	const char *keys[1] = { off }, *args[2];

	snprintf(X.off_pending, sizeof(X.off_pending), "%s", why);
	X.join_pending = 0;
	if (!X.up)
		return;
	X.off_pending[0] = '\0';
	keyname(off, sizeof(off), "nccl:0:off", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = why;
	args[1] = ttl;
	eval(on_ignore, NULL, off_lua, 1, keys, 2, args, NULL);
}

int
ac_xredis_start(struct ac_job *j, const struct ac_rdv_url *u, char *err,
    size_t errlen)
{
	const char *ttl = getenv("ACCELCTL_REDIS_TTL");

	memset(&X, 0, sizeof(X));
	X.job = j;
	X.url = *u;
	X.ttl = ttl != NULL && atol(ttl) > 0 ? atol(ttl) : 86400;
	X.nodes = calloc((size_t)j->nnodes, sizeof(*X.nodes));
	snprintf(X.prefix, sizeof(X.prefix), "accelctl:{%s}:", j->id);
	(void)err;
	(void)errlen;
	j->x = &xops;
	connect_both();
	return 0;
}

int
ac_xredis_fds(struct pollfd *pfd)
{
	int n = 0;
	redisAsyncContext *ctx[2] = { X.cmd, X.blk };

	for (int i = 0; i < 2; i++) {
		if (ctx[i] == NULL || ctx[i]->c.fd < 0)
			continue;
		pfd[n].fd = ctx[i]->c.fd;
		pfd[n].events = (short)((X.want[i][0] ? POLLIN : 0) |
		    (X.want[i][1] ? POLLOUT : 0));
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

void
ac_xredis_events(const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n; i++) {
		/* Look the context up again: a callback may have dropped it. */
		redisAsyncContext *ac = X.cmd != NULL && X.cmd->c.fd == pfd[i].fd ?
		    X.cmd : X.blk != NULL && X.blk->c.fd == pfd[i].fd ? X.blk : NULL;

		if (ac == NULL)
			continue;
		if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
			redisAsyncHandleRead(ac);
		ac = X.cmd != NULL && X.cmd->c.fd == pfd[i].fd ? X.cmd :
		    X.blk != NULL && X.blk->c.fd == pfd[i].fd ? X.blk : NULL;
		if (ac != NULL && (pfd[i].revents & POLLOUT))
			redisAsyncHandleWrite(ac);
	}
}

long
ac_xredis_timer(long now)
{
	if (X.job == NULL || X.fatal)
		return -1;
	if (X.cmd == NULL || X.blk == NULL) {
		if (now >= X.retry_at) {
			connect_both();
			return 100;
		}
		return X.retry_at - now;
	}
	return -1;
}

const char *
ac_xredis_down(void)
{
	if (X.job == NULL || (X.up && !X.fatal))
		return NULL;
	return X.down[0] ? X.down : X.url.where;
}

int
ac_xredis_fatal(void)
{
	return X.fatal;
}

void
ac_xredis_stop(void)
{
	X.stopping = 1;
	if (X.cmd != NULL)
		redisAsyncFree(X.cmd);
	if (X.blk != NULL)
		redisAsyncFree(X.blk);
	X.cmd = X.blk = NULL;
	for (long n = 0; X.nodes != NULL && n < X.job->nnodes; n++)
		free(X.nodes[n]);
	free(X.nodes);
	X.nodes = NULL;
}
