/* num.h: bounded parsing of non-negative integers, with a reason on failure. */
#ifndef ACCELCTL_NUM_H
#define ACCELCTL_NUM_H

/*
 * Parse S as a decimal integer in [0, MAX]. Only digits are accepted: no sign,
 * no blanks, no base prefix, so "1x", " 1", "+1" and "-1" are all refused.
 * Returns 0 and stores the value in *OUT, or -1 with *WHY set to a short
 * static phrase ("not a non-negative integer", "too large") for messages.
 */
int ac_parse_uint(const char *s, long max, long *out, const char **why);

/*
 * Copy at most 40 characters of S into BUF (of size LEN) for an error message,
 * ending with "..." when S was longer: a 100 kB variable must not become a
 * 100 kB message.
 */
const char *ac_shorten(const char *s, char *buf, unsigned long len);

#endif
