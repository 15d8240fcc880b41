/* test_journal.c: a replaced helper's journal replay loses nothing and is linear (issue 18).
 *
 * A node of a two-node job runs N collectives of every kind through coll.c,
 * as the helper does, with a transport that only records what it is asked:
 * barriers released by the other node, broadcasts whose source is here or
 * there, --wait and main-first results with an empty payload, and a rank
 * that leaves a barrier and comes back. The journal they leave is replayed
 * into a fresh job, as a helper that replaces a killed one does: every
 * result must be there (an empty one included), nothing may be in flight,
 * and 20,000 collectives must replay well within a second, in time that
 * grows with N, not its square.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "coll.h"
#include "journal.h"
#include "proto.h"
#include "record.h"

static long arrived, withdrawn, published;

static int  x_fds(struct pollfd *p, int n) { (void)p; (void)n; return 0; }
static void x_events(const struct pollfd *p, int n) { (void)p; (void)n; }
static long x_timer(long now) { (void)now; return -1; }
static void x_describe(char *b, size_t n) { snprintf(b, n, "stub"); }
static const char *x_down(int *final) { *final = 0; return NULL; }
static void x_stop(void) { }
static void x_arrive(struct ac_job *j, struct ac_coll *c) { (void)j; (void)c; arrived++; }
static void x_publish(struct ac_job *j, struct ac_coll *c) { (void)j; (void)c; published++; }
static void x_coll(struct ac_job *j, struct ac_coll *c) { (void)j; (void)c; }
static void x_job(struct ac_job *j) { (void)j; }
static const char *x_node(long n) { (void)n; return NULL; }
/* wd_acked 0: the transport is down, the withdrawal stays owed (xwd). */
static int wd_acked = 1;
static void x_withdraw(struct ac_job *j, struct ac_coll *c) { (void)j; if (wd_acked) c->xwd = 0; withdrawn++; }

static const struct ac_xport stub = {
	.name = "stub", .fds = x_fds, .events = x_events, .timer = x_timer,
	.describe = x_describe, .down = x_down, .stop = x_stop,
	.arrive = x_arrive, .publish = x_publish, .want = x_coll,
	.abort = x_job, .hello = x_job, .node = x_node, .withdraw = x_withdraw,
};

static void
new_job(struct ac_job *j)
{
	memset(j, 0, sizeof(*j));
	snprintf(j->id, sizeof(j->id), "jtest");
	j->journal = -1;
	j->rec = &ac_record;
	j->x = &stub;
}

static struct ac_coll *
arrive(struct ac_job *j, long l, int op, int role, const char *key,
    int64_t source, int64_t status)
{
	const char *why = "";
	struct ac_coll *c = ac_job_arrive(j, l, op, AC_SCOPE_JOB, role, key,
	    (uint64_t)rand() | 1, -1, source, status, &why);

	if (c == NULL)
		fprintf(stderr, "arrive %s: %s\n", key, why);
	return c;
}

