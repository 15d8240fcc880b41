/* rdvurl.c: the rendezvous address: redis://[user:password@]host:port[/db] or unix:///path.
 * Errors name the part that is wrong but never echo the URL: it may hold a password. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "etcdurl.h"
#include "num.h"
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

int
ac_read_password_file(const char *var, const char *file, char *dst,
    size_t len, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");
	char line[600];

	if (f == NULL) {
		snprintf(err, errlen, "cannot read %s %.200s: %s", var, file,
		    strerror(errno));
		return -1;
	}
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	if (strlen(line) >= len) {
		explicit_bzero(line, sizeof(line));
		snprintf(err, errlen, "the password in %.200s is too long", file);
		return -1;
	}
	memcpy(dst, line, strlen(line) + 1);
	explicit_bzero(line, sizeof(line));
	return 0;
}

int
ac_rdv_parse(const char *url, const char *password_file, struct ac_rdv_url *u,
    char *err, size_t errlen)
{
	const char *p, *at, *slash, *colon, *hostend;
	long v;
	const char *why;

	memset(u, 0, sizeof(*u));
	if (strncmp(url, "unix://", 7) == 0) {
		if (url[7] != '/' || copy(u->path, sizeof(u->path), url + 7,
		    strlen(url + 7)) == -1) {
			snprintf(err, errlen, "invalid rendezvous: unix:// needs an "
			    "absolute socket path (unix:///run/redis.sock)");
			return -1;
		}
		snprintf(u->where, sizeof(u->where), "%s", u->path);
	} else if (strncmp(url, "redis://", 8) == 0) {
		p = url + 8;
		slash = strchr(p, '/');
		at = strrchr(p, '@');
		if (at != NULL && slash != NULL && at > slash)
			at = NULL;
		if (at != NULL) {
			const char *c = memchr(p, ':', (size_t)(at - p));
			/*
			 * "redis://WORD@host": WORD is the password, unless the
			 * password comes from a file: then it is the user ("accelctl rendezvous start" prints
			 * redis://accelctl@host:port and the file's name).
			 */
			int word_is_user = c == NULL && password_file != NULL &&
			    *password_file != '\0';

			if (word_is_user ? copy(u->user, sizeof(u->user), p,
			    (size_t)(at - p)) : c == NULL ? copy(u->password,
			    sizeof(u->password), p, (size_t)(at - p)) :
			    (copy(u->user, sizeof(u->user), p,
			    (size_t)(c - p)) | copy(u->password, sizeof(u->password),
			    c + 1, (size_t)(at - c - 1)))) {
				snprintf(err, errlen, "invalid rendezvous: user or "
				    "password too long");
				return -1;
			}
			p = at + 1;
		}
		hostend = slash != NULL ? slash : p + strlen(p);
		if (*p == '[') {	/* [IPv6]:port */
			const char *close = memchr(p, ']', (size_t)(hostend - p));
			if (close == NULL || close[1] != ':') {
				snprintf(err, errlen, "invalid rendezvous: bad [IPv6]:port");
				return -1;
			}
			copy(u->host, sizeof(u->host), p + 1, (size_t)(close - p - 1));
			colon = close + 1;
		} else {
			colon = memchr(p, ':', (size_t)(hostend - p));
			if (colon == NULL || colon == p ||
			    copy(u->host, sizeof(u->host), p, (size_t)(colon - p)) == -1) {
				snprintf(err, errlen, "invalid rendezvous: expected "
				    "redis://[user:password@]host:port[/db]");
				return -1;
			}
		}
		char port[16];
		if (copy(port, sizeof(port), colon + 1, (size_t)(hostend - colon - 1)) == -1 ||
		    ac_parse_uint(port, 65535, &v, &why) == -1 || v == 0) {
			snprintf(err, errlen, "invalid rendezvous: bad port");
			return -1;
		}
		u->port = (int)v;
		if (slash != NULL && slash[1] != '\0') {
			if (ac_parse_uint(slash + 1, 1000000, &v, &why) == -1) {
				snprintf(err, errlen, "invalid rendezvous: bad database number");
				return -1;
			}
			u->db = (int)v;
		}
		snprintf(u->where, sizeof(u->where), "%s:%d", u->host, u->port);
	} else {
		snprintf(err, errlen, "invalid rendezvous: expected "
		    "redis://[user:password@]host:port[/db] or unix:///path");
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
	end = auth + (ac_etcd_scheme(arg) ? strlen(auth) : strcspn(auth, "/"));
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
