/* ttl.c: the rendezvous' key and lease lifetime, parsed once for every store.
 *
 * Redis' key TTL and etcd's lease TTL are the same setting for the user:
 * how long a job's state outlives its last helper. They were parsed twice,
 * one checked on every rank and the other read with atol ("1d" was a
 * 1-second lease, "abc" the default, silently: issue 18). Here is the one
 * parser, and the one message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "num.h"
#include "ttl.h"

#define TTL_MAX 315360000L	/* ten years */

int
ac_ttl_parse(const char *s, long *secs, const char **why)
{
	static const struct ac_unit units[] = {
		{ "", 1 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	long v;

	*secs = AC_TTL_DEFAULT;
	if (s == NULL || *s == '\0')
		return 0;
	if (ac_parse_units(s, units, sizeof(units) / sizeof(units[0]), TTL_MAX,
	    &v, "not a lifetime (seconds, or like 90s, 30m, 12h, 1d)", why) == -1) {
		if (strcmp(*why, "too large") == 0)
			*why = "too long (at most 10 years)";
		return -1;
	}
	if (v == 0) {
		*why = "must be at least 1 second";
		return -1;
	}
	*secs = v;
	return 0;
}

int
ac_ttl_env(const char *var, long *secs, char *err, size_t errlen)
{
	const char *s = getenv(var), *why;
	char b[48];

	if (ac_ttl_parse(s, secs, &why) == 0)
		return 0;
	snprintf(err, errlen, "invalid %s='%s': %s", var, ac_shorten(s, b,
	    sizeof(b)), why);
	*secs = AC_TTL_DEFAULT;
	return -1;
}

int
ac_node_timeout_parse(const char *s, long *secs, const char **why)
{
	static const struct ac_unit units[] = {
		{ "", 1 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	long v;

	*secs = AC_NODE_TIMEOUT_DEFAULT;
	if (s == NULL || *s == '\0')
		return 0;
	if (ac_parse_units(s, units, sizeof(units) / sizeof(units[0]), 86400,
	    &v, "not a duration (seconds, or like 45s, 5m, 1h, 1d)", why) == -1) {
		if (strcmp(*why, "too large") == 0)
			*why = "too long (at most a day)";
		return -1;
	}
	/* A beat every third of it, a look every eighth: under 3 s the
	 * beats of a busy node would be late for the bound. */
	if (v < 3) {
		*why = "too short (at least 3 seconds)";
		return -1;
	}
	*secs = v;
	return 0;
}

int
ac_node_timeout_env(long *secs, char *err, size_t errlen)
{
	const char *s = getenv("ACCELCTL_NODE_TIMEOUT"), *why;
	char b[48];

	if (ac_node_timeout_parse(s, secs, &why) == 0)
		return 0;
	snprintf(err, errlen, "invalid ACCELCTL_NODE_TIMEOUT='%s': %s",
	    ac_shorten(s, b, sizeof(b)), why);
	*secs = AC_NODE_TIMEOUT_DEFAULT;
	return -1;
}
