/* xredis.c: the Redis transport: collective scripts, inboxes and the run identity over rconn.c.
 *
 * Only node helpers talk to Redis (rconn.c holds the connections). Per
 * barrier generation each node sends one EVAL (a Lua script: record this
 * node's outcome, and when it is the last node, compute the result and push it
 * into every node's inbox) and pops one inbox entry: a constant number of
 * commands per node, whatever the ranks.
 *
 * Keys: accelctl:{JOB}:rRUN:KIND:KEY:GEN. The {JOB} hash tag puts a job's
 * keys in one slot, so the scripts are valid on Redis Cluster. RUN is the run
 * this node's helper registered in (the register script below): a second run
 * under the same job id gets a new number, so it never meets the first run's
 * state. Every key has a TTL, refreshed while anything waits, and the
 * generation in every key name means none is ever reused. An arrival is a
 * hash field per node (HSET), so a repeated one cannot count twice. After any
 * reconnect (Redis restarted empty, FLUSHALL, a failover, a new helper) the
 * helper registers again and posts what it knows: its arrivals in flight, the
 * results it has seen last, and an abort; nothing passes early, because a
 * result is only written when every node's arrival is in the set.
 */
#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "coll.h"
#include "duration.h"
#include "kind.h"
#include "num.h"
#include "rconn.h"
#include "xredis.h"

/* Results up to this size travel inside the inbox entry; larger ones are fetched. */
#define INLINE_MAX 4096
#define KEY_MAX 1024

static struct {
	struct ac_job	*job;
	struct ac_runid	*runid;
	long		 ttl;		/* s */
	long		 refresh_ms, next_refresh;
	char		 base[AC_KEY_MAX + 32];		/* accelctl:{JOB}: */
	char		 prefix[AC_KEY_MAX + 64];	/* accelctl:{JOB}:rRUN: */
	int		 registered;	/* on this connection */
	int		 pending;	/* registering: no reply yet */
	long		 retry_reg;	/* ms: ask again (node 0 has not opened the run) */
	long		 reg_delay;	/* ms, doubling: nodes start together, mostly */
	long		 fresh_run;	/* a run we joined fresh (not opened), or 0 */
	int		 progressed;	/* a cross-node collective completed in our run */
	int		 run_wait;	/* told to wait for node 0's run */
	long		 next_names;	/* ms: look again for unnamed missing nodes */
	long		 names_delay;	/* ms, doubling: a node may never come */
	char		**nodes;	/* [nnodes] "host: ranks ..." from Redis */
	int		 quiet;		/* streamed collectives go elsewhere (NCCL) */
	void		(*joined)(const char *, const char *, size_t);
	int		 join_pending;
	char		 join_id[2 * 128 + 1];	/* hex; node 0's only */
	char		 off_pending[256];
} X;

/*
 * Lua: register this node's helper in a run of the job (DESIGN-NOTES "Run
 * identity"). KEYS: the run counter. ARGV: the job's key prefix, node, nonce
 * (of this helper's lineage), the run it knows (0: a fresh helper), ttl,
 * nnodes.
 *
 * A helper that knows its run stays in it (Redis may have lost the counter:
 * it is raised again); {0, run} when its node's place there was taken by
 * another lineage. A fresh node 0 opens the next run, and tells the nodes of
 * the run before it that it is closed ('C' in their inboxes): {1, run}. A
 * fresh other node joins the newest run when its place there is free: {3,
 * run}; when it is taken, that run is an earlier one and node 0 has not opened
 * this launch's yet: {2, run}, ask again.
 */
static const char register_lua[] =
"local ttl = tonumber(ARGV[5])\n"
"local known = tonumber(ARGV[4])\n"
"local cur = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
"local run, joined = known, 1\n"
"if known > 0 then\n"
"  if cur < known then redis.call('SET', KEYS[1], known) end\n"
"elseif ARGV[2] == '0' then\n"
"  run = redis.call('INCR', KEYS[1])\n"
"  if cur > 0 then for i = 0, tonumber(ARGV[6]) - 1 do\n"
"    local inbox = ARGV[1] .. 'r' .. cur .. ':inbox:' .. i\n"
"    redis.call('RPUSH', inbox, 'C') redis.call('EXPIRE', inbox, ttl) end end\n"
"else\n"
"  if cur == 0 or redis.call('HEXISTS', ARGV[1] .. 'r' .. cur .. ':members',\n"
"      ARGV[2]) == 1 then return {2, cur} end\n"
"  run, joined = cur, 3\n"
"end\n"
"redis.call('EXPIRE', KEYS[1], ttl)\n"
"local members = ARGV[1] .. 'r' .. run .. ':members'\n"
"local m = redis.call('HGET', members, ARGV[2])\n"
"if m and m ~= ARGV[3] then return {0, run} end\n"
"redis.call('HSET', members, ARGV[2], ARGV[3])\n"
"redis.call('EXPIRE', members, ttl)\n"
"return {joined, run}\n";

