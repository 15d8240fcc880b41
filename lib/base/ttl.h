/* ttl.h: the rendezvous' key and lease lifetime (ACCELCTL_REDIS_TTL, ACCELCTL_ETCD_TTL) and the liveness bound (ACCELCTL_NODE_TIMEOUT), parsed once for every store. */
#ifndef ACCELCTL_TTL_H
#define ACCELCTL_TTL_H

#include <stddef.h>

/* The lifetime when none is set: a day, longer than any wait's deadline. */
#define AC_TTL_DEFAULT 86400L

/*
 * Parse S as a lifetime in whole seconds: a bare number is seconds, or a
 * duration with a unit (90s, 30m, 12h, 1d), at least 1 s and at most 10
 * years. NULL or empty is the default. Returns 0, or -1 with *WHY.
 */
int ac_ttl_parse(const char *s, long *secs, const char **why);

/*
 * The lifetime from environment variable VAR. 0, or -1 with "invalid
 * VAR='value': why" in ERR: every rank checks it before it waits (exit 2 on
 * every rank at once), and the helper keeps the default for a bad one.
 */
int ac_ttl_env(const char *var, long *secs, char *err, size_t errlen);

/* The liveness bound when none is set (ACCELCTL_NODE_TIMEOUT): a node
 * silent this long is lost (rdvlive.c). */
#define AC_NODE_TIMEOUT_DEFAULT 30L

/*
 * Parse S as the liveness bound in whole seconds, like a lifetime (a bare
 * number, or 90s, 5m, 1h), at least 3 s (a beat each second) and at most a
 * day. NULL or empty is the default. 0, or -1 with *WHY.
 */
int ac_node_timeout_parse(const char *s, long *secs, const char **why);
/* The same from ACCELCTL_NODE_TIMEOUT, with ac_ttl_env's message. */
int ac_node_timeout_env(long *secs, char *err, size_t errlen);

#endif
