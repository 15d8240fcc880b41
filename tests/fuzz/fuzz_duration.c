/* fuzz_duration.c: libFuzzer target for the duration parser (ac_parse_duration in lib/base/duration.c, ac_parse_uint in lib/base/num.c).
 *
 * The input is one string, as given to --timeout or ACCELCTL_HELPER_IDLE.
 * Checks beyond the sanitizers: an accepted duration is 0 to 30 days, and
 * ac_format_duration writes it as a string that parses back to the same
 * value; a refused one has a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "num.h"

#define MAX_MS (30L * 24 * 3600 * 1000)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), buf[64];
	const char *why = NULL;
	long ms = -1, again = -1, v;

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	if (ac_parse_duration(s, &ms, &why) == 0) {
		if (ms < 0 || ms > MAX_MS)
			abort();
		ac_format_duration(ms, buf, sizeof(buf));
		if (ac_parse_duration(buf, &again, &why) != 0 || again != ms)
			abort();
	} else if (why == NULL || *why == '\0')
		abort();
	/* The bounded integer parser under it, with a bound from the input. */
	why = NULL;
	if (ac_parse_uint(s, size > 0 ? (long)(data[0] * 1000003L) : 0, &v, &why) == 0) {
		if (v < 0 || v > (size > 0 ? data[0] * 1000003L : 0))
			abort();
	} else if (why == NULL)
		abort();
	free(s);
	return 0;
}
