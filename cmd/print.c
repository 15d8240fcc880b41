/* print.c: "accelctl print": print a message on local rank 0 only (accelerator.print). */
#include <stdio.h>
#include <unistd.h>

#include "cmd.h"

/*
 * Without MSG, copy stdin. The other ranks read their stdin to the end and
 * drop it: if they exited at once, "train.py | accelctl print" would kill
 * train.py with SIGPIPE on every rank but one.
 */
static int
copy_stdin(int keep)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			ac_warn("read error on standard input");
			return AC_EXIT_FAILED;
		}
		if (keep && fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
	}
	return 0;
}

static int
exec_print(const struct ac_cmd *self, struct ac_args *a)
{
	struct ac_topo t;
	int keep, rc;

	(void)self;
	if (ac_cmd_topo(&t) == -1)
		return AC_EXIT_USAGE;
	keep = t.v[AC_WORLD] == 1;
	if (!keep) {
		/* The local rank alone answers. */
		if (t.v[AC_LRANK] < 0 && ac_cmd_need_local(&t) == -1)
			return AC_EXIT_USAGE;
		keep = t.v[AC_LRANK] == 0;
	}
	if (a->npos == 0) {
		if ((rc = copy_stdin(keep)) != 0)
			return rc;
	} else if (keep) {
		for (int i = 0; i < a->npos; i++)
			printf("%s%s", i ? " " : "", a->pos[i]);
		putchar('\n');
	}
	return keep && ac_flush_stdout() == -1 ? AC_EXIT_FAILED : AC_EXIT_OK;
}

const struct ac_cmd cmd_print = {
	.name = "print",
	.group = "Run a command on one process",
	.args = "[--] [MSG...]",
	.summary = "print MSG (or stdin) on local rank 0 of each node only",
	.help = "Print the words of MSG, joined by spaces and ended by a newline, on the "
	    "process of local rank 0 only, as accelerator.print does. Without MSG, "
	    "copy standard input; the other processes read theirs to the end and "
	    "discard it, so a program piped into print is never killed by SIGPIPE. "
	    "Options are not parsed: MSG may begin with '-'. A leading '--' is "
	    "dropped, and '--help' alone shows this help.",
	.maxpos = -1,
	.raw = 1,
	.exec = exec_print,
};
