/* xvalue.h: how a collective's result is stored in a rendezvous: "R status\nfailed\n" and the payload, or "L". */
#ifndef ACCELCTL_XVALUE_H
#define ACCELCTL_XVALUE_H

#include <stddef.h>

#include "xport.h"

struct ac_coll;

/* C's result as a rendezvous stores it (malloc'ed, *LEN bytes), or NULL. */
char *ac_xvalue_make(const struct ac_coll *c, size_t *len);

/*
 * Read a stored result V (LEN bytes) into R; R->failed points into FAILED
 * (FLEN bytes), R->payload into V. 0, or -1 when V is not a result.
 */
int  ac_xvalue_read(const char *v, size_t len, struct ac_result *r,
    char *failed, size_t flen);

#endif
