/* etcdurl.h: the etcd rendezvous address: etcd[s]://[user:password@]host:port[,host:port...]. */
#ifndef ACCELCTL_ETCDURL_H
#define ACCELCTL_ETCDURL_H

#include <stddef.h>

#define AC_ETCD_MAX_ENDPOINTS 16

struct ac_etcd_url {
	int	 tls;			/* etcds:// */
	int	 n;			/* endpoints */
	char	 host[AC_ETCD_MAX_ENDPOINTS][256];
	int	 port[AC_ETCD_MAX_ENDPOINTS];
	char	 where[AC_ETCD_MAX_ENDPOINTS][300];	/* "host:port" for messages */
	char	 user[128];		/* "" for none (no authentication) */
	char	 password[256];		/* never printed */
	char	 cacert[512], cert[512], key[512];	/* etcds:// files, or "" */
};

/* Is URL one of ours (etcd:// or etcds://)? */
int ac_etcd_scheme(const char *url);

/*
 * Parse URL into U. The password may instead come from the first line of
 * PASSWORD_FILE (ACCELCTL_ETCD_PASSWORD_FILE), which wins; with a file, a
 * lone word before '@' is the user. For etcds://, CACERT is required
 * (ACCELCTL_ETCD_CACERT), CERT and KEY optional but given together. 0, or -1
 * with a reason in ERR that never holds the password.
 */
int ac_etcd_parse(const char *url, const char *password_file, const char *cacert,
    const char *cert, const char *key, struct ac_etcd_url *u, char *err,
    size_t errlen);

/* The same, with the files from the ACCELCTL_ETCD_* environment variables. */
int ac_etcd_parse_env(const char *url, struct ac_etcd_url *u, char *err,
    size_t errlen);

#endif
