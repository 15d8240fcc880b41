/* xvalue.c: how a collective's result is stored in a rendezvous: "R status\nfailed\n" and the payload, or "L".
 *
 * One format for every rendezvous (Redis, etcd), so that a result is written
 * and read in one place; across files it travels as struct ac_result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "xvalue.h"

char *
ac_xvalue_make(const struct ac_coll *c, size_t *len)
{
	char head[600], *value;
	size_t hlen;

	if (c->src == AC_SRC_LOST)
		hlen = (size_t)snprintf(head, sizeof(head), "L");
	else
		hlen = (size_t)snprintf(head, sizeof(head), "R %lld\n%s\n",
		    (long long)c->result, c->failed);
	if (hlen >= sizeof(head))
		hlen = sizeof(head) - 1;
	*len = hlen + (c->src == AC_SRC_LOST ? 0 : c->paylen);
	if ((value = malloc(*len + 1)) == NULL)
		return NULL;
	memcpy(value, head, hlen);
	if (*len > hlen)
		memcpy(value + hlen, c->payload, c->paylen);
	return value;
}

int
ac_xvalue_read(const char *v, size_t len, struct ac_result *r, char *failed,
    size_t flen)
{
	const char *nl1, *nl2;
	char *end;

	memset(r, 0, sizeof(*r));
	if (len == 1 && v[0] == 'L') {
		r->lost = 1;
		return 0;
	}
	if (len < 2 || v[0] != 'R' || (nl1 = memchr(v, '\n', len)) == NULL ||
	    (nl2 = memchr(nl1 + 1, '\n', len - (size_t)(nl1 + 1 - v))) == NULL)
		return -1;
	r->status = strtoll(v + 2, &end, 10);
	/* A barrier's "R status[ node rank][ ~across first sum]": who
	 * completed it, and the spread of the nodes' posts, who posted first
	 * and the sum of their waits in ms (Redis' arrive script writes them;
	 * older helpers wrote the status alone). */
	if (end < nl1 && end[0] == ' ' && end[1] != '~') {
		r->last_node = strtol(end + 1, &end, 10);
		if (end < nl1 && *end == ' ') {
			r->last_rank = strtoll(end + 1, &end, 10);
			r->last_known = (end == nl1 || *end == ' ') &&
			    r->last_node >= 0;
		}
	}
	if (end + 1 < nl1 && end[0] == ' ' && end[1] == '~') {
		int parts = 1;

		r->across_ms = strtoll(end + 2, &end, 10);
		if (end < nl1 && *end == ' ' && ++parts)
			r->first_node = strtol(end + 1, &end, 10);
		if (end < nl1 && *end == ' ' && ++parts)
			r->across_sum_ms = strtoll(end + 1, &end, 10);
		r->wait_known = parts == 3 && end == nl1 && r->across_ms >= 0 &&
		    r->first_node >= 0 && r->across_sum_ms >= 0;
	}
	snprintf(failed, flen, "%.*s", (int)(nl2 - nl1 - 1), nl1 + 1);
	r->failed = failed;
	r->payload = (const uint8_t *)nl2 + 1;
	r->paylen = len - (size_t)(nl2 + 1 - v);
	return 0;
}
