/* journal.c: the append-only record of a job's arrivals, results and aborts.
 *
 * Why: a helper killed in the middle of a barrier must be replaced by one
 * that lets no barrier pass early. Each record is one write(2) to a file
 * opened O_APPEND, made before any client is answered; the page cache keeps
 * it when the process dies (machine crashes end the job anyway). A new
 * helper replays the file through the same functions the live helper uses.
 *
 * Records, one a line, the key last (keys hold no blanks):
 *   J lsize world node nnodes          the job's shape
 *   H lrank rank                       a local rank's global rank
 *   A lrank gen op scope role source status nonce key
 *   F gen status paylen key            then, when paylen > 0, paylen bytes
 *                                      and a newline
 *   L gen key                          the source died
 *   R gen status paylen flen key       released by the transport; then, when
 *                                      paylen + flen > 0, the payload, the
 *                                      failing ranks' text and a newline
 *   W lrank gen key                    the rank left before gen completed
 *   X lrank reason                     abort
 *   N lrank next last nonce key        a local rank's counters (compaction)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "duration.h"
#include "journal.h"
#include "log.h"
#include "num.h"

/* Records not written since the helper started: a compaction that loses
 * one is abandoned. */
static unsigned long write_failures;

/* A full disk fails every record: one log line per 10 s says so. */
static void
write_failed(const char *what)
{
	static long last;
	static unsigned long dropped;

	write_failures++;
	dropped++;
	if (last != 0 && ac_now_ms() - last < 10000)
		return;
	ac_log("cannot write the journal: %s; %lu record%s not kept "
	    "(the job goes on, but a restarted helper will not know %s)", what,
	    dropped, dropped == 1 ? "" : "s", dropped == 1 ? "it" : "them");
	last = ac_now_ms();
	dropped = 0;
}

/*
 * Write P whole to the journal, or not at all: a short write (a full disk,
 * a file size limit) is cut off again, so that the next record does not
 * start in the middle of a torn one. The replay would cut a torn tail, but
 * a torn record in the middle would be read together with the next one.
 */
static void
write_record(struct ac_job *j, const char *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = write(j->journal, p + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (off == n) {
		j->journal_size += n;
		return;
	}
	write_failed(off == 0 ? strerror(errno) : "a short write");
	if (off > 0 && ftruncate(j->journal, (off_t)j->journal_size) == -1)
		ac_log("cannot cut a torn journal record: %s",
		    strerror(errno));
}

static void
append(struct ac_job *j, const char *line, size_t n, const void *extra,
    size_t extralen)
{
	char *buf;

	if (j->journal < 0)
		return;
	if (extralen == 0) {
		write_record(j, line, n);
		return;
	}
	/* Header, payload and newline in one write: a record is whole or absent. */
	if ((buf = malloc(n + extralen + 1)) == NULL) {
		write_failed("out of memory");
		return;
	}
	memcpy(buf, line, n);
	memcpy(buf + n, extra, extralen);
	buf[n + extralen] = '\n';
	write_record(j, buf, n + extralen + 1);
	free(buf);
}

void
ac_journal_shape(struct ac_job *j)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "J %ld %ld %ld %ld\n", j->lsize,
	    j->world, j->node, j->nnodes);

	append(j, line, (size_t)n, NULL, 0);
}

void
ac_journal_hello(struct ac_job *j, long lrank, int64_t rank)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "H %ld %" PRId64 "\n", lrank, rank);

	append(j, line, (size_t)n, NULL, 0);
}

void
ac_journal_arrive(struct ac_job *j, long lrank, int op, int scope, int role,
    const char *key, uint64_t nonce, int64_t gen, int64_t source,
    int64_t status)
{
	char line[AC_KEY_MAX + 160];
	int n = snprintf(line, sizeof(line), "A %ld %" PRId64 " %d %d %d %"
	    PRId64 " %" PRId64 " %" PRIu64 " %s\n", lrank, gen, op, scope, role,
	    source, status, nonce, key);

	append(j, line, (size_t)n, NULL, 0);
}

