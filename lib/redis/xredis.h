/* xredis.h: the Redis store: its keys, scripts and the run's stream, over rconn.c. */
#ifndef ACCELCTL_XREDIS_H
#define ACCELCTL_XREDIS_H

#include "rdvurl.h"
#include "xport.h"

struct ac_job;

/*
 * Start the Redis transport of job J at U (connecting asynchronously), as
 * the run RID. Returns the transport; *RDV is what a transport riding on it
 * (NCCL) may ask of it.
 */
const struct ac_xport *ac_xredis_open(struct ac_job *j,
    const struct ac_rdv_url *u, struct ac_runid *rid, const struct ac_rdv **rdv);

/*
 * What every rank checks before it waits, so that a mistake is exit 2 on
 * every rank at once: the URL (with PASSWORD_FILE) and ACCELCTL_REDIS_TTL.
 * 0, or -1 with a reason in ERR that never contains the password.
 */
int ac_xredis_check(const char *url, const char *password_file, char *err,
    size_t errlen);

#endif
