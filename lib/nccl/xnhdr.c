/* xnhdr.c: the NCCL transport's all-reduce header: packing and reading, without a GPU.
 *
 * Kept apart from xnccl.c so that the header's packing is unit-tested on
 * machines without a GPU (tests/c/test_transport.c).
 */
#include <stdio.h>
#include <string.h>

#include "xnhdr.h"

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
