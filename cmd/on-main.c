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
	.args = "-- CMD...",
	.summary = "run CMD on global rank 0 only",
	.help = "Run CMD on the process of global rank 0 only. The selected process replaces itself with CMD (exec), so the launcher's signals reach CMD and CMD's exit status is the exit status; 126 and 127 when CMD cannot be executed or is not found. The other processes exit 0 at once without touching CMD. With a single process (no launcher) CMD always runs.",
	.minpos = 0,
	.maxpos = 0,
	.child = AC_CHILD_REQUIRED,
	.exec = exec_on_main,
};
