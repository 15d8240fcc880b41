/* status.c: "accelctl status": the waits in flight on this node's helper, or with --history the collectives it released. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "duration.h"
#include "history.h"
#include "num.h"

enum { OPT_HISTORY, OPT_JSON };

static const struct ac_optdef status_opts[] = {
	[OPT_HISTORY] = { "history", 'H', NULL, "the last N collectives released here (10; 0: all kept)" },
	[OPT_JSON] = { "json", 'j', NULL, "with --history: one JSON object" },
	{ NULL, 0, NULL, NULL }
};

/* Ask for the record and print it (the helper's text, as it sent it). */
static int
history(struct ac_client *c, long n, int json)
{
	struct ac_buf b = { 0 };
	size_t f = ac_frame_begin(&b, AC_MSG_HISTORY), len;
	const uint8_t *p;
	struct ac_rd r;
	int type, rc = AC_EXIT_FAILED;

	ac_put_i64(&b, n);
	ac_put_u8(&b, (uint8_t)json);
	ac_frame_end(&b, f);
	/* A full record is some MB: more time than a status line. */
	type = ac_client_send(c, &b) == 0 ?
	    ac_client_recv(c, ac_now_ms() + 30000, &r) : -1;
	ac_buf_free(&b);
	if (type == AC_MSG_TEXT && (p = ac_get_bytes(&r, &len)) != NULL &&
	    !r.err) {
		fwrite(p, 1, len, stdout);
		rc = ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	} else if (type == AC_MSG_ERROR) {
		char why[512];

		ac_get_str(&r, why, sizeof(why));
		ac_warnx("the helper refused: %s", why);
	} else
		ac_warnx("the helper did not answer");
	return rc;
}

static int
exec_status(const struct ac_cmd *self, struct ac_args *a)
{
	struct ac_topo t;
	struct ac_client c;
	struct ac_rd r;
	char text[65536];
	const char *why;
	long n = 10;
	int rc, type;

	if (a->npos > 0 && !a->seen[OPT_HISTORY])
		return ac_usage_error(self, "'%.40s': a count goes with --history",
		    a->pos[0]);
	if (a->seen[OPT_JSON] && !a->seen[OPT_HISTORY])
		return ac_usage_error(self, "--json goes with --history");
	if (a->npos > 0 && ac_parse_uint(a->pos[0], AC_HISTORY_MAX, &n,
	    &why) == -1)
		return ac_usage_error(self, "invalid count '%.40s': %s",
		    a->pos[0], why);
	/* A helper serves a job of known size and local layout (its clients'
	 * HELLO says it): where those are unknown it would refuse us. */
	if (ac_cmd_topo(&t) == -1 || ac_cmd_need_helper(&t) == -1)
		return AC_EXIT_USAGE;
	/* Asking must not start a helper: no helper means nothing in flight. */
	if ((type = ac_client_open(&c, &t, 0, &rc)) != 0) {
		if (type == -1)
			return rc;
		if (a->seen[OPT_JSON])
			printf("{\"job\":\"%s\",\"helper\":false,\"kept\":0,"
			    "\"left_out\":0,\"collectives\":[]}\n", t.job_id);
		else
			printf("job %s: no helper runs on this node: nothing "
			    "%s\n", t.job_id, a->seen[OPT_HISTORY] ?
			    "recorded" : "in flight");
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	}
	if (a->seen[OPT_HISTORY]) {
		rc = history(&c, n, a->seen[OPT_JSON]);
		ac_client_close(&c);
		return rc;
	}
	if (ac_client_request(&c, AC_MSG_STATUS, NULL, &r) == AC_MSG_TEXT) {
		ac_get_str(&r, text, sizeof(text));
		fputs(text, stdout);
		rc = ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	} else {
		ac_warnx("the helper did not answer");
		rc = AC_EXIT_FAILED;
	}
	ac_client_close(&c);
	return rc;
}

const struct ac_cmd cmd_status = {
	.name = "status",
	.group = "Synchronise (through the node's helper)",
	.args = "[--history [N] [--json]]",
	.summary = "show the waits in flight, or with --history who everyone waited for",
	.help = "Print the job's barriers, broadcasts and waits in flight on this "
	    "node: kind, name, generation, how long, how many ranks arrived and "
	    "which are missing (with their nodes). Does not start a helper. "
	    "With --history, the last N (10; 0: all kept, at most 10000) "
	    "collectives this node's helper released, oldest first: when, kind, "
	    "name, generation, the rank that arrived last (and its node), the "
	    "spread from the first to the last arrival on this node, how long "
	    "this node then waited for the other nodes (WAITED), the spread "
	    "across the job from the first node's post to the last's (ACROSS, "
	    "the same on every node, from each node's own clock), the "
	    "rank-seconds its "
	    "ranks spent waiting (what the collective cost here), the source's "
	    "CMD time, and the status; with --json the same as one JSON object "
	    "with each rank's arrival and wait.",
	.opts = status_opts,
	.maxpos = 1,
	.exec = exec_status,
};
