/* rdvaddr.c: the address and port a job-scoped rendezvous server listens on.
 *
 * The server must be reachable from the job's other nodes and from nowhere it
 * need not be: it binds one address, never the wildcard unless --bind asks.
 * The host name is what a cluster's nodes know each other by (Slurm's node
 * names, an MPI host file), so its address comes first. */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rdvaddr.h"

/* 1 for an address other hosts cannot reach: loopback, IPv6 link-local. */
static int
local_only(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
		    IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr);
	}
	return 1;
}

static int
numeric(const struct sockaddr *sa, socklen_t salen, char *addr, size_t len)
{
	return getnameinfo(sa, salen, addr, (socklen_t)len, NULL, 0,
	    NI_NUMERICHOST) == 0 ? 0 : -1;
}

/* The first reachable address of NAME, IPv4 before IPv6; -1 if none. */
static int
from_name(const char *name, char *addr, size_t len)
{
	struct addrinfo hints, *res, *ai;
	int rc = -1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return -1;
	for (int fam = 0; fam < 2 && rc == -1; fam++)
		for (ai = res; ai != NULL && rc == -1; ai = ai->ai_next)
			if (ai->ai_family == (fam == 0 ? AF_INET : AF_INET6) &&
			    !local_only(ai->ai_addr))
				rc = numeric(ai->ai_addr, ai->ai_addrlen, addr, len);
	freeaddrinfo(res);
	return rc;
}

/* The first reachable address of an interface that is up; -1 if none. */
static int
from_interfaces(char *addr, size_t len)
{
	struct ifaddrs *ifs, *i;
	int rc = -1;

	if (getifaddrs(&ifs) == -1)
		return -1;
	for (int fam = 0; fam < 2 && rc == -1; fam++)
		for (i = ifs; i != NULL && rc == -1; i = i->ifa_next)
			if (i->ifa_addr != NULL && (i->ifa_flags & IFF_UP) &&
			    !(i->ifa_flags & IFF_LOOPBACK) &&
			    i->ifa_addr->sa_family == (fam == 0 ? AF_INET : AF_INET6) &&
			    !local_only(i->ifa_addr))
				rc = numeric(i->ifa_addr, fam == 0 ?
				    sizeof(struct sockaddr_in) :
				    sizeof(struct sockaddr_in6), addr, len);
	freeifaddrs(ifs);
	return rc;
}

int
ac_rdv_host_addr(char *addr, size_t len, const char **from, char *err,
    size_t errlen)
{
	char host[256];

	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		if (from_name(host, addr, len) == 0) {
			*from = "the host name";
			return 0;
		}
	}
	if (from_interfaces(addr, len) == 0) {
		*from = "the first interface that is up (the host name has "
		    "no address other hosts can reach)";
		return 0;
	}
	if (len < sizeof("127.0.0.1")) {
		snprintf(err, errlen, "no address");
		return -1;
	}
	strcpy(addr, "127.0.0.1");
	*from = "loopback: no other address; other hosts cannot reach it";
	return 0;
}

int
ac_rdv_resolve(const char *name, char *addr, size_t len, char *err,
    size_t errlen)
{
	struct addrinfo hints, *res;
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(name, NULL, &hints, &res)) != 0) {
		snprintf(err, errlen, "cannot resolve '%.100s': %s", name,
		    gai_strerror(e));
		return -1;
	}
	e = numeric(res->ai_addr, res->ai_addrlen, addr, len);
	freeaddrinfo(res);
	if (e == -1)
		snprintf(err, errlen, "cannot resolve '%.100s'", name);
	return e;
}

int
ac_rdv_is_any(const char *addr)
{
	return strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0;
}

int
ac_rdv_try_port(const char *addr, int want, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (void *)&ss;
	struct sockaddr_in6 *in6 = (void *)&ss;
	socklen_t sl;
	int fd, port = -1, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)want);
		sl = sizeof(*in);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)want);
		sl = sizeof(*in6);
	} else {
		snprintf(err, errlen, "'%.100s' is not a numeric address", addr);
		return -1;
	}
	/* The kernel's pick for port 0 is free now; redis-server binds it a
	 * moment later, and the caller tries again if someone was faster.
	 * SO_REUSEADDR as redis-server sets it: a port in TIME_WAIT is free. */
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&ss, sl) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		snprintf(err, errlen, "cannot listen on %.100s port %d: %s",
		    addr, want, strerror(errno));
	else
		port = ntohs(ss.ss_family == AF_INET ? in->sin_port :
		    in6->sin6_port);
	if (fd != -1)
		close(fd);
	return port;
}