/* Lua: record this node's arrival (a hash field per node: arriving twice
 * cannot count twice); if it is the last, write the result and tell every
 * node. KEYS: arrivals, done, the run's members, inbox 0..n-1. ARGV: node,
 * "rank:status ..." of this node's failures, ttl, nnodes, "KEY GEN". Returns
 * {1, result}, {0, nodes arrived}, or {2} when the run's registration is
 * gone (FLUSHALL, a failover to an empty replica): every node must post
 * again. Every call refreshes the TTL: a node that waits for days keeps its
 * arrival. */
static const char arrive_lua[] =
"local ttl = tonumber(ARGV[3])\n"
"if redis.call('EXISTS', KEYS[3]) == 0 then return {2} end\n"
"local done = redis.call('GET', KEYS[2])\n"
"if done then redis.call('EXPIRE', KEYS[2], ttl) return {1, done} end\n"
"redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
"redis.call('EXPIRE', KEYS[1], ttl)\n"
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
"for i = 4, #KEYS do redis.call('RPUSH', KEYS[i], ARGV[5] .. '\\n' .. done)\n"
"  redis.call('EXPIRE', KEYS[i], ttl) end\n"
"return {1, done}\n";

/* Lua: a result op's outcome, if written. KEYS: done, the run's members.
 * Returns {1, value}, {0} (not yet: the inbox will say), or {2} (the run's
 * registration is gone: every node must post again). */
static const char want_lua[] =
"if redis.call('EXISTS', KEYS[2]) == 0 then return {2} end\n"
"local v = redis.call('GET', KEYS[1])\n"
"if v then return {1, v} end\n"
"return {0}\n";

/* Lua: Redis lost the run's state: every node registers and posts again
 * ('S' in every inbox). KEYS: inbox 0..n-1. ARGV: ttl. */
static const char resync_lua[] =
"for i = 1, #KEYS do redis.call('RPUSH', KEYS[i], 'S')\n"
"  redis.call('EXPIRE', KEYS[i], tonumber(ARGV[1])) end\n"
"return 1\n";

/* Lua: write a result (or an abort) and tell every node. KEYS: the result
 * key, inbox 0..n-1. ARGV: value, ttl, inbox entry. */
static const char publish_lua[] =
"local ttl = tonumber(ARGV[2])\n"
"redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)\n"
"for i = 2, #KEYS do redis.call('RPUSH', KEYS[i], ARGV[3])\n"
"  redis.call('EXPIRE', KEYS[i], ttl) end\n"
"return 1\n";

/* Lua: this node joins the run's NCCL communicator (epoch 0). KEYS:
 * id, joined, off, inbox 0..n-1. ARGV: node, the id in hex (node 0's only,
 * else empty), ttl. A node that joined before (its helper was restarted)
 * cannot rejoin a communicator the others hold: it turns NCCL off for the
 * run. Returns {'id', hex}, {'wait', ''} (an 'I' entry in the inbox comes
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

/* Lua: NCCL is off for the rest of the run; tell every node. KEYS: off,
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
static void fetch_nodes(void);
static void x_hello(struct ac_job *j);
static const char *x_node(long node);
static void fetch_nccl(const char *what);
static void x_off(const char *why);
static void r_join(const char *idhex,
    void (*joined)(const char *, const char *, size_t));
static void on_get_abort(redisReply *reply, void *priv);
static void session(void);

/* Registered in the run on the present connections: keys can be named. */
static int
ready(void)
{
	return X.registered && ac_rconn_up();
}

static void
keyname(char *buf, size_t len, const char *kind, const char *key, int64_t gen)
{
	if (key == NULL)
		snprintf(buf, len, "%s%s", X.prefix, kind);
	else
		snprintf(buf, len, "%s%s:%s:%" PRId64, X.prefix, kind, key, gen);
}

static void
inbox_of(char *buf, size_t len, long node)
{
	char kind[32];

	snprintf(kind, sizeof(kind), "inbox:%ld", node);
	keyname(buf, len, kind, NULL, 0);
}

/*
 * The value of a result as Redis keeps it: "R status\nfailed\n" and the
 * payload, or "L" when the source died. Into coll.c as a struct.
 */
static void
deliver(const char *key, int64_t gen, const char *v, size_t len)
{
	struct ac_result r = { 0 };
	const char *nl1, *nl2;
	char failed[512];

	X.progressed = 1;
	if (len == 1 && v[0] == 'L') {
		r.lost = 1;
		ac_job_remote_done(X.job, key, gen, &r);
		return;
	}
	if (len < 2 || v[0] != 'R' || (nl1 = memchr(v, '\n', len)) == NULL ||
	    (nl2 = memchr(nl1 + 1, '\n', len - (size_t)(nl1 + 1 - v))) == NULL)
		return;
	r.status = strtoll(v + 2, NULL, 10);
	snprintf(failed, sizeof(failed), "%.*s", (int)(nl2 - nl1 - 1), nl1 + 1);
	r.failed = failed;
	r.payload = (const uint8_t *)nl2 + 1;
	r.paylen = len - (size_t)(nl2 + 1 - v);
	ac_job_remote_done(X.job, key, gen, &r);
}

