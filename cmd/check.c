/* check.c: "accelctl check": an all-reduce bandwidth test among the node helpers' GPUs,
 * so that a job script can stop before an expensive run on a degraded fabric.
 *
 * Run by every rank of the job (like barrier): the local main process of each
 * node runs the test on the GPU its helper uses (ACCELCTL_HELPER_GPU, else
 * the first visible one), one NCCL rank per node; rank 0 makes the
 * ncclUniqueId and broadcasts it through the helpers; the ranks agree on the
 * outcome with two barriers --status, so every rank exits alike; the node's
 * helper is started (or found) before CUDA is loaded here, as a helper
 * forked from a process with CUDA initialised could not use it. Done in the
 * client, not in the helper: a test of seconds would stall the helper's loop,
 * and the helpers' own communicator (if any) is left alone.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "cmd.h"
#include "config.h"
#include "duration.h"
#include "num.h"
#if ACCELCTL_HAVE_NCCL
#include "ncclso.h"
#endif

enum { OPT_MIN_BUSBW, OPT_ITERS, OPT_MAX_SIZE, OPT_TIMEOUT };

static const struct ac_optdef check_opts[] = {
	[OPT_MIN_BUSBW] = { "min-busbw", 0, "GBPS", "exit 1 when the bus bandwidth at the largest size is lower" },
	[OPT_ITERS] = { "iters", 0, "N", "all-reduces timed per size (20)" },
	[OPT_MAX_SIZE] = { "max-size", 0, "SIZE", "largest size, 1K to 1G (1G); sizes grow 4x from 1K" },
	[OPT_TIMEOUT] = { "timeout", 't', "DURATION", "give up after DURATION (90s, 30m, 2h); exit 124" },
	{ NULL, 0, NULL, NULL }
};

/* "64M", "1G", "4096": bytes in [1 KiB, 1 GiB]. -1 with *WHY. */
static int
parse_size(const char *s, long *out, const char **why)
{
	char num[32];
	size_t n = strlen(s);
	long v, mult = 1;

	*why = "expected a size from 1K to 1G (K, M, G: powers of 1024)";
	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'K': case 'k': mult = 1L << 10; num[n - 1] = '\0'; break;
	case 'M': case 'm': mult = 1L << 20; num[n - 1] = '\0'; break;
	case 'G': case 'g': mult = 1L << 30; num[n - 1] = '\0'; break;
	}
	if (ac_parse_uint(num, 1L << 30, &v, why) == -1 ||
	    v * mult < 1024 || v * mult > (1L << 30)) {
		*why = "expected a size from 1K to 1G (K, M, G: powers of 1024)";
		return -1;
	}
	*out = v * mult;
	return 0;
}

/* One barrier --status among all ranks (KEY "k:..."); the agreed status. */
static int
agree(const struct ac_topo *t, const char *timeout, const char *key,
    int64_t status, int *agreed)
{
	struct ac_sync s;
	int rc;

	if ((rc = ac_cmd_sync_init(&s, t, timeout, AC_OP_BARRIER, AC_SCOPE_JOB,
	    AC_ROLE_WAIT, key, "check", 0)) != 0)
		return rc;
	s.status = status;
	rc = ac_sync_wait(t, &s);
	*agreed = (int)(s.result < 0 || s.result > 255 ? 255 : s.result);
	ac_sync_free(&s);
	return rc;
}

#if ACCELCTL_HAVE_NCCL
struct row {
	long	size;
	double	us, algbw, busbw;
};

struct test {
	const struct ac_cuda	*cu;
	ncclComm_t		 comm;
	cudaStream_t		 stream;
	cudaEvent_t		 e0, e1;
	void			*buf, *out;	/* out == buf: in place */
	long			 deadline;
	int			 late;		/* the deadline passed */
	char			 err[512];
};

