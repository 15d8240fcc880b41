/* etcdurl.c: the etcd rendezvous address: etcd[s]://[user:password@]host:port[,host:port...].
 * Errors name the part that is wrong but never echo the URL: it may hold a password. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcdurl.h"
#include "num.h"
#include "pwfile.h"

#define USAGE "expected etcd://[user:password@]host:port[,host:port...] or etcds://..."

static int
copy(char *dst, size_t len, const char *s, size_t n)
{
	if (n >= len)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

int
ac_etcd_scheme(const char *url)
{
	return url != NULL && (strncmp(url, "etcd://", 7) == 0 ||
	    strncmp(url, "etcds://", 8) == 0);
}

/* One "host:port" or "[v6]:port" of length N at P into endpoint I. */
static int
endpoint(struct ac_etcd_url *u, int i, const char *p, size_t n, char *err,
    size_t errlen)
{
	const char *colon, *why;
	char port[16];
	long v;

	if (*p == '[') {
		const char *close = memchr(p, ']', n);

		if (close == NULL || (size_t)(close - p) + 1 >= n || close[1] != ':' ||
		    copy(u->host[i], sizeof(u->host[i]), p + 1,
		    (size_t)(close - p - 1)) == -1) {
			snprintf(err, errlen, "invalid rendezvous: bad [IPv6]:port");
			return -1;
		}
		colon = close + 1;
	} else {
		colon = memchr(p, ':', n);
		if (colon == NULL || colon == p || copy(u->host[i],
		    sizeof(u->host[i]), p, (size_t)(colon - p)) == -1) {
			snprintf(err, errlen, "invalid rendezvous: endpoint %d: "
			    USAGE, i + 1);
			return -1;
		}
	}
	if (copy(port, sizeof(port), colon + 1, n - (size_t)(colon + 1 - p)) == -1 ||
	    ac_parse_uint(port, 65535, &v, &why) == -1 || v == 0) {
		snprintf(err, errlen, "invalid rendezvous: endpoint %d: bad port", i + 1);
		return -1;
	}
	u->port[i] = (int)v;
	{
		/* Through a buffer of its own: GCC's -Wrestrict at -O3 cannot
		 * tell u->where from u->host, both members of *u. */
		char where[sizeof(u->where[i])];

		snprintf(where, sizeof(where), strchr(u->host[i], ':') ?
		    "[%s]:%d" : "%s:%d", u->host[i], u->port[i]);
		memcpy(u->where[i], where, sizeof(where));
	}
	return 0;
}

