/* is-local-main.c: "accelctl is-local-main", the exit-code test for is_local_main_process. */
#include "cmd.h"

static int
exec_is_local_main(const struct ac_cmd *self, struct ac_args *a)
{
	(void)self;
	(void)a;
	return ac_cmd_is(1);
}

const struct ac_cmd cmd_is_local_main = {
	.name = "is-local-main",
	.group = "Who am I (the launcher's environment only: no helper, no network)",
	.args = "",
	.summary = "exit 0 on local rank 0 of each node, else 1",
	.help = "Exit 0 on the process of local rank 0 of its node, else 1, without printing anything: is_local_main_process. With no launcher the single process is local main.",
	.exec = exec_is_local_main,
};
