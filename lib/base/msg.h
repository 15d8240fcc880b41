/* msg.h: the one message format: "accelctl: SUBCOMMAND: what went wrong: why". */
#ifndef ACCELCTL_MSG_H
#define ACCELCTL_MSG_H

#include <stdarg.h>

/* Exit codes: the contract of DESIGN.md section 3. */
#define AC_EXIT_OK		0
#define AC_EXIT_NO		1
#define AC_EXIT_USAGE		2
#define AC_EXIT_ABORTED		3
#define AC_EXIT_LOST		4
#define AC_EXIT_TIMEOUT		124
#define AC_EXIT_FAILED		125
#define AC_EXIT_NOEXEC		126
#define AC_EXIT_NOTFOUND	127

/* The subcommand running now, for the message prefix; NULL before dispatch. */
extern const char *ac_cmdname;

/* Print "accelctl: CMD: " and the formatted message, then a newline. */
void ac_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ac_vwarnx(const char *fmt, va_list ap);

/* As ac_warnx, with ": strerror(errno)" appended. */
void ac_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Flush stdout and check that everything written reached it (git does the
 * same): a full disk or a closed pipe is an error, not a silent success.
 * Returns 0, or -1 after printing why.
 */
int ac_flush_stdout(void);

#endif
