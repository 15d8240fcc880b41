/* abort.c: "accelctl abort [REASON]": release every waiter of the job, now and later,
 * with exit 3. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static int
exec_abort(const struct ac_cmd *self, struct ac_args *a)
{
	char reason[512] = "";
	size_t n = 0;
	struct ac_topo t;
	struct ac_client c;
	struct ac_rd r;
	int rc;

	(void)self;
	for (int i = 0; i < a->npos && n < sizeof(reason) - 1; i++)
		n += (size_t)snprintf(reason + n, sizeof(reason) - n, "%s%s",
		    i ? " " : "", a->pos[i]);
	if ((rc = ac_cmd_sync_topo(&t, 0)) != 0)
		return rc;
	if (t.v[AC_WORLD] == 1)
		return 0;	/* nobody waits for a single process */
	if (ac_client_open(&c, &t, 1, &rc) != 0)
		return rc;
	rc = ac_client_request(&c, AC_MSG_ABORT, reason, &r) == AC_MSG_ACK ? 0 :
	    AC_EXIT_FAILED;
	if (rc != 0)
		ac_warnx("the helper did not confirm the abort");
	ac_client_close(&c);
	return rc;
}

const struct ac_cmd cmd_abort = {
	.name = "abort",
	.group = "Synchronise (through the node's helper)",
	.args = "[REASON...]",
	.summary = "make every waiting rank, now and later, exit 3",
	.help = "Abort the job's synchronisation: every rank waiting now, or later, "
	    "in barrier, broadcast, main-first or --wait exits 3 with REASON on "
	    "stderr. abort itself exits 0; the job script decides what to do next "
	    "(usually exit).",
	.maxpos = -1,
	.exec = exec_abort,
};
