/* tmerge.h: the events that "accelctl trace merge" read from the nodes' files, as the SVG timeline (tsvg.c) draws them. */
#ifndef ACCELCTL_TMERGE_H
#define ACCELCTL_TMERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ac_tev {
	char		 ph;		/* 'X' a slice, 'M' metadata */
	long		 pid;		/* the node */
	long long	 tid;		/* the rank */
	int64_t		 ts, dur;	/* us; ts on the merged timeline */
	long long	 gen;
	int		 cmd;		/* a source's CMD, not a wait */
	int		 local;		/* node-scoped: each node's own */
	char		*line;		/* the event as read, without ",\n" */
	size_t		 ts_at, ts_end;	/* where its "ts" value is in LINE */
	const char	*key;		/* the collective, "b:NAME" ("" for M),
					 * in LINE's allocation, after it */
};

/* Write the N events (sorted by track, then time; ts on the merged
 * timeline from 0) to F as an SVG timeline, one row per rank: 0, or -1. */
int ac_tsvg_write(FILE *f, const struct ac_tev *ev, size_t n, const char *job);

#endif
