/* duration.h: parsing of deadlines: "90s", "30m", "2h", "500ms", a bare number is seconds. */
#ifndef ACCELCTL_DURATION_H
#define ACCELCTL_DURATION_H

/* Store S in milliseconds in *MS (at most 30 days). Returns 0, or -1 with *WHY. */
int ac_parse_duration(const char *s, long *ms, const char **why);

/* Milliseconds of CLOCK_MONOTONIC: deadlines survive changes of the wall clock. */
long ac_now_ms(void);

/* Write MS as "2s", "1m30s", "250ms" into BUF. */
const char *ac_format_duration(long ms, char *buf, unsigned long len);

#endif
