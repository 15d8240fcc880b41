/* help.c: "accelctl help [COMMAND]": the help of accelctl or of one command, as git help does. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

/* Whether WORD is one of the words of ARGS (space or '|' apart). */
static int
has_word(const char *args, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = args; n > 0 && p != NULL && (p = strstr(p, word)) != NULL;
	    p += n) {
		int start = p == args || p[-1] == ' ' || p[-1] == '|';
		int end = p[n] == '\0' || p[n] == ' ' || p[n] == '|';

		if (start && end)
			return 1;
	}
	return 0;
}

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
		/* "accelctl help trace merge", "help helper start": a word
		 * of the command's own, as its table entry shows it. */
		if (a->npos == 2 && !has_word(c->args, a->pos[1]))
			return ac_usage_error(self, "'%s' is not a word of "
			    "'%s'", a->pos[1], c->name);
		ac_command_help(c);
	}
	return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
}

const struct ac_cmd cmd_help = {
	.name = "help",
	.group = "Tools",
	.args = "[COMMAND [WORD]]",
	.summary = "this help, or the help of COMMAND",
	.help = "Print the help of accelctl (its commands, exit codes and "
	    "launchers), or with COMMAND the help of that command, the same as "
	    "'accelctl COMMAND --help'. The whole reference is accelctl(1).",
	.maxpos = 2,
	.exec = exec_help,
};
