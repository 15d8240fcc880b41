/* transport.h: which transport carries a job's cross-node step (ACCELCTL_TRANSPORT),
 * and the pure logic of the NCCL transport's all-reduce header. */
#ifndef ACCELCTL_TRANSPORT_H
#define ACCELCTL_TRANSPORT_H

#include <stdint.h>

/* ACCELCTL_TRANSPORT: auto (unset or empty), redis or nccl. */
enum ac_tsetting { AC_TSET_AUTO, AC_TSET_REDIS, AC_TSET_NCCL };

/* What a job gets. */
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

/*
 * The NCCL transport's header: 8 words all-reduced with ncclMax. Words 0 and
 * 1 are the hash of the collective's key and generation and its complement:
 * after a max they are still (h, ~h) only when every node sent the same h, so
 * helpers that issued different collectives find out instead of releasing
 * the wrong one.
 */
#define AC_XN_WORDS 8
enum { AC_XN_STATE_NONE = 0, AC_XN_STATE_LOST = 1, AC_XN_STATE_DONE = 2 };

/*
 * Does NCCL carry collective OP/KEY (while the communicator is up)? Barriers
 * and broadcasts ("c:"); not the results of --wait and main-first, whose
 * source runs a command for minutes or hours (Redis carries those).
 */
int ac_xn_carries(int op, const char *key);
/* FNV-1a 64 of "KEY\nGEN". */
uint64_t ac_xn_hash(const char *key, int64_t gen);
/* (rank << 32 | status): the smallest is the lowest failing rank. */
uint64_t ac_xn_failkey(int64_t rank, int64_t status);
/* A barrier: FAILKEY is this node's lowest failing rank, or UINT64_MAX. */
void ac_xn_pack_barrier(uint64_t *w, const char *key, int64_t gen,
    uint64_t failkey);
/*
 * A result op (broadcast, --wait, main-first): only the source's node sends
 * a STATE other than NONE, its STATUS, the payload's LEN and its own node
 * (the root of the broadcast that follows).
 */
void ac_xn_pack_result(uint64_t *w, const char *key, int64_t gen, int state,
    int64_t status, uint64_t len, long node);
/* After the all-reduce: did every node send KEY/GEN? */
int  ac_xn_agree(const uint64_t *w, const char *key, int64_t gen);
/* After the all-reduce of barriers: the lowest failing rank and its status,
 * or 0 when none failed. */
int  ac_xn_barrier_failed(const uint64_t *w, int64_t *rank, int64_t *status);
/* After the all-reduce of a result op. -1 when no node was the source. */
int  ac_xn_result(const uint64_t *w, int *state, int64_t *status,
    uint64_t *len, long *root);

#endif
