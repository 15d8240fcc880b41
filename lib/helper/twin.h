/* twin.h: ranks of this node where this helper cannot be reached (twin.c). */
#ifndef ACCELCTL_TWIN_H
#define ACCELCTL_TWIN_H

/* Look for this node's ranks (job JOB_ID, node NODE) that cannot reach the
 * helper of runtime directory DIR (its descriptor DFD); not ENABLED, never
 * (a job run by hand: its runs in two containers are two jobs). */
void ac_twin_init(const char *job_id, long node, const char *dir, int dfd,
    int enabled);
void ac_twin_stop(void);
/*
 * Due at NOW, while a wait has lasted since WAITED_SINCE (ms; -1: none, or
 * no local rank is missing that never connected): /proc read when due,
 * *NEXT lowered to the next scan. The failure's text while such a rank was
 * found in the last scan, else NULL.
 */
const char *ac_twin_timer(long now, long waited_since, long *next);
/* Another helper found this node split and asks us (SIGUSR2) to look now,
 * while its ranks still live to be found. */
void ac_twin_poke(void);

#endif
