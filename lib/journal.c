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
 *   F gen status paylen key            then paylen bytes and a newline
 *   L gen key                          the source died
 *   X lrank reason                     abort
 *   N lrank next last nonce key        a local rank's counters (compaction)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"

static void
append(struct ac_job *j, const char *line, size_t n, const void *extra,
    size_t extralen)
{
	char *buf;

	if (j->journal < 0)
		return;
	if (extralen == 0) {
		if (write(j->journal, line, n) == (ssize_t)n)
			j->journal_size += n;
		return;
	}
	/* Header, payload and newline in one write: a record is whole or absent. */
	if ((buf = malloc(n + extralen + 1)) == NULL)
		return;
	memcpy(buf, line, n);
	memcpy(buf + n, extra, extralen);
	buf[n + extralen] = '\n';
	if (write(j->journal, buf, n + extralen + 1) == (ssize_t)(n + extralen + 1))
		j->journal_size += n + extralen + 1;
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

/* Replay one record at P (of N bytes left); returns bytes consumed, 0 at a
 * torn or unknown record (the rest is ignored). */
static size_t
replay_one(struct ac_job *j, const char *p, size_t n)
{
	const char *nl = memchr(p, '\n', n);
	char line[AC_KEY_MAX + 700], key[AC_KEY_MAX];
	long a, b, c, d;
	int op, scope, role;
	int64_t gen, src, st;
	uint64_t nonce;
	size_t paylen, len;
	const char *why;

	if (nl == NULL || (len = (size_t)(nl - p)) >= sizeof(line))
		return 0;
	memcpy(line, p, len);
	line[len] = '\0';
	switch (line[0]) {
	case 'J':
		if (sscanf(line, "J %ld %ld %ld %ld", &a, &b, &c, &d) != 4)
			return 0;
		if (j->lsize == 0 && a > 0 && a <= 1 << 20 &&
		    ac_job_shape(j, a, b, c, d) == -1)
			return 0;
		if (j->lsize != a || j->world != b || j->node != c || j->nnodes != d)
			return 0;
		break;
	case 'H':
		if (sscanf(line, "H %ld %" SCNd64, &a, &gen) != 2 || a < 0 ||
		    a >= j->lsize)
			return 0;
		ac_job_hello(j, a, gen);
		break;
	case 'A':
		if (sscanf(line, "A %ld %" SCNd64 " %d %d %d %" SCNd64 " %" SCNd64
		    " %" SCNu64 " %255s", &a, &gen, &op, &scope, &role, &src, &st,
		    &nonce, key) != 9 || a < 0 || a >= j->lsize)
			return 0;
		if (ac_job_arrive(j, a, op, scope, role, key, nonce, gen, src, st,
		    &why) == NULL)
			return 0;
		break;
	case 'F':
		if (sscanf(line, "F %" SCNd64 " %" SCNd64 " %zu %255s", &gen, &st,
		    &paylen, key) != 4 || paylen > AC_PAYLOAD_MAX ||
		    len + 1 + paylen + 1 > n)
			return 0;
		for (struct ac_coll *co = j->colls; co != NULL; co = co->next)
			if (co->gen == gen && strcmp(co->key, key) == 0)
				ac_job_finish(j, co, st, (const uint8_t *)nl + 1,
				    paylen);
		return len + 1 + paylen + 1;
	case 'L':
		if (sscanf(line, "L %" SCNd64 " %255s", &gen, key) != 2)
			return 0;
		for (struct ac_coll *co = j->colls; co != NULL; co = co->next)
			if (co->gen == gen && strcmp(co->key, key) == 0)
				ac_job_source_lost(j, co);
		break;
	case 'N':
		if (sscanf(line, "N %ld %" SCNd64 " %" SCNd64 " %" SCNu64 " %255s",
		    &a, &gen, &src, &nonce, key) != 5 || a < 0 || a >= j->lsize)
			return 0;
		ac_job_counter(j, a, key, gen, src, nonce);
		break;
	case 'X':
		/* -1: an abort from another node or a compaction; else a local
		 * rank, which ac_job_abort looks up (tests/fuzz found it unchecked). */
		if (sscanf(line, "X %ld", &a) != 1 || strchr(line + 2, ' ') == NULL ||
		    a >= j->lsize)
			return 0;
		ac_job_abort(j, a, strchr(line + 2, ' ') + 1);
		break;
	default:
		return 0;
	}
	ac_job_gc(j);
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
	if (c->op == AC_OP_RESULT && c->src == AC_SRC_DONE)
		ac_journal_finish(j, c);
	else if (c->src == AC_SRC_LOST)
		ac_journal_lost(j, c);
}

void
ac_journal_compact(struct ac_job *j, const char *path)
{
	const char *env = getenv("ACCELCTL_JOURNAL_MAX");
	long max = env != NULL && atol(env) > 0 ? atol(env) : 4L << 20;
	char tmp[1024];
	int fd, old = j->journal;
	size_t old_size = j->journal_size;

	if (old < 0 || (long)j->journal_size <= max || j->lsize == 0)
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
	if (rename(tmp, path) == -1) {
		close(fd);
		unlink(tmp);
		j->journal = old;
		j->journal_size = old_size;
		return;
	}
	close(old);
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
		while (off < n) {
			size_t used = replay_one(j, data + off, n - off);
			if (used == 0)
				break;
			off += used;
		}
		free(data);
		/* A torn tail (a helper killed mid-write) is cut off. */
		if (off < n && ftruncate(fd, (off_t)off) == -1)
			off = n;
	}
	j->journal = fd;
	j->journal_size = off;
	return 0;
}
