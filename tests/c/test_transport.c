/* test_transport.c: unit tests of the transport choice and the NCCL header's packing. */
#include <stdint.h>

#include "check.h"
#include "proto.h"
#include "kind.h"
#include "transport.h"
#include "xnhdr.h"

static void
test_parse(void)
{
	const char *why = NULL;
	int s = -1;

	CHECK(ac_transport_parse(NULL, &s, &why) == 0 && s == AC_TSET_AUTO);
	CHECK(ac_transport_parse("", &s, &why) == 0 && s == AC_TSET_AUTO);
	CHECK(ac_transport_parse("auto", &s, &why) == 0 && s == AC_TSET_AUTO);
	CHECK(ac_transport_parse("redis", &s, &why) == 0 && s == AC_TSET_REDIS);
	CHECK(ac_transport_parse("nccl", &s, &why) == 0 && s == AC_TSET_NCCL);
	const char *bad[] = { "bogus", "NCCL", "nccl ", " redis", "mpi", NULL };
	for (int i = 0; bad[i] != NULL; i++) {
		why = NULL;
		CHECK(ac_transport_parse(bad[i], &s, &why) == -1);
		CHECK_STR(why, "expected auto, redis or nccl");
	}
}

static void
test_choose(void)
{
	/* auto: NCCL only where compiled in, nodes > 1 and a GPU. */
	CHECK(ac_transport_choose(AC_TSET_AUTO, 1, 2, 1) == AC_T_NCCL);
	CHECK(ac_transport_choose(AC_TSET_AUTO, 1, 2, 0) == AC_T_REDIS);
	CHECK(ac_transport_choose(AC_TSET_AUTO, 0, 2, 1) == AC_T_REDIS);
	CHECK(ac_transport_choose(AC_TSET_AUTO, 1, 1, 1) == AC_T_NONE);
	CHECK(ac_transport_choose(AC_TSET_REDIS, 1, 4, 1) == AC_T_REDIS);
	CHECK(ac_transport_choose(AC_TSET_REDIS, 1, 1, 1) == AC_T_NONE);
	/* forced: even on one node; unavailable without a GPU or NCCL. */
	CHECK(ac_transport_choose(AC_TSET_NCCL, 1, 1, 1) == AC_T_NCCL);
	CHECK(ac_transport_choose(AC_TSET_NCCL, 1, 4, 1) == AC_T_NCCL);
	CHECK(ac_transport_choose(AC_TSET_NCCL, 1, 4, 0) == AC_T_UNAVAILABLE);
	CHECK(ac_transport_choose(AC_TSET_NCCL, 0, 4, 1) == AC_T_UNAVAILABLE);
	CHECK_STR(ac_transport_name(AC_T_NCCL), "nccl");
	CHECK_STR(ac_transport_name(AC_T_REDIS), "redis");
	CHECK_STR(ac_transport_name(AC_T_NONE), "none");
	CHECK_STR(ac_transport_name(AC_T_UNAVAILABLE), "unavailable");
}

/* The element-wise max of N headers: what ncclAllReduce(ncclMax) gives. */
static void
reduce(uint64_t *out, uint64_t (*in)[AC_XN_WORDS], int n)
{
	for (int w = 0; w < AC_XN_WORDS; w++) {
		out[w] = 0;
		for (int i = 0; i < n; i++)
			if (in[i][w] > out[w])
				out[w] = in[i][w];
	}
}