static void
nap(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* A non-blocking communicator's call returned R: wait until it is enqueued
 * (or initialised). 0, or -1 with T->err. */
static int
settle(struct test *T, const char *what, ncclResult_t r)
{
	ncclResult_t ar = r;

	while (r == ncclInProgress || ar == ncclInProgress) {
		if (T->cu->ncclCommGetAsyncError(T->comm, &ar) != ncclSuccess)
			break;
		if (ar != ncclInProgress)
			break;
		if (ac_now_ms() > T->deadline) {
			snprintf(T->err, sizeof(T->err), "%s: deadline passed", what);
			T->late = 1;
			return -1;
		}
		nap(200);
	}
	if (ar != ncclSuccess) {
		const char *last = T->comm != NULL ? T->cu->ncclGetLastError(T->comm) : "";
		snprintf(T->err, sizeof(T->err), "%s: %s%s%.200s", what,
		    T->cu->ncclGetErrorString(ar), last && *last ? ": " : "",
		    last ? last : "");
		return -1;
	}
	return 0;
}

/* Wait for the stream without blocking in the driver: a peer that died
 * would otherwise hang us; the deadline and NCCL's errors are looked at. */
static int
drain(struct test *T)
{
	for (;;) {
		cudaError_t ce = T->cu->cudaStreamQuery(T->stream);
		ncclResult_t ar = ncclSuccess;

		if (ce == cudaSuccess)
			return 0;
		if (ce != cudaErrorNotReady) {
			snprintf(T->err, sizeof(T->err), "cudaStreamQuery: %s",
			    T->cu->cudaGetErrorString(ce));
			return -1;
		}
		if (T->cu->ncclCommGetAsyncError(T->comm, &ar) == ncclSuccess &&
		    ar != ncclSuccess && ar != ncclInProgress)
			return settle(T, "NCCL", ar);
		if (ac_now_ms() > T->deadline) {
			snprintf(T->err, sizeof(T->err), "deadline passed in the all-reduce");
			T->late = 1;
			return -1;
		}
		nap(50);
	}
}

static int
allreduce(struct test *T, long size)
{
	return settle(T, "ncclAllReduce", T->cu->ncclAllReduce(T->buf, T->out,
	    (size_t)size / sizeof(float), ncclFloat, ncclSum, T->comm, T->stream));
}

#define CK(call, what) do {						\
	cudaError_t ce_ = (call);					\
	if (ce_ != cudaSuccess) {					\
		snprintf(T->err, sizeof(T->err), "%s: %s", what,	\
		    T->cu->cudaGetErrorString(ce_));			\
		goto out;						\
	}								\
} while (0)

/*
 * Everything that can fail on one node alone (stream, buffers, events) is
 * made before the nodes agree to start, so a node that cannot allocate says
 * so in the "ready" agreement instead of leaving the others waiting in the
 * init. One rank gets a second buffer: NCCL's one-rank all-reduce in place
 * launches no work at all, so only an out-of-place one (a device-to-device
 * copy) takes a time the events can measure. 0, or -1 with T->err.
 */
static int
prepare(struct test *T, int nranks, long max)
{
	CK(T->cu->cudaStreamCreateWithFlags(&T->stream, cudaStreamNonBlocking),
	    "cudaStreamCreateWithFlags");
	CK(T->cu->cudaMalloc(&T->buf, (size_t)max), "cudaMalloc");
	CK(T->cu->cudaMemsetAsync(T->buf, 0, (size_t)max, T->stream), "cudaMemsetAsync");
	if (nranks == 1) {
		CK(T->cu->cudaMalloc(&T->out, (size_t)max), "cudaMalloc");
		CK(T->cu->cudaMemsetAsync(T->out, 0, (size_t)max, T->stream),
		    "cudaMemsetAsync");
	} else
		T->out = T->buf;
	CK(T->cu->cudaEventCreate(&T->e0), "cudaEventCreate");
	CK(T->cu->cudaEventCreate(&T->e1), "cudaEventCreate");
	return 0;
out:
	return -1;
}

/*
 * The communicator's end. On success every node has finished its last
 * all-reduce before anyone gets here (the "done" agreement comes first), so
 * no peer's proxy still sends to us and the abort cuts nothing short; on an
 * error or a deadline the abort is what stops our kernels without waiting
 * for peers (ncclCommDestroy would wait for them). Then the stream drains
 * (the aborted kernels exit) before its buffers go.
 */
