/* xredis.c: the Redis transport: arrivals, scripts, the run's event stream and run identity over rconn.c.
 *
 * Only node helpers talk to Redis (rconn.c holds the connections). Per
 * barrier generation each node sends one command and reads one entry of the
 * run's stream of events (XREAD BLOCK, from its own cursor): a
 * constant number of commands per node, whatever the ranks, and constant work
 * in Redis per node-arrival, whatever the nodes (issue 14). Most arrivals are
 * one BITFIELD, which sets this node's slot in the generation's arrivals and
 * raises their count, and answers both (no script: a Lua call costs several
 * times the work it does); the first arrival adds two plain commands (the
 * run's check, the TTL); the last (the result, told to every node with one
 * entry in the run's stream), a node with failures and a repeated post run a
 * Lua script (EVALSHA) that does the rest.
 *
 * Keys: accelctl:{JOB}:rRUN:KIND:KEY:GEN. The {JOB} hash tag puts a job's
 * keys in one slot, so the scripts are valid on Redis Cluster (and may build
 * the names of the run's keys themselves). RUN is the run this node's
 * helper registered in (the register script below): a second run under the
 * same job id gets a new number, so it never meets the first run's state.
 * Every key has a TTL, refreshed while anything waits, and the generation in
 * every key name means none is ever reused. An arrival is a slot per node, so
 * a repeated one cannot count twice. After any reconnect (Redis restarted
 * empty, FLUSHALL, a failover, a new helper) the helper registers again and
 * posts what it knows: its arrivals in flight, the results it has seen last,
 * and an abort; nothing passes early, because a result is only written when
 * every node's slot is set.
 */
#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "history.h"
#include "duration.h"
#include "fails.h"
#include "kind.h"
#include "log.h"
#include "num.h"
#include "rconn.h"
#include "rdvkeep.h"
#include "rdvproto.h"
#include "ttl.h"
#include "xredis.h"
#include "xvalue.h"

/* Results up to this size travel inside the stream's entry; larger ones are fetched. */
#define INLINE_MAX 4096
#define KEY_MAX 1024
/* A number in a script's text. */
#define STR_(x) #x
#define STR(x) STR_(x)

static struct {
	struct ac_job	*job;
	struct ac_runid	*runid;
	long		 ttl;		/* s */
	long		 refresh_ms, next_refresh;
	char		 base[AC_KEY_MAX + 32];		/* accelctl:{JOB}: */
	char		 prefix[AC_KEY_MAX + 64];	/* accelctl:{JOB}:rRUN: */
	long		 next_keep;	/* ms: the kept results' next refresh */
	long		 cur;		/* the run counter as last seen (s_join) */
	char		 curs[24];	/* ... as Redis wrote it ("" for 0) */
	int		 wake_busy;	/* node 0: a wake's look is out */
} X;

/*
 * Every script is sent as EVALSHA: its 40-byte hash instead of its text. The
 * hashes come from SCRIPT LOAD at the first connect; a server that has lost
 * its script cache (a restart, SCRIPT FLUSH, a failover) answers NOSCRIPT, and
 * that one call is sent again as EVAL, which caches the script again. Not a
 * Redis 7 function: EVALSHA works on every Redis a cluster may run (6.0 in
 * Ubuntu 22.04, managed services), needs no FUNCTION LOAD permission, and is
 * addressed by content, so two accelctl versions sharing one Redis cannot
 * replace each other's library (DESIGN-NOTES "The Redis rendezvous").
 */
struct script {
	const char	*text;
	char		 sha[41];	/* "" until SCRIPT LOAD answered */
};

/*
 * Lua, part of the scripts that tell every node: add entry E to the run's
 * stream of events (key S, declared by every script that calls this: see
 * "Every key declared" below), which every node's helper reads
 * with its own cursor (XREAD BLOCK): one call per result, whatever the nodes,
 * where a list per node took one per node. Capped at about EVENTS_MAX
 * entries: a helper connected reads on at once, and one that was not posts
 * everything again when it reconnects (sweep), which brings back what a
 * trimmed entry said.
 */
#define FANOUT_LUA \
"local function fanout(s, e, ttl)\n" \
"  redis.call('XADD', s, 'MAXLEN', '~', 1000, '*', 'e', e)\n" \
"  redis.call('EXPIRE', s, ttl)\n" \
"end\n"

/*
 * Every key declared. A script names in KEYS every key it touches, and the
 * caller builds those names (keyname(), run_prefix()): Redis Cluster checks
 * only declared keys when a slot is moving, so a script whose keys are all
 * still on the migrating node runs there, one whose keys have all moved is
 * sent on with ASK (and ASKING, rconn.c) to the importing node, and one
 * whose keys are split between the two is refused with TRYAGAIN and sent
 * again: never run where half of its keys are (DESIGN-NOTES "Redis Cluster").
 * The one script whose keys depend on what it reads, the registration, is
 * sent with the counter's value the caller assumed, and refuses ({4, value})
 * when that was wrong.
 */

/*
 * Lua: register this node's helper in a run of the job (DESIGN-NOTES "Run
 * identity"). KEYS: the run counter, the job's wake stream, the members and
 * the stream of events of run CUR (the counter's value the caller assumed),
 * and the members of the run this registration ends in (reg_run()). ARGV:
 * CUR, node, nonce (of this helper's lineage), the run it knows (0: a fresh
 * helper), ttl, nnodes, the time (ms since the epoch).
 *
 * A helper that knows its run stays in it (Redis may have lost the counter:
 * it is raised again); {0, run} when its node's place there was taken by
 * another lineage. A fresh node 0 opens the next run (without a counter,
 * Redis emptied or a new job id, the time in ms: never a number an earlier
 * run of the job id had, whose helpers may still come back and post their
 * results in "their" run), and tells the nodes of
 * the run before it that it is closed ('C' in its stream): {1, run}. A
 * fresh other node joins the newest run when its place there is free, or
 * holds this lineage's own nonce (its probe's registration, whose HDEL a
 * reconnect lost: taken as another's, the node waited for node 0 until its
 * deadline; review of issue 19, as etcd's on_member): {3, run}, and asks
 * node 0 again; when it is taken, or that run has another number of nodes (field "n"
 * of its members: an earlier launch of another size, which may have completed
 * without this node), that run is an earlier one and node 0 has not opened
 * this launch's yet: {2, run}, ask again; where the place is held by another
 * lineage, {5, run, the holder's beat (KEYS[6])}, and the holder is told of
 * the claim ("claim/NODE", ARGV[8] "NONCE PID HOST", or "" for none this
 * time: rdvjoin.c's two helpers for one node). A {2} or {5} also adds an entry to the
 * job's wake stream, which node 0 reads: where Redis lost the run (FLUSHALL,
 * a restart empty) while node 0 waits for nothing, only node 0 can open it
 * again, and nothing else would tell it (on_wake). A fresh helper whose CUR
 * was not the counter's value, as a string, gets {4, value}: the keys it
 * declared were not the ones its registration would touch; it sends again
 * with VALUE, or fails when VALUE is no run number (compared as numbers,
 * "5.5" and 5 would refuse each other for ever: review of issue 20).
 */
static struct script register_lua = { FANOUT_LUA
"local ttl = tonumber(ARGV[5])\n"
"local function wake()\n"
"  redis.call('XADD', KEYS[2], 'MAXLEN', '~', 16, '*', 'w', ARGV[2])\n"
"  redis.call('EXPIRE', KEYS[2], ttl)\n"
"end\n"
"local known = tonumber(ARGV[4])\n"
"local raw = redis.call('GET', KEYS[1]) or '0'\n"
"if known == 0 and raw ~= ARGV[1] then return {4, raw} end\n"
"local cur = tonumber(raw) or 0\n"
"local run, joined = known, 1\n"
"if known > 0 then\n"
"  if cur < known then redis.call('SET', KEYS[1], known) end\n"
"elseif ARGV[2] == '0' then\n"
"  if cur > 0 then\n"
"    run = redis.call('INCR', KEYS[1])\n"
"    fanout(KEYS[4], 'C', ttl)\n"
"  else\n"
"    run = tonumber(ARGV[7])\n"
"    redis.call('SET', KEYS[1], ARGV[7]) end\n"
"else\n"
"  local mine = cur > 0 and redis.call('HGET', KEYS[3], ARGV[2])\n"
"  if cur == 0 then wake() return {2, cur} end\n"
"  if mine and mine ~= ARGV[3] then\n"
"    wake()\n"
"    if ARGV[8] ~= '' then\n"
"      fanout(KEYS[4], '=claim/' .. ARGV[2] .. '\\n' .. ARGV[8], ttl) end\n"
"    return {5, cur, redis.call('GET', KEYS[6]) or ''} end\n"
"  local pn = redis.call('HGET', KEYS[3], 'n')\n"
"  if pn and pn ~= ARGV[6] then wake() return {2, cur} end\n"
"  run, joined = cur, 3\n"
"end\n"
"redis.call('EXPIRE', KEYS[1], ttl)\n"
"local m = redis.call('HGET', KEYS[5], ARGV[2])\n"
"if m and m ~= ARGV[3] then return {0, run} end\n"
"redis.call('HSET', KEYS[5], ARGV[2], ARGV[3], 'n', ARGV[6])\n"
"redis.call('EXPIRE', KEYS[5], ttl)\n"
"return {joined, run}\n", "" };

