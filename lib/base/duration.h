/* duration.h: parsing of deadlines: "90s", "30m", "2h", "500ms", a bare number is seconds. */
#ifndef ACCELCTL_DURATION_H
#define ACCELCTL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* A unit of a number with a unit: its suffix ("" for a bare number) and what one is worth. */
struct ac_unit {
	const char	*suffix;
	long		 mult;
};

/*
 * Parse S as digits and one of the N UNITS; store the value times the unit's
 * worth in *OUT, at most MAX. 0, or -1 with *WHY (WHAT when no unit fits,
 * "too large" past MAX).
 */
int ac_parse_units(const char *s, const struct ac_unit *units, size_t n,
    long max, long *out, const char *what, const char **why);

/* Store S in milliseconds in *MS (at most 30 days). Returns 0, or -1 with *WHY. */
int ac_parse_duration(const char *s, long *ms, const char **why);

/* Milliseconds of CLOCK_MONOTONIC: deadlines survive changes of the wall clock. */
long ac_now_ms(void);
/* Microseconds of CLOCK_MONOTONIC (a collective's times, for the record). */
int64_t ac_now_us(void);
/* Microseconds of CLOCK_REALTIME: when something happened, to compare with
 * a process's start time (lost.c). */
int64_t ac_wall_us(void);

/*
 * The poll(2) timeout until DEADLINE (ac_now_ms() time; -1: none): -1, or
 * 0..INT_MAX. A deadline further away than INT_MAX ms (24.8 days) is waited
 * for in several polls, never cast into a negative (infinite) timeout.
 */
int ac_poll_ms(long deadline);

/* Write MS as "2s", "1m30s", "250ms" into BUF. */
const char *ac_format_duration(long ms, char *buf, unsigned long len);

#endif
