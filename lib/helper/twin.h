/* twin.h: a second helper of this job's node in another network namespace (twin.c). */
#ifndef ACCELCTL_TWIN_H
#define ACCELCTL_TWIN_H

/* Look for twins of the helper that holds PIDFILE (its base name names the
 * job and node); not ENABLED, never (a job run by hand: its runs in two
 * containers are two jobs). */
void ac_twin_init(const char *pidfile, int enabled);
void ac_twin_stop(void);
/*
 * Due at NOW, while a wait that misses a rank that never connected has
 * lasted since WAITED_SINCE (ms; -1: no such wait): /proc read when due,
 * *NEXT lowered to the next scan. The failure's text while a twin was
 * found in the last scan, else NULL.
 */
const char *ac_twin_timer(long now, long waited_since, long *next);

#endif