/* EVAL SCRIPT with KEYS (KEYS0, then every node's inbox when INBOXES) and ARGV. */
static void
eval(ac_rconn_cb *cb, void *priv, const char *script, int nkeys0,
    const char **keys0, int inboxes, int nargs, const char **args,
    const size_t *arglen)
{
	long nn = inboxes ? X.job->nnodes : 0;
	int argc = 3 + nkeys0 + (int)nn + nargs, i = 0;
	const char **argv = calloc((size_t)argc, sizeof(*argv));
	size_t *len = calloc((size_t)argc, sizeof(*len));
	char (*inbox)[KEY_MAX] = nn > 0 ? calloc((size_t)nn, KEY_MAX) : NULL;
	char nk[16];

	if (argv == NULL || len == NULL || (nn > 0 && inbox == NULL)) {
		if (cb != NULL)
			cb(NULL, priv);
		goto out;
	}
	snprintf(nk, sizeof(nk), "%d", nkeys0 + (int)nn);
	argv[i++] = "EVAL";
	argv[i++] = script;
	argv[i++] = nk;
	for (int k = 0; k < nkeys0; k++)
		argv[i++] = keys0[k];
	for (long n = 0; n < nn; n++) {
		inbox_of(inbox[n], KEY_MAX, n);
		argv[i++] = inbox[n];
	}
	for (int a = 0; a < nargs; a++) {
		if (arglen != NULL && arglen[a] != (size_t)-1)
			len[i] = arglen[a];
		else
			len[i] = strlen(args[a]);
		argv[i++] = args[a];
	}
	for (int k = 0; k < 3 + nkeys0 + (int)nn; k++)
		len[k] = strlen(argv[k]);
	if (ac_rconn_cmd(cb, priv, argc, argv, len) == -1 && cb != NULL)
		cb(NULL, priv);
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
on_ignore(redisReply *reply, void *priv)
{
	(void)reply;
	free(priv);
}

/* Which nodes are missing, for timeouts and status. */
static void
note_missing(struct ac_coll *c, const redisReply *v)
{
	size_t n = 0;

	c->xmissing[0] = '\0';
	for (long node = 0; node < X.job->nnodes; node++) {
		int seen = 0;

		for (size_t k = 0; k < v->elements; k++)
			if (v->element[k]->type == REDIS_REPLY_STRING &&
			    atol(v->element[k]->str) == node)
				seen = 1;
		if (seen || n >= sizeof(c->xmissing) - 24)
			continue;
		n += (size_t)snprintf(c->xmissing + n, sizeof(c->xmissing) - n,
		    "%s%ld", n ? ", " : "", node);
	}
}

/*
 * Redis answers but has lost this run's state while we were connected
 * (FLUSHALL, a failover to a replica that had not got it): register and post
 * again, and tell every node to do the same; nothing passes early, because
 * a result is only written when every node's arrival is in again.
 */
static void
lost_state(void)
{
	char ttl[24];
	const char *args[1] = { ttl };

	if (!ready())
		return;
	ac_helper_log("rendezvous %s: Redis lost run %ld of job %s; posting "
	    "everything again", ac_rconn_where(), X.runid->run, X.job->id);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	X.registered = 0;
	session();
	eval(on_ignore, NULL, resync_lua, 0, NULL, 1, 1, args, NULL);
}

/* A reply of {2}: the run's registration is gone. */
static int
is_lost(const redisReply *reply)
{
	return reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    reply->elements == 1 && reply->element[0]->type == REDIS_REPLY_INTEGER &&
	    reply->element[0]->integer == 2;
}

static void
on_arrive(redisReply *reply, void *priv)
{
	struct req *r = priv;
	struct ac_coll *c;

	if (is_lost(reply))
		lost_state();
	else if (reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    reply->elements == 2 && reply->element[0]->type == REDIS_REPLY_INTEGER) {
		redisReply *v = reply->element[1];

		if (reply->element[0]->integer == 1 && v->type == REDIS_REPLY_STRING)
			deliver(r->key, r->gen, v->str, v->len);
		else if (v->type == REDIS_REPLY_ARRAY &&
		    (c = ac_job_find(X.job, r->key, r->gen)) != NULL)
			note_missing(c, v);
	}
	free(r);
}

/* This node's ranks all arrived at barrier C: post this node's outcome. */
static void
x_arrive(struct ac_job *j, struct ac_coll *c)
{
	char arr[KEY_MAX], done[KEY_MAX], members[KEY_MAX], node[24], ttl[24];
	char nn[24], note[AC_KEY_MAX + 32], fails[4096];
	const char *keys[3] = { arr, done, members }, *args[5];
	size_t n = 0;
	struct req *r;

	if (!ready() || (r = new_req(c)) == NULL)
		return;	/* sweep() posts it once connected */
	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	keyname(done, sizeof(done), "done", c->key, c->gen);
	keyname(members, sizeof(members), "members", NULL, 0);
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
	eval(on_arrive, r, arrive_lua, 3, keys, 1, 5, args, NULL);
}

/*
 * The results of result ops (broadcast, --wait, main-first) this helper
 * published, kept to publish again after Redis lost them: a source never
 * waits for its receivers, so a node may still wait for a generation its
 * source's node has long passed (Redis restarted empty, FLUSHALL). Kept while
 * younger than the TTL (Redis would have dropped them by then), at most
 * PUB_MAX bytes, the oldest dropped first.
 */
#define PUB_MAX (16u << 20)

struct pub {
	struct pub	*next;
	char		 key[AC_KEY_MAX];
	int64_t		 gen;
	long		 at;		/* ms */
	char		*value, *entry;
	size_t		 vlen, elen;
};

static struct pub *pubs;
static size_t pub_bytes;

static void
pub_free(struct pub *p)
{
	pub_bytes -= p->vlen + p->elen;
	free(p->value);
	free(p->entry);
	free(p);
}

/* Drop what the TTL ended, then the oldest beyond PUB_MAX. */
static void
pub_trim(long now)
{
	struct pub **pp = &pubs, *p;
	size_t kept = 0;

	while ((p = *pp) != NULL) {
		if (now - p->at > X.ttl * 1000 || kept + p->vlen + p->elen > PUB_MAX) {
			*pp = p->next;
			pub_free(p);
			continue;
		}
		kept += p->vlen + p->elen;
		pp = &p->next;
	}
}

static void
pub_keep(const char *key, int64_t gen, const char *value, size_t vlen,
    const char *entry, size_t elen)
{
	struct pub *p;

	for (p = pubs; p != NULL; p = p->next)
		if (p->gen == gen && strcmp(p->key, key) == 0)
			return;
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->value = malloc(vlen + 1)) == NULL ||
	    (p->entry = malloc(elen + 1)) == NULL) {
		if (p != NULL)
			free(p->value);
		free(p);
		return;
	}
	snprintf(p->key, sizeof(p->key), "%s", key);
	p->gen = gen;
	p->at = ac_now_ms();
	memcpy(p->value, value, vlen);
	memcpy(p->entry, entry, elen);
	p->vlen = vlen;
	p->elen = elen;
	pub_bytes += vlen + elen;
	p->next = pubs;		/* newest first: pub_trim keeps the newest */
	pubs = p;
	pub_trim(p->at);
}

