/* rdvquery.c: one short exchange with a rendezvous server: AUTH, then PING or INFO.
 *
 * "rendezvous start" asks PING before it prints the lines that send a whole
 * job to the server, and "rendezvous status" asks INFO. Both are one-off and
 * synchronous: hiredis' blocking API, connect and reply bounded by a timeout,
 * as a short-lived CLI may be (the helper uses the async API in its loop). */
#include <hiredis/hiredis.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "rdvquery.h"

int
ac_rdv_query(const char *host, int port, const char *user,
    const char *password, int timeout_ms, const char *cmd, char *out,
    size_t outlen, char *err, size_t errlen)
{
	struct timeval tv = { timeout_ms / 1000, timeout_ms % 1000 * 1000 };
	redisContext *c = redisConnectWithTimeout(host, port, tv);
	redisReply *r = NULL;
	int rc = -1;

	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (c->err) {
		/* Refused (not listening yet) is the one failure worth a retry. */
		rc = c->err == REDIS_ERR_IO && (errno == ECONNREFUSED ||
		    strstr(c->errstr, "refused") != NULL) ? 1 : -1;
		snprintf(err, errlen, "%s:%d: %s", host, port, c->errstr);
		goto out;
	}
	redisSetTimeout(c, tv);
	r = redisCommand(c, "AUTH %s %s", user, password);
	if (r == NULL || r->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "%s:%d: AUTH as %s refused: %s", host, port,
		    user, r != NULL ? r->str : c->errstr);
		goto out;
	}
	freeReplyObject(r);
	r = redisCommand(c, "%s", cmd);
	if (r == NULL || (r->type != REDIS_REPLY_STATUS &&
	    r->type != REDIS_REPLY_STRING)) {
		snprintf(err, errlen, "%s:%d: %s: %s", host, port, cmd,
		    r == NULL ? c->errstr : r->type == REDIS_REPLY_ERROR ?
		    r->str : "unexpected reply");
		goto out;
	}
	snprintf(out, outlen, "%s", r->str);
	rc = 0;
out:
	if (r != NULL)
		freeReplyObject(r);
	redisFree(c);
	return rc;
}
