/* launch.c: "accelctl launch": try a job script on simulated nodes, without a cluster. */
#include <stdlib.h>

#include "cmd.h"
#include "launch.h"
#include "num.h"
#include "rdvurl.h"

enum { OPT_NPROC, OPT_NNODES, OPT_TAG, OPT_KILL, OPT_RDV };

static const struct ac_optdef launch_opts[] = {
	[OPT_NPROC] = { "nproc", 'n', "K", "processes per node (required)" },
	[OPT_NNODES] = { "nnodes", 'N', "M", "simulated nodes (default 1)" },
	[OPT_TAG] = { "tag", 'l', NULL, "prefix each output line with the rank, as srun -l" },
	[OPT_KILL] = { "kill-on-bad-exit", 'K', NULL, "stop the others when one fails, as srun -K" },
	[OPT_RDV] = { "rendezvous", 'r', "URL", "ACCELCTL_RENDEZVOUS for the processes (redis://host:port)" },
	{ NULL, 0, NULL, NULL }
};

static int
count(const struct ac_cmd *self, const char *opt, const char *s, long max,
    long *out)
{
	const char *why = "must be at least 1";

	if (ac_parse_uint(s, max, out, &why) == -1 || *out == 0)
		return ac_usage_error(self, "invalid %s '%.40s': %s (1-%ld)",
		    opt, s, why, max);
	return 0;
}

static int
exec_launch(const struct ac_cmd *self, struct ac_args *a)
{
	struct ac_launch l = { .nnodes = 1 };

	if (a->val[OPT_NPROC] == NULL)
		return ac_usage_error(self, "missing -n K");
	if (count(self, "-n", a->val[OPT_NPROC], 4096, &l.nproc) != 0)
		return AC_EXIT_USAGE;
	if (a->val[OPT_NNODES] != NULL &&
	    count(self, "--nnodes", a->val[OPT_NNODES], 1024, &l.nnodes) != 0)
		return AC_EXIT_USAGE;
	if (l.nproc * l.nnodes > 65536)
		return ac_usage_error(self, "%ld processes are too many (at most 65536)",
		    l.nproc * l.nnodes);
	l.tag = a->seen[OPT_TAG] > 0;
	l.kill_on_bad_exit = a->seen[OPT_KILL] > 0;
	l.argv = a->child;
	/* Inherited by every process, and so by the helpers they start. */
	if (a->val[OPT_RDV] != NULL) {
		setenv("ACCELCTL_RENDEZVOUS", a->val[OPT_RDV], 1);
		/* val points into our argv (args.c), which ps shows everyone. */
		ac_rdv_scrub((char *)a->val[OPT_RDV]);
	}
	return ac_launch_run(&l);
}

const struct ac_cmd cmd_launch = {
	.name = "launch",
	.group = "Tools",
	.args = "-n K [--nnodes M] [--tag] [--kill-on-bad-exit] [--rendezvous URL] -- CMD...",
	.summary = "start K processes on each of M simulated nodes",
	.help = "Start CMD as K processes on each of M simulated nodes (M x K in all) "
	    "with ACCELCTL_RANK, ACCELCTL_WORLD_SIZE, ACCELCTL_LOCAL_RANK, "
	    "ACCELCTL_LOCAL_WORLD_SIZE, ACCELCTL_NODE_RANK, ACCELCTL_NNODES, a fresh "
	    "ACCELCTL_JOB_ID and, per simulated node, its own ACCELCTL_RUNTIME_DIR: "
	    "a way to try job scripts without a cluster. Each rank runs in a "
	    "session of its own; standard input goes to rank 0 only. Every "
	    "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGTSTP and SIGCONT "
	    "that launch gets (^C at the terminal, or kill) is sent to every rank's "
	    "process group; after SIGINT, SIGTERM, SIGHUP or SIGQUIT launch exits "
	    "128+N. A rank that exits while the others wait for it at a collective "
	    "makes their wait fail at once (exit 4, naming it and its exit). At the "
	    "end each failed rank is named with what ended it ('rank 3 (node 0): "
	    "exited with 7'), and the exit status is the first non-zero one (128+N "
	    "for a signal), else 0. With several nodes, the waiting commands need "
	    "a rendezvous: --rendezvous URL or ACCELCTL_RENDEZVOUS, each simulated "
	    "node's helper meeting the others there.",
	.opts = launch_opts,
	.child = AC_CHILD_REQUIRED,
	.exec = exec_launch,
};
