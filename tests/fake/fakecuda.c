/* fakecuda.c: a fake CUDA runtime and NCCL, for testing the NCCL transport where no GPU is.
 *
 * Loaded by accelctl through ACCELCTL_CUDART_LIBRARY and ACCELCTL_NCCL_LIBRARY
 * (tests/sh/t_nccl_fake.sh), it exports every symbol accelctl looks up, with
 * the prototypes of the real headers. "Device" memory is host memory; each
 * stream is a queue run in order by a thread of its own, so copies, host
 * functions and events complete asynchronously as on a GPU; collectives meet
 * through files in the directory named by the unique id (one file per rank
 * and collective, rename(2) makes it appear whole), which is how helpers of
 * different processes (simulated nodes) reduce and broadcast for real:
 * ncclMax of uint64/uint8 and ncclSum of float. A communicator's init waits
 * until every rank has joined; non-blocking calls answer ncclInProgress now
 * and then, as NCCL may. Not a model of NCCL's performance, only of its
 * semantics as accelctl uses them.
 *
 *   FAKE_CUDA_DEVICES=N     devices visible (default 1; 0: none)
 *   FAKE_NCCL_FAIL_INIT=1   the init fails as with two ranks on one GPU
 *   FAKE_NCCL_DELAY_MS=N    each collective takes N ms more (deadlines)
 *   FAKE_CUDA_OLD_DRIVER=1  cudaGetDeviceCount: the driver is too old
 *
 * Two properties of the real thing that accelctl has been bitten by are
 * modelled: CUDA is unusable in a child forked after the parent initialised
 * it (every call there fails with cudaErrorInitializationError), and events
 * time device work only: each stream keeps a clock that advances by the time
 * its items took, and a one-rank all-reduce in place does nothing (as NCCL's
 * does), so it takes no time at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define ID_MAGIC "FAKENCCL:"

enum { I_COPY, I_SET, I_ALLREDUCE, I_BCAST, I_HOSTFN, I_EVENT };

struct item {
	struct item		*next;
	int			 kind;
	void			*dst;
	const void		*src;
	size_t			 n;		/* bytes */
	int			 value;
	ncclDataType_t		 dt;
	ncclRedOp_t		 op;
	int			 root;
	struct ncclComm		*comm;
	long			 seq;
	cudaHostFn_t		 fn;
	void			*arg;
	struct CUevent_st	*ev;
};

struct CUstream_st {
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct item		*head, **tail;
	int			 busy;
	pthread_t		 th;
	double			 clock;		/* ms of device work done */
};

struct CUevent_st {
	atomic_int		 done;
	double			 ms;
};

struct ncclComm {
	char			 dir[4096];
	int			 nranks, rank;
	long			 seq;
	atomic_int		 aborted;
	atomic_int		 err;		/* ncclResult_t */
	int			 joined;
	int			 inprogress;	/* polls that still answer ncclInProgress */
	int			 toggle;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
nap(void)
{
	struct timespec ts = { 0, 300000 };

	nanosleep(&ts, NULL);
}

/* The process that initialised "CUDA"; 0 before. A child forked after that
 * inherits the value and cannot use CUDA, as with the real driver. */
static pid_t inited;

static int
forked(void)
{
	if (inited == 0)
		inited = getpid();
	return inited != getpid();
}

/* Write N bytes of P as DIR/NAME, whole or not at all. */
static int
put_file(const char *dir, const char *name, const void *p, size_t n)
{
	char tmp[4200], path[4200];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid());
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		return -1;
	if (n > 0 && write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	close(fd);
	return rename(tmp, path);
}

/* Wait for DIR/NAME; read N bytes of it into P. -1 when aborted. */
static int
get_file(struct ncclComm *c, const char *name, void *p, size_t n)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	while ((fd = open(path, O_RDONLY)) == -1) {
		if (atomic_load(&c->aborted))
			return -1;
		nap();
	}
	if (n > 0 && read(fd, p, n) != (ssize_t)n) {
		close(fd);
		atomic_store(&c->err, ncclSystemError);
		return -1;
	}
	close(fd);
	return 0;
}

static void
reduce(struct item *it, const void *in)
{
	size_t i;

	if (it->dt == ncclUint64 && it->op == ncclMax) {
		uint64_t *d = it->dst;
		const uint64_t *s = in;
		for (i = 0; i < it->n / 8; i++)
			if (s[i] > d[i])
				d[i] = s[i];
	} else if (it->dt == ncclUint8 && it->op == ncclMax) {
		uint8_t *d = it->dst;
		const uint8_t *s = in;
		for (i = 0; i < it->n; i++)
			if (s[i] > d[i])
				d[i] = s[i];
	} else if (it->dt == ncclFloat && it->op == ncclSum) {
		float *d = it->dst;
		const float *s = in;
		for (i = 0; i < it->n / 4; i++)
			d[i] += s[i];
	} else
		atomic_store(&it->comm->err, ncclInvalidArgument);
}