/*
 * Lua: an arrival's work beyond the common case (see x_arrive): record it when
 * the fast path did not (a node with failures, a repeated post), check the
 * run when it is the first, write the result and tell every node (one entry
 * in the run's stream) when it is the last. KEYS:
 * the arrivals ("arr:KEY:GEN" after the run's key prefix), the result
 * ("done:KEY:GEN"), the failures ("fail:KEY:GEN"), the run's members and its
 * stream of events. ARGV: node,
 * "rank:status ..." of this node's failures, ttl, nnodes, KEY, GEN (for the
 * stream's entry), and the node's last
 * rank to arrive, which the result names with the node when this arrival
 * completes it ("R status node rank": who everyone waited for, history.c;
 * a few bytes per barrier, since the fast path's arrivals send none), or ""
 * when this is not the node's own arrival (arrive_script's FRESH), and the
 * node's slot (below). The script sets the node's slot whether or not the
 * fast path did (see x_arrive; the fast path's first arrival does its checks
 * with plain commands: first_checks()).
 * Returns {1, result}, {0, nodes arrived}, or {2} when the run's
 * registration is gone (FLUSHALL, a failover to an empty replica): every node
 * must post again.
 *
 * The arrivals are one string of u32s: a count, then a slot per node (the
 * BITFIELD offset #(node + 1)): 0 not arrived, 1 arrived, 2 + D arrived D ms
 * after its release of the job's previous cross-node barrier (ac_history_since: the
 * node's own interval, a few bytes more in the fast path than a bit's "1").
 * The last arrival turns the slots into the spread of the posts, the node
 * that posted first and the sum of the nodes' waits ("R status node rank
 * ~spread first sum"), when every node said its D. The slots are the truth;
 * the count only says when to look at them: it is raised with every slot set
 * and lowered only with a slot cleared, so it is never below the slots'
 * number, and the arrival that sets the last slot sees a count of at least
 * nnodes. The result is written only when the slots say every node is in
 * (SET NX: two arrivals that both saw the count may both try). A node's failures, when it has any, are a field of the hash
 * "fail:KEY:GEN", written in the same script that sets its slot; the last
 * arrival reads them (HVALS, once per barrier, only the failed nodes).
 *
 * The script that writes GEN's result says so (a third element, 1), and
 * that arrival's node deletes GEN - 1's keys (on_arrive): every node has
 * arrived at GEN, so every node has passed GEN - 1 and nobody will read them
 * again (DESIGN-NOTES "Retention"). A barrier name then holds three keys in
 * Redis, whatever the barriers made of it, where each generation's stayed for
 * the TTL (a day): 2,000 barriers of one name left 4,015 keys. The deletes
 * are not in the script: a script's declared keys that do not exist make a
 * Cluster slot being migrated answer TRYAGAIN until the move ends, and a
 * single-key command follows ASK.
 */
static struct script arrive_lua = { FANOUT_LUA
"local ttl, nn = tonumber(ARGV[3]), tonumber(ARGV[4])\n"
"local done, fk = KEYS[2], KEYS[3]\n"
/* Set (again) after the fast path too: Redis may have lost the arrivals in
 * between (FLUSHALL), and then this is a first arrival. */
"local old = redis.call('BITFIELD', KEYS[1], 'SET', 'u32',\n"
"    '#' .. (tonumber(ARGV[1]) + 1), ARGV[8])[1]\n"
"if old == 0 then redis.call('BITFIELD', KEYS[1], 'INCRBY', 'u32', 0, 1) end\n"
"if ARGV[2] ~= '' then\n"
"  redis.call('HSET', fk, ARGV[1], ARGV[2]) redis.call('EXPIRE', fk, ttl) end\n"
"redis.call('EXPIRE', KEYS[1], ttl)\n"
"local v = redis.call('GET', done)\n"
"if v then redis.call('EXPIRE', done, ttl) return {1, v} end\n"
/* The slots: how many nodes are in, and from their intervals the spread,
 * the first (the lowest interval) and the sum of the waits. */
"local s = redis.call('GET', KEYS[1]) or ''\n"
"local n, lo, hi, first, sum, all = 0, -1, -1, -1, 0, true\n"
"local ds = {}\n"
"for i = 0, math.min(nn, math.floor(#s / 4) - 1) - 1 do\n"
"  local a, b, c, e = string.byte(s, 5 + 4 * i, 8 + 4 * i)\n"
"  local v = ((a * 256 + b) * 256 + c) * 256 + e\n"
"  if v > 0 then n = n + 1 end\n"
"  if v < 2 then all = false else\n"
"    local d = v - 2 ds[#ds + 1] = d\n"
"    if lo < 0 or d < lo then lo, first = d, i end\n"
"    if d > hi then hi = d end end end\n"
/* The keys of a barrier start with its first arrival: when Redis lost the
 * run, the next arrival anywhere is a first one. */
"if old == 0 and n == 1 and\n"
"    redis.call('EXISTS', KEYS[4]) == 0 then\n"
"  return {2} end\n"
"if n < nn then return {0, n} end\n"
/* Each node's "R:S ... +N": its lowest failing ranks, and N more. */
"local fails, extra = {}, 0\n"
"for _, v in ipairs(redis.call('HVALS', fk)) do\n"
"  for r, s in string.gmatch(v, '(%d+):(%d+)') do\n"
"    fails[#fails + 1] = {tonumber(r), s} end\n"
"  for x in string.gmatch(v, '%+(%d+)') do extra = extra + tonumber(x) end end\n"
"table.sort(fails, function(a, b) return a[1] < b[1] end)\n"
/* The rule of fails.c: at most AC_FAILS_SHOWN, in AC_FAILS_ROOM bytes. */
"local status, text, used, shown = '0', {}, 0, 0\n"
"if #fails > 0 then status = fails[1][2] elseif extra > 0 then status = '1' end\n"
"for i = 1, math.min(#fails, " STR(AC_FAILS_SHOWN) ") do\n"
"  local e = fails[i][1] .. ' (exit ' .. fails[i][2] .. ')'\n"
"  local k = #e + (i > 1 and 2 or 0)\n"
"  if used + k > " STR(AC_FAILS_ROOM) " then break end\n"
"  text[#text + 1] = e used = used + k shown = i end\n"
"if shown < #fails + extra then\n"
"  text[#text + 1] = 'and ' .. (#fails + extra - shown) .. ' more' end\n"
"local who = ''\n"
"if ARGV[7] ~= '' then who = ' ' .. ARGV[1] .. ' ' .. ARGV[7] end\n"
"local wt = ''\n"
"if all and #ds == nn then\n"
"  for _, d in ipairs(ds) do sum = sum + hi - d end\n"
"  wt = ' ~' .. (hi - lo) .. ' ' .. first .. ' ' .. sum end\n"
"local d = 'R ' .. status .. who .. wt .. '\\n' .. table.concat(text, ', ') ..\n"
"    '\\n'\n"
/* Written already (a node withdrew and came back after the last arrival, or
 * two arrivals saw the count). */
"if not redis.call('SET', done, d, 'NX', 'EX', ttl) then\n"
"  return {1, redis.call('GET', done)} end\n"
"fanout(KEYS[5], ARGV[5] .. ' ' .. ARGV[6] .. '\\n' .. d, ttl)\n"
"return {1, d, 1}\n", "" };