static void
send_publish(const char *key, int64_t gen, const char *value, size_t vlen,
    const char *entry, size_t elen)
{
	char done[KEY_MAX], ttl[24];
	const char *keys[1] = { done }, *args[3] = { value, ttl, entry };
	size_t lens[3] = { vlen, (size_t)-1, elen };

	keyname(done, sizeof(done), "done", key, gen);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	eval(on_ignore, NULL, publish_lua, 1, keys, 1, 3, args, lens);
}

/* A local source's result (or death): write it and tell every node. */
static void
x_publish(struct ac_job *j, struct ac_coll *c)
{
	char head[600], *value, *entry;
	size_t hlen, vlen, elen;

	(void)j;
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
	if (c->op == AC_OP_RESULT)
		pub_keep(c->key, c->gen, value, vlen, entry, elen);
	if (ready())
		send_publish(c->key, c->gen, value, vlen, entry, elen);
	free(value);
	free(entry);
}

static void
on_want(redisReply *reply, void *priv)
{
	struct req *r = priv;

	if (is_lost(reply))
		lost_state();
	else if (reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    reply->elements == 2 && reply->element[1]->type == REDIS_REPLY_STRING)
		deliver(r->key, r->gen, reply->element[1]->str,
		    reply->element[1]->len);
	free(r);
}

static void
get(ac_rconn_cb *cb, void *priv, const char *key)
{
	const char *argv[2] = { "GET", key };

	if (ac_rconn_cmd(cb, priv, 2, argv, NULL) == -1)
		cb(NULL, priv);
}

/* A result op whose source may be on another node: has it finished? */
static void
x_want(struct ac_job *j, struct ac_coll *c)
{
	char done[KEY_MAX], members[KEY_MAX];
	const char *keys[2] = { done, members };
	struct req *r;

	(void)j;
	if (!ready() || (r = new_req(c)) == NULL)
		return;
	keyname(done, sizeof(done), "done", c->key, c->gen);
	keyname(members, sizeof(members), "members", NULL, 0);
	eval(on_want, r, want_lua, 2, keys, 0, 0, NULL, NULL);
}

