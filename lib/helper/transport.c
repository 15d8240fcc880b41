/* transport.c: the table of transports, and the one place where a job's transport is chosen.
 *
 * A row is either a rendezvous (it serves URL schemes of ACCELCTL_RENDEZVOUS:
 * Redis) or a transport that rides on one (NCCL: the rendezvous posts its
 * communicator's id and is its fallback). A job of one node needs none, unless
 * ACCELCTL_TRANSPORT=nccl forces a one-rank communicator. A new transport is
 * its own file and one row here; the helper's loop never names one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "config.h"
#include "rdvurl.h"
#include "transport.h"
#include "ttl.h"
#include "xport.h"
#if ACCELCTL_HAVE_HIREDIS
#include "xredis.h"
#endif
#if ACCELCTL_HAVE_NCCL
#include "xnccl.h"
#endif
#if ACCELCTL_HAVE_ETCD
#include "etcdurl.h"
#include "xetcd.h"
#endif

struct row {
	const char	*name;
	/* A rendezvous: the URL schemes it serves, their forms (for
	 * messages), and how it starts. */
	const char	*const *schemes;
	const char	*forms;
	const struct ac_xport *(*open)(struct ac_job *, const struct ac_xstart *,
			    const struct ac_rdv **, char *, size_t);
	/* What every rank checks first (URL, the transport's variables). */
	int		(*check)(const char *url, const char *password_file,
			    char *err, size_t errlen);
	/* A transport that rides on a rendezvous (or alone on one node), when
	 * ACCELCTL_TRANSPORT is not the rendezvous' own. */
	const struct ac_xport *(*ride)(struct ac_job *, const struct ac_rdv *, int);
};

#if ACCELCTL_HAVE_HIREDIS
static const struct ac_xport *
open_redis(struct ac_job *j, const struct ac_xstart *s, const struct ac_rdv **rdv,
    char *err, size_t errlen)
{
	struct ac_rdv_url u;

	if (ac_rdv_parse(s->url, s->password_file, &u, err, errlen) == -1)
		return NULL;
	return ac_xredis_open(j, &u, s->runid, rdv);
}

static const char *const redis_schemes[] = { "redis", "redis-sentinel",
    "redis-cluster", "unix", NULL };
#endif

#if ACCELCTL_HAVE_ETCD
static const struct ac_xport *
open_etcd(struct ac_job *j, const struct ac_xstart *s, const struct ac_rdv **rdv,
    char *err, size_t errlen)
{
	struct ac_etcd_url u;
	const struct ac_xport *x;

	if (ac_etcd_parse_env(s->url, &u, err, errlen) == -1)
		return NULL;
	x = ac_xetcd_open(j, &u, s->runid, rdv);
	explicit_bzero(&u, sizeof(u));
	return x;
}

/* What every rank checks: the URL and ACCELCTL_ETCD_* files. */
static int
check_etcd(const char *url, const char *password_file, char *err,
    size_t errlen)
{
	struct ac_etcd_url u;
	int rc = ac_etcd_parse_env(url, &u, err, errlen);
	long ttl;

	(void)password_file;	/* etcd's is ACCELCTL_ETCD_PASSWORD_FILE */
	explicit_bzero(&u, sizeof(u));
	if (rc == 0)
		rc = ac_ttl_env("ACCELCTL_ETCD_TTL", &ttl, err, errlen);
	return rc;
}

static const char *const etcd_schemes[] = { "etcd", "etcds", NULL };
#endif

static const struct row rows[] = {
#if ACCELCTL_HAVE_HIREDIS
	{ "redis", redis_schemes, "redis://[user:password@]host:port[/db], "
	    "redis-sentinel://[[user:]password@]host[:port][,host[:port]...][/db]#master, "
	    "redis-cluster://[[user:]password@]host[:port][,host[:port]...] "
	    "or unix:///path", open_redis, ac_xredis_check, NULL },
#endif
#if ACCELCTL_HAVE_ETCD
	{ "etcd", etcd_schemes, "etcd[s]://[user:password@]host:port[,host:port...]",
	    open_etcd, check_etcd, NULL },
#endif
#if ACCELCTL_HAVE_NCCL
	{ "nccl", NULL, NULL, NULL, NULL, ac_xnccl_open },
#endif
	{ NULL, NULL, NULL, NULL, NULL, NULL }
};

int
ac_transport_parse(const char *s, int *setting, const char **why)
{
	*setting = AC_TSET_AUTO;
	if (s == NULL || *s == '\0' || strcmp(s, "auto") == 0)
		return 0;
	if (strcmp(s, "redis") == 0) {
		*setting = AC_TSET_REDIS;
		return 0;
	}
	if (strcmp(s, "nccl") == 0) {
		*setting = AC_TSET_NCCL;
		return 0;
	}
	*why = "expected auto, redis or nccl";
	return -1;
}

int
ac_transport_choose(int setting, int compiled, long nnodes, int gpu)
{
	switch (setting) {
	case AC_TSET_NCCL:
		return compiled && gpu ? AC_T_NCCL : AC_T_UNAVAILABLE;
	case AC_TSET_REDIS:
		return nnodes > 1 ? AC_T_REDIS : AC_T_NONE;
	default:
		if (nnodes <= 1)
			return AC_T_NONE;
		return compiled && gpu ? AC_T_NCCL : AC_T_REDIS;
	}
}