/* Lua: a node withdraws its arrival (its helper exits while the barrier
 * waits). KEYS: the arrivals, the failures. ARGV: node. Its slot is cleared
 * and the count lowered with it, never one without the other. */
#define WITHDRAW_LUA \
"if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end\n" \
"if redis.call('EXISTS', KEYS[1]) == 1 and\n" \
"    redis.call('BITFIELD', KEYS[1], 'SET', 'u32',\n" \
"    '#' .. (tonumber(ARGV[1]) + 1), 0)[1] ~= 0 then\n" \
"  redis.call('BITFIELD', KEYS[1], 'INCRBY', 'u32', 0, -1) end\n" \
"redis.call('HDEL', KEYS[2], ARGV[1])\n" \
"return 1\n"

/* Lua: a result op's outcome, if written. KEYS: done, the run's members.
 * Returns {1, value}, {0} (not yet: the stream will say), or {2} (the run's
 * registration is gone: every node must post again). */
static struct script want_lua = {
"if redis.call('EXISTS', KEYS[2]) == 0 then return {2} end\n"
"local v = redis.call('GET', KEYS[1])\n"
"if v then return {1, v} end\n"
"return {0}\n", "" };

/* Lua: Redis lost the run's state: every node registers and posts again
 * ('S' in the run's stream). KEYS: the run's stream. ARGV: ttl. */
static struct script resync_lua = { FANOUT_LUA
"fanout(KEYS[1], 'S', tonumber(ARGV[1]))\n"
"return 1\n", "" };

/* Lua: write a result and tell every node. KEYS: the result key, the run's
 * stream. ARGV: value, ttl, the stream's entry. */
static struct script publish_lua = { FANOUT_LUA
"local ttl = tonumber(ARGV[2])\n"
"redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)\n"
"fanout(KEYS[2], ARGV[3], ttl)\n"
"return 1\n", "" };

/* Lua: store.h's put, with a flag that Lua alone can make atomic. KEYS:
 * the key and, for a told put, the run's stream. ARGV: the value, "1" to put
 * only where absent, the ttl, and the event of a told put ("=KEY\nVALUE", or
 * "" when not told: every node reads it from the run's stream). Returns {1, ''} or, where
 * the key was there, {0, its value}; either way the key lives a TTL from
 * now (an abort posted again by a sweep keeps it, as etcd's lease does). */
static struct script put_lua = { FANOUT_LUA
"local ttl = tonumber(ARGV[3])\n"
"if ARGV[2] == '1' then\n"
"  local old = redis.call('GET', KEYS[1])\n"
"  if old then redis.call('EXPIRE', KEYS[1], ttl) return {0, old} end end\n"
"redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)\n"
"if ARGV[4] ~= '' then fanout(KEYS[2], ARGV[4], ttl) end\n"
"return {1, ''}\n", "" };

/* Lua: has Redis lost this run (node 0, told by a wake)? KEYS: the run's
 * members, the run counter. ARGV: the run. 1 when the members are gone or
 * the counter is below the run. */
static struct script wake_lua = {
"if redis.call('EXISTS', KEYS[1]) == 0 or\n"
"    tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[1]) then\n"
"  return 1 end\n"
"return 0\n", "" };

static struct script *const scripts[] = { &register_lua, &arrive_lua,
    &want_lua, &resync_lua, &publish_lua, &put_lua, &wake_lua };

struct req {
	char	key[AC_KEY_MAX];
	int64_t	gen;
	int	late;		/* a look's: the barrier waited a while */
};

static void sweep(void);
static void s_join(void);
static void store_key(char *buf, size_t len, const char *key);
static void told(const char *v, size_t len);
static void get(ac_rconn_cb *cb, void *priv, const char *key);

/*
 * X.prefix for RUN: accelctl:{JOB}:rTAG:, TAG the run in base 36, because a
 * run opened without a counter is numbered by the time in ms, 13 digits in
 * every key an arrival names, 8 here.
 */
static void
run_prefix(long run)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	char tag[16], *p = tag + sizeof(tag) - 1;
	unsigned long n = run > 0 ? (unsigned long)run : 0;

	*p = '\0';
	do
		*--p = digits[n % 36];
	while ((n /= 36) != 0 && p > tag);
	snprintf(X.prefix, sizeof(X.prefix), "%sr%s:", X.base, p);
}

/* Registered in the run on the present connections: keys can be named. */
static int
ready(void)
{
	return ac_rdvjoin_ready();
}

static void
keyname(char *buf, size_t len, const char *kind, const char *key, int64_t gen)
{
	if (key == NULL)
		snprintf(buf, len, "%s%s", X.prefix, kind);
	else
		snprintf(buf, len, "%s%s:%s:%" PRId64, X.prefix, kind, key, gen);
}


/* A script call in flight: what to send again as EVAL after NOSCRIPT. */
struct scall {
	const struct script *s;
	ac_rconn_cb	*cb;
	void		*priv;
	int		 argc;
	const char	**argv;
	size_t		*len;
	char		 buf[];	/* the arguments' bytes */
};

static void
on_script(redisReply *reply, void *priv)
{
	struct scall *sc = priv;

	if (reply != NULL && reply->type == REDIS_REPLY_ERROR) {
		/* The server lost its script cache: EVAL caches it again. */
		sc->argv[0] = "EVAL";
		sc->argv[1] = sc->s->text;
		sc->len[0] = 4;
		sc->len[1] = strlen(sc->s->text);
		if (ac_rconn_cmd(sc->cb, sc->priv, sc->argc, sc->argv, sc->len) ==
		    -1 && sc->cb != NULL)
			sc->cb(NULL, sc->priv);
	} else if (sc->cb != NULL)
		sc->cb(reply, sc->priv);
	free(sc->argv);
	free(sc->len);
	free(sc);
}

/*
 * Run script S with KEYS and ARGS (lengths ARGLEN, (size_t)-1 or a NULL
 * ARGLEN for strings): EVALSHA once its hash is known, else EVAL. CB gets the
 * reply, or NULL when there is none.
 */
static void
run(const struct script *s, ac_rconn_cb *cb, void *priv, int nkeys,
    const char **keys, int nargs, const char **args, const size_t *arglen)
{
	int argc = 3 + nkeys + nargs, i;
	size_t total = 0, off = 0;
	const char **argv;
	size_t *len;
	struct scall *sc;
	char nk[16];

	snprintf(nk, sizeof(nk), "%d", nkeys);
	if ((argv = calloc((size_t)argc, sizeof(*argv))) == NULL ||
	    (len = calloc((size_t)argc, sizeof(*len))) == NULL) {
		free(argv);
		if (cb != NULL)
			cb(NULL, priv);
		return;
	}
	argv[0] = s->sha[0] ? "EVALSHA" : "EVAL";
	argv[1] = s->sha[0] ? s->sha : s->text;
	argv[2] = nk;
	for (i = 0; i < nkeys; i++)
		argv[3 + i] = keys[i];
	for (i = 0; i < nargs; i++)
		argv[3 + nkeys + i] = args[i];
	for (i = 0; i < argc; i++) {
		int a = i - 3 - nkeys;

		len[i] = a >= 0 && arglen != NULL && arglen[a] != (size_t)-1 ?
		    arglen[a] : strlen(argv[i]);
		if (i >= 2)
			total += len[i];
	}
	if (!s->sha[0]) {
		if (ac_rconn_cmd(cb, priv, argc, argv, len) == -1 && cb != NULL)
			cb(NULL, priv);
		goto out;
	}
	/* Keep a copy of the arguments: NOSCRIPT sends them again. */
	if ((sc = malloc(sizeof(*sc) + total)) == NULL) {
		if (cb != NULL)
			cb(NULL, priv);
		goto out;
	}
	sc->s = s;
	sc->cb = cb;
	sc->priv = priv;
	sc->argc = argc;
	sc->argv = argv;
	sc->len = len;
	for (i = 2; i < argc; i++) {
		memcpy(sc->buf + off, argv[i], len[i]);
		argv[i] = sc->buf + off;
		off += len[i];
	}
	if (ac_rconn_cmd_pass("NOSCRIPT", on_script, sc, argc, argv, len) == 0)
		return;		/* on_script frees them */
	free(sc);
	if (cb != NULL)
		cb(NULL, priv);
out:
	free(argv);
	free(len);
}

