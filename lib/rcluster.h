/* rcluster.h: Redis Cluster's redirections: which node MOVED names. */
#ifndef ACCELCTL_RCLUSTER_H
#define ACCELCTL_RCLUSTER_H

#include "rdvurl.h"

/*
 * Is error reply TEXT "MOVED SLOT HOST:PORT"? 1 with the address in H (an
 * empty host, Redis 7's "unknown endpoint", is CUR's); 0 for every other
 * error, ASK among them (rcluster.c says why).
 */
int ac_rcluster_moved(const char *text, const char *cur, struct ac_rdv_host *h);

#endif
