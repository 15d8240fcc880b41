/* rlast.c: one command on a blocking connection of its own: a helper's last words as it exits.
 *
 * The helper's loop will not run again to send it (rconn.c's connections
 * are asynchronous), so this connects, authenticates and waits, at most a
 * given time. On a cluster it follows one redirection: MOVED (the slot is
 * another node's), or ASK (the slot is moving, and the command's keys are on
 * the importing node: sent there after ASKING).
 */
#include <hiredis/hiredis.h>

#include <sys/time.h>

#include <stddef.h>

#include "rcluster.h"
#include "rlast.h"

/*
 * ARGV at HOST:PORT (the socket path where U names one) on a blocking
 * connection, after U's AUTH and SELECT and, ASK set, ASKING. The reply, or
 * NULL.
 */
static redisReply *
sync_at(const struct ac_rdv_url *u, const char *host, int port, int ask,
    int argc, const char **argv, const size_t *len, struct timeval tv)
{
	redisContext *c;
	redisReply *r = NULL;

	c = u->path[0] ? redisConnectUnixWithTimeout(u->path, tv) :
	    redisConnectWithTimeout(host, port, tv);
	if (c == NULL || c->err || redisSetTimeout(c, tv) != REDIS_OK)
		goto out;
	if (u->password[0]) {
		r = u->user[0] ? redisCommand(c, "AUTH %s %s", u->user,
		    u->password) : redisCommand(c, "AUTH %s", u->password);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			goto out;
		freeReplyObject(r);
	}
	if (u->db != 0) {
		if ((r = redisCommand(c, "SELECT %d", u->db)) == NULL)
			goto out;
		freeReplyObject(r);
	}
	if (ask) {
		if ((r = redisCommand(c, "ASKING")) == NULL)
			goto out;
		freeReplyObject(r);
	}
	r = redisCommandArgv(c, argc, argv, len);
	redisFree(c);
	return r;
out:
	if (r != NULL)
		freeReplyObject(r);
	if (c != NULL)
		redisFree(c);
	return NULL;
}

int
ac_rlast_cmd(const struct ac_rdv_url *u, int cluster, int argc,
    const char **argv, const size_t *len, long timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	struct ac_rdv_host h;
	enum ac_redirect how;
	redisReply *r;
	int ok;

	r = sync_at(u, u->host, u->port, 0, argc, argv, len, tv);
	/* A cluster's redirection, followed once (the slot's keys moving:
	 * ASK; moved: MOVED). */
	if (r != NULL && r->type == REDIS_REPLY_ERROR && cluster &&
	    (how = ac_rcluster_redirect(r->str, u->host, &h)) !=
	    AC_REDIRECT_NONE) {
		freeReplyObject(r);
		r = sync_at(u, h.host, h.port, how == AC_REDIRECT_ASK, argc, argv,
		    len, tv);
	}
	ok = r != NULL && r->type != REDIS_REPLY_ERROR;
	if (r != NULL)
		freeReplyObject(r);
	return ok ? 0 : -1;
}