static void
on_loaded(redisReply *reply, void *priv)
{
	struct script *s = priv;

	if (reply != NULL && reply->type == REDIS_REPLY_STRING &&
	    reply->len == sizeof(s->sha) - 1)
		memcpy(s->sha, reply->str, sizeof(s->sha));
}

/*
 * Learn the hashes of the scripts not known yet (the first connect): the
 * replies come before those of anything sent after, on the same connection.
 * Known hashes stay valid (they name the text); a server without the script
 * answers NOSCRIPT and gets the text once.
 */
static void
load_scripts(void)
{
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		const char *argv[3] = { "SCRIPT", "LOAD", scripts[i]->text };

		if (!scripts[i]->sha[0])
			ac_rconn_cmd(on_loaded, scripts[i], 3, argv, NULL);
	}
}

/* The arguments every fan-out needs: the run's key prefix and nnodes. */
static const char *
nnodes_arg(void)
{
	static char nn[24];

	snprintf(nn, sizeof(nn), "%ld", X.job->nnodes);
	return nn;
}

static struct req *
new_req(const struct ac_coll *c)
{
	struct req *r = malloc(sizeof(*r));

	if (r != NULL) {
		snprintf(r->key, sizeof(r->key), "%s", c->key);
		r->gen = c->gen;
		r->late = 0;
	}
	return r;
}

static void
on_ignore(redisReply *reply, void *priv)
{
	(void)reply;
	free(priv);
}

/* Is NODE's slot set in the arrivals' string V (arrive_lua: u32s, the
 * count first)? */
static int
arrived_slot(const char *v, size_t len, long node)
{
	size_t at = 4 * ((size_t)node + 1);

	return at + 4 <= len && (v[at] | v[at + 1] | v[at + 2] | v[at + 3]) != 0;
}

/* What NODE's slot says of C: 1, or 2 + its interval (ac_history_since). */
static void
slot_value(const struct ac_job *j, const struct ac_coll *c, char *buf,
    size_t len)
{
	int64_t d = ac_history_since(j, c);

	if (d > (int64_t)UINT32_MAX - 2)
		d = (int64_t)UINT32_MAX - 2;
	snprintf(buf, len, "%" PRId64, d >= 0 ? d + 2 : 1);
}

/* Which nodes are missing, for timeouts and status. */
static void
note_missing(struct ac_coll *c, const char *bits, size_t len)
{
	size_t n = 0;

	c->xmissing[0] = '\0';
	c->xlook_us = ac_wall_us();
	for (long node = 0; node < X.job->nnodes; node++) {
		if (arrived_slot(bits, len, node) ||
		    n >= sizeof(c->xmissing) - 24)
			continue;
		n += (size_t)snprintf(c->xmissing + n, sizeof(c->xmissing) - n,
		    "%s%ld", n ? ", " : "", node);
	}
}

/* A look's GET of the result: written, yet this node was not told (the
 * node that wrote it lost its connection before its entry was added). */
static void
on_look_done(redisReply *reply, void *priv)
{
	struct req *r = priv;
	const struct ac_coll *c;

	if (reply != NULL && reply->type == REDIS_REPLY_STRING &&
	    (c = ac_job_find(X.job, r->key, r->gen)) != NULL && !c->done)
		ac_rdvproto_deliver(r->key, r->gen, reply->str, reply->len);
	else if (reply != NULL && reply->type == REDIS_REPLY_NIL &&
	    (c = ac_job_find(X.job, r->key, r->gen)) != NULL && !c->done &&
	    c->op != AC_OP_BARRIER)
		/* Not there when read: a lost source's node never wrote it. */
		((struct ac_coll *)c)->xlook_us = ac_wall_us();
	free(r);
}

static void x_arrive(struct ac_job *j, struct ac_coll *c);
static void arrive_script(const struct ac_job *j, const struct ac_coll *c,
    struct req *r, int fresh);

/* A look that finds every slot set and no result looks again this soon. */
#define LATE_LOOK_MS 1000

/*
 * A look's GET of the arrivals: which nodes are missing. This node's own slot
 * missing means Redis lost it while we stayed connected (the key evicted by a
 * volatile-* or allkeys-* maxmemory policy, or a FLUSHALL whose "post again"
 * entry was trimmed before we read it): it is posted again (the script: the
 * slot set only if clear, counted only then), or every node waits on. Every
 * slot set and no result: the script writes it (below).
 */
static void
on_look(redisReply *reply, void *priv)
{
	struct req *r = priv;
	struct ac_coll *c;

	if (reply != NULL && (c = ac_job_find(X.job, r->key, r->gen)) != NULL &&
	    !c->done && (reply->type == REDIS_REPLY_STRING ||
	    reply->type == REDIS_REPLY_NIL)) {
		const char *v = reply->type == REDIS_REPLY_STRING ? reply->str : "";
		size_t len = reply->type == REDIS_REPLY_STRING ? reply->len : 0;

		note_missing(c, v, len);
		/* Only an arrival that still stands: a look answered after
		 * this node's ranks left and its withdrawal cleared the slot
		 * must not post it again (the others passed on it: a
		 * status's look, sent while the ranks were leaving, did). */
		if (c->narrived != X.job->lsize || c->xwd)
			;
		else if (!arrived_slot(v, len, X.job->node) && ready())
			x_arrive(X.job, c);
		else if (c->xmissing[0] == '\0' && ready() && r->late) {
			/* Every slot is set, yet no result, still at a later
			 * look (not the moment between a live last arrival's
			 * BITFIELD and its script, which every waiting node
			 * may look at together): the last arrival's node died
			 * there (its helper and ranks killed together). The
			 * script writes the result once (SET NX), failures
			 * included. */
			struct req *n = new_req(c);

			if (n != NULL)
				arrive_script(X.job, c, n, 0);
		} else if (c->xmissing[0] == '\0' && ready())
			/* Every slot set, no result, at a first look: the
			 * last arrival's script may be on its way; if it is
			 * not in a second, it died (above). */
			ac_rdvproto_look_in(LATE_LOOK_MS);
	}
	free(r);
}

/*
 * store.h's look at C: three plain commands (GET the result, EXPIRE and GET
 * the arrivals: a u32 per node, 4 KB for 1,000 nodes), not a script: a
 * look is for a progress line, a timeout's message or status, and needs no
 * atomicity. The EXPIRE sets the TTL that the first arrival sets, in case its
 * helper died between its fast path and its EXPIRE.
 */
static void
s_look(struct ac_coll *c, int late)
{
	char arr[KEY_MAX], done[KEY_MAX], ttl[24];
	const char *get_done[2] = { "GET", done }, *get_arr[2] = { "GET", arr };
	const char *expire[3] = { "EXPIRE", arr, ttl };
	struct req *r;

	keyname(done, sizeof(done), "done", c->key, c->gen);
	if ((r = new_req(c)) != NULL &&
	    ac_rconn_cmd(on_look_done, r, 2, get_done, NULL) == -1)
		free(r);
	/* A result op (broadcast, --wait, main-first) has no arrivals: its
	 * look only reads the result. */
	if (c->op != AC_OP_BARRIER || (r = new_req(c)) == NULL)
		return;
	r->late = late;
	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	ac_rconn_cmd(on_ignore, NULL, 3, expire, NULL);
	if (ac_rconn_cmd(on_look, r, 2, get_arr, NULL) == -1)
		free(r);
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
	char ttl[24], ev[KEY_MAX];
	const char *keys[1] = { ev }, *args[1] = { ttl };

	if (!ready())
		return;
	ac_log("rendezvous %s: Redis lost run %ld of job %s; posting "
	    "everything again", ac_rconn_where(), X.runid->run, X.job->id);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	keyname(ev, sizeof(ev), "ev", NULL, 0);
	ac_rdvjoin_join(0);
	run(&resync_lua, on_ignore, NULL, 1, keys, 1, args, NULL);
}

/* A reply of {2}: the run's registration is gone. */
static int
is_lost(const redisReply *reply)
{
	return reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    reply->elements == 1 && reply->element[0]->type == REDIS_REPLY_INTEGER &&
	    reply->element[0]->integer == 2;
}

