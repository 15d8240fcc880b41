/* on-main.c: "accelctl on-main": run CMD on global rank 0 only (on_main_process). */
#include "cmd.h"

static int
exec_on_main(const struct ac_cmd *self, struct ac_args *a)
{
	return ac_cmd_on(self, a, 0, 0);
}

const struct ac_cmd cmd_on_main = {
	.name = "on-main",
	.group = "Run a command on one process",
	.args = "[--wait [--timeout DURATION]] -- CMD...",
	.summary = "run CMD on global rank 0 only",
	.help = "Run CMD on the process of global rank 0 only. The selected process replaces itself with CMD (exec), so the launcher's signals reach CMD and CMD's exit status is the exit status; 126 and 127 when CMD cannot be executed or is not found. The other processes exit 0 at once without touching CMD. With --wait the others wait until CMD finished and exit with its status (3 if the process running it dies), so a failed step fails every process and nobody hangs. With a single process (no launcher) CMD always runs.",
	.minpos = 0,
	.maxpos = 0,
	.opts = ac_on_opts,
	.child = AC_CHILD_REQUIRED,
	.exec = exec_on_main,
};
