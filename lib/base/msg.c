/* msg.c: the one message format: "accelctl: SUBCOMMAND: what went wrong: why". */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "msg.h"

const char *ac_cmdname;

void
ac_vwarnx(const char *fmt, va_list ap)
{
	/* One buffer, one write: lines of concurrent ranks must not interleave. */
	char buf[1024];
	int n;

	if (ac_cmdname != NULL)
		n = snprintf(buf, sizeof(buf), "accelctl: %s: ", ac_cmdname);
	else
		n = snprintf(buf, sizeof(buf), "accelctl: ");
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	fprintf(stderr, "%s\n", buf);
}

void
ac_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ac_vwarnx(fmt, ap);
	va_end(ap);
}

void
ac_warn(const char *fmt, ...)
{
	char buf[768];
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ac_warnx("%s: %s", buf, strerror(saved));
}

int
ac_flush_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ac_warn("write error on standard output");
		return -1;
	}
	return 0;
}
