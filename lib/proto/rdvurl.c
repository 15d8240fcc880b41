/* rdvurl.c: the rendezvous address: redis://, redis-sentinel:// or unix:///path (rdvurl.h).
 * Errors name the part that is wrong but never echo the URL: it may hold a password. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcdurl.h"
#include "num.h"
#include "pwfile.h"
#include "rdvurl.h"

static int
copy(char *dst, size_t len, const char *s, size_t n)
{
	if (n >= len)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/*
 * "user:password" or "word" (P to AT) into U: "redis://WORD@host" names the
 * password, unless the password comes from a file: then WORD is the user
 * ("accelctl rendezvous start" prints redis://accelctl@host:port and the
 * file's name).
 */
static int
parse_auth(const char *p, const char *at, const char *password_file,
    struct ac_rdv_url *u, char *err, size_t errlen)
{
	const char *c = memchr(p, ':', (size_t)(at - p));
	int word_is_user = c == NULL && password_file != NULL &&
	    *password_file != '\0';

	if (word_is_user ? copy(u->user, sizeof(u->user), p, (size_t)(at - p)) :
	    c == NULL ? copy(u->password, sizeof(u->password), p,
	    (size_t)(at - p)) : (copy(u->user, sizeof(u->user), p,
	    (size_t)(c - p)) | copy(u->password, sizeof(u->password), c + 1,
	    (size_t)(at - c - 1)))) {
		snprintf(err, errlen, "invalid rendezvous: user or password too long");
		return -1;
	}
	return 0;
}

/* "host:port", "[v6]:port" or, with DEFPORT, "host" (P to END) into H. */
static int
parse_host(const char *p, const char *end, int defport, struct ac_rdv_host *h,
    const char *form, char *err, size_t errlen)
{
	const char *colon, *why;
	char port[16];
	long v;

	if (*p == '[') {	/* [IPv6]:port */
		const char *close = memchr(p, ']', (size_t)(end - p));

		if (close == NULL || close == p + 1 || (close[1] != ':' &&
		    (close + 1 != end || defport == 0)) ||
		    copy(h->host, sizeof(h->host), p + 1, (size_t)(close - p - 1))) {
			snprintf(err, errlen, "invalid rendezvous: bad [IPv6]:port");
			return -1;
		}
		colon = close + 1 == end ? NULL : close + 1;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		if ((colon == NULL && defport == 0) || colon == p || p == end ||
		    copy(h->host, sizeof(h->host), p, (size_t)((colon != NULL ?
		    colon : end) - p)) == -1) {
			snprintf(err, errlen, "invalid rendezvous: expected %s", form);
			return -1;
		}
	}
	h->port = defport;
	if (colon == NULL)
		return 0;
	if (copy(port, sizeof(port), colon + 1, (size_t)(end - colon - 1)) == -1 ||
	    ac_parse_uint(port, 65535, &v, &why) == -1 || v == 0) {
		snprintf(err, errlen, "invalid rendezvous: bad port");
		return -1;
	}
	h->port = (int)v;
	return 0;
}

static int
parse_db(const char *s, struct ac_rdv_url *u, char *err, size_t errlen)
{
	const char *why;
	long v;

	if (ac_parse_uint(s, 1000000, &v, &why) == -1) {
		snprintf(err, errlen, "invalid rendezvous: bad database number");
		return -1;
	}
	u->db = (int)v;
	return 0;
}

#define REDIS_FORM "redis://[user:password@]host:port[/db]"
#define SENTINEL_FORM "redis-sentinel://[[user:]password@]host[:port]" \
	"[,host[:port]...][/db]#master"

#define CLUSTER_FORM "redis-cluster://[[user:]password@]host[:port][,host[:port]...]"

