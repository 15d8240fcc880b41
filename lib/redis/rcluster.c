/* rcluster.c: Redis Cluster's redirections: which node MOVED or ASK names.
 *
 * A job's keys all hash to one slot ({JOB}), so the "slot map" a cluster
 * client keeps is, for us, one address: the node serving that slot. MOVED
 * says it changed for good (a migration ended, a failover): rconn.c dials the
 * new node and posts everything again there. ASK says the slot is moving and
 * the keys of this command are on the importing node already: rconn.c sends
 * that one command there after ASKING, and keeps the slot's node. That is
 * sound because every script declares every key it touches (xredis.c): Redis
 * runs a command on the importing node only when all its keys are there, and
 * answers TRYAGAIN when they are split (DESIGN-NOTES "Redis Cluster").
 */
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "rcluster.h"

enum ac_redirect
ac_rcluster_redirect(const char *text, const char *cur, struct ac_rdv_host *h)
{
	enum ac_redirect how = strncmp(text, "MOVED ", 6) == 0 ? AC_REDIRECT_MOVED :
	    strncmp(text, "ASK ", 4) == 0 ? AC_REDIRECT_ASK : AC_REDIRECT_NONE;
	const char *p, *colon, *why;
	long v;

	/* "MOVED SLOT HOST:PORT"; the host may be an IPv6 address: the port
	 * follows the last ':'. */
	if (how == AC_REDIRECT_NONE || (p = strchr(strchr(text, ' ') + 1, ' ')) == NULL ||
	    (colon = strrchr(++p, ':')) == NULL ||
	    ac_parse_uint(colon + 1, 65535, &v, &why) == -1 || v == 0 ||
	    (size_t)(colon - p) >= sizeof(h->host))
		return AC_REDIRECT_NONE;
	if (h == NULL)
		return how;
	if (colon == p)
		snprintf(h->host, sizeof(h->host), "%s", cur);
	else {
		memcpy(h->host, p, (size_t)(colon - p));
		h->host[colon - p] = '\0';
	}
	h->port = (int)v;
	return how;
}
