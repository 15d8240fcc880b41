/* xetcd.h: the etcd transport: arrivals, results, abort and the run identity as etcd v3 keys. */
#ifndef ACCELCTL_XETCD_H
#define ACCELCTL_XETCD_H

#include "etcdurl.h"
#include "xport.h"

struct ac_job;

/* Start the etcd transport of job J at U (connecting asynchronously), as the
 * run RID; *RDV is what a transport riding on it (NCCL) is given. */
const struct ac_xport *ac_xetcd_open(struct ac_job *j,
    const struct ac_etcd_url *u, struct ac_runid *rid,
    const struct ac_rdv **rdv);

#endif