static void
x_abort(struct ac_job *j)
{
	char key[KEY_MAX], ttl[24];
	const char *keys[1] = { key }, *args[3];

	if (!ready())
		return;
	keyname(key, sizeof(key), "abort", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = j->aborted;
	args[1] = ttl;
	args[2] = "!";
	eval(on_ignore, NULL, publish_lua, 1, keys, 1, 3, args, NULL);
}

static void
on_get_abort(redisReply *reply, void *priv)
{
	(void)priv;
	if (reply != NULL && reply->type == REDIS_REPLY_STRING)
		ac_job_abort_remote(X.job, reply->str);
}

/*
 * Node 0 opened a newer run: the run we are in is closed. A helper that
 * joined it fresh, before node 0 of its own launch opened that one, and saw
 * nothing complete there, was in an earlier launch's run by mistake: it
 * registers again, fresh, and posts its arrivals in the new run.
 */
static void
closed(void)
{
	int waiting = 0;

	/* A helper whose ranks all left has nothing to carry over: it stays. */
	for (struct ac_coll *c = X.job->colls; c != NULL; c = c->next)
		if (ac_coll_cross(X.job, c) && !c->done && c->waiters > 0)
			waiting = 1;
	if (X.fresh_run == 0 || X.fresh_run != X.runid->run || X.progressed ||
	    !waiting)
		return;
	ac_helper_log("rendezvous: run %ld of job %s was an earlier launch's; "
	    "joining node 0's", X.runid->run, X.job->id);
	X.fresh_run = 0;
	X.runid->run = 0;
	X.registered = 0;
	session();
}

/* One entry of our inbox: "!" (abort), "I"/"N" (NCCL's id posted, NCCL
 * off), or "KEY GEN" with maybe the value. */
static void
on_entry(const char *v, size_t len)
{
	char key[AC_KEY_MAX], abort_key[KEY_MAX], line[AC_KEY_MAX + 32];
	long long gen;
	const char *nl;

	/* Entries may come before this connection's registration is
	 * answered: the run, and so the keys, are those we knew. */
	if (X.runid->run == 0)
		return;
	if (len == 1 && v[0] == 'I')
		return fetch_nccl("id");
	if (len == 1 && v[0] == 'N')
		return fetch_nccl("off");
	if (len == 1 && v[0] == 'C')
		return closed();
	if (len == 1 && v[0] == 'S') {
		/* Another node found Redis had lost the run's state. */
		if (ready()) {
			X.registered = 0;
			session();
		}
		return;
	}
	if (len == 1 && v[0] == '!') {
		keyname(abort_key, sizeof(abort_key), "abort", NULL, 0);
		return get(on_get_abort, NULL, abort_key);
	}
	nl = memchr(v, '\n', len);
	snprintf(line, sizeof(line), "%.*s", (int)((nl != NULL ? (size_t)(nl - v) :
	    len) < sizeof(line) - 1 ? (nl != NULL ? (size_t)(nl - v) : len) :
	    sizeof(line) - 1), v);
	if (sscanf(line, "%255s %lld", key, &gen) != 2)
		return;
	if (nl != NULL)
		deliver(key, gen, nl + 1, len - (size_t)(nl + 1 - v));
	else {
		struct ac_coll *c = ac_job_find(X.job, key, gen);

		if (c != NULL && !c->done)
			x_want(X.job, c);
	}
}

/* Does another transport carry C (NCCL, while it is up)? */
static int
elsewhere(const struct ac_coll *c)
{
	const struct ac_kind *k = ac_kind_of(c->key);

	return X.quiet && k != NULL && k->streamed;
}

/* After a (re)connect: post again everything Redis may have lost. */
static void
sweep(void)
{
	struct ac_job *j = X.job;

	for (struct ac_coll *c = j->colls; c != NULL; c = c->next) {
		if (!ac_coll_cross(j, c) || c->done || elsewhere(c))
			continue;
		if (c->op == AC_OP_BARRIER && c->narrived == j->lsize)
			x_arrive(j, c);
		else if (c->op == AC_OP_RESULT && (c->src == AC_SRC_DONE ||
		    c->src == AC_SRC_LOST))
			x_publish(j, c);
		else if (c->op == AC_OP_RESULT)
			x_want(j, c);
	}
	/* The results of result ops we published: a node may still wait for
	 * a generation its source's node has long passed. */
	pub_trim(ac_now_ms());
	for (struct pub *p = pubs; p != NULL; p = p->next)
		if (!X.quiet || ac_kind_of(p->key) == NULL ||
		    !ac_kind_of(p->key)->streamed)
			send_publish(p->key, p->gen, p->value, p->vlen, p->entry,
			    p->elen);
	/* Results seen last: nodes still waiting for them must find them. */
	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next)
		if (k->last_done != NULL && ac_coll_cross(j, k->last_done) &&
		    k->last_done->done && !elsewhere(k->last_done))
			x_publish(j, k->last_done);
	for (struct ac_coll *c = j->colls; c != NULL; c = c->next)
		if (ac_coll_cross(j, c) && c->done && c->op == AC_OP_BARRIER &&
		    !elsewhere(c))
			x_publish(j, c);
	if (j->aborted != NULL)
		x_abort(j);
	else {
		/* An abort whose inbox entry we lost while disconnected. */
		char key[KEY_MAX];

		keyname(key, sizeof(key), "abort", NULL, 0);
		get(on_get_abort, NULL, key);
	}
	x_hello(j);
	fetch_nodes();
}

