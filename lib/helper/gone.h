/* gone.h: how a node's helper learns that one of its ranks is gone for good (gone.c). */
#ifndef ACCELCTL_GONE_H
#define ACCELCTL_GONE_H

#include <poll.h>

struct ac_hconn;

/* Watch DIR (the runtime directory) for news that a rank is gone: files
 * named PREFIX (the job's "JOB.gone.") and the rank. */
void ac_gone_init(const char *dir, const char *prefix);
/* The job's shape is known: read the news left before this helper began. */
void ac_gone_shaped(void);
/* C arrived at a collective: know its rank's process (watched from now on),
 * and set C->root_us, when that process started (0: not known). */
void ac_gone_arrived(struct ac_hconn *c);
/* A connection of local rank LRANK closed: the rank is gone if its process
 * ended meanwhile. */
void ac_gone_closed(long lrank);
/* The descriptors to poll (room for ROOM); what poll(2) said of them. */
int  ac_gone_fds(struct pollfd *pfd, int room);
void ac_gone_events(const struct pollfd *pfd, int n);
/* Work due at NOW (ms): ms until it is due again, or -1. */
long ac_gone_timer(long now);
void ac_gone_stop(void);
/* Does a rank's process (its root) that this helper watches still run? A
 * helper of a job across nodes stays while one does: its beat is its node's
 * liveness (rdvlive.c), and an idle exit would read as a dead node. */
int  ac_gone_live_roots(void);

#endif
