/* xnhdr.h: the NCCL transport's all-reduce header: packing and reading, without a GPU. */
#ifndef ACCELCTL_XNHDR_H
#define ACCELCTL_XNHDR_H

#include <stdint.h>

/*
 * The NCCL transport's header: 8 words all-reduced with ncclMax. Words 0 and
 * 1 are the hash of the collective's key and generation and its complement:
 * after a max they are still (h, ~h) only when every node sent the same h, so
 * helpers that issued different collectives find out instead of releasing
 * the wrong one.
 */
#define AC_XN_WORDS 8
enum { AC_XN_STATE_NONE = 0, AC_XN_STATE_LOST = 1, AC_XN_STATE_DONE = 2 };

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