/*
 * Remove this rank's file of collective SEQ - 2: every rank has read it, as
 * every rank wrote its SEQ - 1 file, which it does only after finishing SEQ - 2.
 * (A 1 GiB all-reduce would otherwise leave a 1 GiB file per rank and call.)
 */
static void
clean(struct ncclComm *c, long seq)
{
	char path[4200];

	if (seq < 2)
		return;
	snprintf(path, sizeof(path), "%s/s%ld.r%d", c->dir, seq - 2, c->rank);
	unlink(path);
}

static void
collective(struct item *it)
{
	struct ncclComm *c = it->comm;
	char name[64];
	void *mine, *theirs;

	const char *delay = getenv("FAKE_NCCL_DELAY_MS");

	if (atomic_load(&c->aborted))
		return;
	if (delay != NULL && atoi(delay) > 0) {
		struct timespec ts = { atoi(delay) / 1000, atoi(delay) % 1000 * 1000000L };

		nanosleep(&ts, NULL);
	}
	if (c->nranks == 1) {
		/* One rank: the reduction and the broadcast are a copy, and
		 * in place nothing at all (NCCL launches no work for it). */
		if (it->dst != it->src)
			memmove(it->dst, it->src, it->n);
		return;
	}
	clean(c, it->seq);
	if (it->kind == I_BCAST) {
		/* The root's file, named as its all-reduce file would be. */
		snprintf(name, sizeof(name), "s%ld.r%d", it->seq, it->root);
		if (c->rank == it->root && put_file(c->dir, name, it->src, it->n) == -1)
			atomic_store(&c->err, ncclSystemError);
		if (c->rank != it->root)
			(void)get_file(c, name, it->dst, it->n);
		return;
	}
	snprintf(name, sizeof(name), "s%ld.r%d", it->seq, c->rank);
	if ((mine = malloc(it->n + 1)) == NULL || (theirs = malloc(it->n + 1)) == NULL) {
		free(mine);
		atomic_store(&c->err, ncclSystemError);
		return;
	}
	memcpy(mine, it->src, it->n);
	if (put_file(c->dir, name, mine, it->n) == -1)
		atomic_store(&c->err, ncclSystemError);
	memset(it->dst, 0, it->n);
	if (it->dt == ncclUint64 || it->dt == ncclUint8)
		memcpy(it->dst, mine, it->n);
	for (int r = 0; r < c->nranks; r++) {
		if (it->dt != ncclFloat && r == c->rank)
			continue;
		snprintf(name, sizeof(name), "s%ld.r%d", it->seq, r);
		if (get_file(c, name, theirs, it->n) == -1)
			break;
		reduce(it, theirs);
	}
	free(mine);
	free(theirs);
}