/*
 * This node's arrival wrote GEN's result: GEN - 1's arrivals, result and
 * failures are read by nobody again (see arrive_lua). Three single-key
 * commands, sent after the script, in the connection's order; one lost to a
 * failover leaves its key to the TTL. EXPIRE KEY 0, not DEL: a TTL that is
 * not positive deletes the key (Redis documents it; so does Valkey), and
 * EXPIRE is a command the job's ACL user has always had (lib/server and the
 * sites that copied its list), where DEL would have been refused (NOPERM:
 * "rendezvous failed" at every barrier).
 */
static void
forget_previous(const char *key, int64_t gen)
{
	static const char *const kinds[] = { "arr", "done", "fail" };
	char name[KEY_MAX];
	const char *argv[3] = { "EXPIRE", name, "0" };
	size_t i;

	if (gen < 1)
		return;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		keyname(name, sizeof(name), kinds[i], key, gen - 1);
		(void)ac_rconn_cmd(on_ignore, NULL, 3, argv, NULL);
	}
}

static void
on_arrive(redisReply *reply, void *priv)
{
	struct req *r = priv;
	struct ac_coll *c;

	if (is_lost(reply))
		lost_state();
	else if (reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    (reply->elements == 2 || reply->elements == 3) &&
	    reply->element[0]->type == REDIS_REPLY_INTEGER) {
		redisReply *v = reply->element[1];

		if (reply->element[0]->integer == 1 && v->type == REDIS_REPLY_STRING)
			ac_rdvproto_deliver(r->key, r->gen, v->str, v->len);
		if (reply->elements == 3)
			forget_previous(r->key, r->gen);
		else if ((c = ac_job_find(X.job, r->key, r->gen)) != NULL &&
		    !c->done)
			ac_rdvproto_look_soon();	/* which nodes are missing: later */
	}
	free(r);
}

/* The arrive script for C (see arrive_lua). FRESH: this is this node's
 * arrival (its first post, or the script after its fast path's BITFIELD),
 * which names it as last if it completes C; a look's or a repeated post's
 * script, completing C for a node whose own script has not run, names
 * nobody (the result says "?" rather than a wrong node). */
static void
arrive_script(const struct ac_job *j, const struct ac_coll *c, struct req *r,
    int fresh)
{
	char arr[KEY_MAX], done[KEY_MAX], fail[KEY_MAX], members[KEY_MAX];
	char ev[KEY_MAX], node[24], ttl[24], gen[24], last[24], fails[4096];
	char mine[24];
	const char *keys[5] = { arr, done, fail, members, ev }, *args[8];

	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	keyname(done, sizeof(done), "done", c->key, c->gen);
	keyname(fail, sizeof(fail), "fail", c->key, c->gen);
	keyname(members, sizeof(members), "members", NULL, 0);
	keyname(ev, sizeof(ev), "ev", NULL, 0);
	(void)ac_fails_of(j->rank_of, c->status, j->lsize, fails, sizeof(fails));
	snprintf(node, sizeof(node), "%ld", j->node);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	snprintf(gen, sizeof(gen), "%" PRId64, c->gen);
	args[0] = node;
	args[1] = fails;
	args[2] = ttl;
	args[3] = nnodes_arg();
	args[4] = c->key;
	args[5] = gen;
	if (fresh)
		snprintf(last, sizeof(last), "%" PRId64, ac_history_last_rank(j, c));
	else
		last[0] = '\0';
	args[6] = last;
	slot_value(j, c, mine, sizeof(mine));
	args[7] = mine;
	run(&arrive_lua, on_arrive, r, 5, keys, 8, args, NULL);
}

/* Did every local rank of C exit 0? */
static int
all_ok(const struct ac_job *j, const struct ac_coll *c)
{
	char none[64];

	return ac_fails_of(j->rank_of, c->status, j->lsize, none, sizeof(none)) == 0;
}

static void
on_members(redisReply *reply, void *priv)
{
	(void)priv;
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
	    reply->integer == 0)
		lost_state();
}

/*
 * The first arrival at C (the fast path's count was 1): the generation's
 * keys start with it, so it sets their TTL, and it checks that the run's
 * registration is there: when Redis lost the run (FLUSHALL, a failover to an
 * empty replica), the next arrival anywhere is a first one. Two plain
 * commands, not the script: a script call costs Redis several times their
 * work, once per barrier.
 */
static void
first_checks(const struct ac_coll *c)
{
	char arr[KEY_MAX], members[KEY_MAX], ttl[24];
	const char *expire[3] = { "EXPIRE", arr, ttl };
	const char *exists[2] = { "EXISTS", members };

	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	keyname(members, sizeof(members), "members", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	ac_rconn_cmd(on_ignore, NULL, 3, expire, NULL);
	ac_rconn_cmd(on_members, NULL, 2, exists, NULL);
}

/*
 * The fast path's reply: {the node's slot before, the count}. Most arrivals
 * are neither the first nor the last and end here, and the first adds two
 * plain commands; a count that says every node may be in, and a slot that was
 * set already, go on to the script.
 */
static void
on_fast(redisReply *reply, void *priv)
{
	struct req *r = priv;
	const struct ac_coll *c = ac_job_find(X.job, r->key, r->gen);
	long long old, count;

	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 2 || reply->element[0]->type != REDIS_REPLY_INTEGER ||
	    reply->element[1]->type != REDIS_REPLY_INTEGER || c == NULL || c->done) {
		free(r);	/* down: the sweep after the reconnect posts it again */
		return;
	}
	old = reply->element[0]->integer;
	count = reply->element[1]->integer;
	if (old == 0 && count == 1 && count < X.job->nnodes)
		first_checks(c);
	else if (old != 0 || count >= X.job->nnodes) {
		arrive_script(X.job, c, r, old == 0);
		return;
	}
	ac_rdvproto_look_soon();	/* which nodes are missing: later */
	free(r);
}

/*
 * This node's ranks all arrived at barrier C: post this node's outcome.
 *
 * The fast path, for a node whose ranks all exited 0 posting for the first
 * time: one BITFIELD that sets the node's slot and raises the count, and
 * answers both, at a fraction of a script's cost (issue 14: what Redis does
 * per node-arrival decides how many nodes one Redis serves). Everything else
 * (a node with failures, whose failures must land with its slot; a repeated
 * post after a reconnect or for a long wait's refresh) is the script.
 */
static void
x_arrive(struct ac_job *j, struct ac_coll *c)
{
	char arr[KEY_MAX], slot[24], mine[24];
	const char *argv[10] = { "BITFIELD", arr, "SET", "u32", slot, mine,
	    "INCRBY", "u32", "0", "1" };
	struct req *r;

	if (!ac_rdvproto_posting(j, c) || (r = new_req(c)) == NULL)
		return;	/* sweep() posts it once connected (in node 0's run) */
	if (ac_rdvproto_posted(c) || !all_ok(j, c)) {
		arrive_script(j, c, r, !ac_rdvproto_posted(c));
		return;
	}
	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	snprintf(slot, sizeof(slot), "#%ld", j->node + 1);
	slot_value(j, c, mine, sizeof(mine));
	if (ac_rconn_cmd(on_fast, r, 10, argv, NULL) == -1)
		free(r);
}

/*
 * The results of result ops (broadcast, --wait, main-first) this helper
 * published are kept (rdvkeep.c) to publish again after Redis lost them.
 * Their keys' TTL is renewed every third of it while they are kept
 * (keep_pump), as etcd's lease keeps its keys, so a node that reads a result
 * a TTL after it was written finds it (dropped at the TTL, it was lost, and
 * the reader waited until its deadline: t_recovery testOldResultReadLate
 * over both stores).
 */

/* The stream's entry of a result: "KEY GEN" and, when small, the value. */
static char *
entry_of(const char *key, int64_t gen, const char *value, size_t vlen,
    size_t *elen)
{
	size_t n = (size_t)snprintf(NULL, 0, "%s %" PRId64, key, gen);
	char *entry = malloc(n + 2 + vlen);

	if (entry == NULL)
		return NULL;
	snprintf(entry, n + 1, "%s %" PRId64, key, gen);
	if (vlen <= INLINE_MAX) {
		entry[n++] = '\n';
		memcpy(entry + n, value, vlen);
		n += vlen;
	}
	*elen = n;
	return entry;
}

