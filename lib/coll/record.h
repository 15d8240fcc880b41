/* record.h: the table that writes a job's events down: the journal's records and the history's. */
#ifndef ACCELCTL_RECORD_H
#define ACCELCTL_RECORD_H

#include "coll.h"

/* Set as a job's rec (coll.h) by the helper, before its journal opens, so
 * that the replay and every live change are written as coll.c tells them. */
extern const struct ac_coll_rec ac_record;

#endif