/* N collectives, a fifth of each kind, into a journal at PATH. */
static void
write_journal(const char *path, long n)
{
	struct ac_job j;
	char v[64];

	new_job(&j);
	unlink(path);
	CHECK(ac_journal_open(&j, path) == 0);
	CHECK(ac_job_shape(&j, 2, 4, 0, 2) == 0);
	ac_job_hello(&j, 0, 0);
	ac_job_hello(&j, 1, 1);
	for (long i = 0; i < n; i++) {
		struct ac_coll *c = NULL;
		struct ac_result r = { .failed = "" };

		switch (i % 5) {
		case 0:		/* a barrier that node 1 completes */
			arrive(&j, 0, AC_OP_BARRIER, AC_ROLE_WAIT, "b:loop", 0, 0);
			c = arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, "b:loop", 0,
			    i % 2 ? 0 : 3);
			r.status = i % 2 ? 0 : 3;
			r.failed = i % 2 ? "" : "1 (exit 3)";
			ac_job_remote_done(&j, c->key, c->gen, &r);
			break;
		case 1:		/* a broadcast from rank 0, here */
			c = arrive(&j, 0, AC_OP_RESULT, AC_ROLE_SOURCE, "c:val", 0, 0);
			arrive(&j, 1, AC_OP_RESULT, AC_ROLE_WAIT, "c:val", 0, 0);
			snprintf(v, sizeof(v), "value %ld", i);
			ac_job_finish(&j, c, 0, (const uint8_t *)v, strlen(v));
			break;
		case 2:		/* --wait, an empty result */
			c = arrive(&j, 0, AC_OP_RESULT, AC_ROLE_SOURCE, "w:up", 0, 0);
			arrive(&j, 1, AC_OP_RESULT, AC_ROLE_WAIT, "w:up", 0, 0);
			ac_job_finish(&j, c, i % 7, NULL, 0);
			break;
		case 3:		/* a broadcast from rank 2, on node 1 */
			arrive(&j, 0, AC_OP_RESULT, AC_ROLE_WAIT, "c:far", 2, 0);
			c = arrive(&j, 1, AC_OP_RESULT, AC_ROLE_WAIT, "c:far", 2, 0);
			snprintf(v, sizeof(v), "far %ld", i);
			r.payload = (const uint8_t *)v;
			r.paylen = strlen(v);
			ac_job_remote_done(&j, c->key, c->gen, &r);
			break;
		case 4:		/* main-first; rank 1 leaves a barrier first */
			arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, "b:left", 0, 0);
			arrive(&j, 0, AC_OP_BARRIER, AC_ROLE_WAIT, "b:left", 0, 0);
			c = ac_job_find(&j, "b:left", i / 5);
			CHECK(c != NULL && c->xsent);
			CHECK(ac_job_withdraw(&j, 1, "b:left", i / 5) == 0);
			c = arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, "b:left", 0, 0);
			CHECK(c != NULL && c->gen == i / 5 && c->xsent);
			ac_job_remote_done(&j, "b:left", i / 5, &r);
			c = arrive(&j, 0, AC_OP_RESULT, AC_ROLE_SOURCE, "m:first", 0, 0);
			ac_job_finish(&j, c, 0, NULL, 0);
			arrive(&j, 1, AC_OP_RESULT, AC_ROLE_WAIT, "m:first", 0, 0);
			break;
		}
		ac_job_gc(&j);
	}
	close(j.journal);
	ac_job_free(&j);
}

static double
seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Replay PATH (N collectives) into a fresh job: its seconds. */
static double
replay(const char *path, long n)
{
	struct ac_job j;
	struct ac_keygen *k;
	long in_flight = 0, per = n / 5;
	double t0, t;
	char v[64];

	new_job(&j);
	arrived = 0;
	t0 = seconds();
	CHECK(ac_journal_open(&j, path) == 0);
	t = seconds() - t0;
	for (struct ac_coll *c = j.colls; c != NULL; c = c->next)
		if (!c->done && c->src != AC_SRC_LOST)
			in_flight++;
	CHECK(in_flight == 0);
	if (in_flight != 0)
		fprintf(stderr, "%ld collectives replayed as in flight\n", in_flight);
	/* Each name's counters and its last result, as the helper left them. */
	CHECK((k = ac_job_key(&j, "b:loop")) != NULL && k->next_gen[0] == per &&
	    k->next_gen[1] == per);
	CHECK((k = ac_job_key(&j, "b:left")) != NULL && k->next_gen[1] == per &&
	    k->last_done != NULL && k->last_done->done);
	CHECK((k = ac_job_key(&j, "w:up")) != NULL && k->last_done != NULL &&
	    k->last_done->done && k->last_done->paylen == 0 &&
	    k->last_done->result == (5 * (per - 1) + 2) % 7);
	CHECK((k = ac_job_key(&j, "m:first")) != NULL && k->last_done != NULL &&
	    k->last_done->done);
	snprintf(v, sizeof(v), "far %ld", 5 * (per - 1) + 3);
	CHECK((k = ac_job_key(&j, "c:far")) != NULL && k->last_done != NULL &&
	    k->last_done->done && k->last_done->paylen == strlen(v) &&
	    memcmp(k->last_done->payload, v, strlen(v)) == 0);
	snprintf(v, sizeof(v), "value %ld", 5 * (per - 1) + 1);
	CHECK((k = ac_job_key(&j, "c:val")) != NULL && k->last_done != NULL &&
	    k->last_done->paylen == strlen(v) &&
	    memcmp(k->last_done->payload, v, strlen(v)) == 0);
	close(j.journal);
	ac_job_free(&j);
	return t;
}

/* An empty result followed by another record (the bug of issue 18, item
 * 1): the record after it must not be taken for its payload. */
