/* rsentinel.h: which server is Redis' master now, as the sentinels say, and a word when that changes. */
#ifndef ACCELCTL_RSENTINEL_H
#define ACCELCTL_RSENTINEL_H

#include <poll.h>

#include "rdvurl.h"

struct ac_rsent_hooks {
	/* The answer to ac_rsent_ask: the master's address. */
	void	(*found)(const char *host, int port);
	/* No sentinel answered ac_rsent_ask: WHY names each and what it said. */
	void	(*failed)(const char *why);
	/* A sentinel announced a failover (+switch-master): the new master;
	 * or, HOST NULL, the subscription was lost and is back (a switch may
	 * have been missed meanwhile: ask again). */
	void	(*switched)(const char *host, int port);
};

/* Start listening for failovers of U's master (U is kept, not copied). */
void ac_rsent_start(const struct ac_rdv_url *u, const struct ac_rsent_hooks *h);
/* Ask the sentinels in turn for the master's address; one of the hooks
 * found/failed answers, from ac_rsent_events or ac_rsent_timer. A question
 * already out is not asked twice. */
void ac_rsent_ask(void);
/* The last answer named a server that is not the master: the next
 * question starts with the next sentinel (a stale one is not asked first
 * for ever). */
void ac_rsent_distrust(void);
/* 1 while a question is out. */
int  ac_rsent_asking(void);
int  ac_rsent_fds(struct pollfd *pfd, int room);
void ac_rsent_events(const struct pollfd *pfd, int n);
/* What is due now; the ms until the next thing due, or -1. */
long ac_rsent_timer(long now);
void ac_rsent_stop(void);

#endif