/* Is anything of this node waiting across nodes (keys to keep alive)? */
static int
in_flight(void)
{
	for (struct ac_coll *c = X.job->colls; c != NULL; c = c->next)
		if (ac_coll_cross(X.job, c) && !c->done && c->src != AC_SRC_LOST)
			return 1;
	return 0;
}

static void session(void);

/* Is a node missing at a wait of ours that messages cannot name yet? */
static int
unnamed(void)
{
	for (struct ac_coll *c = X.job->colls; c != NULL; c = c->next) {
		if (!ac_coll_cross(X.job, c) || c->done || c->xmissing[0] == '\0')
			continue;
		for (const char *p = c->xmissing; *p != '\0';) {
			char *end;
			long node = strtol(p, &end, 10);

			if (end == p)
				break;
			if (x_node(node) == NULL)
				return 1;
			for (p = end; *p == ',' || *p == ' '; p++)
				;
		}
	}
	return 0;
}

static void
on_register(redisReply *reply, void *priv)
{
	char inbox[KEY_MAX], why[600];
	long run;

	(void)priv;
	X.pending = 0;
	if (reply == NULL)
		return;		/* down again: registered at the next connect */
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER ||
	    reply->element[1]->type != REDIS_REPLY_INTEGER) {
		ac_rconn_fail("unexpected reply to the run's registration");
		return;
	}
	run = (long)reply->element[1]->integer;
	if (reply->element[0]->integer == 0) {
		snprintf(why, sizeof(why), "node %ld's place in run %ld of job %s "
		    "was taken by another helper (a second run under the same "
		    "ACCELCTL_JOB_ID?)", X.job->node, run, X.job->id);
		ac_rconn_fail(why);
		return;
	}
	if (reply->element[0]->integer == 2) {
		/* Redis is fine; node 0 has not opened this launch's run yet. */
		ac_rconn_healthy();
		if (!X.run_wait)
			ac_helper_log("rendezvous: waiting for node 0 to open this "
			    "launch's run of job %s (the newest, %ld, is not ours)",
			    X.job->id, run);
		X.run_wait = 1;
		X.reg_delay = X.reg_delay == 0 ? 10 : X.reg_delay < 500 ?
		    2 * X.reg_delay : 1000;
		X.retry_reg = ac_now_ms() + X.reg_delay;
		return;
	}
	X.run_wait = 0;
	X.reg_delay = 0;
	if (run != X.runid->run) {
		if (X.runid->run != 0)
			ac_helper_log("rendezvous: run %ld of job %s", run, X.job->id);
		X.runid->run = run;
		if (X.runid->save != NULL)
			X.runid->save(X.runid);
	}
	snprintf(X.prefix, sizeof(X.prefix), "%sr%ld:", X.base, run);
	X.registered = 1;
	X.names_delay = 100;
	if (reply->element[0]->integer == 3)
		X.fresh_run = run;
	ac_rconn_healthy();
	inbox_of(inbox, sizeof(inbox), X.job->node);
	ac_rconn_block(inbox);
	X.next_refresh = ac_now_ms() + X.refresh_ms;
	sweep();
	if (X.off_pending[0]) {
		char off[sizeof(X.off_pending)];

		memcpy(off, X.off_pending, sizeof(off));
		x_off(off);
	}
	if (X.join_pending && X.joined != NULL) {
		char id[sizeof(X.join_id)];

		memcpy(id, X.join_id, sizeof(id));
		r_join(id[0] ? id : NULL, X.joined);
	}
}

/* Register this helper in its run: at every connect, and to keep the keys
 * of a long wait alive. The reply posts everything again. */
static void
session(void)
{
	char counter[KEY_MAX], node[24], nonce[24], known[24], ttl[24], nn[24];
	const char *argv[10];

	snprintf(counter, sizeof(counter), "%srun", X.base);
	snprintf(node, sizeof(node), "%ld", X.job->node);
	snprintf(nonce, sizeof(nonce), "%016" PRIx64, X.runid->nonce);
	snprintf(known, sizeof(known), "%ld", X.runid->run);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	snprintf(nn, sizeof(nn), "%ld", X.job->nnodes);
	argv[0] = "EVAL";
	argv[1] = register_lua;
	argv[2] = "1";
	argv[3] = counter;
	argv[4] = X.base;
	argv[5] = node;
	argv[6] = nonce;
	argv[7] = known;
	argv[8] = ttl;
	argv[9] = nn;
	if (ac_rconn_cmd(on_register, NULL, 10, argv, NULL) == 0)
		X.pending = 1;
}

/* rconn.c: both connections are up (again). */
static void
on_ready(void)
{
	X.registered = 0;
	X.pending = 0;
	session();
}

