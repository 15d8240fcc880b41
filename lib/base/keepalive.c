/* keepalive.c: TCP keepalive and a user timeout on a connection to a rendezvous server.
 *
 * A Redis host (or a sentinel) that vanishes without a reset leaves a blocking
 * read or a subscription waiting for ever: probes after 15 s idle, every 5 s,
 * 3 of them, end it in about 30 s; data sent and not acknowledged for 30 s
 * ends it too (TCP_USER_TIMEOUT). Set on the socket directly: hiredis 0.14 has
 * no call for the intervals (DESIGN-NOTES "hiredis versions").
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "keepalive.h"

void
ac_keepalive(int fd)
{
	int on = 1, idle = 15, intvl = 5, cnt = 3;
	unsigned int unacked = 30000;

	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &unacked,
	    sizeof(unacked));
}
