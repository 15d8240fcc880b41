/* barrier.c: "accelctl barrier NAME": wait until every rank of the job reached NAME
 * (wait_for_everyone); with --status, also agree on success. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "num.h"

enum { OPT_TIMEOUT, OPT_STATUS };

static const struct ac_optdef barrier_opts[] = {
	[OPT_TIMEOUT] = { "timeout", 't', "DURATION", "give up after DURATION (90s, 30m, 2h); exit 124" },
	[OPT_STATUS] = { "status", 's', "RC", "this rank's status; all exit non-zero if any is" },
	{ NULL, 0, NULL, NULL }
};

static int
exec_barrier(const struct ac_cmd *self, struct ac_args *a)
{
	const char *name = a->pos[0], *why;
	char key[AC_KEY_MAX], what[256];
	struct ac_topo t;
	struct ac_sync s;
	long status = 0;
	int rc;

	if (ac_check_name(name, &why) == -1)
		return ac_usage_error(self, "invalid name '%.40s': %s", name, why);
	/* An exit status, as $? gives it: a larger one could not be the
	 * exit status every rank leaves with (300 left as 44, or 255). */
	if (a->val[OPT_STATUS] != NULL &&
	    ac_parse_uint(a->val[OPT_STATUS], 255, &status, &why) == -1)
		return ac_usage_error(self, "invalid --status '%.40s': %s (an "
		    "exit status, 0 to 255)", a->val[OPT_STATUS], why);
	if ((rc = ac_cmd_sync_topo(&t, 0)) != 0)
		return rc;
	if (t.v[AC_WORLD] == 1) {
		long ms;
		/* One process: nobody to wait for; the timeout is still checked. */
		if (ac_cmd_timeout(a->val[OPT_TIMEOUT], &ms) == -1)
			return AC_EXIT_USAGE;
		return (int)status;
	}
	snprintf(key, sizeof(key), "b:%s", name);
	snprintf(what, sizeof(what), "'%s'", name);
	if ((rc = ac_cmd_sync_init(&s, &t, a->val[OPT_TIMEOUT], AC_OP_BARRIER,
	    AC_SCOPE_JOB, AC_ROLE_WAIT, key, what, 0)) != 0)
		return rc;
	s.status = status;
	if ((rc = ac_sync_wait(&t, &s)) == 0 && s.result != 0) {
		ac_warnx("%s: rank%s %s failed", name,
		    strchr(s.failed, ',') ? "s" : "", s.failed);
		rc = (int)(s.result < 0 || s.result > 255 ? 255 : s.result);
	}
	ac_sync_free(&s);
	return rc;
}

const struct ac_cmd cmd_barrier = {
	.name = "barrier",
	.group = "Synchronise (through the node's helper)",
	.args = "[--timeout DURATION] [--status RC] NAME",
	.summary = "wait until every rank reached NAME",
	.help = "Wait until every rank of the job has reached the barrier NAME "
	    "(wait_for_everyone). NAME is 1-200 characters of A-Z a-z 0-9 . _ : - "
	    "and may be used again, in a loop: each use is a new generation, and a "
	    "rank that runs ahead waits in the next one. With --status RC every rank "
	    "passes its own status; all exit 0 if all were 0, else every rank exits "
	    "with the status of the lowest failing rank and stderr names the failing "
	    "ranks. With one process it returns at once (with RC). While waiting, "
	    "the local main process reports on stderr who is missing, every "
	    "ACCELCTL_PROGRESS_INTERVAL (10s). On timeout the missing ranks are "
	    "named and the exit status is 124.",
	.opts = barrier_opts,
	.minpos = 1,
	.maxpos = 1,
	.exec = exec_barrier,
};
