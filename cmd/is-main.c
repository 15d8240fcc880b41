/* is-main.c: "accelctl is-main", the exit-code test for is_main_process. */
#include "cmd.h"

static int
exec_is_main(const struct ac_cmd *self, struct ac_args *a)
{
	(void)self;
	(void)a;
	return ac_cmd_is(0);
}

const struct ac_cmd cmd_is_main = {
	.name = "is-main",
	.group = "Who am I (the launcher's environment only: no helper, no network)",
	.args = "",
	.summary = "exit 0 on global rank 0, else 1",
	.help = "Exit 0 on the process of global rank 0, else 1, without printing anything: the shell's if-test for is_main_process. With no launcher the single process is main.",
	.exec = exec_is_main,
};