int
ac_etcd_parse(const char *url, const char *password_file, const char *cacert,
    const char *cert, const char *key, struct ac_etcd_url *u, char *err,
    size_t errlen)
{
	const char *p, *at, *end;

	memset(u, 0, sizeof(*u));
	if (strncmp(url, "etcd://", 7) == 0)
		p = url + 7;
	else if (strncmp(url, "etcds://", 8) == 0) {
		p = url + 8;
		u->tls = 1;
	} else {
		snprintf(err, errlen, "invalid rendezvous: " USAGE);
		return -1;
	}
	/*
	 * The user part ends at the last '@' (a host has none), so a password
	 * may hold '/', '?' or '@'; only the endpoints after it are checked
	 * for a path.
	 */
	if ((at = strrchr(p, '@')) != NULL) {
		const char *c = memchr(p, ':', (size_t)(at - p));
		int file = password_file != NULL && *password_file != '\0';
		int bad;

		if (at == p || (c == p && at == c + 1)) {
			snprintf(err, errlen, "invalid rendezvous: nothing between "
			    "'//' and '@' (a user, a password, or both): " USAGE);
			return -1;
		}

		/* A lone word is the user (with a password file) or the password. */
		if (c == NULL)
			bad = file ? copy(u->user, sizeof(u->user), p, (size_t)(at - p)) :
			    copy(u->password, sizeof(u->password), p, (size_t)(at - p));
		else
			bad = copy(u->user, sizeof(u->user), p, (size_t)(c - p)) |
			    copy(u->password, sizeof(u->password), c + 1,
			    (size_t)(at - c - 1));
		if (bad) {
			snprintf(err, errlen, "invalid rendezvous: user or password "
			    "too long");
			return -1;
		}
		if (c == NULL && !file) {
			/* etcd authenticates a user: a password alone is root's. */
			snprintf(u->user, sizeof(u->user), "root");
		}
		p = at + 1;
	}
	/* The gateway's paths are ours to choose: nothing may follow the list. */
	if (strchr(p, '/') != NULL || strchr(p, '?') != NULL) {
		snprintf(err, errlen, "invalid rendezvous: no path after the "
		    "endpoints: " USAGE);
		return -1;
	}
	for (;;) {
		end = strchr(p, ',');
		if (u->n == AC_ETCD_MAX_ENDPOINTS) {
			snprintf(err, errlen, "invalid rendezvous: more than %d "
			    "endpoints", AC_ETCD_MAX_ENDPOINTS);
			return -1;
		}
		if (endpoint(u, u->n, p, end != NULL ? (size_t)(end - p) :
		    strlen(p), err, errlen) == -1)
			return -1;
		u->n++;
		if (end == NULL)
			break;
		p = end + 1;
	}
	if (password_file != NULL && *password_file != '\0') {
		if (ac_read_password_file("ACCELCTL_ETCD_PASSWORD_FILE",
		    password_file, u->password, sizeof(u->password), err,
		    errlen) == -1)
			return -1;
		if (u->user[0] == '\0')
			snprintf(u->user, sizeof(u->user), "root");
	}
	if (u->password[0] != '\0' && u->user[0] == '\0')
		snprintf(u->user, sizeof(u->user), "root");
	if (u->user[0] != '\0' && u->password[0] == '\0') {
		snprintf(err, errlen, "invalid rendezvous: user '%.40s' without a "
		    "password (in the URL or ACCELCTL_ETCD_PASSWORD_FILE)", u->user);
		return -1;
	}
	if (!u->tls && ((cacert != NULL && *cacert) || (cert != NULL && *cert))) {
		snprintf(err, errlen, "ACCELCTL_ETCD_CACERT or ACCELCTL_ETCD_CERT "
		    "is set, but the rendezvous is etcd://: use etcds:// for TLS");
		return -1;
	}
	if (u->tls) {
		if (cacert == NULL || *cacert == '\0') {
			snprintf(err, errlen, "etcds:// needs ACCELCTL_ETCD_CACERT "
			    "(the CA that signed the members' certificates)");
			return -1;
		}
		if ((cert != NULL && *cert) != (key != NULL && *key)) {
			snprintf(err, errlen, "ACCELCTL_ETCD_CERT and "
			    "ACCELCTL_ETCD_KEY go together");
			return -1;
		}
		if (copy(u->cacert, sizeof(u->cacert), cacert, strlen(cacert)) ||
		    (cert != NULL && copy(u->cert, sizeof(u->cert), cert, strlen(cert))) ||
		    (key != NULL && copy(u->key, sizeof(u->key), key, strlen(key)))) {
			snprintf(err, errlen, "ACCELCTL_ETCD_CACERT, _CERT or _KEY: "
			    "path too long");
			return -1;
		}
		const char *files[3] = { u->cacert, u->cert, u->key };
		const char *names[3] = { "ACCELCTL_ETCD_CACERT", "ACCELCTL_ETCD_CERT",
		    "ACCELCTL_ETCD_KEY" };

		/* Checked on every rank: a typo is exit 2 there, not 125 later. */
		for (int i = 0; i < 3; i++)
			if (*files[i] != '\0' && access(files[i], R_OK) == -1) {
				snprintf(err, errlen, "cannot read %s %.200s: %s",
				    names[i], files[i], strerror(errno));
				return -1;
			}
	}
	return 0;
}

int
ac_etcd_parse_env(const char *url, struct ac_etcd_url *u, char *err,
    size_t errlen)
{
	return ac_etcd_parse(url, getenv("ACCELCTL_ETCD_PASSWORD_FILE"),
	    getenv("ACCELCTL_ETCD_CACERT"), getenv("ACCELCTL_ETCD_CERT"),
	    getenv("ACCELCTL_ETCD_KEY"), u, err, errlen);
}
