/* test_history.c: the helper's record of released collectives (issue 22): bounded, oldest out first, its sums, and output that fits.
 *
 * A one-node job of 4 local ranks runs barriers through coll.c, as the
 * helper does: each leaves one record when it is collected, and a journal's
 * replay leaves none. Past AC_HISTORY_MAX the oldest give way, the memory
 * stays what history.c says it is, and the text or JSON asked for in a
 * buffer too small for all of it leaves out the oldest, never the newest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "coll.h"
#include "duration.h"
#include "history.h"
#include "proto.h"
#include "record.h"
#include "trace.h"
#include "xport.h"

static void
new_job(struct ac_job *j)
{
	memset(j, 0, sizeof(*j));
	snprintf(j->id, sizeof(j->id), "hist");
	j->journal = -1;
	j->rec = &ac_record;	/* the history is told as the helper's is */
	if (ac_job_shape(j, 4, 4, 0, 1) == -1)
		exit(1);
	for (long l = 0; l < 4; l++)
		ac_job_hello(j, l, l);
}

/* One barrier NAME: every rank arrives, rank 3 last, then it is collected. */
static void
barrier(struct ac_job *j, const char *name)
{
	char key[AC_KEY_MAX];
	const char *why;

	snprintf(key, sizeof(key), "b:%s", name);
	for (long l = 0; l < 4; l++)
		if (ac_job_arrive(j, l, AC_OP_BARRIER, AC_SCOPE_JOB, AC_ROLE_WAIT,
		    key, 0, -1, 0, l == 2 ? 7 : 0, &why) == NULL) {
			fprintf(stderr, "arrive: %s\n", why);
			exit(1);
		}
	ac_job_gc(j);
}

/*
 * The interval a node says with its post counts from its last release of a
 * barrier across nodes: a broadcast's (a --wait's, a main-first's) release
 * is the node's own arrival when it came after the source finished, not a
 * moment the nodes share (review of issue 22), nor is a node's own one.
 */
static void
since_counts_from_barriers(void)
{
	static const struct ac_xport x = { .name = "test" };
	struct ac_job j;
	struct ac_coll b, c, own;

	memset(&j, 0, sizeof(j));
	j.x = &x;
	j.nnodes = 2;
	memset(&b, 0, sizeof(b));
	b.op = AC_OP_BARRIER;
	b.scope = AC_SCOPE_JOB;
	c = b;
	c.op = AC_OP_RESULT;
	own = b;
	own.scope = AC_SCOPE_NODE;
	/* No barrier yet: not known, whatever was released before. */
	c.t.released = 1000000;
	ac_history_released(&j, &c);
	b.t.posted = 1500000;
	CHECK(ac_history_since(&j, &b) == -1);
	/* From the barrier's release, past a broadcast's and a node's own. */
	b.t.released = 2000000;
	ac_history_released(&j, &b);
	c.t.released = 5000000;
	ac_history_released(&j, &c);
	own.t.released = 5005000;
	ac_history_released(&j, &own);
	b.t.posted = 5010000;
	CHECK(ac_history_since(&j, &b) == 3010);
	c.t.posted = 5010000;
	CHECK(ac_history_since(&j, &c) == 3010);
}

/* How long one ac_history_add of a barrier KEY of 4 arrivals takes, over
 * N adds (us): what the record (and, with ACCELCTL_TRACE_DIR, its trace)
 * costs a collective. Released now: the newest, nothing to reorder. */
static double
time_adds(struct ac_job *j, const char *key, int n)
{
	struct ac_coll c;
	int64_t at[4] = { 1, 2, 3, 4 };
	struct timespec t0, t1;

	memset(&c, 0, sizeof(c));
	snprintf(c.key, sizeof(c.key), "%s", key);
	c.op = AC_OP_BARRIER;
	c.t.at = at;
	c.t.released = ac_now_us();
	c.t.last_rank = c.t.last_node = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++)
		ac_history_add(j, &c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / n;
}

