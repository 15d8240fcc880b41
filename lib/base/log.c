/* log.c: the helper's log line: a timestamp, the pid, the message, flushed at once.
 *
 * Flushed per line because the helper may be killed at any moment (the OOM
 * killer, kill -9 in a test): the line that says what it was doing is the
 * one worth having.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

void
ac_log(const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	va_list ap;

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime(&now));
	fprintf(stderr, "%s accelctl-helper[%ld]: ", ts, (long)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}
