/* transport.c: which transport carries a job's cross-node step (ACCELCTL_TRANSPORT),
 * and the pure logic of the NCCL transport's all-reduce header.
 *
 * Kept apart from xnccl.c so that the choice and the header's packing are
 * unit-tested on machines without a GPU (tests/c/test_transport.c).
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "transport.h"

int
ac_transport_parse(const char *s, int *setting, const char **why)
{
	*setting = AC_TSET_AUTO;
	if (s == NULL || *s == '\0' || strcmp(s, "auto") == 0)
		return 0;
	if (strcmp(s, "redis") == 0) {
		*setting = AC_TSET_REDIS;
		return 0;
	}
	if (strcmp(s, "nccl") == 0) {
		*setting = AC_TSET_NCCL;
		return 0;
	}
	*why = "expected auto, redis or nccl";
	return -1;
}

int
ac_transport_choose(int setting, int compiled, long nnodes, int gpu)
{
	switch (setting) {
	case AC_TSET_NCCL:
		return compiled && gpu ? AC_T_NCCL : AC_T_UNAVAILABLE;
	case AC_TSET_REDIS:
		return nnodes > 1 ? AC_T_REDIS : AC_T_NONE;
	default:
		if (nnodes <= 1)
			return AC_T_NONE;
		return compiled && gpu ? AC_T_NCCL : AC_T_REDIS;
	}
}

const char *
ac_transport_name(int choice)
{
	switch (choice) {
	case AC_T_NONE: return "none";
	case AC_T_REDIS: return "redis";
	case AC_T_NCCL: return "nccl";
	default: return "unavailable";
	}
}

int
ac_xn_carries(int op, const char *key)
{
	return op == AC_OP_BARRIER || key[0] == 'c';
}

uint64_t
ac_xn_hash(const char *key, int64_t gen)
{
	char buf[512];
	uint64_t h = 14695981039346656037ULL;
	int n = snprintf(buf, sizeof(buf), "%s\n%lld", key, (long long)gen);

	for (int i = 0; i < n && i < (int)sizeof(buf) - 1; i++) {
		h ^= (unsigned char)buf[i];
		h *= 1099511628211ULL;
	}
	return h;
}

uint64_t
ac_xn_failkey(int64_t rank, int64_t status)
{
	/* Ranks and statuses are below 2^31 (their parsers bound them). */
	return ((uint64_t)rank << 32) | ((uint64_t)status & 0xffffffffu);
}

static void
pack_hash(uint64_t *w, const char *key, int64_t gen)
{
	uint64_t h = ac_xn_hash(key, gen);

	memset(w, 0, AC_XN_WORDS * sizeof(*w));
	w[0] = h;
	w[1] = ~h;
}

void
ac_xn_pack_barrier(uint64_t *w, const char *key, int64_t gen, uint64_t failkey)
{
	pack_hash(w, key, gen);
	w[2] = ~failkey;	/* the max of ~x is ~(the min of x) */
}

void
ac_xn_pack_result(uint64_t *w, const char *key, int64_t gen, int state,
    int64_t status, uint64_t len, long node)
{
	pack_hash(w, key, gen);
	if (state == AC_XN_STATE_NONE)
		return;		/* zeros: the max keeps the source's words */
	w[2] = (uint64_t)state;
	w[3] = (uint64_t)status;
	w[4] = len;
	w[5] = (uint64_t)node + 1;
}

int
ac_xn_agree(const uint64_t *w, const char *key, int64_t gen)
{
	uint64_t h = ac_xn_hash(key, gen);

	return w[0] == h && w[1] == ~h;
}

int
ac_xn_barrier_failed(const uint64_t *w, int64_t *rank, int64_t *status)
{
	uint64_t k = ~w[2];

	if (k == UINT64_MAX)
		return 0;
	*rank = (int64_t)(k >> 32);
	*status = (int64_t)(k & 0xffffffffu);
	return 1;
}

int
ac_xn_result(const uint64_t *w, int *state, int64_t *status, uint64_t *len,
    long *root)
{
	if (w[2] == AC_XN_STATE_NONE || w[2] > AC_XN_STATE_DONE || w[5] == 0)
		return -1;
	*state = (int)w[2];
	*status = (int64_t)w[3];
	*len = w[4];
	*root = (long)w[5] - 1;
	return 0;
}
