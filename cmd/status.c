/* status.c: "accelctl status": the waits in flight on this node's helper. */
#include <stdio.h>

#include "cmd.h"

static int
exec_status(const struct ac_cmd *self, struct ac_args *a)
{
	struct ac_topo t;
	struct ac_client c;
	struct ac_rd r;
	char text[65536];
	int rc, type;

	(void)self;
	(void)a;
	/* A helper serves a job of known size and local layout (its clients'
	 * HELLO says it): where those are unknown it would refuse us. */
	if (ac_cmd_topo(&t) == -1 || ac_cmd_need_helper(&t) == -1)
		return AC_EXIT_USAGE;
	/* Asking must not start a helper: no helper means nothing in flight. */
	if ((type = ac_client_open(&c, &t, 0, &rc)) != 0) {
		if (type == -1)
			return rc;
		printf("job %s: no helper runs on this node: nothing in flight\n",
		    t.job_id);
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
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
	.args = "",
	.summary = "show the waits in flight: name, generation, who is missing",
	.help = "Print the job's barriers, broadcasts and waits in flight on this "
	    "node: kind, name, generation, how long, how many ranks arrived and "
	    "which are missing (with their nodes). Does not start a helper.",
	.exec = exec_status,
};