static void
test_empty_result_then_more(const char *path)
{
	struct ac_job j;
	struct ac_coll *c;
	struct ac_keygen *k;

	new_job(&j);
	j.x = NULL;
	unlink(path);
	CHECK(ac_journal_open(&j, path) == 0);
	CHECK(ac_job_shape(&j, 2, 2, 0, 1) == 0);
	c = arrive(&j, 0, AC_OP_RESULT, AC_ROLE_SOURCE, "w:x", 0, 0);
	ac_job_finish(&j, c, 0, NULL, 0);
	arrive(&j, 1, AC_OP_RESULT, AC_ROLE_WAIT, "w:x", 0, 0);
	c = arrive(&j, 0, AC_OP_RESULT, AC_ROLE_SOURCE, "m:y", 0, 0);
	ac_job_finish(&j, c, 5, NULL, 0);		/* the last record */
	close(j.journal);
	ac_job_free(&j);

	new_job(&j);
	j.x = NULL;
	CHECK(ac_journal_open(&j, path) == 0);
	CHECK((k = ac_job_key(&j, "w:x")) != NULL && k->last_done != NULL &&
	    k->last_done->done && k->last_done->result == 0);
	c = ac_job_find(&j, "m:y", 0);
	CHECK(c != NULL && c->src == AC_SRC_DONE && c->result == 5);
	CHECK(c != NULL && c->done);
	close(j.journal);
	ac_job_free(&j);
}

/*
 * A rank leaves a barrier this node had posted across nodes while the
 * transport is down (the withdrawal is owed), the journal is compacted, and
 * the helper is killed: its replacement must still take the node's arrival
 * back. The compacted journal had kept the remaining arrival only: the
 * replacement never withdrew, and the other nodes passed on the stale
 * arrival before the restarted rank entered.
 */
static void
test_withdraw_owed_compacted(const char *path)
{
	struct ac_job j;
	struct ac_coll *c;
	struct ac_keygen *k;

	new_job(&j);
	unlink(path);
	CHECK(ac_journal_open(&j, path) == 0);
	CHECK(ac_job_shape(&j, 2, 4, 0, 2) == 0);
	ac_job_hello(&j, 0, 0);
	ac_job_hello(&j, 1, 1);
	arrive(&j, 0, AC_OP_BARRIER, AC_ROLE_WAIT, "b:owed", 0, 0);
	c = arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, "b:owed", 0, 0);
	CHECK(c != NULL && c->xsent);
	wd_acked = 0;
	CHECK(ac_job_withdraw(&j, 1, "b:owed", 0) == 0);
	wd_acked = 1;
	CHECK(c->xwd);
	setenv("ACCELCTL_JOURNAL_MAX", "1", 1);
	ac_journal_compact(&j, path);
	unsetenv("ACCELCTL_JOURNAL_MAX");
	CHECK(j.journal_compacted > 0);
	close(j.journal);
	ac_job_free(&j);

	new_job(&j);
	wd_acked = 0;		/* not connected yet while it replays */
	CHECK(ac_journal_open(&j, path) == 0);
	wd_acked = 1;
	c = ac_job_find(&j, "b:owed", 0);
	CHECK(c != NULL && c->xwd && !c->xsent && !c->done);
	CHECK(c != NULL && c->narrived == 1 && c->arrived[0] && !c->arrived[1]);
	CHECK((k = ac_job_key(&j, "b:owed")) != NULL && k->next_gen[0] == 1 &&
	    k->next_gen[1] == 0);
	close(j.journal);
	ac_job_free(&j);
}

/*
 * A helper killed in the middle of an R or W record: the journal cut at
 * every byte offset replays what came before the cut, and the torn record
 * is dropped and cut off (the next record is never read into it).
 */