int
main(void)
{
	struct ac_job j;
	char *text;
	size_t bytes;

	new_job(&j);

	/* One barrier: one record, its last rank, its status. */
	barrier(&j, "one");
	CHECK(ac_history_count() == 1);
	text = ac_history_format(&j, 10, 0, AC_PAYLOAD_MAX);
	CHECK(text != NULL && strstr(text, "the last 1 of 1 collectives") != NULL);
	CHECK(text != NULL && strstr(text, "rank 3 (node 0)") != NULL);
	CHECK(text != NULL && strstr(text, " one ") != NULL);
	CHECK(text != NULL && strstr(text, "  7\n") != NULL);	/* rank 2's status */
	free(text);
	text = ac_history_format(&j, 10, 1, AC_PAYLOAD_MAX);
	CHECK(text != NULL && strstr(text, "\"last\":{\"rank\":3,\"node\":0,\"source\":false}") != NULL);
	CHECK(text != NULL && strstr(text, "\"status\":7") != NULL);
	CHECK(text != NULL && strstr(text, "\"left_out\":0,") != NULL);
	free(text);

	/* A replayed collective (no live arrival) leaves no record. */
	j.replaying = 1;
	barrier(&j, "replayed");
	j.replaying = 0;
	CHECK(ac_history_count() == 1);

	/* Past the bound: the oldest give way, the count stays. */
	for (int i = 0; i < AC_HISTORY_MAX + 49; i++) {
		char name[32];

		snprintf(name, sizeof(name), "n%d", i);
		barrier(&j, name);
	}
	CHECK(ac_history_count() == AC_HISTORY_MAX);
	bytes = ac_history_bytes();
	/* history.c's word: about 145 bytes and 8 per local rank each. */
	CHECK(bytes < (size_t)AC_HISTORY_MAX * (145 + 8 * 4 + 16));
	printf("%d records of 4 ranks: %zu bytes\n", AC_HISTORY_MAX, bytes);
	text = ac_history_format(&j, 2, 0, AC_PAYLOAD_MAX);
	CHECK(text != NULL && strstr(text, " n10047 ") != NULL &&
	    strstr(text, " n10048 ") != NULL && strstr(text, " n10046 ") == NULL);
	free(text);
	text = ac_history_format(&j, 0, 0, AC_PAYLOAD_MAX);
	/* "one" and n0..n48 are gone; n49 is the oldest kept. */
	CHECK(text != NULL && strstr(text, " one ") == NULL &&
	    strstr(text, " n48 ") == NULL && strstr(text, " n49 ") != NULL);
	free(text);

	/* Too small a buffer: the newest stay, the oldest are left out. */
	text = ac_history_format(&j, 0, 0, 8192);
	CHECK(text != NULL && strlen(text) < 8192);
	CHECK(text != NULL && strstr(text, " n10048 ") != NULL &&
	    strstr(text, " n49 ") == NULL && strstr(text, "oldest of them left out") != NULL);
	free(text);
	text = ac_history_format(&j, 0, 1, 8192);
	CHECK(text != NULL && strlen(text) < 8192 &&
	    strstr(text, "\"name\":\"n10048\"") != NULL &&
	    strstr(text, "\"left_out\":0,") == NULL);
	free(text);

	/* What the record costs a collective, measured (not asserted): a
	 * record's add, the ring full (its oldest freed), against a barrier's
	 * 8 ms (README). */
	printf("a record's add (4 ranks, ring full): %.3f us\n",
	    time_adds(&j, "b:timed", 100000));
	CHECK(ac_history_count() == AC_HISTORY_MAX);

	/* With ACCELCTL_TRACE_DIR: the trace's line per rank and its one
	 * write per collective, measured the same way (a directory of our
	 * own under TMPDIR, removed after). */
	{
		char dir[] = "/tmp/test_history.XXXXXX", path[600];
		FILE *f;
		int lines = 0, ch;

		if (mkdtemp(dir) == NULL)
			return 1;
		setenv("ACCELCTL_TRACE_DIR", dir, 1);
		ac_trace_init();
		printf("a record's add with its trace (4 ranks): %.3f us\n",
		    time_adds(&j, "b:traced", 10000));
		ac_trace_close();
		unsetenv("ACCELCTL_TRACE_DIR");
		snprintf(path, sizeof(path), "%s/accelctl.hist.node-0.json", dir);
		CHECK((f = fopen(path, "r")) != NULL);
		while (f != NULL && (ch = fgetc(f)) != EOF)
			lines += ch == '\n';
		/* "[", two lines of the node, two per rank named, a slice each. */
		CHECK(lines == 1 + 2 + 4 * 2 + 10000 * 4);
		if (f != NULL)
			fclose(f);
		unlink(path);
		rmdir(dir);
	}

	/* Two released between two of the helper's passes are collected
	 * newest first: the record keeps them in the order of release. */
	{
		struct ac_coll c;
		int64_t at[4] = { 1, 2, 3, 4 };
		char *e, *l;

		memset(&c, 0, sizeof(c));
		c.op = AC_OP_BARRIER;
		c.t.at = at;
		c.t.last_rank = c.t.last_node = -1;
		snprintf(c.key, sizeof(c.key), "b:late");
		c.t.released = ac_now_us() + 2000;
		ac_history_add(&j, &c);
		snprintf(c.key, sizeof(c.key), "b:early");
		c.t.released = ac_now_us() + 1000;
		ac_history_add(&j, &c);
		text = ac_history_format(&j, 2, 0, AC_PAYLOAD_MAX);
		e = text != NULL ? strstr(text, " early ") : NULL;
		l = text != NULL ? strstr(text, " late ") : NULL;
		CHECK(e != NULL && l != NULL && e < l);
		free(text);
	}

	since_counts_from_barriers();
	ac_history_free();
	CHECK(ac_history_count() == 0);
	ac_job_free(&j);
	return CHECK_DONE();
}