/* This node's host and ranks, for the other nodes' messages and status. */
static void
x_hello(struct ac_job *j)
{
	char key[KEY_MAX], host[128], info[4096], ttl[24], node[24];
	const char *hset[4] = { "HSET", key, node, info };
	const char *expire[3] = { "EXPIRE", key, ttl };
	size_t n;

	/* Only a whole node: other nodes cache what they read. */
	for (long l = 0; l < j->lsize; l++)
		if (j->rank_of[l] < 0)
			return;
	if (!ready())
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
	snprintf(node, sizeof(node), "%ld", j->node);
	ac_rconn_cmd(on_ignore, NULL, 4, hset, NULL);
	ac_rconn_cmd(on_ignore, NULL, 3, expire, NULL);
}

static void
on_nodes(redisReply *reply, void *priv)
{
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
	const char *argv[2] = { "HGETALL", key };

	if (!ready())
		return;
	keyname(key, sizeof(key), "nodes", NULL, 0);
	ac_rconn_cmd(on_nodes, NULL, 2, argv, NULL);
}

static const char *
x_node(long node)
{
	return X.nodes != NULL && node >= 0 && node < X.job->nnodes ?
	    X.nodes[node] : NULL;
}

/* --- what a transport riding on this rendezvous (NCCL) asks of it --- */

static void
on_join(redisReply *reply, void *priv)
{
	(void)priv;
	if (reply == NULL)
		return;		/* down: joined again once registered */
	X.join_pending = 0;
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
	    reply->element[0]->type == REDIS_REPLY_STRING &&
	    reply->element[1]->type == REDIS_REPLY_STRING && X.joined != NULL)
		X.joined(reply->element[0]->str, reply->element[1]->str,
		    reply->element[1]->len);
}

static void
r_join(const char *idhex, void (*joined)(const char *, const char *, size_t))
{
	char id[KEY_MAX], jn[KEY_MAX], off[KEY_MAX], node[24], ttl[24];
	const char *keys[3] = { id, jn, off }, *args[3];

	X.joined = joined;
	X.join_pending = 1;
	snprintf(X.join_id, sizeof(X.join_id), "%s", idhex != NULL ? idhex : "");
	if (!ready())
		return;
	keyname(id, sizeof(id), "nccl:0:id", NULL, 0);
	keyname(jn, sizeof(jn), "nccl:0:joined", NULL, 0);
	keyname(off, sizeof(off), "nccl:0:off", NULL, 0);
	snprintf(node, sizeof(node), "%ld", X.job->node);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = node;
	args[1] = X.join_id;
	args[2] = ttl;
	eval(on_join, NULL, join_lua, 3, keys, 1, 3, args, NULL);
}

/* The reply to a GET of an NCCL key; PRIV names which one ("id", "off"). */
static void
on_get_nccl(redisReply *reply, void *priv)
{
	if (reply != NULL && reply->type == REDIS_REPLY_STRING && X.joined != NULL)
		X.joined(priv, reply->str, reply->len);
}

static void
fetch_nccl(const char *what)
{
	char key[KEY_MAX], kind[32];

	if (!ready() || X.joined == NULL)
		return;
	snprintf(kind, sizeof(kind), "nccl:0:%s", what);
	keyname(key, sizeof(key), kind, NULL, 0);
	get(on_get_nccl, (void *)what, key);
}