/* Write the result and tell every node (PUBLISH_LUA); 0, or -1 unsent. */
static int
send_publish(const char *key, int64_t gen, const char *value, size_t vlen,
    ac_rconn_cb *cb, void *priv)
{
	char done[KEY_MAX], ev[KEY_MAX], ttl[24], *entry;
	const char *keys[2] = { done, ev };
	const char *args[3] = { value, ttl, NULL };
	size_t elen, lens[3] = { vlen, (size_t)-1, 0 };

	if ((entry = entry_of(key, gen, value, vlen, &elen)) == NULL)
		return -1;
	args[2] = entry;
	lens[2] = elen;
	keyname(done, sizeof(done), "done", key, gen);
	keyname(ev, sizeof(ev), "ev", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	run(&publish_lua, cb, priv, 2, keys, 3, args, lens);
	free(entry);
	return 0;
}

/* A reply to the pass' EXPIRE of K's key, or to its writing K again. */
static void
on_renewed(redisReply *reply, void *priv)
{
	struct ac_kept *k = priv;

	/* The key is gone: written and told again (its ref kept). */
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
	    reply->integer == 0 && !k->dead && ready() &&
	    send_publish(k->key, k->gen, k->v, k->len, on_renewed, k) == 0)
		return;
	ac_rdvkeep_answered(k, reply == NULL);
}

/*
 * A pass sends an EXPIRE, not the value: only where it answers 0 (the key is
 * gone: a restart empty, FLUSHALL, its TTL ran out) is the result written
 * and told again. Sent whole each pass, the values of 20,000 kept results
 * went to Redis, and into every node's stream, at every refresh of a long
 * wait (review of issue 19: 15,034 SETs for 34). At most AC_KEEP_BUSY at a
 * time: 20,000 at once stood between the next barrier's arrival and Redis
 * on the one connection (a replaced helper's first barrier took 951 ms).
 */
static void
renew(struct ac_kept *k)
{
	char done[KEY_MAX], ttl[24];
	const char *argv[3] = { "EXPIRE", done, ttl };

	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	keyname(done, sizeof(done), "done", k->key, k->gen);
	if (ac_rconn_cmd(on_renewed, k, 3, argv, NULL) == -1)
		on_renewed(NULL, k);
}

/*
 * Every third of the TTL while results are kept, waiting or not: their keys'
 * TTL renewed, as etcd keeps its lease alive. Not while a pass is under way
 * (the sweep's: it renews each anyway).
 */
static void
keep_pump(void)
{
	if (!ac_rdvkeep_passing() && ac_rdvkeep_any())
		ac_rdvkeep_pass(renew);
}

/* The result of a barrier this node withdrew from too late: it stands. */
static void
on_too_late(redisReply *reply, void *priv)
{
	struct req *r = priv;

	if (reply != NULL && reply->type == REDIS_REPLY_STRING)
		ac_rdvproto_deliver(r->key, r->gen, reply->str, reply->len);
	free(r);
}

static void
on_withdrawn(redisReply *reply, void *priv)
{
	struct req *r = priv;
	struct ac_coll *c;
	char done[KEY_MAX];

	/* 0: the barrier completed before the withdrawal came (the others
	 * passed on this node's arrival): read its result, which moves this
	 * node's ranks past it again (ac_job_remote_done). Freed here instead,
	 * a rerun found them a generation behind the other nodes. */
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
	    reply->integer == 0) {
		keyname(done, sizeof(done), "done", r->key, r->gen);
		get(on_too_late, r, done);
		return;
	}
	/* Unsent or unanswered: the sweep after the reconnect sends it again. */
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
	    (c = ac_job_find(X.job, r->key, r->gen)) != NULL) {
		c->xwd = 0;
		ac_job_gc(X.job);
	}
	free(r);
}

/*
 * A local rank left barrier C after this node had posted its arrival: the
 * node's slot is cleared, with the count (WITHDRAW_LUA). A result written
 * meanwhile stands (the withdrawal came too late, and the barrier is over
 * for every node); its entry in the stream releases this node's other ranks.
 */
static void
x_withdraw(struct ac_job *j, struct ac_coll *c)
{
	char arr[KEY_MAX], fail[KEY_MAX], done[KEY_MAX], node[24];
	const char *argv[7] = { "EVAL", WITHDRAW_LUA, "3", arr, fail, done,
	    node };
	struct req *r;

	if (!ready() || (r = new_req(c)) == NULL)
		return;
	snprintf(node, sizeof(node), "%ld", j->node);
	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	keyname(fail, sizeof(fail), "fail", c->key, c->gen);
	keyname(done, sizeof(done), "done", c->key, c->gen);
	if (ac_rconn_cmd(on_withdrawn, r, 7, argv, NULL) == -1)
		free(r);
}

/* A local source's result (or death): write it and tell every node. */
static void
x_publish(struct ac_job *j, struct ac_coll *c)
{
	char *value;
	size_t vlen;

	(void)j;
	if ((value = ac_xvalue_make(c, &vlen)) == NULL)
		return;
	/* Kept only when this node's rank produced it (or died): a result
	 * read from another node, posted again by the sweep as the name's
	 * latest, is its source's to keep. Kept here as well, every reader
	 * filled the bound with copies of values it never owned, one more a
	 * reconnect. */
	if (c->op == AC_OP_RESULT && c->src != AC_SRC_NONE)
		ac_rdvkeep_add(c->key, c->gen, value, vlen, 0);
	if (ready())
		(void)send_publish(c->key, c->gen, value, vlen, on_ignore, NULL);
	free(value);
}

static void
on_want(redisReply *reply, void *priv)
{
	struct req *r = priv;
	const struct ac_coll *c;

	if (is_lost(reply))
		lost_state();
	else if (reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    reply->elements == 2 && reply->element[1]->type == REDIS_REPLY_STRING)
		ac_rdvproto_deliver(r->key, r->gen, reply->element[1]->str,
		    reply->element[1]->len);
	else if (reply != NULL && (c = ac_job_find(X.job, r->key, r->gen)) !=
	    NULL && !c->done) {
		/* Not yet: the stream will say, and a look reads it in
		 * case its entry is trimmed before this node reads it. */
		(void)ac_rdvproto_posted(c);
		ac_rdvproto_look_soon();
	}
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

	if (!ac_rdvproto_posting(j, c) || (r = new_req(c)) == NULL)
		return;
	keyname(done, sizeof(done), "done", c->key, c->gen);
	keyname(members, sizeof(members), "members", NULL, 0);
	run(&want_lua, on_want, r, 2, keys, 0, NULL, NULL);
}

/* One entry of the run's stream: "=KEY\nVALUE" (a put told: the abort, NCCL's
 * id, a node's name...), "C" (the run closed), "S" (the run's state lost), or
 * "KEY GEN" with maybe the value. */
static void
on_entry(const char *v, size_t len)
{
	char key[AC_KEY_MAX], line[AC_KEY_MAX + 32];
	long long gen;
	const char *nl;

	/* Entries may come before this connection's registration is
	 * answered: the run, and so the keys, are those we knew. */
	if (X.runid->run == 0)
		return;
	if (len > 1 && v[0] == '=')
		return told(v + 1, len - 1);
	if (len == 1 && v[0] == 'C')
		return ac_rdvjoin_closed();
	if (len == 1 && v[0] == 'S') {
		/* Another node found Redis had lost the run's state. */
		if (ready())
			ac_rdvjoin_join(0);
		return;
	}
	nl = memchr(v, '\n', len);
	snprintf(line, sizeof(line), "%.*s", (int)((nl != NULL ? (size_t)(nl - v) :
	    len) < sizeof(line) - 1 ? (nl != NULL ? (size_t)(nl - v) : len) :
	    sizeof(line) - 1), v);
	if (sscanf(line, "%255s %lld", key, &gen) != 2)
		return;
	if (nl != NULL)
		ac_rdvproto_deliver(key, gen, nl + 1, len - (size_t)(nl + 1 - v));
	else {
		struct ac_coll *c = ac_job_find(X.job, key, gen);

		if (c != NULL && !c->done)
			x_want(X.job, c);
	}
}

static void
on_wake_check(redisReply *reply, void *priv)
{
	(void)priv;
	X.wake_busy = 0;
	if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
	    reply->integer == 1 && ready() && !ac_rdvjoin_joining())
		lost_state();
}