/* "[[user:]password@]host[:port][,host[:port]...]" (P to END) into U's hosts. */
static int
parse_hosts(const char *p, const char *end, const char *password_file,
    int defport, const char *form, struct ac_rdv_url *u, char *err,
    size_t errlen)
{
	const char *at = NULL, *h;
	size_t k;

	for (const char *q = p; q < end; q++)
		if (*q == '@')
			at = q;
	if (at != NULL) {
		if (parse_auth(p, at, password_file, u, err, errlen) == -1)
			return -1;
		p = at + 1;
	}
	for (h = p; h <= end; p = h + 1) {
		const char *comma = memchr(p, ',', (size_t)(end - p));

		h = comma != NULL ? comma : end;
		if (u->nhosts == AC_RDV_HOSTS_MAX) {
			snprintf(err, errlen, "invalid rendezvous: more than %d "
			    "hosts", AC_RDV_HOSTS_MAX);
			return -1;
		}
		if (parse_host(p, h, defport, &u->hosts[u->nhosts], form, err,
		    errlen) == -1)
			return -1;
		u->nhosts++;
		if (comma == NULL)
			break;
	}
	k = strlen(u->where);
	for (int i = 0; i < u->nhosts && k < sizeof(u->where); i++) {
		char hp[300];

		k += (size_t)snprintf(u->where + k, sizeof(u->where) - k, "%s%s",
		    i ? "," : "", ac_rdv_hostport(u->hosts[i].host,
		    u->hosts[i].port, hp, sizeof(hp)));
	}
	return 0;
}

const char *
ac_rdv_hostport(const char *host, int port, char *buf, size_t len)
{
	int v6 = strchr(host, ':') != NULL;

	snprintf(buf, len, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
	return buf;
}

/* redis-cluster://...: the seed nodes; the first is dialled first. */
static int
parse_cluster(const char *url, const char *password_file,
    struct ac_rdv_url *u, char *err, size_t errlen)
{
	const char *p = url + strlen("redis-cluster://"), *at = strrchr(p, '@');

	/* After the last '@' (a password may hold anything): no path. */
	if (strpbrk(at != NULL ? at + 1 : p, "/#?") != NULL) {
		snprintf(err, errlen, "invalid rendezvous: expected %s (Redis "
		    "Cluster has no databases but 0)", CLUSTER_FORM);
		return -1;
	}
	snprintf(u->where, sizeof(u->where), "cluster ");
	if (parse_hosts(p, p + strlen(p), password_file, 6379, CLUSTER_FORM, u,
	    err, errlen) == -1)
		return -1;
	u->cluster = 1;
	memcpy(u->host, u->hosts[0].host, sizeof(u->host));
	u->port = u->hosts[0].port;
	return 0;
}

/* S holds only printable ASCII other than space: a master's name, which
 * messages and the sentinels' commands carry (a control byte there would
 * garble a log line or a RESP frame). */
static int
printable_word(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s <= ' ' || *s > '~')
			return 0;
	return 1;
}

/* redis-sentinel://...: the sentinels, the master's name, the database. */
static int
parse_sentinel(const char *url, const char *password_file,
    struct ac_rdv_url *u, char *err, size_t errlen)
{
	const char *p = url + strlen("redis-sentinel://"), *hash, *end, *rest;
	const char *spf = getenv("ACCELCTL_SENTINEL_PASSWORD_FILE");
	size_t k;

	/* The user part ends at the last '@' (a password may hold '#' or '/'):
	 * the hosts, the database and the master's name come after it. */
	rest = strrchr(p, '@') != NULL ? strrchr(p, '@') + 1 : p;
	if ((hash = strrchr(rest, '#')) == NULL || hash[1] == '\0' ||
	    copy(u->master, sizeof(u->master), hash + 1, strlen(hash + 1)) == -1 ||
	    !printable_word(u->master)) {
		snprintf(err, errlen, "invalid rendezvous: expected %s (the "
		    "master's name after '#', at most %zu bytes, printable, "
		    "no spaces)",
		    SENTINEL_FORM, sizeof(u->master) - 1);
		return -1;
	}
	if (memchr(rest, '#', (size_t)(hash - rest)) != NULL) {
		snprintf(err, errlen, "invalid rendezvous: expected %s (one '#', "
		    "before the master's name)", SENTINEL_FORM);
		return -1;
	}
	end = memchr(rest, '/', (size_t)(hash - rest));
	if (end != NULL) {
		char db[16];

		if (end + 1 < hash && (copy(db, sizeof(db), end + 1,
		    (size_t)(hash - end - 1)) == -1 || parse_db(db, u, err,
		    errlen) == -1)) {
			snprintf(err, errlen, "invalid rendezvous: bad database number");
			return -1;
		}
	} else
		end = hash;
	k = (size_t)snprintf(u->where, sizeof(u->where), "master '%s' (sentinels ",
	    u->master);
	if (k >= sizeof(u->where) || parse_hosts(p, end, password_file, 26379,
	    SENTINEL_FORM, u, err, errlen) == -1)
		return -1;
	k = strlen(u->where);
	if (k < sizeof(u->where))
		snprintf(u->where + k, sizeof(u->where) - k, ")");
	if (spf != NULL && *spf != '\0' &&
	    ac_read_password_file("ACCELCTL_SENTINEL_PASSWORD_FILE", spf,
	    u->spassword, sizeof(u->spassword), err, errlen) == -1)
		return -1;
	return 0;
}