static void *
worker(void *p)
{
	struct CUstream_st *s = p;

	for (;;) {
		struct item *it;
		double t0;

		pthread_mutex_lock(&s->mu);
		while (s->head == NULL)
			pthread_cond_wait(&s->cv, &s->mu);
		it = s->head;
		s->head = it->next;
		if (s->head == NULL)
			s->tail = &s->head;
		s->busy = 1;
		pthread_mutex_unlock(&s->mu);
		t0 = now_ms();
		switch (it->kind) {
		case I_COPY: memcpy(it->dst, it->src, it->n); break;
		case I_SET: memset(it->dst, it->value, it->n); break;
		case I_ALLREDUCE: case I_BCAST: collective(it); break;
		case I_HOSTFN: it->fn(it->arg); t0 = now_ms(); break;
		case I_EVENT: it->ev->ms = s->clock; atomic_store(&it->ev->done, 1); break;
		}
		/* A one-rank all-reduce in place returns at once: its 0 ms too. */
		if (it->kind != I_EVENT && !(it->kind == I_ALLREDUCE &&
		    it->comm->nranks == 1 && it->dst == it->src &&
		    getenv("FAKE_NCCL_DELAY_MS") == NULL))
			s->clock += now_ms() - t0;
		free(it);
		pthread_mutex_lock(&s->mu);
		s->busy = 0;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

static cudaError_t
push(struct CUstream_st *s, struct item *it)
{
	if (s == NULL)
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&s->mu);
	it->next = NULL;
	*s->tail = it;
	s->tail = &it->next;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return cudaSuccess;
}

static struct item *
item(int kind)
{
	struct item *it = calloc(1, sizeof(*it));

	if (it == NULL)
		abort();
	it->kind = kind;
	return it;
}

/* The CUDA runtime. */

const char *
cudaGetErrorString(cudaError_t error)
{
	return error == cudaSuccess ? "no error" : error == cudaErrorNoDevice ?
	    "no CUDA-capable device is detected (fake)" :
	    error == cudaErrorInitializationError ? "initialization error (fake: "
	    "CUDA was initialised before this process was forked)" :
	    error == cudaErrorInsufficientDriver ? "CUDA driver version is "
	    "insufficient for CUDA runtime version (fake)" : "fake CUDA error";
}

cudaError_t
cudaGetDeviceCount(int *count)
{
	const char *n = getenv("FAKE_CUDA_DEVICES");

	if (forked())
		return cudaErrorInitializationError;
	if (getenv("FAKE_CUDA_OLD_DRIVER") != NULL)
		return cudaErrorInsufficientDriver;
	*count = n != NULL ? atoi(n) : 1;
	return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t
cudaSetDevice(int device)
{
	int n = 0;
	cudaError_t ce;

	if ((ce = cudaGetDeviceCount(&n)) == cudaErrorInitializationError)
		return ce;
	return device >= 0 && device < n ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t
cudaRuntimeGetVersion(int *runtimeVersion)
{
	*runtimeVersion = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t
cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
	snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", device);
	return cudaSuccess;
}

cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	struct CUstream_st *s = calloc(1, sizeof(*s));

	(void)flags;
	if (forked()) {
		free(s);
		return cudaErrorInitializationError;
	}
	if (s == NULL)
		return cudaErrorMemoryAllocation;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->tail = &s->head;
	if (pthread_create(&s->th, NULL, worker, s) != 0)
		return cudaErrorMemoryAllocation;
	pthread_detach(s->th);
	*pStream = s;
	return cudaSuccess;
}

cudaError_t
cudaStreamQuery(cudaStream_t s)
{
	cudaError_t r;

	pthread_mutex_lock(&s->mu);
	r = s->head == NULL && !s->busy ? cudaSuccess : cudaErrorNotReady;
	pthread_mutex_unlock(&s->mu);
	return r;
}

cudaError_t
cudaStreamSynchronize(cudaStream_t s)
{
	pthread_mutex_lock(&s->mu);
	while (s->head != NULL || s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	return cudaSuccess;
}

cudaError_t
cudaStreamDestroy(cudaStream_t s)
{
	(void)s;	/* its thread may be in a collective: left alone */
	return cudaSuccess;
}

cudaError_t
cudaMalloc(void **devPtr, size_t size)
{
	if (forked())
		return cudaErrorInitializationError;
	return (*devPtr = calloc(1, size ? size : 1)) ? cudaSuccess :
	    cudaErrorMemoryAllocation;
}

cudaError_t
cudaMallocHost(void **ptr, size_t size)
{
	return cudaMalloc(ptr, size);
}

cudaError_t
cudaFree(void *devPtr)
{
	free(devPtr);
	return cudaSuccess;
}

cudaError_t
cudaFreeHost(void *ptr)
{
	free(ptr);
	return cudaSuccess;
}

cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
    cudaStream_t stream)
{
	struct item *it = item(I_COPY);

	(void)kind;
	it->dst = dst;
	it->src = src;
	it->n = count;
	return push(stream, it);
}

cudaError_t
cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	struct item *it = item(I_SET);

	it->dst = devPtr;
	it->value = value;
	it->n = count;
	return push(stream, it);
}

cudaError_t
cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	struct item *it = item(I_HOSTFN);

	it->fn = fn;
	it->arg = userData;
	return push(stream, it);
}

cudaError_t
cudaEventCreate(cudaEvent_t *event)
{
	return (*event = calloc(1, sizeof(**event))) ? cudaSuccess :
	    cudaErrorMemoryAllocation;
}

cudaError_t
cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	struct item *it = item(I_EVENT);

	atomic_store(&event->done, 0);
	it->ev = event;
	return push(stream, it);
}

cudaError_t
cudaEventSynchronize(cudaEvent_t event)
{
	while (!atomic_load(&event->done))
		nap();
	return cudaSuccess;
}

cudaError_t
cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	if (!atomic_load(&start->done) || !atomic_load(&end->done))
		return cudaErrorNotReady;
	*ms = (float)(end->ms - start->ms);
	return cudaSuccess;
}

cudaError_t
cudaEventDestroy(cudaEvent_t event)
{
	free(event);
	return cudaSuccess;
}

/* NCCL. */

ncclResult_t
ncclGetVersion(int *version)
{
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

const char *
ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess: return "no error";
	case ncclInvalidUsage: return "invalid usage (fake)";
	case ncclInvalidArgument: return "invalid argument (fake)";
	case ncclInProgress: return "in progress (fake)";
	default: return "fake NCCL error";
	}
}