/*
 * Node 0: an entry in the job's wake stream, from a node that found no run
 * to join (register_lua). At a job's start that is a node before us; while
 * the run is known, Redis may have lost it (its members, or the counter that
 * names it the newest, gone): register and post again, and tell every node
 * to. Only while a process of this node's ranks still runs: an earlier
 * launch's node 0, idling on after its job under the same job id, would
 * bring its run back for the new launch's nodes to join, and they would
 * pass on its results (review of issue 18). One look at a time: a burst of
 * nodes costs one script call.
 */
static void
on_wake(const char *v, size_t len)
{
	char members[KEY_MAX], counter[KEY_MAX], num[24];
	const char *keys[2] = { members, counter }, *args[1] = { num };

	(void)v;
	(void)len;
	if (!ready() || ac_rdvjoin_joining() || X.wake_busy ||
	    (X.job->alive != NULL && !X.job->alive(X.job)))
		return;
	keyname(members, sizeof(members), "members", NULL, 0);
	snprintf(counter, sizeof(counter), "%srun", X.base);
	snprintf(num, sizeof(num), "%ld", X.runid->run);
	X.wake_busy = 1;
	run(&wake_lua, on_wake_check, NULL, 2, keys, 1, args, NULL);
}

/*
 * The end of the sweep (rdvproto.c posted what is in flight): what Redis may
 * have lost of ours. The results of result ops we published, kept: a node
 * may still wait for a generation its source's node has long passed.
 */
static void
swept(void)
{
	struct ac_job *j = X.job;

	ac_rdvkeep_pass(renew);
	/* Results seen last: nodes still waiting for them must find them. */
	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next)
		if (k->last_done != NULL && ac_coll_cross(j, k->last_done) &&
		    ac_rdvproto_postable(k->last_done))
			x_publish(j, k->last_done);
	for (struct ac_coll *c = j->colls; c != NULL; c = c->next)
		if (ac_coll_cross(j, c) && c->op == AC_OP_BARRIER &&
		    ac_rdvproto_postable(c))
			x_publish(j, c);
}

/* After a (re)connect: post again everything Redis may have lost. */
static void
sweep(void)
{
	ac_rdvproto_sweep();
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


/* store.h's leave: node 0 of RUN did not answer our probe. */
static void
s_leave(long run)
{
	char members[KEY_MAX], node[24];
	const char *hdel[3] = { "HDEL", members, node };

	run_prefix(run);
	keyname(members, sizeof(members), "members", NULL, 0);
	snprintf(node, sizeof(node), "%ld", X.job->node);
	ac_rconn_cmd(on_ignore, NULL, 3, hdel, NULL);
}

/* store.h's probe: RUN's keys named while its node 0 is asked (GETs). */
static void
s_probe(long run)
{
	run_prefix(run);
}

/* register_lua's answer: {how, run}. */
static void
on_register(redisReply *reply, void *priv)
{
	static const enum ac_join how[] = { AC_JOIN_TAKEN, AC_JOIN_IN,
	    AC_JOIN_WAIT, AC_JOIN_FRESH };
	long long h;

	(void)priv;
	if (reply == NULL) {
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 &&
	    reply->element[0]->type == REDIS_REPLY_INTEGER &&
	    reply->element[0]->integer == 5 &&
	    reply->element[1]->type == REDIS_REPLY_INTEGER &&
	    reply->element[2]->type == REDIS_REPLY_STRING) {
		ac_rconn_healthy();
		ac_rdvjoin_held((long)reply->element[1]->integer,
		    reply->element[2]->str, reply->element[2]->len);
		return;
	}
	if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
	    reply->element[0]->type == REDIS_REPLY_INTEGER &&
	    reply->element[0]->integer == 4 &&
	    reply->element[1]->type == REDIS_REPLY_STRING) {
		/* The counter was not what we assumed: declare the keys of
		 * the run it names, and register again. */
		const char *why;
		long v;

		ac_rconn_healthy();
		if (reply->element[1]->len >= sizeof(X.curs) ||
		    ac_parse_uint(reply->element[1]->str, LONG_MAX, &v, &why) == -1) {
			char msg[AC_KEY_MAX + 160];

			snprintf(msg, sizeof(msg), "the job's run counter %srun "
			    "holds '%.40s', not a run number", X.base,
			    reply->element[1]->str);
			ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
			ac_rconn_fail(msg);
			return;
		}
		X.cur = v;
		memcpy(X.curs, reply->element[1]->str, reply->element[1]->len + 1);
		s_join();
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER ||
	    reply->element[1]->type != REDIS_REPLY_INTEGER ||
	    (h = reply->element[0]->integer) < 0 || h > 3) {
		ac_rdvjoin_joined(AC_JOIN_DOWN, 0);
		ac_rconn_fail("unexpected reply to the run's registration");
		return;
	}
	ac_rconn_healthy();	/* Redis answers; a deadline now is a 124 */
	if (h > 0) {
		X.cur = (long)reply->element[1]->integer;
		snprintf(X.curs, sizeof(X.curs), "%ld", X.cur);
	}
	ac_rdvjoin_joined(how[h], (long)reply->element[1]->integer);
}

/* store.h's bind: registered in the run the identity names. */
static void
s_bind(int moved)
{
	char events[KEY_MAX], wake[KEY_MAX];

	(void)moved;
	run_prefix(X.runid->run);
	keyname(events, sizeof(events), "ev", NULL, 0);
	snprintf(wake, sizeof(wake), "%swake", X.base);
	ac_rconn_block(events, X.job->node == 0 ? wake : NULL);
	X.next_refresh = X.next_keep = ac_now_ms() + X.refresh_ms;
}

/* store.h's join: register_lua. At every connect, after a loss, and to keep
 * the keys of a long wait alive (a refresh). */
static void
s_join(void)
{
	char counter[KEY_MAX], wake[KEY_MAX], pmembers[KEY_MAX], pev[KEY_MAX];
	char members[KEY_MAX], cur[24], node[24], nonce[24], known[24], ttl[24];
	char nn[24], now[24], pbeat[KEY_MAX], beat[32];
	const char *keys[6] = { counter, wake, pmembers, pev, members, pbeat };
	const char *args[8];
	char saved[sizeof(X.prefix)];
	struct timespec ts;
	long long ms;
	long rn;

	snprintf(counter, sizeof(counter), "%srun", X.base);
	snprintf(wake, sizeof(wake), "%swake", X.base);
	snprintf(node, sizeof(node), "%ld", X.job->node);
	snprintf(nonce, sizeof(nonce), "%016" PRIx64, X.runid->nonce);
	snprintf(known, sizeof(known), "%ld", X.runid->run);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	snprintf(nn, sizeof(nn), "%ld", X.job->nnodes);
	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	snprintf(now, sizeof(now), "%lld", ms);
	snprintf(cur, sizeof(cur), "%s", X.curs[0] ? X.curs : "0");
	/* The keys register_lua touches, when the counter is X.cur: run
	 * X.cur's members and stream, and those of the run it ends in. */
	memcpy(saved, X.prefix, sizeof(saved));	/* a probe's, maybe */
	run_prefix(X.cur);
	keyname(pmembers, sizeof(pmembers), "members", NULL, 0);
	keyname(pev, sizeof(pev), "ev", NULL, 0);
	snprintf(beat, sizeof(beat), "~beat/%ld", X.job->node);
	store_key(pbeat, sizeof(pbeat), beat);
	rn = X.runid->run > 0 ? X.runid->run : X.job->node != 0 ? X.cur :
	    X.cur > 0 ? X.cur + 1 : (long)ms;
	run_prefix(rn);
	keyname(members, sizeof(members), "members", NULL, 0);
	memcpy(X.prefix, saved, sizeof(saved));
	args[0] = cur;
	args[1] = node;
	args[2] = nonce;
	args[3] = known;
	args[4] = ttl;
	args[5] = nn;
	args[6] = now;
	args[7] = ac_rdvjoin_claimant();
	/* (on_register(NULL) answers if it is not sent.) */
	run(&register_lua, on_register, NULL, 6, keys, 8, args, NULL);
}

/* rconn.c: both connections are up (again). */
static void
on_ready(void)
{
	load_scripts();
	ac_rdvjoin_connected();
}

/* --- store.h: the operations the protocol (rdvproto.c) asks of Redis --- */

/* A key of store.h ("nccl/joined/3") as Redis names it in this run. */
static void
store_key(char *buf, size_t len, const char *key)
{
	size_t n = (size_t)snprintf(buf, len, "%s", X.prefix);

	for (; *key != '\0' && n + 1 < len; key++)
		buf[n++] = *key == '/' ? ':' : *key;
	buf[n] = '\0';
}