static void
test_barrier_header(void)
{
	uint64_t h[3][AC_XN_WORDS], r[AC_XN_WORDS];
	int64_t rank = -1, status = -1;

	CHECK(ac_xn_hash("b:x", 0) != ac_xn_hash("b:x", 1));
	CHECK(ac_xn_hash("b:x", 0) != ac_xn_hash("c:x", 0));
	CHECK(ac_xn_hash("b:x", 10) != ac_xn_hash("b:x1", 0));
	CHECK(ac_xn_hash("b:x", 3) == ac_xn_hash("b:x", 3));
	/* Three nodes at the same barrier, none failing. */
	for (int i = 0; i < 3; i++)
		ac_xn_pack_barrier(h[i], "b:epoch", 7, UINT64_MAX);
	reduce(r, h, 3);
	CHECK(ac_xn_agree(r, "b:epoch", 7));
	CHECK(!ac_xn_agree(r, "b:epoch", 8));
	CHECK(ac_xn_barrier_failed(r, &rank, &status) == 0);
	/* Rank 5 failed with 4 on node 1, rank 9 with 1 on node 2: rank 5 wins. */
	ac_xn_pack_barrier(h[1], "b:epoch", 7, ac_xn_failkey(5, 4));
	ac_xn_pack_barrier(h[2], "b:epoch", 7, ac_xn_failkey(9, 1));
	reduce(r, h, 3);
	CHECK(ac_xn_agree(r, "b:epoch", 7));
	CHECK(ac_xn_barrier_failed(r, &rank, &status) == 1 && rank == 5 &&
	    status == 4);
	/* Status 2^31-1 and a large rank survive the packing. */
	ac_xn_pack_barrier(h[0], "b:epoch", 7, ac_xn_failkey(2000000, 2147483647));
	ac_xn_pack_barrier(h[1], "b:epoch", 7, UINT64_MAX);
	ac_xn_pack_barrier(h[2], "b:epoch", 7, UINT64_MAX);
	reduce(r, h, 3);
	CHECK(ac_xn_barrier_failed(r, &rank, &status) == 1 && rank == 2000000 &&
	    status == 2147483647);
	/* A node one generation ahead, or at another name: disagreement. */
	ac_xn_pack_barrier(h[2], "b:epoch", 8, UINT64_MAX);
	reduce(r, h, 3);
	CHECK(!ac_xn_agree(r, "b:epoch", 7));
	CHECK(!ac_xn_agree(r, "b:epoch", 8));
	ac_xn_pack_barrier(h[2], "b:other", 7, UINT64_MAX);
	reduce(r, h, 3);
	CHECK(!ac_xn_agree(r, "b:epoch", 7));
	/* A barrier against a broadcast of the same name and generation. */
	ac_xn_pack_result(h[2], "c:epoch", 7, AC_XN_STATE_NONE, 0, 0, 2);
	reduce(r, h, 3);
	CHECK(!ac_xn_agree(r, "b:epoch", 7));
}

static void
test_result_header(void)
{
	uint64_t h[3][AC_XN_WORDS], r[AC_XN_WORDS], len = 0;
	int64_t status = -1;
	long root = -1;
	int state = -1;

	ac_xn_pack_result(h[0], "c:run-id", 0, AC_XN_STATE_NONE, 0, 0, 0);
	ac_xn_pack_result(h[1], "c:run-id", 0, AC_XN_STATE_DONE, 0, 1048576, 1);
	ac_xn_pack_result(h[2], "c:run-id", 0, AC_XN_STATE_NONE, 0, 0, 2);
	reduce(r, h, 3);
	CHECK(ac_xn_agree(r, "c:run-id", 0));
	CHECK(ac_xn_result(r, &state, &status, &len, &root) == 0 &&
	    state == AC_XN_STATE_DONE && status == 0 && len == 1048576 && root == 1);
	/* The source's node 0 (a root of 0 is not "none"). */
	ac_xn_pack_result(h[0], "c:run-id", 1, AC_XN_STATE_DONE, 3, 0, 0);
	ac_xn_pack_result(h[1], "c:run-id", 1, AC_XN_STATE_NONE, 0, 0, 1);
	ac_xn_pack_result(h[2], "c:run-id", 1, AC_XN_STATE_NONE, 0, 0, 2);
	reduce(r, h, 3);
	CHECK(ac_xn_result(r, &state, &status, &len, &root) == 0 &&
	    state == AC_XN_STATE_DONE && status == 3 && len == 0 && root == 0);
	/* The source died. */
	ac_xn_pack_result(h[0], "c:run-id", 1, AC_XN_STATE_LOST, 0, 0, 0);
	reduce(r, h, 3);
	CHECK(ac_xn_result(r, &state, &status, &len, &root) == 0 &&
	    state == AC_XN_STATE_LOST);
	/* Nobody is the source: an error, not a release. */
	ac_xn_pack_result(h[0], "c:run-id", 1, AC_XN_STATE_NONE, 0, 0, 0);
	reduce(r, h, 3);
	CHECK(ac_xn_result(r, &state, &status, &len, &root) == -1);
}

static void
test_carries(void)
{
	CHECK(ac_kind_of("b:x")->streamed);
	CHECK(ac_kind_of("k:check.ready")->streamed);
	CHECK(ac_kind_of("c:run-id")->streamed);
	CHECK(!ac_kind_of("w:0:upload")->streamed);
	CHECK(!ac_kind_of("m:prep")->streamed);
	CHECK(!ac_kind_of("K:check.id")->streamed);
	/* Keys outside the table are refused, never stored. */
	CHECK(ac_kind_of("bx") == NULL);
	CHECK(ac_kind_of("b:") == NULL);
	CHECK(ac_kind_of("z:x") == NULL);
	CHECK(ac_kind_of("") == NULL);
	CHECK(ac_kind_of("b:x")->op == AC_OP_BARRIER);
	CHECK(ac_kind_of("c:x")->op == AC_OP_RESULT);
	CHECK(strcmp(ac_kind_label("w:on-main:0"), "on-main:0") == 0);
}

int
main(void)
{
	test_carries();
	test_parse();
	test_choose();
	test_barrier_header();
	test_result_header();
	return CHECK_DONE();
}