void
ac_journal_finish(struct ac_job *j, const struct ac_coll *c)
{
	char line[AC_KEY_MAX + 96];
	int n = snprintf(line, sizeof(line), "F %" PRId64 " %" PRId64 " %zu %s\n",
	    c->gen, c->result, c->paylen, c->key);

	if (c->paylen == 0)
		append(j, line, (size_t)n, NULL, 0);
	else
		append(j, line, (size_t)n, c->payload, c->paylen);
}

void
ac_journal_lost(struct ac_job *j, const struct ac_coll *c)
{
	char line[AC_KEY_MAX + 48];
	int n = snprintf(line, sizeof(line), "L %" PRId64 " %s\n", c->gen,
	    c->key);

	append(j, line, (size_t)n, NULL, 0);
}

/*
 * Without this record a replaced helper knew nothing of what the transport
 * released: every cross-node generation of the job replayed as in flight,
 * and was posted again after the reconnect (issue 18: a freeze at 100% CPU
 * after a few thousand barriers). The payload is kept as for F: a rank
 * whose reply was cut with the helper asks the replacement again.
 */
void
ac_journal_remote(struct ac_job *j, const struct ac_coll *c)
{
	char line[AC_KEY_MAX + 128], *extra;
	size_t flen = strlen(c->failed), n;

	/* Completed as over (ac_rdvproto_over), its result is none: the next
	 * replacement finds it over again, rather than a made-up result. */
	if (c->xover)
		return;
	n = (size_t)snprintf(line, sizeof(line), "R %" PRId64 " %" PRId64
	    " %zu %zu %s\n", c->gen, c->result, c->paylen, flen, c->key);
	if (c->paylen + flen == 0) {
		append(j, line, n, NULL, 0);
		return;
	}
	if ((extra = malloc(c->paylen + flen)) == NULL) {
		write_failed("out of memory");
		return;
	}
	if (c->paylen > 0)
		memcpy(extra, c->payload, c->paylen);
	memcpy(extra + c->paylen, c->failed, flen);
	append(j, line, n, extra, c->paylen + flen);
	free(extra);
}

void
ac_journal_withdraw(struct ac_job *j, long lrank, const struct ac_coll *c)
{
	char line[AC_KEY_MAX + 64];
	int n = snprintf(line, sizeof(line), "W %ld %" PRId64 " %s\n", lrank,
	    c->gen, c->key);

	append(j, line, (size_t)n, NULL, 0);
}

void
ac_journal_abort(struct ac_job *j, long lrank, const char *reason)
{
	char line[700];
	int n = snprintf(line, sizeof(line), "X %ld %.600s", lrank, reason);

	for (int i = 2; i < n; i++)
		if ((unsigned char)line[i] < ' ')
			line[i] = ' ';
	line[n++] = '\n';
	append(j, line, (size_t)n, NULL, 0);
}

/* A complete record that makes no sense (a bad key, a rank out of range, a
 * line of garbage): skipped with a log line, never a crash or a stop. */
static size_t
skip(const char *line, size_t used, const char *why)
{
	ac_log("journal: skipped a bad record (%s): %.80s", why, line);
	return used;
}

/* A replayed F record: the result of KEY/GEN, if it is still known. */
static void
finish_replayed(struct ac_job *j, int64_t gen, const char *key, int64_t st,
    const uint8_t *p, size_t n)
{
	struct ac_coll *co = ac_job_find(j, key, gen);

	if (co != NULL)
		ac_job_finish(j, co, st, p, n);
}

/* A replayed L record: the source of KEY/GEN died, here or on another node. */
static void
lost_replayed(struct ac_job *j, int64_t gen, const char *key)
{
	struct ac_coll *co = ac_job_find(j, key, gen);
	struct ac_result lost = { .lost = 1 };

	if (co != NULL && co->src == AC_SRC_RUNNING)
		ac_job_source_lost(j, co);
	else if (co != NULL)
		ac_job_remote_done(j, key, gen, &lost);
}