const char *
ac_transport_name(int choice)
{
	switch (choice) {
	case AC_T_NONE: return "none";
	case AC_T_REDIS: return "redis";
	case AC_T_NCCL: return "nccl";
	default: return "unavailable";
	}
}

/*
 * A transport that could not start: its waiters fail at once (exit 125) with
 * the reason, rather than a cross-node wait completing on one node.
 */
static char failed_why[600];

static int f_fds(struct pollfd *p, int room) { (void)p; (void)room; return 0; }
static void f_events(const struct pollfd *p, int n) { (void)p; (void)n; }
static long f_timer(long now) { (void)now; return -1; }
static void f_describe(char *buf, size_t len) { snprintf(buf, len, "failed (%s)", failed_why); }
static const char *f_down(int *final) { *final = 1; return failed_why; }
static void f_stop(void) { }
static void f_coll(struct ac_job *j, struct ac_coll *c) { (void)j; (void)c; }
static void f_job(struct ac_job *j) { (void)j; }
static const char *f_node(long node) { (void)node; return NULL; }

static const struct ac_xport failed = {
	.name = "failed", .fds = f_fds, .events = f_events, .timer = f_timer,
	.describe = f_describe, .down = f_down, .stop = f_stop,
	.arrive = f_coll, .publish = f_coll, .want = f_coll, .abort = f_job,
	.hello = f_job, .node = f_node, .expired = NULL,
};

static const struct row *
rider(void)
{
	for (const struct row *r = rows; r->name != NULL; r++)
		if (r->ride != NULL)
			return r;
	return NULL;
}

static const struct row *
by_scheme(const char *url)
{
	const char *sep = strstr(url, "://");
	size_t n = sep != NULL ? (size_t)(sep - url) : 0;

	for (const struct row *r = rows; r->name != NULL; r++)
		for (const char *const *s = r->schemes; s != NULL && *s != NULL; s++)
			if (n > 0 && strlen(*s) == n && strncmp(*s, url, n) == 0)
				return r;
	return NULL;
}

/* "ACCELCTL_RENDEZVOUS: no transport for 'etcd://' in this build": the
 * scheme only, never what follows it (a password). */
static void
no_scheme(const char *url, char *err, size_t errlen)
{
	const char *sep = strstr(url, "://");
	int n = sep != NULL && sep - url <= 16 ? (int)(sep - url) : 0;
	size_t k = (size_t)snprintf(err, errlen, "invalid rendezvous: expected ");

	for (const struct row *r = rows; r->name != NULL && k < errlen; r++)
		if (r->forms != NULL)
			k += (size_t)snprintf(err + k, errlen - k, "%s%s",
			    r == rows ? "" : " or ", r->forms);
	if (k >= errlen)
		return;
	if (rows[0].forms == NULL)
		snprintf(err + k, errlen - k, "a rendezvous, but this build has "
		    "none (see accelctl --version)");
	else if (n > 0)
		snprintf(err + k, errlen - k, " (this build has no transport "
		    "for '%.*s://')", n, url);
}

int
ac_transport_check(const char *url, const char *password_file, char *err,
    size_t errlen)
{
	const struct row *r = by_scheme(url);

	long secs;

	if (r == NULL) {
		no_scheme(url, err, errlen);
		return -1;
	}
	if (r->check != NULL && r->check(url, password_file, err, errlen) == -1)
		return -1;
	/* The liveness bound is every store's (rdvlive.c). */
	return ac_node_timeout_env(&secs, err, errlen);
}

int
ac_transport_open(struct ac_job *j, const struct ac_xstart *s, char *err,
    size_t errlen)
{
	const struct row *r, *ride = rider();
	const struct ac_rdv *rdv = NULL;
	const struct ac_xport *x;

	if (j->x != NULL)
		return 0;
	/*
	 * The choice is ac_transport_choose's, as info shows it; whether a GPU
	 * is visible is the rider's to find out, at its first collective
	 * (without one, auto falls back to the rendezvous, forced fails).
	 */
	int rides = ride != NULL && ac_transport_choose(s->setting, 1, j->nnodes,
	    1) == AC_T_NCCL;

	if (j->nnodes <= 1) {
		/* Forced NCCL carries a one-node job too: a one-rank communicator. */
		if (rides && j->world > 1)
			j->x = ride->ride(j, NULL, s->setting);
		return 0;
	}
	if (s->url == NULL || *s->url == '\0')
		snprintf(err, errlen, "this job spans %ld nodes: set "
		    "ACCELCTL_RENDEZVOUS so that the nodes' helpers can meet",
		    j->nnodes);
	else if ((r = by_scheme(s->url)) == NULL)
		no_scheme(s->url, err, errlen);
	else if ((x = r->open(j, s, &rdv, err, errlen)) != NULL) {
		if (rides && rdv != NULL)
			x = ride->ride(j, rdv, s->setting);
		j->x = x;
		return 0;
	}
	snprintf(failed_why, sizeof(failed_why), "%s", err);
	j->x = &failed;
	return -1;
}