static void
teardown(struct test *T)
{
	if (T->comm != NULL)
		T->cu->ncclCommAbort(T->comm);
	T->comm = NULL;
	if (T->stream != NULL)
		T->cu->cudaStreamSynchronize(T->stream);
	if (T->e0 != NULL)
		T->cu->cudaEventDestroy(T->e0);
	if (T->e1 != NULL)
		T->cu->cudaEventDestroy(T->e1);
	if (T->out != NULL && T->out != T->buf)
		T->cu->cudaFree(T->out);
	if (T->buf != NULL)
		T->cu->cudaFree(T->buf);
	if (T->stream != NULL)
		T->cu->cudaStreamDestroy(T->stream);
	T->e0 = T->e1 = NULL;
	T->buf = T->out = NULL;
	T->stream = NULL;
}

/* The test itself: NRANKS nodes, this one RANK; the communicator is left
 * up for teardown(). 0, or -1 with T->err. */
static int
run_test(struct test *T, const ncclUniqueId *id, int nranks, int rank,
    long max, long iters, struct row *rows, int *nrows)
{
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;

	config.blocking = 0;
	*nrows = 0;
	if (settle(T, "ncclCommInitRankConfig", T->cu->ncclCommInitRankConfig(
	    &T->comm, nranks, *id, rank, &config)) == -1)
		return -1;
	for (long size = 1024; size <= max; size *= 4) {
		struct row *r = &rows[(*nrows)++];
		float ms = 0;

		/* Warm-up: connections are set up lazily by the first calls. */
		for (int i = 0; i < 5; i++)
			if (allreduce(T, size) == -1)
				goto out;
		if (drain(T) == -1)
			goto out;
		CK(T->cu->cudaEventRecord(T->e0, T->stream), "cudaEventRecord");
		for (long i = 0; i < iters; i++)
			if (allreduce(T, size) == -1)
				goto out;
		CK(T->cu->cudaEventRecord(T->e1, T->stream), "cudaEventRecord");
		if (drain(T) == -1)
			goto out;
		CK(T->cu->cudaEventElapsedTime(&ms, T->e0, T->e1), "cudaEventElapsedTime");
		/* Nothing measured is no bandwidth at all, not 0 GB/s: the
		 * verdict would blame the fabric for our mistake. */
		if (!(ms > 0)) {
			snprintf(T->err, sizeof(T->err), "%ld all-reduces of %ld "
			    "bytes took %g ms by the CUDA events: nothing was timed",
			    iters, size, (double)ms);
			goto out;
		}
		r->size = size;
		r->us = ms * 1000.0 / (double)iters;
		r->algbw = (double)size / (r->us * 1e3);
		/* nccl-tests' bus bandwidth: what each link carries. One rank
		 * crosses no link; its algorithm bandwidth is shown instead. */
		r->busbw = nranks > 1 ? r->algbw * 2.0 * (nranks - 1) / nranks :
		    r->algbw;
		if (size > max / 4)
			break;
	}
	return 0;
out:
	return -1;
}

static void
print_table(const struct ac_cuda *cu, int dev, int nranks, long iters,
    const struct row *rows, int nrows, double min_busbw)
{
	if (nranks == 1)
		printf("all-reduce (sum, float, out of place) of a 1-rank "
		    "communicator on GPU %d, NCCL %s, %s, %ld iterations a size: "
		    "a device-to-device copy, no transport\n", dev,
		    cu->nccl_release, cu->cudart_name, iters);
	else
		printf("all-reduce (sum, float, in place) among %d node helper "
		    "GPUs, GPU %d here, NCCL %s, %s, %ld iterations a size\n",
		    nranks, dev, cu->nccl_release, cu->cudart_name, iters);
	printf("%12s %12s %14s %14s\n", "size", "time (us)", "algbw (GB/s)",
	    "busbw (GB/s)");
	for (int i = 0; i < nrows; i++) {
		char size[32];

		if (rows[i].size >= 1L << 20)
			snprintf(size, sizeof(size), "%ld MiB", rows[i].size >> 20);
		else
			snprintf(size, sizeof(size), "%ld KiB", rows[i].size >> 10);
		printf("%12s %12.1f %14.2f %14.2f\n", size, rows[i].us,
		    rows[i].algbw, rows[i].busbw);
	}
	if (nrows > 0)
		printf("busbw at the largest size: %.2f GB/s%s%s\n",
		    rows[nrows - 1].busbw, min_busbw > 0 ? (rows[nrows - 1].busbw <
		    min_busbw ? ": BELOW " : ": at least ") : "",
		    min_busbw > 0 ? "--min-busbw" : "");
}
#endif

