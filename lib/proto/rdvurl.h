/* rdvurl.h: the rendezvous address: redis://, redis-sentinel:// or unix:// (the forms below). */
#ifndef ACCELCTL_RDVURL_H
#define ACCELCTL_RDVURL_H

#include <stddef.h>

/* At most this many sentinels, or a cluster's seed nodes, in one URL. */
#define AC_RDV_HOSTS_MAX 16

struct ac_rdv_host {
	char	host[256];
	int	port;
};

/*
 * redis://[user:password@]host:port[/db], unix:///path, or, for Redis behind
 * Sentinel, redis-sentinel://[[user:]password@]host[:port][,host[:port]...][/db]#MASTER
 * (the sentinels, 26379 by default, and the master's name, as Lettuce spells
 * it: DESIGN-NOTES "Sentinel"). The user and password are Redis' (the
 * master's); the sentinels' own password comes from the file that
 * ACCELCTL_SENTINEL_PASSWORD_FILE names. For Redis Cluster,
 * redis-cluster://[[user:]password@]host[:port][,host[:port]...]: seed nodes
 * (6379 by default), any of which redirects to the job's slot.
 */
struct ac_rdv_url {
	char	host[256];	/* "" for a Unix socket; Sentinel: the master now */
	int	port;
	char	path[512];	/* the Unix socket, or "" */
	char	user[128];	/* "" for none (AUTH with the password alone) */
	char	password[256];	/* "" for none; never printed */
	int	db;
	char	where[600];	/* "host:port" or the socket path: what messages name */
	int	nhosts;		/* the sentinels, or a cluster's seeds; 0: neither */
	struct ac_rdv_host hosts[AC_RDV_HOSTS_MAX];
	int	cluster;	/* redis-cluster://: hosts are seed nodes */
	char	master[128];	/* the master's name the sentinels know */
	char	spassword[256];	/* the sentinels' password, "" for none; never printed */
};

/*
 * Parse URL into U; the password may instead come from the file named by
 * PASSWORD_FILE (its first line), which wins when given. With a password
 * file, the one word of "redis://WORD@host:port" is the user; without, it is
 * the password. A Sentinel URL also reads ACCELCTL_SENTINEL_PASSWORD_FILE.
 * Returns 0, or -1 with a reason in ERR that never contains the password.
 */
int ac_rdv_parse(const char *url, const char *password_file,
    struct ac_rdv_url *u, char *err, size_t errlen);

/* "host:port", or "[host]:port" for an IPv6 address, into BUF; returns BUF. */
const char *ac_rdv_hostport(const char *host, int port, char *buf, size_t len);

/*
 * Overwrite, in place, the password of the URL in ARG (the "user:password"
 * before '@'; the user stays) with '*': ARG is an argument of our own
 * command line, which /proc/PID/cmdline shows to every user. Call it after
 * the URL was copied where it is used (the environment, which only the
 * owner can read).
 */
void ac_rdv_scrub(char *arg);


#endif