/* Replay one record at P (of N bytes left); returns bytes consumed, 0 at a
 * torn record (no newline: the rest is cut) or a journal of another shape. */
/*
 * Released collectives are collected (ac_job_gc) once the records replayed
 * since the last collection outnumber those in flight, and once at the end: a
 * collection per record walked every collective in flight per record, the
 * square of a journal whose ranks left thousands of results unread (40,000
 * names: 32 s before serving). Between two collections a name holds at most
 * that many released generations, so a look-up stays short.
 */
static size_t replayed_since_gc;

static void
replay_gc(struct ac_job *j)
{
	if (++replayed_since_gc < 64 || replayed_since_gc < j->ncolls)
		return;
	ac_job_gc(j);
	replayed_since_gc = 0;
}

static size_t
replay_one(struct ac_job *j, const char *p, size_t n)
{
	const char *nl = memchr(p, '\n', n);
	char line[AC_KEY_MAX + 700], key[AC_KEY_MAX];
	long a, b, c, d;
	int op, scope, role;
	int64_t gen, src, st;
	uint64_t nonce;
	size_t paylen, len, used;
	const char *why;

	if (nl == NULL)
		return 0;
	len = (size_t)(nl - p);
	if (len >= sizeof(line))
		return skip("(too long)", len + 1, "too long");
	memcpy(line, p, len);
	line[len] = '\0';
	switch (line[0]) {
	case 'J':
		if (sscanf(line, "J %ld %ld %ld %ld", &a, &b, &c, &d) != 4)
			return skip(line, len + 1, "malformed");
		if (j->lsize == 0 && a > 0 && a <= 1 << 20 && b >= a && c >= 0 &&
		    d > c && ac_job_shape(j, a, b, c, d) == -1)
			return 0;
		/* Another job's shape: a stale file, dropped from here. */
		if (j->lsize != a || j->world != b || j->node != c || j->nnodes != d)
			return 0;
		break;
	case 'H':
		if (sscanf(line, "H %ld %" SCNd64, &a, &gen) != 2 || a < 0 ||
		    a >= j->lsize || gen < 0)
			return skip(line, len + 1, "malformed");
		ac_job_hello(j, a, gen);
		break;
	case 'A':
		if (sscanf(line, "A %ld %" SCNd64 " %d %d %d %" SCNd64 " %" SCNd64
		    " %" SCNu64 " %255s", &a, &gen, &op, &scope, &role, &src, &st,
		    &nonce, key) != 9 || a < 0 || a >= j->lsize || gen < 0 ||
		    role < AC_ROLE_WAIT || role > AC_ROLE_SOURCE)
			return skip(line, len + 1, "malformed");
		if (ac_job_arrive(j, a, op, scope, role, key, nonce, gen, src, st,
		    &why) == NULL)
			return skip(line, len + 1, why);
		break;
	case 'F':
		if (sscanf(line, "F %" SCNd64 " %" SCNd64 " %zu %255s", &gen, &st,
		    &paylen, key) != 4 || paylen > AC_PAYLOAD_MAX)
			return skip(line, len + 1, "malformed");
		/* An empty result (--wait, main-first) is one line: its
		 * record ends at its header's newline. */
		if (paylen == 0) {
			finish_replayed(j, gen, key, st, NULL, 0);
			break;
		}
		if (len + 1 + paylen + 1 > n)
			return 0;	/* torn in its payload */
		if (nl[1 + paylen] != '\n')
			return skip(line, len + 1, "payload not followed by a newline");
		finish_replayed(j, gen, key, st, (const uint8_t *)nl + 1, paylen);
		replay_gc(j);
		return len + 1 + paylen + 1;
	case 'R': {
		size_t flen;
		char failed[sizeof(((struct ac_coll *)0)->failed)];
		struct ac_result res = { .failed = failed };

		if (sscanf(line, "R %" SCNd64 " %" SCNd64 " %zu %zu %255s", &gen,
		    &st, &paylen, &flen, key) != 5 || paylen > AC_PAYLOAD_MAX ||
		    flen >= sizeof(failed))
			return skip(line, len + 1, "malformed");
		used = len + 1;
		if (paylen + flen > 0) {
			if (len + 1 + paylen + flen + 1 > n)
				return 0;	/* torn in its payload */
			if (nl[1 + paylen + flen] != '\n')
				return skip(line, len + 1,
				    "payload not followed by a newline");
			used += paylen + flen + 1;
		}
		memcpy(failed, nl + 1 + paylen, flen);
		failed[flen] = '\0';
		res.status = st;
		res.payload = (const uint8_t *)nl + 1;
		res.paylen = paylen;
		ac_job_remote_done(j, key, gen, &res);
		replay_gc(j);
		return used;
	}
	case 'W':
		if (sscanf(line, "W %ld %" SCNd64 " %255s", &a, &gen, key) != 3 ||
		    a < 0 || a >= j->lsize)
			return skip(line, len + 1, "malformed");
		ac_job_withdraw(j, a, key, gen);
		break;
	case 'L':
		if (sscanf(line, "L %" SCNd64 " %255s", &gen, key) != 2)
			return skip(line, len + 1, "malformed");
		lost_replayed(j, gen, key);
		break;
	case 'N':
		if (sscanf(line, "N %ld %" SCNd64 " %" SCNd64 " %" SCNu64 " %255s",
		    &a, &gen, &src, &nonce, key) != 5 ||
		    ac_job_counter(j, a, key, gen, src, nonce) == -1)
			return skip(line, len + 1, "malformed");
		break;
	case 'X':
		/* -1: an abort from another node or a compaction; else a local
		 * rank, which ac_job_abort looks up (tests/fuzz found it unchecked). */
		if (sscanf(line, "X %ld", &a) != 1 || strchr(line + 2, ' ') == NULL ||
		    a < -1 || a >= j->lsize)
			return skip(line, len + 1, "malformed");
		ac_job_abort(j, a, strchr(line + 2, ' ') + 1);
		break;
	default:
		return skip(line, len + 1, "unknown record");
	}
	replay_gc(j);
	return len + 1;
}