int
ac_rdv_parse(const char *url, const char *password_file, struct ac_rdv_url *u,
    char *err, size_t errlen)
{
	const char *p, *at, *slash, *hostend;

	memset(u, 0, sizeof(*u));
	if (strncmp(url, "unix://", 7) == 0) {
		if (url[7] != '/' || copy(u->path, sizeof(u->path), url + 7,
		    strlen(url + 7)) == -1) {
			snprintf(err, errlen, "invalid rendezvous: unix:// needs an "
			    "absolute socket path (unix:///run/redis.sock)");
			return -1;
		}
		snprintf(u->where, sizeof(u->where), "%s", u->path);
	} else if (strncmp(url, "redis-sentinel://", 17) == 0) {
		if (parse_sentinel(url, password_file, u, err, errlen) == -1)
			return -1;
	} else if (strncmp(url, "redis-cluster://", 16) == 0) {
		if (parse_cluster(url, password_file, u, err, errlen) == -1)
			return -1;
	} else if (strncmp(url, "redis://", 8) == 0) {
		struct ac_rdv_host h;

		p = url + 8;
		slash = strchr(p, '/');
		at = strrchr(p, '@');
		if (at != NULL && slash != NULL && at > slash)
			at = NULL;
		if (at != NULL) {
			if (parse_auth(p, at, password_file, u, err, errlen) == -1)
				return -1;
			p = at + 1;
		}
		hostend = slash != NULL ? slash : p + strlen(p);
		if (parse_host(p, hostend, 0, &h, REDIS_FORM, err, errlen) == -1)
			return -1;
		memcpy(u->host, h.host, sizeof(u->host));
		u->port = h.port;
		if (slash != NULL && slash[1] != '\0' &&
		    parse_db(slash + 1, u, err, errlen) == -1)
			return -1;
		snprintf(u->where, sizeof(u->where), "%s:%d", u->host, u->port);
	} else {
		snprintf(err, errlen, "invalid rendezvous: expected " REDIS_FORM
		    ", " SENTINEL_FORM ", " CLUSTER_FORM " or unix:///path");
		return -1;
	}
	if (password_file != NULL && *password_file != '\0' &&
	    ac_read_password_file("ACCELCTL_REDIS_PASSWORD_FILE",
	    password_file, u->password, sizeof(u->password), err,
	    errlen) == -1)
		return -1;
	return 0;
}

void
ac_rdv_scrub(char *arg)
{
	char *auth = strstr(arg, "://"), *end, *at = NULL, *colon;

	if (auth == NULL)
		return;
	auth += 3;
	/* An etcd URL has no path: its password may hold '/' (etcdurl.c). */
	end = auth + (ac_etcd_scheme(arg) || strncmp(arg, "redis-cluster:", 14) == 0 ||
	    strncmp(arg, "redis-sentinel:", 15) == 0 ? strlen(auth) :
	    strcspn(auth, "/"));
	for (char *q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	if (at == NULL)
		return;
	/* With no ':' the whole user part may be a password: hide it all. */
	colon = memchr(auth, ':', (size_t)(at - auth));
	memset(colon != NULL ? colon + 1 : auth, '*', (size_t)(at -
	    (colon != NULL ? colon + 1 : auth)));
}