#if ACCELCTL_HAVE_NCCL
/* Rank 0's ncclUniqueId to every rank, through the helpers. */
static int
exchange_id(const struct ac_topo *t, const char *timeout, int maker,
    ncclUniqueId *id)
{
	struct ac_sync s;
	int rc;

	if ((rc = ac_cmd_sync_init(&s, t, timeout, AC_OP_RESULT, AC_SCOPE_JOB,
	    maker ? AC_ROLE_SOURCE : AC_ROLE_WAIT, "K:check.id", "check", 0)) != 0)
		return rc;
	if (maker) {
		if ((rc = ac_sync_source_begin(t, &s)) == 0)
			rc = ac_sync_source_finish(t, &s, 0, id, sizeof(*id));
	} else if ((rc = ac_sync_wait(t, &s)) == 0) {
		if (s.paylen == sizeof(*id))
			memcpy(id, s.payload, sizeof(*id));
		else {
			ac_warnx("a malformed ncclUniqueId from rank 0");
			rc = AC_EXIT_FAILED;
		}
	}
	ac_sync_free(&s);
	return rc;
}
#endif

static int
exec_check(const struct ac_cmd *self, struct ac_args *a)
{
	const char *why, *timeout = a->val[OPT_TIMEOUT];
	double min_busbw = 0;
	long iters = 20, max = 1L << 30, ms;
	struct ac_topo t;
	int rc;

	if (a->val[OPT_MIN_BUSBW] != NULL) {
		char *end;

		min_busbw = strtod(a->val[OPT_MIN_BUSBW], &end);
		if (*a->val[OPT_MIN_BUSBW] == '\0' || *end != '\0' ||
		    !isfinite(min_busbw) || min_busbw <= 0)
			return ac_usage_error(self, "invalid --min-busbw '%.40s': "
			    "expected a positive number of GB/s", a->val[OPT_MIN_BUSBW]);
	}
	if (a->val[OPT_ITERS] != NULL &&
	    (ac_parse_uint(a->val[OPT_ITERS], 10000, &iters, &why) == -1 ||
	    (iters == 0 && (why = "must be at least 1"))))
		return ac_usage_error(self, "invalid --iters '%.40s': %s",
		    a->val[OPT_ITERS], why);
	if (a->val[OPT_MAX_SIZE] != NULL &&
	    parse_size(a->val[OPT_MAX_SIZE], &max, &why) == -1)
		return ac_usage_error(self, "invalid --max-size '%.40s': %s",
		    a->val[OPT_MAX_SIZE], why);
	if (ac_cmd_timeout(timeout, &ms) == -1)
		return AC_EXIT_USAGE;
	if ((rc = ac_cmd_sync_topo(&t, 0)) != 0)
		return rc;
#if !ACCELCTL_HAVE_NCCL
	(void)min_busbw;
	(void)iters;
	(void)max;
	(void)agree;
	ac_warnx("this accelctl was built without NCCL (see accelctl --version): "
	    "nothing to test");
	return AC_EXIT_USAGE;
#else
	struct row rows[16];
	struct test T = { .deadline = ac_now_ms() + ms };
	ncclUniqueId id;
	char err[512] = "";
	int single = t.v[AC_WORLD] == 1, agreed = 0, nrows = 0, dev = -1;
	int tester = single || t.v[AC_LRANK] == 0, maker = t.v[AC_RANK] == 0;
	long nnodes = t.v[AC_NNODES] > 0 ? t.v[AC_NNODES] : 1;
	int nranks = (int)(single ? 1 : nnodes);
	int64_t status = 0;

	/*
	 * The node's helper must be running before this process touches CUDA:
	 * the first client starts it by fork() without exec, and CUDA is
	 * unusable in a child forked after the parent initialised it, so a
	 * helper forked from here later would fail at its first NCCL call
	 * (auto: silently over Redis; forced: exit 125). Connecting starts it
	 * (or finds it) while CUDA is not even loaded here.
	 */
	if (!single) {
		struct ac_client c;

		if (ac_client_open(&c, &t, 1, &rc) == -1)
			return rc;
		ac_client_close(&c);
	}
	if (tester || maker) {
		dev = ac_cuda_pick_gpu(&T.cu, 1, err, sizeof(err));
		if (dev >= 0 && maker && T.cu->ncclGetUniqueId(&id) != ncclSuccess) {
			snprintf(err, sizeof(err), "ncclGetUniqueId failed");
			dev = -1;
		}
		if (dev < 0) {
			ac_warnx("%s", err);
			status = AC_EXIT_USAGE;
		} else if (tester && prepare(&T, nranks, max) == -1) {
			ac_warnx("%s", T.err);
			status = AC_EXIT_FAILED;
		}
	}
	if (single) {
		if (status != 0) {
			if (T.cu != NULL)
				teardown(&T);
			return (int)status;
		}
	} else {
		/* Every node can test, or nobody starts (nobody would wait in
		 * the init for a node that cannot join). */
		if ((rc = agree(&t, timeout, "k:check.ready", status, &agreed)) == 0 &&
		    agreed != 0)
			rc = agreed;
		if (rc == 0)
			rc = exchange_id(&t, timeout, maker, &id);
		if (rc != 0) {
			if (T.cu != NULL)
				teardown(&T);
			return rc;
		}
	}
	if (tester) {
		if (run_test(&T, &id, nranks, (int)(single ? 0 : t.v[AC_NODE]),
		    max, iters, rows, &nrows) == -1) {
			ac_warnx("%s", T.err);
			/* DESIGN §3: a deadline passed is 124, whoever's. */
			status = T.late ? AC_EXIT_TIMEOUT : AC_EXIT_FAILED;
			/* Our kernels stop now; peers learn it as an NCCL
			 * error or at their deadline. */
			teardown(&T);
		} else if (min_busbw > 0 && rows[nrows - 1].busbw < min_busbw)
			status = AC_EXIT_NO;
		if (status == 0 || status == AC_EXIT_NO) {
			if (single || t.v[AC_NODE] == 0)
				print_table(T.cu, dev, nranks, iters, rows, nrows,
				    min_busbw);
		}
		if (status == AC_EXIT_NO)
			ac_warnx("node %ld: bus bandwidth %.2f GB/s is below "
			    "--min-busbw %.2f", single ? 0L : t.v[AC_NODE],
			    rows[nrows - 1].busbw, min_busbw);
		if (ac_flush_stdout() == -1)
			status = AC_EXIT_FAILED;
	}
	if (single) {
		if (T.cu != NULL)
			teardown(&T);
		return (int)status;
	}
	/* Every node's last all-reduce has completed before any communicator
	 * goes (teardown after this agreement): see teardown(). */
	rc = agree(&t, timeout, "k:check.done", status, &agreed);
	if (T.cu != NULL)
		teardown(&T);
	return rc != 0 ? rc : agreed;
#endif
}