/* The arrivals and result of C, as records that rebuild it. */
static void
write_coll(struct ac_job *j, const struct ac_coll *c)
{
	long src = c->op == AC_OP_RESULT && c->src != AC_SRC_NONE ?
	    ac_coll_source_lrank(j, c) : -1;

	for (long l = 0; l < j->lsize; l++)
		if (c->arrived[l])
			ac_journal_arrive(j, l, c->op, c->scope, l == src ?
			    AC_ROLE_SOURCE : AC_ROLE_WAIT, c->key, 0, c->gen,
			    c->source, c->status[l]);
	/*
	 * A withdrawal the transport still owes (it was down when a rank
	 * left): the W records alone say so, and only after arrivals that
	 * posted the barrier. Without them a helper killed after this
	 * compaction never took the node's arrival back, and the other nodes
	 * passed on it. The ranks that left arrive and leave again; the
	 * replay posts nothing (the transport is not connected yet), and the
	 * sweep after the connect sends the withdrawal.
	 */
	if (c->op == AC_OP_BARRIER && c->xwd && !c->done) {
		for (long l = 0; l < j->lsize; l++)
			if (!c->arrived[l])
				ac_journal_arrive(j, l, c->op, c->scope,
				    AC_ROLE_WAIT, c->key, 0, c->gen, c->source, 0);
		for (long l = 0; l < j->lsize; l++)
			if (!c->arrived[l])
				ac_journal_withdraw(j, l, c);
	}
	if (c->op == AC_OP_RESULT && c->src == AC_SRC_DONE)
		ac_journal_finish(j, c);
	else if (c->src == AC_SRC_LOST)
		ac_journal_lost(j, c);
	else if (c->done && ac_coll_cross(j, c))
		ac_journal_remote(j, c);
}