static void
x_off(const char *why)
{
	char off[KEY_MAX], ttl[24];
	const char *keys[1] = { off }, *args[2];

	snprintf(X.off_pending, sizeof(X.off_pending), "%s", why);
	X.join_pending = 0;
	if (!ready())
		return;
	X.off_pending[0] = '\0';
	keyname(off, sizeof(off), "nccl:0:off", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = why;
	args[1] = ttl;
	eval(on_ignore, NULL, off_lua, 1, keys, 1, 2, args, NULL);
}

static void
r_quiet(int on)
{
	X.quiet = on;
}

static void
r_resync(void)
{
	if (ready())
		sweep();
}

/* --- the transport's loop hooks --- */

static long
x_timer(long now)
{
	long next = ac_rconn_timer(now);

	/* A missing node we cannot name yet (its helper may register later):
	 * the table of nodes is read again, less often each time. */
	if (ready() && unnamed()) {
		if (now >= X.next_names) {
			X.next_names = now + X.names_delay;
			X.names_delay = X.names_delay < 2500 ? 2 * X.names_delay : 5000;
			fetch_nodes();
		}
		if (next < 0 || X.next_names - now < next)
			next = X.next_names - now;
	}
	/* Not registered yet: node 0 has not opened this launch's run. */
	if (ac_rconn_up() && !X.registered && !X.pending && X.run_wait) {
		if (now >= X.retry_reg)
			session();
		else if (next < 0 || X.retry_reg - now < next)
			next = X.retry_reg - now;
	}

	/* A long wait keeps its keys alive: register and post again. */
	if (ready() && in_flight()) {
		if (now >= X.next_refresh) {
			X.next_refresh = now + X.refresh_ms;
			session();
		}
		if (next < 0 || X.next_refresh - now < next)
			next = X.next_refresh - now;
	}
	return next;
}

static void
x_describe(char *buf, size_t len)
{
	int final;
	const char *down = ac_rconn_down(&final);

	if (down == NULL && X.run_wait)
		snprintf(buf, len, "redis (%s, waiting for node 0 to open this "
		    "launch's run)", ac_rconn_where());
	else if (down == NULL)
		snprintf(buf, len, "redis (%s, run %ld)", ac_rconn_where(),
		    X.runid->run);
	else
		snprintf(buf, len, "redis (%s: %s)", final ? "failed" : "down",
		    down);
}

/*
 * The helper exits (idle, stopped, signalled): its ranks wait nowhere any
 * more. The arrivals it posted at barriers that did not complete are
 * withdrawn, so that a later launch under the same job id that joins this
 * run by mistake cannot pass on them (DESIGN-NOTES "Run identity"). A helper
 * that replaces this one posts them again from the journal.
 */
static void
withdraw_all(void)
{
	char arr[KEY_MAX], node[24];
	const char *argv[3] = { "HDEL", arr, node };

	if (!X.registered)
		return;
	snprintf(node, sizeof(node), "%ld", X.job->node);
	for (struct ac_coll *c = X.job->colls; c != NULL; c = c->next) {
		if (!ac_coll_cross(X.job, c) || c->done || c->op != AC_OP_BARRIER ||
		    c->narrived < X.job->lsize)
			continue;
		keyname(arr, sizeof(arr), "arr", c->key, c->gen);
		if (ac_rconn_sync(3, argv, NULL, 1000) == -1)
			return;
	}
}

static void
x_stop(void)
{
	withdraw_all();
	ac_rconn_stop();
	while (pubs != NULL) {
		struct pub *p = pubs;

		pubs = p->next;
		pub_free(p);
	}
	for (long n = 0; X.nodes != NULL && n < X.job->nnodes; n++)
		free(X.nodes[n]);
	free(X.nodes);
	X.nodes = NULL;
}

static const struct ac_xport xport = {
	.name = "redis",
	.fds = ac_rconn_fds,
	.events = ac_rconn_events,
	.timer = x_timer,
	.describe = x_describe,
	.down = ac_rconn_down,
	.stop = x_stop,
	.arrive = x_arrive,
	.publish = x_publish,
	.want = x_want,
	.abort = x_abort,
	.hello = x_hello,
	.node = x_node,
	.expired = NULL,
};

static const struct ac_rdv rdv = { &xport, r_join, x_off, r_quiet, r_resync };

static const struct ac_rconn_hooks hooks = { on_ready, on_entry };

/* ACCELCTL_REDIS_TTL: seconds, 1 s to 10 years (unset or empty: a day). */
static int
redis_ttl(long *ttl, const char **why)
{
	const char *s = getenv("ACCELCTL_REDIS_TTL");

	*ttl = 86400;
	if (s == NULL || *s == '\0')
		return 0;
	if (ac_parse_uint(s, 315360000L, ttl, why) == -1)
		return -1;
	if (*ttl == 0) {
		*why = "must be at least 1 (seconds)";
		return -1;
	}
	return 0;
}

int
ac_xredis_check(const char *url, const char *password_file, char *err,
    size_t errlen)
{
	struct ac_rdv_url u;
	const char *why;
	char b[48];
	long ttl;

	if (ac_rdv_parse(url, password_file, &u, err, errlen) == -1)
		return -1;
	if (redis_ttl(&ttl, &why) == -1) {
		snprintf(err, errlen, "invalid ACCELCTL_REDIS_TTL='%s': %s",
		    ac_shorten(getenv("ACCELCTL_REDIS_TTL"), b, sizeof(b)), why);
		return -1;
	}
	return 0;
}

const struct ac_xport *
ac_xredis_open(struct ac_job *j, const struct ac_rdv_url *u,
    struct ac_runid *rid, const struct ac_rdv **rdvp)
{
	const char *why;

	memset(&X, 0, sizeof(X));
	X.job = j;
	X.runid = rid;
	/* Every client checked it (ac_xredis_check); a helper run by hand
	 * with a bad one keeps the default. */
	if (redis_ttl(&X.ttl, &why) == -1)
		X.ttl = 86400;
	/* A third of the TTL: two refreshes may fail before a key expires. */
	X.refresh_ms = X.ttl * 1000 / 3 > 500 ? X.ttl * 1000 / 3 : 500;
	X.nodes = calloc((size_t)j->nnodes, sizeof(*X.nodes));
	snprintf(X.base, sizeof(X.base), "accelctl:{%s}:", j->id);
	snprintf(X.prefix, sizeof(X.prefix), "%sr%ld:", X.base, rid->run);
	ac_rconn_start(u, &hooks);
	*rdvp = &rdv;
	return &xport;
}
