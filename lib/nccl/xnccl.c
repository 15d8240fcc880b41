/* xnccl.c: the cross-node step over an NCCL communicator of the node helpers.
 *
 * Wraps the rendezvous' steps (Redis or etcd): while the communicator is healthy, a
 * barrier is an all-reduce (ncclMax) of 8 words that carry the hash of its
 * name and generation and the lowest failing rank (--status), and a result op
 * (broadcast, --wait, main-first) is the same header from the source's node
 * (state, status, length, root) and then an ncclBroadcast of the bytes.
 * The rendezvous stays (node 0 posts the ncclUniqueId there: rdvproto.c) and
 * is the fallback: after ncclCommAbort (a deadline, an abort, an NCCL error,
 * helpers that disagree), every collective in flight is posted again over it
 * and the rest of the job goes over it. Arrivals there are idempotent, so a
 * collective that NCCL completed on some nodes only completes on the others.
 *
 * The helper stays one thread and one poll(2): the communicator is
 * non-blocking (config.blocking = 0), one collective is in flight at a time
 * on our stream, and cudaLaunchHostFunc writes a byte to a pipe when it has
 * finished, so completion wakes the loop without polling. While a collective
 * is in flight we also look at ncclCommGetAsyncError every 100 ms (1-10 ms
 * while NCCL is still enqueueing or initialising); idle, nothing wakes us.
 *
 * NCCL collectives must be issued in the same order on every node. Each node
 * issues a collective when it completes locally (all its ranks arrived at a
 * barrier; its first rank arrived at a result op, or the source finished):
 * every rank passes the collectives of a job script in the same order, so the
 * nodes do too. When they do not (scripts that diverged), the hash says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "duration.h"
#include "kind.h"
#include "log.h"
#include "ncclso.h"
#include "xnccl.h"
#include "xnhdr.h"

enum { S_IDLE, S_JOINING, S_INIT, S_UP, S_OFF, S_FAILED };
enum { OP_BARRIER, OP_RESULT };
enum { ST_QUEUED, ST_HDR_ENQ, ST_HDR_RUN, ST_PAY_ENQ, ST_PAY_RUN };

struct xop {
	struct xop	*next;
	char		 key[AC_KEY_MAX];
	int64_t		 gen;
	int		 kind, stage;
	int		 have;		/* this node's part is known */
	long		 since;		/* queued (ms) */
	int		 posted;	/* also posted to Redis (slow) */
	uint64_t	 hdr[AC_XN_WORDS];
	uint8_t		*payload;	/* the source's node: the value */
	size_t		 paylen;
	int64_t		 status;	/* after the header */
	uint64_t	 len;
	long		 root;
	/* A local source's result (x_publish), kept here to hand to the
	 * rendezvous if NCCL goes off first: its collective may be freed by
	 * then (a later generation of the name released it). */
	int		 mine, msrc;
	int64_t		 mresult;
	char		*mfailed;
};

static struct {
	struct ac_job		*job;
	const struct ac_rdv	*rdv;		/* the rendezvous, or NULL (one node) */
	const struct ac_xport	*base;		/* its collective steps: the fallback */
	int			 setting, state;
	char			 why[600];
	const struct ac_cuda	*cu;
	int			 dev;
	ncclComm_t		 comm;
	cudaStream_t		 stream;
	uint64_t		*hbuf;		/* pinned: [0, 8) sent, [8, 16) received */
	uint64_t		*dbuf;		/* on the GPU: 8 words */
	uint8_t			*hpay, *dpay;
	size_t			 paycap;
	struct xop		*head;
	int			 pipe[2];
	long			 since;		/* the present stage began (ms) */
	long			 started;
	long			 expect;	/* notify() count that ends the op */
	int			 nown;		/* descriptors of ours in the last fds() */
} N = { .pipe = { -1, -1 } };

/* Bumped by notify() on a CUDA thread when the stream reached it: the
 * stream is "done" for us then, even before cudaStreamQuery says so (it
 * counts the host function itself, which may still be returning). */
static atomic_long fired;

static void pump(void);
static void progress(void);
static void disagree(const struct xop *o);
static void go_off(const char *why, int tell);
static void hand_over(const struct xop *o);
#define DISAGREED "helpers disagreed on the order of collectives"
/*
 * A barrier that waits in NCCL longer than this is also posted through the
 * rendezvous (its store's own arrival, Redis or etcd): a timeout and
 * "accelctl status" can then name the missing nodes, which NCCL cannot, and
 * the barrier completes through whichever channel is first. Both are
 * idempotent, and every node issued its NCCL part before posting, so the
 * NCCL collective completes too and the queues stay in step.
 */
#define SLOW_MS 200
static long slow_ms = SLOW_MS;
/* The reason a forced node that cannot use NCCL gives the others. */
#define UNAVAILABLE "unavailable: "

static const char *
kind_word(const char *key)
{
	const struct ac_kind *k = ac_kind_of(key);

	return k != NULL ? k->name : "collective";
}