static void
test_torn_everywhere(const char *path)
{
	struct ac_job j;
	struct ac_coll *c;
	struct ac_result r = { .status = 3, .failed = "1 (exit 3)",
	    .payload = (const uint8_t *)"a\nR 0 0 0 0 b:x\n", .paylen = 16 };
	char tpath[1100];
	size_t r_end, w_end, total;
	FILE *f;
	char *data;

	new_job(&j);
	unlink(path);
	CHECK(ac_journal_open(&j, path) == 0);
	CHECK(ac_job_shape(&j, 2, 4, 0, 2) == 0);
	ac_job_hello(&j, 0, 0);
	ac_job_hello(&j, 1, 1);
	arrive(&j, 0, AC_OP_BARRIER, AC_ROLE_WAIT, "b:r", 0, 0);
	c = arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, "b:r", 0, 3);
	size_t r_start = j.journal_size;
	ac_job_remote_done(&j, c->key, c->gen, &r);
	r_end = j.journal_size;
	CHECK(r_end > r_start);
	arrive(&j, 0, AC_OP_BARRIER, AC_ROLE_WAIT, "b:w", 0, 0);
	arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, "b:w", 0, 0);
	size_t w_start = j.journal_size;
	CHECK(ac_job_withdraw(&j, 1, "b:w", 0) == 0);
	w_end = total = j.journal_size;
	close(j.journal);
	ac_job_free(&j);
	CHECK((f = fopen(path, "rb")) != NULL && (data = malloc(total)) != NULL);
	CHECK(fread(data, 1, total, f) == total);
	fclose(f);
	snprintf(tpath, sizeof(tpath), "%s.torn", path);
	for (size_t off = r_start; off <= total; off++) {
		struct ac_keygen *k;

		CHECK((f = fopen(tpath, "wb")) != NULL);
		CHECK(fwrite(data, 1, off, f) == off);
		fclose(f);
		new_job(&j);
		CHECK(ac_journal_open(&j, tpath) == 0);
		k = ac_job_key(&j, "b:r");
		c = ac_job_find(&j, "b:r", 0);
		if (off < r_end) {
			CHECK(j.journal_size == r_start);
			CHECK(c != NULL && !c->done);
		} else {
			CHECK(c != NULL && c->done && c->result == 3 &&
			    c->paylen == 16 && memcmp(c->payload, r.payload, 16) == 0 &&
			    strcmp(c->failed, "1 (exit 3)") == 0);
			CHECK(k != NULL && k->last_done == c);
		}
		c = ac_job_find(&j, "b:w", 0);
		k = ac_job_key(&j, "b:w");
		if (off >= w_start && off < w_end)
			CHECK(j.journal_size == w_start);
		if (off == w_end)
			CHECK(c != NULL && c->narrived == 1 && !c->arrived[1] &&
			    k->next_gen[1] == 0);
		else if (off >= w_start)
			CHECK(c != NULL && c->narrived == 2 && c->xsent &&
			    k->next_gen[1] == 1);
		close(j.journal);
		ac_job_free(&j);
	}
	free(data);
	unlink(tpath);
}

/* N (20,000) distinct barrier names released across nodes, one in 1,000
 * left by rank 1 first, into a journal at PATH. */
static void
write_names(const char *path, long n)
{
	struct ac_job j;
	struct ac_coll *c;
	struct ac_result r = { .failed = "" };
	char key[64];

	new_job(&j);
	unlink(path);
	CHECK(ac_journal_open(&j, path) == 0);
	CHECK(ac_job_shape(&j, 2, 4, 0, 2) == 0);
	ac_job_hello(&j, 0, 0);
	ac_job_hello(&j, 1, 1);
	for (long i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "b:name%ld", i);
		arrive(&j, 0, AC_OP_BARRIER, AC_ROLE_WAIT, key, 0, 0);
		c = arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, key, 0, 0);
		if (i % 1000 == 7) {
			CHECK(ac_job_withdraw(&j, 1, key, 0) == 0);
			c = arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, key, 0, 0);
		}
		(void)c;
		ac_job_remote_done(&j, key, 0, &r);
		ac_job_gc(&j);
	}
	close(j.journal);
	ac_job_free(&j);
}

/* Replay write_names' journal: each name looked up by hash, every one
 * over. Its seconds. */
static double
replay_names(const char *path, long n)
{
	struct ac_job j;
	struct ac_coll *c;
	char key[64];
	double t0, t;
	long in_flight = 0;

	new_job(&j);
	t0 = seconds();
	CHECK(ac_journal_open(&j, path) == 0);
	t = seconds() - t0;
	CHECK(j.nkeys == (size_t)n);
	for (c = j.colls; c != NULL; c = c->next)
		if (!c->done)
			in_flight++;
	CHECK(in_flight == 0);
	snprintf(key, sizeof(key), "b:name%ld", (n - 1) / 1000 * 1000 + 7);
	c = ac_job_find(&j, key, 0);
	CHECK(c != NULL && c->done && c->narrived == 2);
	close(j.journal);
	ac_job_free(&j);
	return t;
}

/* Built with a sanitizer (ACCELCTL_SANITIZE: ASan and UBSan). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/*
 * The best of five replays of a quarter of N and of all of N, taken in
 * turn: a busy machine's other work lands in some of them, and alike in
 * both (measured one after the other, a load that began in between made
 * linear look like 15.6 under ASan). Linear is four times the time, the
 * square sixteen: the line is at twelve, nearer the square, because load
 * lands more often in the longer replays (check.sh's ASan stage, other
 * suites beside it: 10.2 for names that replay at 4.0 alone).
 */
