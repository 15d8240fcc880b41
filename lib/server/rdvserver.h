/* rdvserver.h: a job-scoped redis-server: found, configured, started, supervised, stopped. */
#ifndef ACCELCTL_RDVSERVER_H
#define ACCELCTL_RDVSERVER_H

#include <limits.h>
#include <stddef.h>

#include "rdvowner.h"
#include "rdvstate.h"

struct ac_rdv_conf {
	char			redis[PATH_MAX];	/* the redis-server binary */
	char			version[32];
	int			major;
	char			bind[64];	/* the address it listens on */
	char			addr[64];	/* the address clients connect to */
	const char		*addr_from;	/* how that address was chosen */
	int			port;		/* 0: a free one */
	char			dir[512];	/* the job's directory */
	char			password[65];	/* never in an argv, environment or log */
	struct ac_rdv_owner	owner;
};

/*
 * The redis-server to run: OPT (--redis-server), else ACCELCTL_REDIS_SERVER,
 * else "redis-server" on PATH; with its version (redis-server --version).
 * Returns 0; -1 with a reason in ERR when there is none or it cannot run,
 * or is older than Redis 6 (no ACL users).
 */
int ac_rdv_find_redis(const char *opt, struct ac_rdv_conf *c, char *err,
    size_t errlen);

/*
 * Start the server of C (its directory and password file made already)
 * under a supervisor process that stops it and removes the directory when
 * C's owner exits, when it gets SIGTERM ("rendezvous stop"), or when the
 * server cannot be kept running. Returns once the server answered PING as
 * the job's user, with its state in S; or -1 with a reason in ERR, every
 * process and file of it gone.
 */
int ac_rdv_start(struct ac_rdv_conf *c, struct ac_rdv_state *s, char *err,
    size_t errlen);

/* Stop the server of S and wait until its supervisor is gone (the server
 * stopped, the directory removed), at most 3 s. Returns 0, or -1 with a reason in ERR. */
int ac_rdv_stop(const struct ac_rdv_state *s, char *err, size_t errlen);

#endif