static struct xop *
find_op(const char *key, int64_t gen)
{
	for (struct xop *o = N.head; o != NULL; o = o->next)
		if (o->gen == gen && strcmp(o->key, key) == 0)
			return o;
	return NULL;
}

static struct xop *
enqueue(int kind, const struct ac_coll *c)
{
	struct xop *o = calloc(1, sizeof(*o)), **pp;

	if (o == NULL)
		return NULL;
	snprintf(o->key, sizeof(o->key), "%s", c->key);
	o->gen = c->gen;
	o->kind = kind;
	o->since = ac_now_ms();
	for (pp = &N.head; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = o;
	return o;
}

static void
free_op(struct xop *o)
{
	free(o->payload);
	free(o->mfailed);
	free(o);
}

/* Take the first op off the queue (it finished). */
static void
pop(void)
{
	struct xop *o = N.head;

	if (o != NULL) {
		N.head = o->next;
		free_op(o);
	}
}

static void
fail_coll(const char *key, int64_t gen, const char *why)
{
	struct ac_coll *c = ac_job_find(N.job, key, gen);

	if (c != NULL && !c->done && c->xfailed == NULL && N.job->failed != NULL)
		N.job->failed(N.job, c, why);
}

/* The result, into coll.c. */
static void
deliver(const char *key, int64_t gen, int64_t status, const char *failed,
    const uint8_t *p, size_t n)
{
	struct ac_result r = { .status = status, .failed = failed,
	    .payload = p, .paylen = n };

	ac_job_remote_done(N.job, key, gen, &r);
}

/* This node's part of barrier C: the lowest failing local rank. */
static void
fill_barrier(struct xop *o, const struct ac_coll *c)
{
	const struct ac_job *j = N.job;
	uint64_t k = UINT64_MAX;

	for (long l = 0; l < j->lsize; l++) {
		int64_t r = j->rank_of[l] >= 0 ? j->rank_of[l] : l;

		if (c->status[l] != 0 && ac_xn_failkey(r, c->status[l]) < k)
			k = ac_xn_failkey(r, c->status[l]);
	}
	ac_xn_pack_barrier(o->hdr, c->key, c->gen, k);
	o->have = 1;
}

/*
 * This node's part of result op C: the source's result when the source is
 * here and finished; zeros when it is certainly elsewhere (every local rank
 * has said who it is). Otherwise not yet: the queue waits, in order.
 */
static void
fill_result(struct xop *o, const struct ac_coll *c)
{
	const struct ac_job *j = N.job;
	int state = c->src == AC_SRC_DONE ? AC_XN_STATE_DONE :
	    c->src == AC_SRC_LOST ? AC_XN_STATE_LOST : AC_XN_STATE_NONE;

	if (state != AC_XN_STATE_NONE) {
		ac_xn_pack_result(o->hdr, c->key, c->gen, state, c->result,
		    state == AC_XN_STATE_DONE ? c->paylen : 0, j->node);
		free(o->payload);
		o->payload = NULL;
		o->paylen = 0;
		if (state == AC_XN_STATE_DONE && c->paylen > 0 &&
		    (o->payload = malloc(c->paylen)) != NULL) {
			memcpy(o->payload, c->payload, c->paylen);
			o->paylen = c->paylen;
		}
		o->have = 1;
		return;
	}
	if (ac_coll_source_lrank(j, c) >= 0)
		return;		/* the source is here: wait for it */
	for (long l = 0; l < j->lsize; l++)
		if (j->rank_of[l] < 0)
			return;	/* it might be here: wait for a hello */
	ac_xn_pack_result(o->hdr, c->key, c->gen, AC_XN_STATE_NONE, 0, 0, j->node);
	o->have = 1;
}

/* Release C from what this node alone knows (a one-node job after a fallback). */
static void
local_done(struct ac_coll *c)
{
	if (c != NULL && !c->done && c->op == AC_OP_BARRIER &&
	    c->narrived == N.job->lsize)
		deliver(c->key, c->gen, c->result, c->failed, NULL, 0);
}

/* The pipe's write end for notify(); -1 once it is closing. notify() runs
 * on a CUDA thread, so it reads this, never N.pipe, which the loop changes. */
static atomic_int notify_fd = -1;

static void
notify(void *p)
{
	int fd = atomic_load_explicit(&notify_fd, memory_order_acquire);

	(void)p;
	/* A CUDA thread: no CUDA calls here; count, and wake the loop. */
	atomic_fetch_add_explicit(&fired, 1, memory_order_release);
	if (fd >= 0)
		(void)!write(fd, "x", 1);
}

/*
 * Everything NCCL had, after the communicator is aborted: the abort makes
 * NCCL's kernels exit, so synchronising the stream is bounded, and once it
 * returns no notify() is pending that could write into a closed (or reused)
 * descriptor, and no copy still targets the buffers. Where the stream cannot
 * be synchronised (a sticky CUDA error) the stream, buffers and pipe are left
 * as they are: a few bytes and two descriptors, rather than a write into
 * whatever reuses the descriptor.
 */
static void
release(void)
{
	int idle = 1;

	if (N.comm != NULL)
		N.cu->ncclCommAbort(N.comm);
	N.comm = NULL;
	atomic_store_explicit(&notify_fd, -1, memory_order_release);
	if (N.cu != NULL && N.stream != NULL) {
		if ((idle = N.cu->cudaStreamSynchronize(N.stream) == cudaSuccess)) {
			N.cu->cudaStreamDestroy(N.stream);
			N.stream = NULL;
		}
	}
	if (!idle)
		return;
	if (N.cu != NULL) {
		if (N.hbuf != NULL)
			N.cu->cudaFreeHost(N.hbuf);
		if (N.dbuf != NULL)
			N.cu->cudaFree(N.dbuf);
		if (N.hpay != NULL)
			N.cu->cudaFreeHost(N.hpay);
		if (N.dpay != NULL)
			N.cu->cudaFree(N.dpay);
	}
	N.hbuf = N.dbuf = NULL;
	N.hpay = N.dpay = NULL;
	N.paycap = 0;
	if (N.pipe[0] >= 0) {
		close(N.pipe[0]);
		close(N.pipe[1]);
	}
	N.pipe[0] = N.pipe[1] = -1;
}

/* The rendezvous that carries the job without NCCL, for the log. */
static const char *
base_name(void)
{
	if (N.base == NULL)
		return "the helper";
	return strcmp(N.base->name, "redis") == 0 ? "Redis" : N.base->name;
}

/* Forced (ACCELCTL_TRANSPORT=nccl) and unusable: cross-node waits fail (125). */
static void
unusable(const char *why)
{
	if (N.setting != AC_TSET_NCCL) {
		ac_log("NCCL not used (%s): %s carries the job", why,
		    base_name());
		go_off(why, 1);
		return;
	}
	snprintf(N.why, sizeof(N.why), "NCCL transport (ACCELCTL_TRANSPORT=nccl) "
	    "unavailable: %s", why);
	ac_log("%s", N.why);
	N.state = S_FAILED;
	/* The other nodes must not wait for us to join; forced, they fail too. */
	if (N.base != NULL) {
		char off[600];

		snprintf(off, sizeof(off), "%s%.500s", UNAVAILABLE, why);
		N.rdv->off(off);
	}
	while (N.head != NULL) {
		fail_coll(N.head->key, N.head->gen, N.why);
		pop();
	}
}

/* Another node cannot use NCCL though it was forced: neither can the job. */
static void
unavailable_elsewhere(const char *why)
{
	char text[600];

	snprintf(text, sizeof(text), "on another node: %s", why + strlen(UNAVAILABLE));
	release();
	unusable(text);
}

/*
 * NCCL is off for the rest of the job: abort the communicator (never
 * ncclCommDestroy on this path: it would wait for peers that may be gone)
 * and post everything in flight again over Redis. TELL: the other nodes
 * learn it through the rendezvous, so none waits for us in NCCL.
 */
static void
go_off(const char *why, int tell)
{
	struct xop *o;

	if (N.state == S_OFF || N.state == S_FAILED)
		return;
	release();
	if (N.state != S_IDLE)
		ac_log("NCCL off (%s): the rest of the job goes over %s",
		    why, N.base != NULL ? base_name() : "this node's helper alone");
	N.state = S_OFF;
	snprintf(N.why, sizeof(N.why), "%s", why);
	if (N.base != NULL) {
		if (tell)
			N.rdv->off(why);
		N.rdv->quiet(0);
		/* A local source's result handed to NCCL counts as published
		 * here (complete() marks it done once handed over), and the
		 * sweep after a (re)connect posts only what is in flight and
		 * each name's latest: so it goes to the rendezvous itself,
		 * which keeps it until it is registered (hand_over). Dropped
		 * with the op, a node that went off before it was connected
		 * (no GPU: its first broadcast), or with two generations of a
		 * name queued (NCCL still joining), left the other nodes'
		 * readers waiting to their deadline. */
		while (N.head != NULL) {
			hand_over(N.head);
			pop();
		}
		N.rdv->resync();
		return;
	}
	N.job->xlocal = 0;
	while ((o = N.head) != NULL) {
		N.head = o->next;
		local_done(ac_job_find(N.job, o->key, o->gen));
		free_op(o);
	}
}

static void
cuda_off(const char *what, cudaError_t ce)
{
	char why[300];

	snprintf(why, sizeof(why), "%s: %s", what, N.cu->cudaGetErrorString(ce));
	go_off(why, 1);
}

static void
nccl_off(const char *what, ncclResult_t r)
{
	char why[600];
	const char *last = N.comm != NULL ? N.cu->ncclGetLastError(N.comm) : NULL;

	snprintf(why, sizeof(why), "%s: %s%s%.300s", what,
	    N.cu->ncclGetErrorString(r), last != NULL && *last ? ": " : "",
	    last != NULL ? last : "");
	go_off(why, 1);
}

static void
start_init(const ncclUniqueId *id)
{
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	ncclResult_t r;

	/* Non-blocking: init proceeds while the loop serves its clients. */
	config.blocking = 0;
	N.state = S_INIT;
	N.since = ac_now_ms();
	r = N.cu->ncclCommInitRankConfig(&N.comm, (int)N.job->nnodes, *id,
	    (int)N.job->node, &config);
	if (r != ncclSuccess && r != ncclInProgress)
		nccl_off("ncclCommInitRankConfig", r);
}

static void
to_hex(char *out, const void *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static int
from_hex(void *p, size_t n, const char *s, size_t len)
{
	unsigned char *b = p;

	if (len != 2 * n)
		return -1;
	for (size_t i = 0; i < 2 * n; i++) {
		int v = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' :
		    s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10 : -1;
		if (v < 0)
			return -1;
		b[i / 2] = (unsigned char)(i % 2 ? (b[i / 2] << 4) | v : v);
	}
	return 0;
}

/* The rendezvous answered our join (or told us NCCL is off). */
static void
joined(const char *state, const char *value, size_t len)
{
	ncclUniqueId id;

	if (strcmp(state, "off") == 0) {
		char why[300];

		snprintf(why, sizeof(why), "%.*s", (int)(len < 250 ? len : 250), value);
		if (N.state == S_OFF || N.state == S_FAILED)
			return;
		if (N.setting == AC_TSET_NCCL &&
		    strncmp(why, UNAVAILABLE, strlen(UNAVAILABLE)) == 0)
			return unavailable_elsewhere(why);
		/*
		 * Another node found that the collective in flight differs. Ours
		 * is its counterpart (one in flight at a time, and theirs could
		 * not complete before ours was issued): fail it alike, rather
		 * than let its waiters meet nobody over Redis.
		 */
		if (strcmp(why, DISAGREED) == 0 && N.state == S_UP) {
			progress();
			if (N.state == S_UP && N.head != NULL &&
			    N.head->stage != ST_QUEUED)
				disagree(N.head);
		}
		go_off(why, 0);
		return;
	}
	if (N.state != S_JOINING || strcmp(state, "id") != 0)
		return;		/* "wait": the id's event comes later */
	if (from_hex(&id, sizeof(id), value, len) == -1) {
		go_off("a malformed ncclUniqueId in the rendezvous", 1);
		return;
	}
	start_init(&id);
}

/* The first cross-node collective: load NCCL, pick the GPU, join. */
static void
begin(void)
{
	char err[512], hex[2 * sizeof(ncclUniqueId) + 1];
	ncclUniqueId id;
	ncclResult_t r;
	cudaError_t ce;
	int dev;

	if (N.state != S_IDLE)
		return;
	N.started = ac_now_ms();
	if ((dev = ac_cuda_pick_gpu(&N.cu, 1, err, sizeof(err))) < 0) {
		unusable(err);
		return;
	}
	N.dev = dev;
	N.state = S_JOINING;
	if (pipe2(N.pipe, O_NONBLOCK | O_CLOEXEC) == -1) {
		snprintf(err, sizeof(err), "pipe: %s", strerror(errno));
		go_off(err, 1);
		return;
	}
	atomic_store_explicit(&notify_fd, N.pipe[1], memory_order_release);
	if ((ce = N.cu->cudaStreamCreateWithFlags(&N.stream,
	    cudaStreamNonBlocking)) != cudaSuccess)
		return cuda_off("cudaStreamCreateWithFlags", ce);
	/* Pinned host memory: a copy to pageable memory would block the loop. */
	if ((ce = N.cu->cudaMallocHost((void **)&N.hbuf,
	    2 * AC_XN_WORDS * sizeof(uint64_t))) != cudaSuccess)
		return cuda_off("cudaMallocHost", ce);
	if ((ce = N.cu->cudaMalloc((void **)&N.dbuf,
	    AC_XN_WORDS * sizeof(uint64_t))) != cudaSuccess)
		return cuda_off("cudaMalloc", ce);
	if (N.job->node == 0 || N.base == NULL) {
		if ((r = N.cu->ncclGetUniqueId(&id)) != ncclSuccess)
			return nccl_off("ncclGetUniqueId", r);
	}
	ac_log("NCCL %s and %s on GPU %d: %s", N.cu->nccl_release,
	    N.cu->cudart_name, dev,
	    N.base != NULL ? "joining the other nodes' helpers" :
	    "a one-rank communicator (ACCELCTL_TRANSPORT=nccl on one node)");
	if (N.base == NULL) {
		start_init(&id);
		return;
	}
	/* Node 0 posts the id (where absent, told to every node: rdvproto.c);
	 * the others read it, or its event. Sent when the rendezvous is up.
	 * Only node 0 made an id: the others' is not theirs to show. */
	if (N.job->node == 0)
		to_hex(hex, &id, sizeof(id));
	N.rdv->join(N.job->node == 0 ? hex : NULL, joined);
}

static void
header_tail(struct xop *o)
{
	cudaError_t ce;

	if ((ce = N.cu->cudaMemcpyAsync(N.hbuf + AC_XN_WORDS, N.dbuf,
	    AC_XN_WORDS * sizeof(uint64_t), cudaMemcpyDeviceToHost,
	    N.stream)) != cudaSuccess)
		return cuda_off("cudaMemcpyAsync", ce);
	N.expect = atomic_load_explicit(&fired, memory_order_relaxed) + 1;
	if ((ce = N.cu->cudaLaunchHostFunc(N.stream, notify, NULL)) != cudaSuccess)
		return cuda_off("cudaLaunchHostFunc", ce);
	o->stage = ST_HDR_RUN;
	N.since = ac_now_ms();
}

static void
issue_header(struct xop *o)
{
	ncclResult_t r;
	cudaError_t ce;

	memcpy(N.hbuf, o->hdr, sizeof(o->hdr));
	if ((ce = N.cu->cudaMemcpyAsync(N.dbuf, N.hbuf, sizeof(o->hdr),
	    cudaMemcpyHostToDevice, N.stream)) != cudaSuccess)
		return cuda_off("cudaMemcpyAsync", ce);
	N.since = ac_now_ms();
	r = N.cu->ncclAllReduce(N.dbuf, N.dbuf, AC_XN_WORDS, ncclUint64, ncclMax,
	    N.comm, N.stream);
	if (r == ncclInProgress)
		o->stage = ST_HDR_ENQ;	/* enqueued once the async error says so */
	else if (r != ncclSuccess)
		nccl_off("ncclAllReduce", r);
	else
		header_tail(o);
}

static void
payload_tail(struct xop *o)
{
	cudaError_t ce;

	if ((ce = N.cu->cudaMemcpyAsync(N.hpay, N.dpay, o->len,
	    cudaMemcpyDeviceToHost, N.stream)) != cudaSuccess)
		return cuda_off("cudaMemcpyAsync", ce);
	N.expect = atomic_load_explicit(&fired, memory_order_relaxed) + 1;
	if ((ce = N.cu->cudaLaunchHostFunc(N.stream, notify, NULL)) != cudaSuccess)
		return cuda_off("cudaLaunchHostFunc", ce);
	o->stage = ST_PAY_RUN;
	N.since = ac_now_ms();
}

/* The bytes of a result: an ncclBroadcast from the source's node. */
static void
issue_payload(struct xop *o)
{
	ncclResult_t r;
	cudaError_t ce;

	if (o->len > N.paycap) {
		if (N.hpay != NULL)
			N.cu->cudaFreeHost(N.hpay);
		if (N.dpay != NULL)
			N.cu->cudaFree(N.dpay);
		N.hpay = N.dpay = NULL;
		N.paycap = 0;
		if ((ce = N.cu->cudaMallocHost((void **)&N.hpay, o->len)) != cudaSuccess)
			return cuda_off("cudaMallocHost", ce);
		if ((ce = N.cu->cudaMalloc((void **)&N.dpay, o->len)) != cudaSuccess)
			return cuda_off("cudaMalloc", ce);
		N.paycap = o->len;
	}
	if (o->root == N.job->node) {
		if (o->paylen != o->len)
			return go_off("the source's value changed size", 1);
		memcpy(N.hpay, o->payload, o->len);
		if ((ce = N.cu->cudaMemcpyAsync(N.dpay, N.hpay, o->len,
		    cudaMemcpyHostToDevice, N.stream)) != cudaSuccess)
			return cuda_off("cudaMemcpyAsync", ce);
	}
	N.since = ac_now_ms();
	r = N.cu->ncclBroadcast(N.dpay, N.dpay, o->len, ncclUint8, (int)o->root,
	    N.comm, N.stream);
	if (r == ncclInProgress)
		o->stage = ST_PAY_ENQ;
	else if (r != ncclSuccess)
		nccl_off("ncclBroadcast", r);
	else
		payload_tail(o);
}

/* Collective O was not the others' collective: its waiters fail (125). */
static void
disagree(const struct xop *o)
{
	char why[600];

	snprintf(why, sizeof(why), "the nodes' helpers disagree on the "
	    "order of collectives: this node is at %s '%s' generation "
	    "%" PRId64 ", another node at a different one (the job's "
	    "ranks ran different steps); NCCL is off for the rest of "
	    "the job", kind_word(o->key), ac_kind_label(o->key), o->gen);
	ac_log("%s", why);
	fail_coll(o->key, o->gen, why);
}

static void
header_done(struct xop *o)
{
	uint64_t w[AC_XN_WORDS];
	int64_t rank, status;
	int state;
	char why[600];

	memcpy(w, N.hbuf + AC_XN_WORDS, sizeof(w));
	if (!ac_xn_agree(w, o->key, o->gen)) {
		disagree(o);
		go_off(DISAGREED, 1);
		return;
	}
	if (o->kind == OP_BARRIER) {
		struct ac_coll *c = ac_job_find(N.job, o->key, o->gen);

		if (!ac_xn_barrier_failed(w, &rank, &status))
			deliver(o->key, o->gen, 0, "", NULL, 0);
		else if (N.base != NULL && c != NULL && !c->done)
			N.base->arrive(N.job, c);	/* Redis names every failing rank */
		else
			local_done(c);
		pop();
		return pump();
	}
	if (ac_xn_result(w, &state, &o->status, &o->len, &o->root) == -1) {
		snprintf(why, sizeof(why), "no node's helper holds the source of "
		    "%s '%s'", kind_word(o->key), ac_kind_label(o->key));
		fail_coll(o->key, o->gen, why);
		pop();
		return pump();
	}
	if (state == AC_XN_STATE_LOST) {
		struct ac_result lost = { .lost = 1 };

		ac_job_remote_done(N.job, o->key, o->gen, &lost);
	}
	else if (o->len == 0)
		deliver(o->key, o->gen, o->status, "", NULL, 0);
	else if (o->len > AC_PAYLOAD_MAX || o->root < 0 || o->root >= N.job->nnodes)
		return go_off("a malformed result header", 1);
	else
		return issue_payload(o);
	pop();
	pump();
}

/* Issue the queue's first op when it is ready; one op in flight at a time. */
static void
pump(void)
{
	struct xop *o = N.head;

	if (N.state != S_UP || o == NULL || o->stage != ST_QUEUED || !o->have)
		return;
	issue_header(o);
}

/* Look at the communicator: init done, op enqueued or finished, errors. */
static void
progress(void)
{
	ncclResult_t r, ar = ncclSuccess;
	cudaError_t ce;
	struct xop *o;

	if (N.state != S_INIT && N.state != S_UP)
		return;
	if ((r = N.cu->ncclCommGetAsyncError(N.comm, &ar)) != ncclSuccess)
		return nccl_off("ncclCommGetAsyncError", r);
	if (ar != ncclSuccess && ar != ncclInProgress)
		return nccl_off(N.state == S_INIT ? "ncclCommInitRankConfig" :
		    "NCCL", ar);
	if (N.state == S_INIT) {
		if (ar == ncclInProgress)
			return;
		N.state = S_UP;
		ac_log("NCCL communicator of %ld node%s up on GPU %d in %ld ms",
		    N.job->nnodes, N.job->nnodes == 1 ? "" : "s", N.dev,
		    ac_now_ms() - N.started);
		return pump();
	}
	if ((o = N.head) == NULL)
		return;
	switch (o->stage) {
	case ST_HDR_ENQ:
		if (ar == ncclSuccess)
			header_tail(o);
		return;
	case ST_PAY_ENQ:
		if (ar == ncclSuccess)
			payload_tail(o);
		return;
	case ST_HDR_RUN:
	case ST_PAY_RUN:
		/* Acquire: the copy into our pinned buffer came before notify(). */
		if (atomic_load_explicit(&fired, memory_order_acquire) < N.expect) {
			ce = N.cu->cudaStreamQuery(N.stream);
			if (ce == cudaSuccess || ce == cudaErrorNotReady)
				return;	/* the host function has not run yet */
			return cuda_off("cudaStreamQuery", ce);
		}
		if (o->stage == ST_HDR_RUN)
			return header_done(o);
		deliver(o->key, o->gen, o->status, "", N.hpay, o->len);
		pop();
		return pump();
	}
}

static void
x_arrive(struct ac_job *j, struct ac_coll *c)
{
	struct xop *o;

	if (N.state == S_OFF) {
		if (N.base != NULL)
			N.base->arrive(j, c);
		else
			local_done(c);
		return;
	}
	if (N.state == S_FAILED)
		return fail_coll(c->key, c->gen, N.why);
	if (find_op(c->key, c->gen) != NULL || (o = enqueue(OP_BARRIER, c)) == NULL)
		return;
	fill_barrier(o, c);
	begin();
	pump();
}

/*
 * Broadcasts go over NCCL. The results of --wait and main-first stay with
 * Redis (or, on one node, with the helper alone): their source runs a
 * command for minutes or hours, and an NCCL collective posted for that long
 * would keep a kernel spinning on every other node's GPU.
 */
static void
x_result(struct ac_job *j, struct ac_coll *c, int publish)
{
	struct xop *o;

	const struct ac_kind *k = ac_kind_of(c->key);

	if ((k == NULL || !k->streamed) && N.state != S_FAILED) {
		if (N.base != NULL)
			(publish ? N.base->publish : N.base->want)(j, c);
		return;
	}
	if (N.state == S_OFF) {
		if (N.base != NULL)
			(publish ? N.base->publish : N.base->want)(j, c);
		return;
	}
	if (N.state == S_FAILED)
		return fail_coll(c->key, c->gen, N.why);
	if ((o = find_op(c->key, c->gen)) == NULL &&
	    (o = enqueue(OP_RESULT, c)) == NULL)
		return;
	if (!o->have)
		fill_result(o, c);
	if (publish && !o->mine && (o->mfailed = strdup(c->failed)) != NULL) {
		o->mine = 1;
		o->msrc = c->src;
		o->mresult = c->result;
	}
	begin();
	pump();
}

/*
 * NCCL went off with O in its queue: a local source's result goes to the
 * rendezvous, from what the op kept (the collective itself may be gone:
 * released and freed once a later generation of its name was). Results
 * only: a barrier and a reader's op stay in flight in the job, and the
 * sweep that follows posts or asks them again.
 */
static void
hand_over(const struct xop *o)
{
	struct ac_coll c;

	if (!o->mine || (o->msrc != AC_SRC_DONE && o->msrc != AC_SRC_LOST))
		return;
	memset(&c, 0, sizeof(c));
	snprintf(c.key, sizeof(c.key), "%s", o->key);
	c.gen = o->gen;
	c.op = AC_OP_RESULT;
	c.scope = AC_SCOPE_JOB;
	c.src = o->msrc;
	c.done = 1;
	c.result = o->mresult;
	snprintf(c.failed, sizeof(c.failed), "%s", o->mfailed);
	c.payload = o->payload;
	c.paylen = o->msrc == AC_SRC_DONE ? o->paylen : 0;
	N.base->publish(N.job, &c);
}

static void
x_publish(struct ac_job *j, struct ac_coll *c)
{
	x_result(j, c, 1);
}

static void
x_want(struct ac_job *j, struct ac_coll *c)
{
	x_result(j, c, 0);
}

static void
x_abort(struct ac_job *j)
{
	if (N.state == S_JOINING || N.state == S_INIT || N.state == S_UP)
		go_off("a rank aborted the job", 1);
	if (N.base != NULL)
		N.base->abort(j);
}

/* A rank of this node is gone: the rendezvous tells the others. */
static void
x_lost(struct ac_job *j, const struct ac_lost *l)
{
	if (N.base != NULL && N.base->lost != NULL)
		N.base->lost(j, l);
}

static void
x_where(struct ac_job *j, const char *record)
{
	if (N.base != NULL && N.base->where != NULL)
		N.base->where(j, record);
}

static const char *
x_waits(long node)
{
	return N.base != NULL && N.base->waits != NULL ? N.base->waits(node) :
	    NULL;
}

/* A rank said who it is: a result op may now know where its source is. */
static void
x_hello(struct ac_job *j)
{
	if (N.base != NULL)
		N.base->hello(j);
	for (struct xop *o = N.head; o != NULL; o = o->next) {
		struct ac_coll *c;

		if (!o->have && o->kind == OP_RESULT &&
		    (c = ac_job_find(j, o->key, o->gen)) != NULL)
			fill_result(o, c);
	}
	pump();
}

static const char *
x_node(long node)
{
	return N.base != NULL ? N.base->node(node) : NULL;
}

/* A waiter's deadline passed while its collective was with NCCL: an NCCL
 * collective cannot be withdrawn, so the communicator goes (Redis keeps an
 * arrival for a late node; NCCL would block every later collective). */
static void
x_expired(struct ac_job *j, struct ac_coll *c)
{
	char why[400];

	(void)j;
	if ((N.state == S_JOINING || N.state == S_INIT || N.state == S_UP) &&
	    find_op(c->key, c->gen) != NULL) {
		snprintf(why, sizeof(why), "a deadline passed at %s '%s' "
		    "generation %" PRId64 " while it waited in NCCL",
		    kind_word(c->key), ac_kind_label(c->key), c->gen);
		go_off(why, 1);
	}
}

/*
 * A local rank left barrier C after this node handed it on. A collective
 * posted in NCCL cannot be taken back, so NCCL goes off for the run (as at a
 * deadline, x_expired) and the rendezvous, which can, withdraws the arrival.
 * On one node without a rendezvous the barrier was complete when it was
 * handed on (every local rank was in): nothing is left to take back.
 */
static void
x_withdraw(struct ac_job *j, struct ac_coll *c)
{
	char why[400];

	if (N.base != NULL && (N.state == S_JOINING || N.state == S_INIT ||
	    N.state == S_UP) && find_op(c->key, c->gen) != NULL) {
		snprintf(why, sizeof(why), "a rank left %s '%s' generation %"
		    PRId64 " while it waited in NCCL", kind_word(c->key),
		    ac_kind_label(c->key), c->gen);
		go_off(why, 1);
	}
	if (N.base != NULL && N.base->withdraw != NULL)
		N.base->withdraw(j, c);
	else
		c->xwd = 0;
}

/* --- the transport's loop hooks: ours, then the rendezvous' --- */

static int
x_fds(struct pollfd *pfd, int room)
{
	int n = 0;

	if (N.pipe[0] >= 0 && N.state == S_UP && room > 0) {
		pfd->fd = N.pipe[0];
		pfd->events = POLLIN;
		pfd->revents = 0;
		n = 1;
	}
	N.nown = n;
	if (N.base != NULL)
		n += N.base->fds(pfd + n, room - n);
	return n;
}

static void
x_events(const struct pollfd *pfd, int n)
{
	char buf[64];

	if (N.nown > 0 && n > 0 && (pfd->revents & POLLIN)) {
		while (N.pipe[0] >= 0 && read(N.pipe[0], buf, sizeof(buf)) > 0)
			;
		progress();
	}
	if (N.base != NULL && n > N.nown)
		N.base->events(pfd + N.nown, n - N.nown);
}

static long
x_timer(long now)
{
	long next = -1, waited = now - N.since, t;
	struct xop *o;

	if (N.base != NULL)
		next = N.base->timer(now);
	progress();
	o = N.head;
	t = -1;
	if (N.state == S_INIT ||
	    (N.state == S_UP && o != NULL && (o->stage == ST_HDR_ENQ ||
	    o->stage == ST_PAY_ENQ)))
		t = waited < 100 ? 1 : 10;
	else if (N.state == S_UP && o != NULL && o->stage != ST_QUEUED)
		t = 100;	/* completion wakes us through the pipe */
	if (t >= 0 && (next < 0 || t < next))
		next = t;
	if (N.base == NULL || (N.state != S_JOINING && N.state != S_INIT &&
	    N.state != S_UP))
		return next;
	/* Barriers that wait long are posted to the rendezvous as well (see SLOW_MS). */
	for (o = N.head; o != NULL; o = o->next) {
		long left = o->since + slow_ms - now;
		struct ac_coll *c;

		if (o->kind != OP_BARRIER || o->posted)
			continue;
		if (left > 0) {
			if (next < 0 || left < next)
				next = left;
			continue;
		}
		o->posted = 1;
		if ((c = ac_job_find(N.job, o->key, o->gen)) != NULL && !c->done)
			N.base->arrive(N.job, c);
	}
	return next;
}

static void
x_describe(char *buf, size_t len)
{
	char base[700] = "none";

	if (N.base != NULL)
		N.base->describe(base, sizeof(base));
	switch (N.state) {
	case S_IDLE:
		snprintf(buf, len, "nccl%s (not started: the first cross-node "
		    "collective starts it); rendezvous %s",
		    N.setting == AC_TSET_NCCL ? "" : " if a GPU is visible", base);
		break;
	case S_JOINING:
	case S_INIT:
		snprintf(buf, len, "nccl (starting on GPU %d); rendezvous %s",
		    N.dev, base);
		break;
	case S_UP:
		snprintf(buf, len, "nccl (a communicator of %ld node helper%s on "
		    "GPU %d, NCCL %s); rendezvous %s", N.job->nnodes,
		    N.job->nnodes == 1 ? "" : "s", N.dev, N.cu->nccl_release, base);
		break;
	case S_OFF:
		snprintf(buf, len, "%s (NCCL off: %s)%s%s", N.base != NULL ?
		    N.base->name : "none", N.why, N.base != NULL ? "; " : "",
		    N.base != NULL ? base : "");
		break;
	default:
		snprintf(buf, len, "unavailable (%s)", N.why);
	}
}

static const char *
x_down(int *final)
{
	*final = 0;
	return N.base != NULL ? N.base->down(final) : NULL;
}

/* Abort the communicator (never ncclCommDestroy: it would wait for peers). */
static void
x_stop(void)
{
	release();
	while (N.head != NULL)
		pop();
	if (N.base != NULL)
		N.base->stop();
}

/* Before the communicator, or off (the rendezvous carries the job), the
 * rendezvous' arrivals wait where it says; over the communicator, none. */
static const char *
x_pending(void)
{
	if (N.state == S_UP || N.state == S_FAILED)
		return NULL;
	return N.base != NULL && N.base->pending != NULL ? N.base->pending() :
	    NULL;
}

/* What waits on the rendezvous (the fallback's collectives, the
 * communicator's id) is read there when a line is due. */
static long
x_look_by(long due)
{
	return N.base != NULL && N.base->look_by != NULL ? N.base->look_by(due) :
	    -1;
}

static const struct ac_xport xport = {
	.name = "nccl",
	.fds = x_fds,
	.events = x_events,
	.timer = x_timer,
	.describe = x_describe,
	.down = x_down,
	.stop = x_stop,
	.arrive = x_arrive,
	.publish = x_publish,
	.want = x_want,
	.abort = x_abort,
	.lost = x_lost,
	.where = x_where,
	.waits = x_waits,
	.hello = x_hello,
	.node = x_node,
	.expired = x_expired,
	.withdraw = x_withdraw,
	.pending = x_pending,
	.look_by = x_look_by,
};

const struct ac_xport *
ac_xnccl_open(struct ac_job *j, const struct ac_rdv *rdv, int setting)
{
	const char *slow = getenv("ACCELCTL_TEST_NCCL_SLOW_MS");

	/* tests/sh/t_redis.sh: what reaches the store over NCCL, with every
	 * barrier fast however slow the machine (under ASan 8 simulated nodes'
	 * ranks arrive hundreds of ms apart, and those barriers are posted). */
	if (slow != NULL && atol(slow) > 0)
		slow_ms = atol(slow) < 3600000 ? atol(slow) : 3600000;
	N.job = j;
	N.rdv = rdv;
	N.base = rdv != NULL ? rdv->x : NULL;
	N.setting = setting;
	N.state = S_IDLE;
	N.pipe[0] = N.pipe[1] = -1;
	if (rdv != NULL)
		rdv->quiet(1);
	else
		j->xlocal = 1;
	return &xport;
}
