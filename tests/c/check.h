/* check.h: the few assertion macros the C unit tests need; no framework. */
#ifndef ACCELCTL_CHECK_H
#define ACCELCTL_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failed, check_passed;

#define CHECK(cond) do {						\
	if (cond)							\
		check_passed++;						\
	else {								\
		check_failed++;						\
		fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__,	\
		    __LINE__, #cond);					\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *a_ = (a), *b_ = (b);				\
	if (a_ != NULL && b_ != NULL && strcmp(a_, b_) == 0)		\
		check_passed++;						\
	else {								\
		check_failed++;						\
		fprintf(stderr, "%s:%d: '%s' != '%s'\n", __FILE__,	\
		    __LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)");	\
	}								\
} while (0)

/* End of main(): one summary line, and the exit code ctest reads. */
#define CHECK_DONE() (printf("%d passed, %d failed\n", check_passed,	\
    check_failed), check_failed != 0)

#endif