/*
 * ACCELCTL_JOURNAL_MAX in bytes (4 MiB when unset). A bad one keeps the
 * default and says so in the log, once: read with atol, "1k" was 1 byte and
 * "abc" the default, silently (review of issue 18).
 */
static long
journal_max(void)
{
	static int told;
	const char *env = getenv("ACCELCTL_JOURNAL_MAX"), *why = NULL;
	long max;

	if (env == NULL || *env == '\0')
		return 4L << 20;
	if (ac_parse_uint(env, LONG_MAX, &max, &why) == 0 && max > 0)
		return max;
	if (!told++)
		ac_log("invalid ACCELCTL_JOURNAL_MAX='%.40s': %s (a size "
		    "in bytes, more than 0): 4194304 used", env, why != NULL ?
		    why : "0");
	return 4L << 20;
}

void
ac_journal_compact(struct ac_job *j, const char *path)
{
	long max = journal_max();
	char tmp[1024];
	int fd, old = j->journal;
	size_t old_size = j->journal_size;
	unsigned long failures = write_failures;

	/*
	 * Past the limit, and twice the size the last compaction left: the
	 * present state itself may exceed the limit (every name's last
	 * result, payloads included), and rewriting it on every loop turn
	 * would cost a rewrite per record. So the work stays in proportion
	 * to the records written since.
	 */
	if (old < 0 || (long)j->journal_size <= max || j->lsize == 0 ||
	    j->journal_size <= 2 * j->journal_compacted)
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1)
		return;
	/* The append functions write wherever j->journal points. */
	j->journal = fd;
	j->journal_size = 0;
	ac_journal_shape(j);
	for (long l = 0; l < j->lsize; l++)
		if (j->rank_of[l] >= 0)
			ac_journal_hello(j, l, j->rank_of[l]);
	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next) {
		char line[AC_KEY_MAX + 96];

		for (long l = 0; l < j->lsize; l++) {
			int n;

			if (k->next_gen[l] == 0)
				continue;
			n = snprintf(line, sizeof(line), "N %ld %" PRId64 " %" PRId64
			    " %" PRIu64 " %s\n", l, k->next_gen[l], k->last_gen[l],
			    k->nonce[l], k->key);
			append(j, line, (size_t)n, NULL, 0);
		}
	}
	/* Released ones first: a later generation must not make them "old". */
	for (struct ac_keygen *k = j->keys; k != NULL; k = k->next)
		if (k->last_done != NULL)
			write_coll(j, k->last_done);
	for (struct ac_coll *c = j->colls; c != NULL; c = c->next)
		write_coll(j, c);
	if (j->aborted != NULL)
		ac_journal_abort(j, -1, j->aborted);
	if (write_failures != failures || rename(tmp, path) == -1) {
		close(fd);
		unlink(tmp);
		j->journal = old;
		j->journal_size = old_size;
		/* Not again on every loop turn (a full disk, say). */
		j->journal_compacted = old_size;
		return;
	}
	close(old);
	ac_log("compacted the journal: %zu -> %zu bytes", old_size,
	    j->journal_size);
	j->journal_compacted = j->journal_size;
}

int
ac_journal_open(struct ac_job *j, const char *path)
{
	int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	struct stat st;
	char *data = NULL;
	size_t off = 0, n = 0;

	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (data = malloc((size_t)st.st_size)) != NULL) {
		ssize_t r;

		while (n < (size_t)st.st_size &&
		    (r = pread(fd, data + n, (size_t)st.st_size - n, (off_t)n)) > 0)
			n += (size_t)r;
		j->journal = -1;
		j->replaying = 1;
		while (off < n) {
			size_t used = replay_one(j, data + off, n - off);
			if (used == 0)
				break;
			off += used;
		}
		free(data);
		ac_job_gc(j);
		j->replaying = 0;
		replayed_since_gc = 0;
		/* A torn tail (a helper killed mid-write) is cut off. */
		if (off < n && ftruncate(fd, (off_t)off) == -1)
			off = n;
	}
	j->journal = fd;
	j->journal_size = off;
	return 0;
}
