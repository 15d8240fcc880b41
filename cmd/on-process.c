/* on-process.c: "accelctl on-process": run CMD on global rank N only (on_process). */
#include "cmd.h"

static int
exec_on_process(const struct ac_cmd *self, struct ac_args *a)
{
	return ac_cmd_on(self, a, 0, 1);
}

const struct ac_cmd cmd_on_process = {
	.name = "on-process",
	.group = "Run a command on one process",
	.args = "[--wait [--timeout DURATION]] N -- CMD...",
	.summary = "run CMD on global rank N only",
	.help = "Run CMD on the process of global rank N only. N must be below the world size (exit 2 on every process otherwise). The selected process replaces itself with CMD (exec), so the launcher's signals reach CMD and CMD's exit status is the exit status; 126 and 127 when CMD cannot be executed or is not found. The other processes exit 0 at once without touching CMD. With --wait the others wait until CMD finished and exit with its status (3 if the process running it dies), so a failed step fails every process and nobody hangs. With a single process (no launcher) CMD always runs.",
	.minpos = 1,
	.maxpos = 1,
	.opts = ac_on_opts,
	.child = AC_CHILD_REQUIRED,
	.exec = exec_on_process,
};
