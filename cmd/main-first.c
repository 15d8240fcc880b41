/* main-first.c: "accelctl main-first -- CMD": main runs CMD first; the others run it
 * only after it succeeded (main_process_first). */
#include <stdio.h>

#include "cmd.h"
#include "run.h"

enum { OPT_LOCAL, OPT_TIMEOUT };

static const struct ac_optdef mf_opts[] = {
	[OPT_LOCAL] = { "local", 'l', NULL, "local main of each node first, then that node's others" },
	[OPT_TIMEOUT] = { "timeout", 't', "DURATION", "how long the others wait (default 30m); exit 124" },
	{ NULL, 0, NULL, NULL }
};

static int
exec_main_first(const struct ac_cmd *self, struct ac_args *a)
{
	int local = a->seen[OPT_LOCAL] > 0, rc;
	struct ac_topo t;
	struct ac_sync s;
	long mine;

	(void)self;
	if ((rc = ac_cmd_sync_topo(&t, local)) != 0)
		return rc;
	if (t.v[AC_WORLD] == 1) {
		long ms;
		/* Nobody waits; the timeout is still checked, as barrier's. */
		if (ac_cmd_timeout(a->val[OPT_TIMEOUT], &ms) == -1)
			return AC_EXIT_USAGE;
		return ac_exec(a->child);
	}
	mine = local ? t.v[AC_LRANK] : t.v[AC_RANK];
	if ((rc = ac_cmd_sync_init(&s, &t, a->val[OPT_TIMEOUT], AC_OP_RESULT,
	    local ? AC_SCOPE_NODE : AC_SCOPE_JOB,
	    mine == 0 ? AC_ROLE_SOURCE : AC_ROLE_WAIT,
	    local ? "m:local" : "m:main", local ? "the local main process" :
	    "the main process", 0)) != 0)
		return rc;
	if (mine == 0) {
		if ((rc = ac_sync_source_begin(&t, &s)) == 0) {
			int status = ac_sync_run_cmd(&t, &s, a->child);
			rc = ac_sync_source_finish(&t, &s, status, NULL, 0);
			if (rc == 0)
				rc = status;
		}
		ac_sync_free(&s);
		return rc;
	}
	if ((rc = ac_sync_wait(&t, &s)) == 0 && s.result != 0) {
		ac_warnx("%s failed (exit %lld): not running CMD", s.what,
		    (long long)s.result);
		rc = (int)(s.result < 0 || s.result > 255 ? 255 : s.result);
	}
	ac_sync_free(&s);
	return rc == 0 ? ac_exec(a->child) : rc;
}

const struct ac_cmd cmd_main_first = {
	.name = "main-first",
	.group = "Synchronise (through the node's helper)",
	.args = "[--local] [--timeout DURATION] -- CMD...",
	.summary = "main runs CMD first; the others after it succeeded",
	.help = "The main process (with --local: the local main of each node) runs "
	    "CMD first, while the others wait; when it succeeded, the others run "
	    "CMD (exec). When it failed, the others do not run CMD and exit with "
	    "its status; when it died, they exit 3. This is main_process_first, "
	    "for steps such as preparing a dataset cache that the others then "
	    "read. The main process does not wait for the others' CMD: put a "
	    "barrier after it if the job needs that. With one process CMD runs "
	    "at once.",
	.opts = mf_opts,
	.child = AC_CHILD_REQUIRED,
	.exec = exec_main_first,
};
