/* journal.h: the append-only record of a job's arrivals, results and aborts. */
#ifndef ACCELCTL_JOURNAL_H
#define ACCELCTL_JOURNAL_H

#include <stdint.h>

#include "coll.h"

/* The journal: replay FILE into J, then append to it. 0, or -1 (errno). */
int  ac_journal_open(struct ac_job *j, const char *path);

/* Each appends one record; a no-op while the journal is being replayed. */
void ac_journal_shape(struct ac_job *j);
void ac_journal_hello(struct ac_job *j, long lrank, int64_t rank);
void ac_journal_arrive(struct ac_job *j, long lrank, int op, int scope,
    int role, const char *key, uint64_t nonce, int64_t gen, int64_t source,
    int64_t status);
void ac_journal_finish(struct ac_job *j, const struct ac_coll *c);
void ac_journal_lost(struct ac_job *j, const struct ac_coll *c);
/* C was released by the transport (its outcome came from other nodes). */
void ac_journal_remote(struct ac_job *j, const struct ac_coll *c);
/* Local rank LRANK left C before it completed: its arrival is taken back. */
void ac_journal_withdraw(struct ac_job *j, long lrank, const struct ac_coll *c);
void ac_journal_abort(struct ac_job *j, long lrank, const char *reason);

/*
 * When the journal has grown past ACCELCTL_JOURNAL_MAX bytes (4 MiB), rewrite
 * it as the job's present state (a new file renamed over PATH), so that a
 * loop of a million barriers leaves a journal of a few kilobytes.
 */
void ac_journal_compact(struct ac_job *j, const char *path);

#endif