static void
compare(const char *what, const char *pq, const char *pn, long n,
    double (*replay_fn)(const char *, long), double limit)
{
	double tq = -1, tn = -1, t;

	for (int i = 0; i < 5; i++) {
		t = replay_fn(pq, n / 4);
		tq = tq < 0 || t < tq ? t : tq;
		t = replay_fn(pn, n);
		tn = tn < 0 || t < tn ? t : tn;
	}
	printf("replay: %ld %s in %.1f ms, %ld in %.1f ms (ratio %.2f)\n",
	    n / 4, what, tq * 1000, n, tn * 1000, tn / (tq > 0 ? tq : 1e-9));
	CHECK(tn < 12 * tq + 0.02);
	CHECK(limit <= 0 || tn < limit);
}

/* Every local rank left a posted barrier while the transport was down:
 * status still says the node's arrival is being taken back (it listed
 * nothing in flight, while the other nodes still counted this one). */
static void
test_status_all_left(void)
{
	struct ac_job j;
	struct ac_coll *c;
	char buf[4096];

	new_job(&j);
	CHECK(ac_job_shape(&j, 2, 4, 0, 2) == 0);
	ac_job_hello(&j, 0, 0);
	ac_job_hello(&j, 1, 1);
	arrive(&j, 0, AC_OP_BARRIER, AC_ROLE_WAIT, "b:gone", 0, 0);
	c = arrive(&j, 1, AC_OP_BARRIER, AC_ROLE_WAIT, "b:gone", 0, 0);
	CHECK(c != NULL && c->xsent);
	wd_acked = 0;
	CHECK(ac_job_withdraw(&j, 0, "b:gone", 0) == 0);
	CHECK(ac_job_withdraw(&j, 1, "b:gone", 0) == 0);
	wd_acked = 1;
	ac_job_gc(&j);
	CHECK(ac_job_find(&j, "b:gone", 0) == c && c->xwd && c->narrived == 0);
	ac_job_status(&j, buf, sizeof(buf));
	CHECK(strstr(buf, "taking back node 0's arrival") != NULL);
	CHECK(strstr(buf, "nothing in flight") == NULL);
	if (strstr(buf, "taking back") == NULL)
		fprintf(stderr, "status: %s", buf);
	ac_job_free(&j);
}

/* A node-scope result's source is a local rank: one past the node's size is
 * refused (a client's word; the first review of the split check crashed a
 * helper with source 100000000, read as a local rank). */
static void
test_node_source_checked(void)
{
	struct ac_job j;
	const char *why = "";

	new_job(&j);
	CHECK(ac_job_shape(&j, 2, 2, 0, 1) == 0);
	ac_job_hello(&j, 0, 0);
	CHECK(ac_job_arrive(&j, 0, AC_OP_RESULT, AC_SCOPE_NODE, AC_ROLE_WAIT,
	    "w:x", 1, -1, 100000000, 0, &why) == NULL);
	CHECK(strcmp(why, "invalid rank") == 0);
	CHECK(ac_job_arrive(&j, 0, AC_OP_RESULT, AC_SCOPE_NODE, AC_ROLE_WAIT,
	    "w:x", 1, -1, 2, 0, &why) == NULL);
	CHECK(ac_job_arrive(&j, 0, AC_OP_RESULT, AC_SCOPE_NODE, AC_ROLE_WAIT,
	    "w:x", 1, -1, 1, 0, &why) != NULL);
	ac_job_free(&j);
}

int
main(void)
{
	char path[] = "/tmp/accelctl-test-journal-XXXXXX";
	char pathq[] = "/tmp/accelctl-test-journal-XXXXXX";
	int fd = mkstemp(path), fdq = mkstemp(pathq);
	long n = getenv("TEST_JOURNAL_N") ? atol(getenv("TEST_JOURNAL_N")) : 20000;

	if (fd == -1 || fdq == -1)
		return 1;
	close(fd);
	close(fdq);
	test_empty_result_then_more(path);
	test_withdraw_owed_compacted(path);
	test_torn_everywhere(path);
	test_status_all_left();
	test_node_source_checked();
	/* Linear in the names: a walk per record was their square (20,000
	 * took 4.5 s before the helper served). */
	write_names(pathq, n / 4);
	write_names(path, n);
	compare("distinct names", pathq, path, n, replay_names, 0);
	/* And in the collectives, a fifth of each kind: well within the
	 * second a replaced helper has; three under a sanitizer (ASan at -O0
	 * replays 20,000 in a quarter of a second alone, several times that
	 * beside the other suites: its checks, not the replay, are the cost). */
	write_journal(pathq, n / 4);
	write_journal(path, n);
	compare("collectives", pathq, path, n, replay, SANITIZED ? 3.0 : 1.0);
	unlink(path);
	unlink(pathq);
	return CHECK_DONE();
}