const char *
ncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return getenv("FAKE_NCCL_FAIL_INIT") != NULL ?
	    "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 0 (fake)" : "";
}

ncclResult_t
ncclGetUniqueId(ncclUniqueId *uniqueId)
{
	const char *tmp = getenv("TMPDIR");
	char dir[NCCL_UNIQUE_ID_BYTES];

	/* NCCL initialises CUDA here too. */
	if (forked())
		return ncclUnhandledCudaError;
	snprintf(dir, sizeof(dir), "%s/fakenccl.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (strlen(dir) + sizeof(ID_MAGIC) > NCCL_UNIQUE_ID_BYTES || mkdtemp(dir) == NULL)
		return ncclSystemError;
	memset(uniqueId, 0, sizeof(*uniqueId));
	memcpy(uniqueId->internal, ID_MAGIC, strlen(ID_MAGIC));
	memcpy(uniqueId->internal + strlen(ID_MAGIC), dir, strlen(dir));
	return ncclSuccess;
}

ncclResult_t
ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
    ncclConfig_t *config)
{
	struct ncclComm *c;
	char name[32];

	if (strncmp(commId.internal, ID_MAGIC, strlen(ID_MAGIC)) != 0 ||
	    rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return ncclSystemError;
	snprintf(c->dir, sizeof(c->dir), "%.*s", NCCL_UNIQUE_ID_BYTES,
	    commId.internal + strlen(ID_MAGIC));
	c->nranks = nranks;
	c->rank = rank;
	snprintf(name, sizeof(name), "join.r%d", rank);
	put_file(c->dir, name, "", 0);
	*comm = c;
	if (config != NULL && config->blocking == 0) {
		c->inprogress = 2;
		return ncclInProgress;
	}
	return ncclSuccess;
}

ncclResult_t
ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *asyncError)
{
	if (c == NULL)
		return ncclInvalidArgument;
	if (atomic_load(&c->err) != ncclSuccess) {
		*asyncError = (ncclResult_t)atomic_load(&c->err);
		return ncclSuccess;
	}
	if (!c->joined) {
		/* Init: done when every rank has joined. */
		char path[4200];
		int r;

		for (r = 0; r < c->nranks; r++) {
			snprintf(path, sizeof(path), "%s/join.r%d", c->dir, r);
			if (access(path, F_OK) != 0)
				break;
		}
		if (r < c->nranks) {
			*asyncError = ncclInProgress;
			return ncclSuccess;
		}
		if (getenv("FAKE_NCCL_FAIL_INIT") != NULL) {
			atomic_store(&c->err, ncclInvalidUsage);
			*asyncError = ncclInvalidUsage;
			return ncclSuccess;
		}
		c->joined = 1;
	}
	if (c->inprogress > 0) {
		c->inprogress--;
		*asyncError = ncclInProgress;
		return ncclSuccess;
	}
	*asyncError = ncclSuccess;
	return ncclSuccess;
}

/* Aborted communicators: their stream threads may still look at them. */
static struct ncclComm *graveyard[64];
static atomic_int ngraves;

ncclResult_t
ncclCommAbort(ncclComm_t c)
{
	if (c != NULL) {
		int i = atomic_fetch_add(&ngraves, 1);

		atomic_store(&c->aborted, 1);
		if (i < 64)
			graveyard[i] = c;	/* reachable: no leak to report */
	}
	return ncclSuccess;
}

static ncclResult_t
enqueue(struct item *it, ncclComm_t c, cudaStream_t s)
{
	if (c == NULL || atomic_load(&c->aborted))
		return ncclInvalidUsage;
	it->comm = c;
	it->seq = c->seq++;
	if (push(s, it) != cudaSuccess)
		return ncclInvalidArgument;
	/* Every other call answers "in progress", as a non-blocking one may. */
	if ((c->toggle ^= 1) != 0) {
		c->inprogress = 1;
		return ncclInProgress;
	}
	return ncclSuccess;
}

static size_t
dtsize(ncclDataType_t dt)
{
	return dt == ncclUint64 || dt == ncclInt64 || dt == ncclFloat64 ? 8 :
	    dt == ncclUint8 || dt == ncclInt8 ? 1 : dt == ncclFloat16 ? 2 : 4;
}

ncclResult_t
ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	struct item *it = item(I_ALLREDUCE);

	it->src = sendbuff;
	it->dst = recvbuff;
	it->n = count * dtsize(datatype);
	it->dt = datatype;
	it->op = op;
	return enqueue(it, comm, stream);
}

ncclResult_t
ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
    ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
	struct item *it = item(I_BCAST);

	it->src = sendbuff;
	it->dst = recvbuff;
	it->n = count * dtsize(datatype);
	it->dt = datatype;
	it->root = root;
	return enqueue(it, comm, stream);
}
