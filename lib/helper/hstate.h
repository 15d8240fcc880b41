/* hstate.h: the per-node helper's one state: its job, its clients, its listener. */
#ifndef ACCELCTL_HSTATE_H
#define ACCELCTL_HSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "proto.h"
#include "rankproc.h"

/*
 * Apart from helper.h (the loop's and the connections' functions) so that
 * the parts that only read it (where.c, gone.c) include this and not the
 * loop that calls them: no include circle in the helper's folder.
 */

/* One local client: a short-lived accelctl, from HELLO to its last reply. */
struct ac_hconn {
	struct ac_hconn	*next;
	int		 fd;
	uint8_t		*in;
	size_t		 inlen, incap;
	long		 since;		/* accepted, or the unfinished frame's first byte */
	struct ac_buf	 out;
	size_t		 outoff;
	int		 hello, closing;	/* closing: 1 after the replies, 2 now */
	long		 lrank;
	int64_t		 rank;
	struct ac_coll	*coll;		/* the collective it waits on */
	int		 role;
	int		 late_finish;	/* a source released before its FINISH: drop it */
	long		 deadline;	/* ms, -1 none */
	long		 waiting_since;	/* ms: its ARRIVE */
	char		*timeout_text;	/* its timeout's line, made before any left */
	long		 progress_ms, next_progress;
	long		 status_at;	/* ms: answer its STATUS then (0 none) */
	long		 pid;		/* the client's (SO_PEERCRED) */
	/* When the process that is its rank started (wall µs; 0 not known):
	 * a rank gone before that was of an earlier attempt (lost.h). */
	int64_t		 root_us;
};

/* What the loop and the connections share: one helper serves one job. */
struct ac_helper {
	struct ac_job	 job;
	struct ac_hconn	*conns;
	long		 nconns;
	long		 max_clients;
	int		 lfd;		/* the listening socket */
	int		 afd;		/* its abstract twin (rundir.h), or -1 */
	int		 spare;		/* a reserved fd, to refuse clients at EMFILE */
	int		 accept_paused;	/* at the fd limit: until a connection closes */
	struct ac_rankproc *rproc;	/* [lsize]: who ran each rank's last call */
	long		 idle_since;	/* ms: the last wait ended, or the last request */
	int		 stop;		/* leave the loop */
};

extern struct ac_helper ac_hs;

#endif
