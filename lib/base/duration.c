/* duration.c: parsing of deadlines: "90s", "30m", "2h", "500ms", a bare number is seconds. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "num.h"

#define MAX_MS (30L * 24 * 3600 * 1000)

int
ac_parse_units(const char *s, const struct ac_unit *units, size_t n, long max,
    long *out, const char *what, const char **why)
{
	char digits[32];
	size_t nd = strspn(s, "0123456789");
	long v;

	*why = what;
	if (nd == 0 || nd >= sizeof(digits))
		return -1;
	memcpy(digits, s, nd);
	digits[nd] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (strcmp(s + nd, units[i].suffix) != 0)
			continue;
		if (ac_parse_uint(digits, max / units[i].mult, &v, why) == -1) {
			*why = "too large";
			return -1;
		}
		*out = v * units[i].mult;
		return 0;
	}
	return -1;
}

int
ac_parse_duration(const char *s, long *ms, const char **why)
{
	static const struct ac_unit units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		{ "d", 86400000 }, { "", 1000 },
	};

	if (ac_parse_units(s, units, sizeof(units) / sizeof(units[0]), MAX_MS,
	    ms, "not a duration (like 90s, 30m, 2h, 500ms)", why) == 0)
		return 0;
	if (strcmp(*why, "too large") == 0)
		*why = "too long (at most 30 days)";
	return -1;
}

long
ac_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int64_t
ac_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
ac_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int
ac_poll_ms(long deadline)
{
	long left;

	if (deadline < 0)
		return -1;
	left = deadline - ac_now_ms();
	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

const char *
ac_format_duration(long ms, char *buf, unsigned long len)
{
	if (ms < 1000 || ms % 1000 != 0)
		snprintf(buf, len, "%ldms", ms);
	else if (ms < 60000 || ms % 60000 != 0)
		snprintf(buf, len, "%lds", ms / 1000);
	else if (ms < 3600000 || ms % 3600000 != 0)
		snprintf(buf, len, "%ldm", ms / 60000);
	else
		snprintf(buf, len, "%ldh", ms / 3600000);
	return buf;
}
