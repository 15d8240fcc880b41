/* trace.h: each node's helper writing its record as Chrome trace events (ACCELCTL_TRACE_DIR), and their merge into one file for the job. */
#ifndef ACCELCTL_TRACE_H
#define ACCELCTL_TRACE_H

#include <stdint.h>

struct ac_coll;
struct ac_job;

/* A node's file in DIR: "accelctl.JOB.node-N.json". */
#define AC_TRACE_PREFIX "accelctl."
#define AC_TRACE_NODE ".node-"

/* Read ACCELCTL_TRACE_DIR (the helper, before it leaves the job's working
 * directory: a relative one is the job's). */
void ac_trace_init(void);
/* C was recorded (history.c): append its events to this node's file when
 * ACCELCTL_TRACE_DIR is set. WALL_MS is the wall clock at its release;
 * LAST the rank whose arrival completed it on this node (history.c's
 * ac_history_last_rank: passed in, so that the trace reads the history's
 * answer and does not include it). */
void ac_trace_add(const struct ac_job *j, const struct ac_coll *c,
    int64_t wall_ms, int64_t last);
/* Close the file (the helper exits). */
void ac_trace_close(void);

/*
 * "accelctl trace merge": the node files of job JOB in DIR (NULL: the one job
 * there) into OUT (NULL: DIR/accelctl.JOB.json), the nodes' clocks aligned by
 * the releases they share; SVG, unless NULL, gets a timeline of the same
 * events, one row per rank. The offsets used are printed on stderr. Returns
 * an exit code: 0; 1 with a message when nothing could be merged; 2 for an
 * output that is not a regular file; 125 when writing failed.
 */
int ac_trace_merge(const char *dir, const char *job, const char *out,
    const char *svg);

#endif
