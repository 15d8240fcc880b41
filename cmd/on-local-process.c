/* on-local-process.c: "accelctl on-local-process": run CMD on local rank N of each node (on_local_process). */
#include "cmd.h"

static int
exec_on_local_process(const struct ac_cmd *self, struct ac_args *a)
{
	return ac_cmd_on(self, a, 1, 1);
}

const struct ac_cmd cmd_on_local_process = {
	.name = "on-local-process",
	.group = "Run a command on one process",
	.args = "[--wait [--timeout DURATION]] N -- CMD...",
	.summary = "run CMD on local rank N of each node",
	.help = "Run CMD once per node, on the process of local rank N. N must be below the number of processes on the node (exit 2 otherwise). The selected process replaces itself with CMD (exec), so the launcher's signals reach CMD and CMD's exit status is the exit status; 126 and 127 when CMD cannot be executed or is not found. The other processes exit 0 at once without touching CMD. With --wait the others wait until CMD finished and exit with its status (3 if the process running it dies), so a failed step fails every process and nobody hangs. With a single process (no launcher) CMD always runs.",
	.minpos = 1,
	.maxpos = 1,
	.opts = ac_on_opts,
	.child = AC_CHILD_REQUIRED,
	.exec = exec_on_local_process,
};
