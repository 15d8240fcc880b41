/* transport.h: which transport carries a job's cross-node step (ACCELCTL_TRANSPORT, ACCELCTL_RENDEZVOUS). */
#ifndef ACCELCTL_TRANSPORT_H
#define ACCELCTL_TRANSPORT_H

#include "xport.h"	/* enum ac_tsetting */

/* What a job gets (for info: the helper decides NCCL lazily). */
enum ac_tchoice {
	AC_T_NONE,		/* one node: the helper alone, nothing crosses */
	AC_T_REDIS,
	AC_T_NCCL,
	AC_T_UNAVAILABLE,	/* nccl forced, but not compiled in or no GPU */
};

/* Parse S (NULL or "" is auto). 0, or -1 with *WHY. */
int ac_transport_parse(const char *s, int *setting, const char **why);

/*
 * The choice for SETTING with NCCL compiled in or not (COMPILED), NNODES
 * nodes, and a GPU visible to the helper or not (GPU). auto: NCCL where
 * compiled in, nodes > 1 and a GPU visible; else Redis (none on one node).
 * nccl: NCCL even on one node (a one-rank communicator), or unavailable.
 */
int ac_transport_choose(int setting, int compiled, long nnodes, int gpu);
const char *ac_transport_name(int choice);

/* ac_transport_open(), which starts the chosen transport, is in xport.h. */

#endif
