/* rcluster.c: Redis Cluster's redirections: which node MOVED names.
 *
 * A job's keys all hash to one slot ({JOB}), so the "slot map" a cluster
 * client keeps is, for us, one address: the node serving that slot. MOVED
 * says it changed for good (a migration ended, a failover): rconn.c dials the
 * new node and posts everything again there.
 *
 * ASK says the slot is moving, key by key. The cluster specification has the
 * client send that one command, after ASKING, to the importing node. We do
 * not: our scripts build the names of the job's keys themselves (one slot, so
 * valid on a cluster), and Redis checks only the keys a command declares. A
 * script sent with ASKING would read and write the importing node's copy of
 * keys the migrating node still has: the job's state split in two (seen: the
 * importing node then refused the migration of a key it had been given,
 * BUSYKEY). So ASK, like TRYAGAIN, is transient here: the helper backs off
 * and posts again, the slot's keys are only ever written on one node, and
 * the migration's end answers MOVED (DESIGN-NOTES "Redis Cluster").
 */
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "rcluster.h"

int
ac_rcluster_moved(const char *text, const char *cur, struct ac_rdv_host *h)
{
	const char *p, *colon, *why;
	long v;

	/* "MOVED SLOT HOST:PORT"; the host may be an IPv6 address: the port
	 * follows the last ':'. */
	if (strncmp(text, "MOVED ", 6) != 0 || (p = strchr(text + 6, ' ')) == NULL ||
	    (colon = strrchr(++p, ':')) == NULL ||
	    ac_parse_uint(colon + 1, 65535, &v, &why) == -1 || v == 0 ||
	    (size_t)(colon - p) >= sizeof(h->host))
		return 0;
	if (colon == p)
		snprintf(h->host, sizeof(h->host), "%s", cur);
	else {
		memcpy(h->host, p, (size_t)(colon - p));
		h->host[colon - p] = '\0';
	}
	h->port = (int)v;
	return 1;
}