struct sop {
	ac_store_cb	*cb;
	void		*priv;
};

static struct sop *
new_sop(ac_store_cb *cb, void *priv)
{
	struct sop *o = malloc(sizeof(*o));

	if (o == NULL && cb != NULL)
		cb(-1, NULL, 0, priv);
	else if (o != NULL)
		*o = (struct sop){ cb, priv };
	return o;
}

static void
on_put(redisReply *reply, void *priv)
{
	struct sop *o = priv;
	int ok = reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    reply->elements == 2 && reply->element[0]->type ==
	    REDIS_REPLY_INTEGER && reply->element[1]->type == REDIS_REPLY_STRING;

	if (o->cb != NULL && ok)
		o->cb(reply->element[0]->integer == 1, reply->element[1]->str,
		    reply->element[1]->len, o->priv);
	else if (o->cb != NULL)
		o->cb(-1, NULL, 0, o->priv);
	free(o);
}

static void
s_put(const char *key, const void *v, size_t len, int flags, ac_store_cb *cb,
    void *priv)
{
	char k[KEY_MAX], stream[KEY_MAX], ttl[24], *ev = NULL;
	const char *keys[2] = { k, stream }, *args[4];
	size_t arglen[4], klen = strlen(key);
	struct sop *o;

	if (!ac_rdvjoin_named()) {
		if (cb != NULL)
			cb(-1, NULL, 0, priv);
		return;
	}
	if ((o = new_sop(cb, priv)) == NULL)
		return;
	if ((flags & AC_PUT_TELL) && (ev = malloc(klen + len + 2)) != NULL) {
		ev[0] = '=';
		memcpy(ev + 1, key, klen);
		ev[klen + 1] = '\n';
		memcpy(ev + klen + 2, v, len);
	}
	store_key(k, sizeof(k), key);
	keyname(stream, sizeof(stream), "ev", NULL, 0);
	snprintf(ttl, sizeof(ttl), "%ld", X.ttl);
	args[0] = v;
	arglen[0] = len;
	args[1] = flags & AC_PUT_ABSENT ? "1" : "";
	args[2] = ttl;
	args[3] = ev != NULL ? ev : "";
	arglen[3] = ev != NULL ? klen + len + 2 : 0;
	for (int i = 1; i < 3; i++)
		arglen[i] = strlen(args[i]);
	/* The stream is declared only where it is written (a told put). */
	run(&put_lua, on_put, o, ev != NULL ? 2 : 1, keys, 4, args, arglen);
	free(ev);
}

static void
on_sget(redisReply *reply, void *priv)
{
	struct sop *o = priv;

	if (reply == NULL)
		o->cb(-1, NULL, 0, o->priv);
	else if (reply->type == REDIS_REPLY_STRING)
		o->cb(1, reply->str, reply->len, o->priv);
	else
		o->cb(0, NULL, 0, o->priv);
	free(o);
}

static void
s_get(const char *key, ac_store_cb *cb, void *priv)
{
	char k[KEY_MAX];
	struct sop *o;

	if (!ac_rdvjoin_named()) {
		cb(-1, NULL, 0, priv);
		return;
	}
	if ((o = new_sop(cb, priv)) == NULL)
		return;
	store_key(k, sizeof(k), key);
	get(on_sget, o, k);
}

/* A told put's entry ("KEY\nVALUE", after the '='): the protocol's. */
static void
told(const char *v, size_t len)
{
	const char *nl = memchr(v, '\n', len);
	char key[KEY_MAX];

	if (nl == NULL || (size_t)(nl - v) >= sizeof(key))
		return;
	memcpy(key, v, (size_t)(nl - v));
	key[nl - v] = '\0';
	ac_rdvproto_told(key, nl + 1, len - (size_t)(nl + 1 - v));
}

static void
s_resync(void)
{
	sweep();
}

/* --- the transport's loop hooks --- */

static long
x_timer(long now)
{
	long next = ac_rconn_timer(now), t = ac_rdvproto_timer(now);

	if (t >= 0 && (next < 0 || t < next))
		next = t;
	/* Kept results live while kept (keep_pump). */
	if (ready() && ac_rdvkeep_any()) {
		if (now >= X.next_keep) {
			X.next_keep = now + X.refresh_ms;
			keep_pump();
		}
		if (next < 0 || X.next_keep - now < next)
			next = X.next_keep - now;
	}
	/* A long wait keeps its keys alive: register and post again. */
	if (ready() && in_flight()) {
		if (now >= X.next_refresh) {
			X.next_refresh = now + X.refresh_ms;
			ac_rdvjoin_join(1);
		}
		if (next < 0 || X.next_refresh - now < next)
			next = X.next_refresh - now;
	}
	return next;
}

/* store.h's unpost: WITHDRAW_LUA, at once (the helper exits). */
static int
s_unpost(const struct ac_coll *c)
{
	char arr[KEY_MAX], fail[KEY_MAX], done[KEY_MAX], node[24];
	const char *argv[7] = { "EVAL", WITHDRAW_LUA, "3", arr, fail, done,
	    node };

	if (!ready())
		return -1;
	snprintf(node, sizeof(node), "%ld", X.job->node);
	keyname(arr, sizeof(arr), "arr", c->key, c->gen);
	keyname(fail, sizeof(fail), "fail", c->key, c->gen);
	keyname(done, sizeof(done), "done", c->key, c->gen);
	return ac_rconn_sync(7, argv, NULL, 1000) == -1 ? -1 : 0;
}

static void
x_stop(void)
{
	ac_rdvproto_withdraw_all();
	ac_rconn_stop();
	ac_rdvproto_stop();
}

static const struct ac_xport xport = {
	.name = "redis",
	.fds = ac_rconn_fds,
	.events = ac_rconn_events,
	.timer = x_timer,
	.describe = ac_rdvjoin_describe,
	.down = ac_rconn_down,
	.stop = x_stop,
	.arrive = x_arrive,
	.publish = x_publish,
	.want = x_want,
	.abort = ac_rdvproto_abort,
	.lost = ac_rdvproto_lost,
	.where = ac_rdvproto_where,
	.waits = ac_rdvproto_waits,
	.hello = ac_rdvproto_hello,
	.node = ac_rdvproto_node,
	.expired = NULL,
	.withdraw = x_withdraw,
	.pending = ac_rdvjoin_pending,
	.look_by = ac_rdvproto_look_by,
};

static const struct ac_store store = {
	.name = "redis", .up = ac_rconn_up, .where = ac_rconn_where,
	.down = ac_rconn_down, .fail = ac_rconn_fail, .join = s_join,
	.bind = s_bind, .probe = s_probe, .leave = s_leave, .put = s_put,
	.get = s_get, .look = s_look, .resync = s_resync, .swept = swept,
	.unpost = s_unpost,
};

static const struct ac_rconn_hooks hooks = { on_ready, on_entry, on_wake };

int
ac_xredis_check(const char *url, const char *password_file, char *err,
    size_t errlen)
{
	struct ac_rdv_url u;
	long ttl;

	if (ac_rdv_parse(url, password_file, &u, err, errlen) == -1)
		return -1;
	return ac_ttl_env("ACCELCTL_REDIS_TTL", &ttl, err, errlen);
}

const struct ac_xport *
ac_xredis_open(struct ac_job *j, const struct ac_rdv_url *u,
    struct ac_runid *rid, const struct ac_rdv **rdvp)
{
	char err[160];

	memset(&X, 0, sizeof(X));
	X.job = j;
	X.runid = rid;
	/* Every client checked it (ac_xredis_check); a helper run by hand
	 * with a bad one keeps the default. */
	(void)ac_ttl_env("ACCELCTL_REDIS_TTL", &X.ttl, err, sizeof(err));
	/* A third of the TTL: two refreshes may fail before a key expires. */
	X.refresh_ms = X.ttl * 1000 / 3 > 500 ? X.ttl * 1000 / 3 : 500;
	snprintf(X.base, sizeof(X.base), "accelctl:{%s}:", j->id);
	run_prefix(rid->run);
	ac_rdvproto_init(j, rid, &xport, &store);
	ac_rconn_start(u, &hooks);
	*rdvp = ac_rdvproto_rdv();
	return &xport;
}
