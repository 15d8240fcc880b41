/* num.c: bounded parsing of non-negative integers, with a reason on failure. */
#include <string.h>

#include "num.h"

int
ac_parse_uint(const char *s, long max, long *out, const char **why)
{
	long v = 0;

	if (s == NULL || *s == '\0') {
		*why = "empty";
		return -1;
	}
	for (const char *p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9') {
			*why = "not a non-negative integer";
			return -1;
		}
	}
	/* Digits only from here: the sole failure left is overflow. */
	for (const char *p = s; *p != '\0'; p++) {
		int d = *p - '0';
		/* d > max first: (max - d) / 10 rounds a negative toward 0,
		 * and "2" passed a max of 1 (a bound of 2d taken for 1 day). */
		if (d > max || v > (max - d) / 10) {
			*why = "too large";
			return -1;
		}
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

const char *
ac_shorten(const char *s, char *buf, unsigned long len)
{
	size_t n = strlen(s);

	if (len < 8)
		return "";
	if (n < len && n <= 40) {
		memcpy(buf, s, n + 1);
		return buf;
	}
	n = len - 4 < 40 ? len - 4 : 40;
	memcpy(buf, s, n);
	memcpy(buf + n, "...", 4);
	return buf;
}
