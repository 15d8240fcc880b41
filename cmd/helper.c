/* helper.c: "accelctl helper run|start|stop|status": the per-node helper by hand.
 * Clients start it on demand; these are for a Slurm prolog, "srun
 * --ntasks-per-node=1 accelctl helper run", and for looking at it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "helper.h"
#include "rdvurl.h"
#include "xport.h"

static int
exec_helper(const struct ac_cmd *self, struct ac_args *a)
{
	const char *action = a->pos[0];
	struct ac_topo t;
	struct ac_client c;
	struct ac_rd r;
	char text[65536];
	const char *why;
	long idle;
	int rc, open;

	if (strcmp(action, "run") != 0 && strcmp(action, "start") != 0 &&
	    strcmp(action, "stop") != 0 && strcmp(action, "status") != 0)
		return ac_usage_error(self, "unknown action '%.40s': run, start, "
		    "stop or status", action);
	if (a->val[0] != NULL) {
		setenv("ACCELCTL_RENDEZVOUS", a->val[0], 1);
		/* val points into our argv (args.c), which ps shows everyone. */
		ac_rdv_scrub((char *)a->val[0]);
	}
	/* A helper serves a job of known size and local layout (its clients'
	 * HELLO says it): where those are unknown it would refuse us. */
	if (ac_cmd_topo(&t) == -1 || ac_cmd_need_helper(&t) == -1)
		return AC_EXIT_USAGE;
	if (ac_helper_idle_ms(getenv("ACCELCTL_HELPER_IDLE"), &idle, &why) == -1) {
		ac_warnx("invalid ACCELCTL_HELPER_IDLE='%.40s': %s",
		    getenv("ACCELCTL_HELPER_IDLE"), why);
		return AC_EXIT_USAGE;
	}
	/* What every waiting rank checks (the rendezvous URL, its files and
	 * lifetimes), where one is named: a helper started by hand or by a prolog serves those
	 * ranks, and took a bad ACCELCTL_REDIS_TTL or ACCELCTL_ETCD_TTL for a
	 * day, silently (review of issue 18). */
	if ((strcmp(action, "run") == 0 || strcmp(action, "start") == 0) &&
	    getenv("ACCELCTL_RENDEZVOUS") != NULL &&
	    *getenv("ACCELCTL_RENDEZVOUS") != '\0') {
		char err[512];

		if (ac_transport_check(getenv("ACCELCTL_RENDEZVOUS"),
		    getenv("ACCELCTL_REDIS_PASSWORD_FILE"), err,
		    sizeof(err)) == -1) {
			ac_warnx("%s", err);
			return AC_EXIT_USAGE;
		}
	}
	if (strcmp(action, "run") == 0) {
		if (ac_client_open(&c, &t, 0, &rc) == 0) {
			ac_warnx("a helper (pid %ld) already serves job %s at %s",
			    c.helper_pid, t.job_id, c.paths.shown_sock);
			ac_client_close(&c);
			return AC_EXIT_FAILED;
		}
		return ac_helper_main(&t, -1, 1);
	}
	open = ac_client_open(&c, &t, strcmp(action, "start") == 0, &rc);
	if (open == -1)
		return rc;
	if (open == -2) {
		if (strcmp(action, "status") == 0) {
			printf("no helper runs for job %s\n", t.job_id);
			return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : AC_EXIT_NO;
		}
		return 0;	/* stop: nothing to stop */
	}
	rc = 0;
	if (strcmp(action, "start") == 0)
		printf("helper %ld serves job %s at %s\n", c.helper_pid, t.job_id,
		    c.paths.shown_sock);
	else if (strcmp(action, "stop") == 0) {
		int type = 0;

		if (ac_client_request(&c, AC_MSG_STOP, NULL, &r) != AC_MSG_ACK) {
			ac_warnx("the helper did not confirm");
			rc = AC_EXIT_FAILED;
		}
		/* Until it is gone (it closes us as it exits): a script that
		 * stops it, then reads its log or starts another, finds it done
		 * (a test that read the log at once missed its last line). */
		while (rc == 0 && (type = ac_client_recv(&c, ac_now_ms() + 10000,
		    &r)) >= 0)
			;
		if (rc == 0 && type == -2) {
			ac_warnx("the helper (pid %ld) did not exit within 10 s",
			    c.helper_pid);
			rc = AC_EXIT_FAILED;
		}
	} else if (ac_client_request(&c, AC_MSG_STATUS, NULL, &r) == AC_MSG_TEXT) {
		ac_get_str(&r, text, sizeof(text));
		printf("helper %ld serves job %s at %s (log: %s)\n%s",
		    c.helper_pid, t.job_id, c.paths.shown_sock, c.paths.shown_log, text);
	} else
		rc = AC_EXIT_FAILED;
	ac_client_close(&c);
	if (ac_flush_stdout() == -1)
		return AC_EXIT_FAILED;
	return rc;
}

static const struct ac_optdef helper_opts[] = {
	{ "rendezvous", 'r', "URL", "meet the other nodes' helpers there (ACCELCTL_RENDEZVOUS)" },
	{ NULL, 0, NULL, NULL }
};

const struct ac_cmd cmd_helper = {
	.name = "helper",
	.group = "Tools",
	.args = "[--rendezvous URL] run | start | stop | status",
	.summary = "run, start, stop or look at this node's helper",
	.help = "The per-node helper carries barriers and the other waits. Clients "
	    "start it on demand (detached, logging to the runtime directory) and it "
	    "exits after ACCELCTL_HELPER_IDLE (10m) without waiting clients. 'run' serves "
	    "in the foreground (for srun --ntasks-per-node=1 or a prolog), 'start' "
	    "starts it detached unless it runs, 'stop' stops it (its state stays "
	    "on disk for the next one), 'status' shows it and exits 1 if none "
	    "runs.",
	.opts = helper_opts,
	.minpos = 1,
	.maxpos = 1,
	.exec = exec_helper,
};
