/* trace.c: each node's helper writing its record as Chrome trace events, one file per node in ACCELCTL_TRACE_DIR.
 *
 * The format is the one ui.perfetto.dev and chrome://tracing open (PyTorch's
 * profiler writes it too): the JSON array form, whose closing bracket is
 * optional, so that a helper appends one event a line as collectives are
 * released and a helper killed mid-job leaves a file that still opens. One
 * track (pid, tid) per rank: pid is the node, tid the global rank; a slice
 * per wait (arrival to release) and one per source's CMD. Timestamps are the
 * node's monotonic clock in microseconds: `accelctl trace merge` aligns the
 * nodes (tmerge.c), which needs each slice's collective and generation in
 * its args. Every line is written in one write(2) per collective, in a
 * fixed field order that the merge reads back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll.h"
#include "kind.h"
#include "log.h"
#include "trace.h"

static struct {
	int	 dirfd;		/* the directory, -1: not tracing */
	int	 fd;		/* this node's file, -1: not open yet */
	int	 failed;	/* said once in the log: no more tries */
	int64_t	 skew;		/* test hook: added to this node's times */
	uint8_t	*named;		/* [lsize] a thread_name written */
	long	 lsize;
} T = { -1, -1, 0, 0, NULL, 0 };

void
ac_trace_init(void)
{
	const char *dir = getenv("ACCELCTL_TRACE_DIR"), *skew;

	if (dir == NULL || *dir == '\0' || T.dirfd >= 0)
		return;
	/* Made here if missing (one level), as a place to collect into. */
	if (mkdir(dir, 0777) == -1 && errno != EEXIST)
		ac_log("ACCELCTL_TRACE_DIR=%s: %s: no trace", dir, strerror(errno));
	else if ((T.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		ac_log("ACCELCTL_TRACE_DIR=%s: %s: no trace", dir, strerror(errno));
	/* tests/sh/t_trace.sh: node N's clock N x this many us ahead, as
	 * if the nodes' clocks differed by seconds (they share one here). */
	if ((skew = getenv("ACCELCTL_TEST_TRACE_SKEW_US")) != NULL)
		T.skew = strtoll(skew, NULL, 10);
}

/* This node's file, opened (and started) on the first collective. */
static int
trace_fd(const struct ac_job *j)
{
	char name[AC_KEY_MAX + 64], host[256] = "";
	struct stat st;

	if (T.fd >= 0 || T.dirfd < 0 || T.failed)
		return T.fd;
	snprintf(name, sizeof(name), AC_TRACE_PREFIX "%s" AC_TRACE_NODE "%ld.json",
	    j->id, j->node);
	/* Never through a link planted at the name, never blocking on a
	 * FIFO there (the helper serves every rank from one loop), and only
	 * into a regular file. A file system that hangs (a dead NFS server)
	 * still hangs the write: a trace dir on one is the user's risk, said
	 * in the man page. */
	T.fd = openat(T.dirfd, name, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW | O_NONBLOCK, 0644);
	if (T.fd >= 0 && fstat(T.fd, &st) == 0 && !S_ISREG(st.st_mode))
		errno = EINVAL;
	if (T.fd == -1 || fstat(T.fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		ac_log("trace %s: %s: no trace", name, errno == EINVAL ?
		    "not a regular file" : strerror(errno));
		T.failed = 1;
		if (T.fd >= 0)
			close(T.fd);
		return T.fd = -1;
	}
	/* A line torn before (a full disk, a helper killed mid-write) is
	 * ended, so that ours start on a line of their own (read back: the
	 * file is open for reading too). */
	if (st.st_size > 0) {
		char c = '\n';

		if (pread(T.fd, &c, 1, st.st_size - 1) != 1 || c != '\n')
			(void)write(T.fd, "\n", 1);
	}
	gethostname(host, sizeof(host) - 1);
	for (char *p = host; *p != '\0'; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < ' ')
			*p = '_';
	dprintf(T.fd, "%s{\"ph\":\"M\",\"pid\":%ld,\"tid\":0,\"ts\":0,"
	    "\"name\":\"process_name\",\"args\":{\"name\":\"node %ld (%s)\"}},\n"
	    "{\"ph\":\"M\",\"pid\":%ld,\"tid\":0,\"ts\":0,\"name\":"
	    "\"process_sort_index\",\"args\":{\"sort_index\":%ld}},\n",
	    st.st_size == 0 ? "[\n" : "", j->node, j->node, host, j->node,
	    j->node);
	ac_log("trace: %s", name);
	return T.fd;
}

/* The track of local rank L: its global rank, else one past any rank. */
static long long
tid_of(const struct ac_job *j, long l)
{
	return j->rank_of[l] >= 0 ? (long long)j->rank_of[l] :
	    1000000000LL + l;
}

/* Append to B (at *N of LEN). */
#define ADD(...) do {							\
	int k_ = snprintf(b + n, n < len ? len - n : 0, __VA_ARGS__);	\
	if (k_ > 0)							\
		n += (size_t)k_;					\
} while (0)

void
ac_trace_add(const struct ac_job *j, const struct ac_coll *c, int64_t wall_ms,
    int64_t last_rank)
{
	const struct ac_kind *kind = ac_kind_of(c->key);
	long src = c->op == AC_OP_RESULT ? ac_coll_source_lrank(j, c) : -1;
	int64_t rel = c->t.released, sk = T.skew * j->node;
	size_t len = 1024 + (size_t)j->lsize * 1024, n = 0;
	char *b, last[64] = "?";
	/* A node's own collective (main-first --local, on-local-*): every
	 * node has one of that name, released when its own source is done,
	 * which the merge must not take for a release the nodes share. */
	const char *scope = c->scope == AC_SCOPE_NODE ? ",\"scope\":\"node\"" : "";

	if (trace_fd(j) < 0 || (b = malloc(len)) == NULL)
		return;
	if (T.named == NULL || T.lsize != j->lsize) {
		free(T.named);
		T.named = calloc((size_t)j->lsize, 1);
		T.lsize = T.named != NULL ? j->lsize : 0;
	}
	if (c->op == AC_OP_RESULT)	/* who everyone waited for: the source */
		snprintf(last, sizeof(last), "rank %lld (source)", (long long)
		    (c->scope != AC_SCOPE_NODE ? c->source : src >= 0 ?
		    j->rank_of[src] : -1));
	else if (c->t.last_node >= 0)
		snprintf(last, sizeof(last), "rank %lld (node %lld)",
		    (long long)c->t.last_rank, (long long)c->t.last_node);
	else if (!ac_coll_cross(j, c))
		snprintf(last, sizeof(last), "rank %lld (node %ld)",
		    (long long)last_rank, j->node);
	for (long l = 0; l < j->lsize; l++) {
		int64_t at = c->t.at[l];

		if (at == 0)
			continue;
		if (T.named != NULL && !T.named[l] && j->rank_of[l] >= 0) {
			T.named[l] = 1;
			ADD("{\"ph\":\"M\",\"pid\":%ld,\"tid\":%lld,\"ts\":0,"
			    "\"name\":\"thread_name\",\"args\":{\"name\":"
			    "\"rank %lld\"}},\n{\"ph\":\"M\",\"pid\":%ld,\"tid\":%lld,"
			    "\"ts\":0,\"name\":\"thread_sort_index\",\"args\":"
			    "{\"sort_index\":%lld}},\n", j->node, tid_of(j, l),
			    tid_of(j, l), j->node, tid_of(j, l), tid_of(j, l));
		}
		/* The source runs CMD: its slice is CMD's, up to FINISH. */
		if (l == src && !kind->streamed && c->t.finished >= at)
			ADD("{\"ph\":\"X\",\"pid\":%ld,\"tid\":%lld,\"ts\":%lld,"
			    "\"dur\":%lld,\"name\":\"CMD %s\",\"cat\":\"cmd\","
			    "\"args\":{\"key\":\"%s\",\"gen\":%lld,\"status\":%lld,"
			    "\"wall_ms\":%lld%s}},\n", j->node, tid_of(j, l),
			    (long long)(at + sk), (long long)(c->t.finished - at),
			    ac_kind_label(c->key), c->key, (long long)c->gen,
			    (long long)c->result, (long long)wall_ms, scope);
		else if (l != src)
			ADD("{\"ph\":\"X\",\"pid\":%ld,\"tid\":%lld,\"ts\":%lld,"
			    "\"dur\":%lld,\"name\":\"%s %s\",\"cat\":\"%s\","
			    "\"args\":{\"key\":\"%s\",\"gen\":%lld,\"status\":%lld,"
			    "\"wall_ms\":%lld,\"last\":\"%s\"%s}},\n", j->node,
			    tid_of(j, l), (long long)(at + sk),
			    (long long)(rel > at ? rel - at : 0), kind->name,
			    ac_kind_label(c->key), kind->name, c->key,
			    (long long)c->gen, (long long)c->result,
			    (long long)wall_ms, last, scope);
	}
	/* One write: a killed helper leaves whole lines. A short one
	 * (a full disk) is logged, and the trace stops there. */
	if (n < len && write(T.fd, b, n) != (ssize_t)n) {
		ac_log("trace: write: %s: the trace stops here", strerror(errno));
		T.failed = 1;
		close(T.fd);
		T.fd = -1;
	}
	free(b);
}

void
ac_trace_close(void)
{
	if (T.fd >= 0)
		close(T.fd);
	if (T.dirfd >= 0)
		close(T.dirfd);
	free(T.named);
	T.fd = T.dirfd = -1;
	T.named = NULL;
	T.lsize = 0;
}