const struct ac_cmd cmd_check = {
	.name = "check",
	.group = "Tools",
	.args = "[--min-busbw GBPS] [--iters N] [--max-size SIZE] [--timeout DURATION]",
	.summary = "all-reduce bandwidth test among the nodes' GPUs",
	.help = "Run by every rank of the job, like barrier: the local main process "
	    "of each node times NCCL all-reduces from 1 KiB to 1 GiB (4x steps) on "
	    "the GPU its helper uses (ACCELCTL_HELPER_GPU, else the first visible), "
	    "one NCCL rank per node, and node 0 prints size, time per all-reduce, "
	    "algorithm and bus bandwidth (nccl-tests' busbw; with one node, where "
	    "nothing crosses a link, the algorithm bandwidth). With --min-busbw "
	    "GBPS every rank exits 1 when the bus bandwidth at the largest size is "
	    "lower on any node, so a job script can stop before an expensive run "
	    "on a degraded fabric. One process (or one rank) times an out-of-place "
	    "all-reduce of a 1-rank communicator: a device-to-device copy, no "
	    "transport. Exit 2 when no GPU is visible or NCCL is not compiled in, "
	    "124 when --timeout passes, 125 when CUDA or NCCL fail.",
	.opts = check_opts,
	.minpos = 0,
	.maxpos = 0,
	.exec = exec_check,
};
