/* help.c: "accelctl help [COMMAND]": the help of accelctl or of one command, as git help does. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static int
exec_help(const struct ac_cmd *self, struct ac_args *a)
{
	(void)self;
	if (a->npos == 0)
		ac_global_help();
	else {
		const struct ac_cmd *c = ac_cmd_find(a->pos[0]);

		/* "accelctl help barier" names the nearest command, as
		 * "accelctl barier" does. */
		if (c == NULL)
			return ac_unknown_command(a->pos[0]);
		ac_command_help(c);
	}
	return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
}

const struct ac_cmd cmd_help = {
	.name = "help",
	.group = "Tools",
	.args = "[COMMAND]",
	.summary = "this help, or the help of COMMAND",
	.help = "Print the help of accelctl (its commands, exit codes and "
	    "launchers), or with COMMAND the help of that command, the same as "
	    "'accelctl COMMAND --help'. The whole reference is accelctl(1).",
	.maxpos = 1,
	.exec = exec_help,
};
