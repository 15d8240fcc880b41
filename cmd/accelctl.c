/* accelctl.c: main(): the subcommand table, dispatch, and help built from the table.
 *
 * Every name, usage line and summary lives in the table entries of cmd/ files;
 * --help, usage errors and --list-commands are all printed from them, so they
 * cannot drift apart (the docs test compares them with the man page and the
 * completions). Names are matched exactly: scripts need stable names, so an
 * unknown word gets a suggestion, never a guess.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "parent.h"
#include "proctitle.h"
#include "stdfds.h"
#if ACCELCTL_HAVE_NCCL
#include "ncclso.h"
#endif

const struct ac_cmd *const ac_commands[] = {
	&cmd_is_main,
	&cmd_is_local_main,
	&cmd_on_main,
	&cmd_on_local_main,
	&cmd_on_process,
	&cmd_on_local_process,
	&cmd_print,
	&cmd_barrier,
	&cmd_main_first,
	&cmd_broadcast,
	&cmd_abort,
	&cmd_status,
	&cmd_info,
	&cmd_check,
	&cmd_launch,
	&cmd_helper,
	&cmd_rendezvous,
	&cmd_trace,
	&cmd_help,
	NULL
};

static const char exit_codes[] =
    "Exit codes:\n"
    "  0        success; \"yes\" for is-*\n"
    "  1        \"no\" for is-*\n"
    "  2        usage error or invalid environment\n"
    "  3        aborted by a peer, or the rank others waited for died\n"
    "  4        lost: a rank or node this wait needs is gone for good\n"
    "  124      a deadline passed\n"
    "  125      accelctl itself failed\n"
    "  126 127  CMD could not be executed / was not found\n"
    "  128+N    CMD was killed by signal N\n"
    "  129      a waiting accelctl whose parent exited left its wait\n"
    "  other    CMD's own exit status (on-*, main-first, --wait, --status)\n";

void
ac_print_usage(const struct ac_cmd *cmd, int to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;

	fprintf(f, "usage: accelctl %s%s%s\n", cmd->name, *cmd->args ? " " : "",
	    cmd->args);
}

int
ac_usage_error(const struct ac_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ac_vwarnx(fmt, ap);
	va_end(ap);
	ac_print_usage(cmd, 1);
	return AC_EXIT_USAGE;
}

/*
 * Print TEXT in lines of at most WIDTH columns: the first indented by FIRST
 * spaces (-FIRST: the cursor is at column FIRST already), the others by REST.
 * With GROUPS, a line breaks only at a space outside brackets, so that
 * "[--timeout DURATION]" stays whole (a usage).
 */
static void
print_wrapped_at(const char *text, int width, int first, int rest, int groups)
{
	const char *p = text;
	int indent = first < 0 ? -first : first, printed = first < 0;

	while (*p != '\0') {
		const char *end = p, *brk = NULL;
		int depth = 0;

		while (*end != '\0' && end - p < width - indent) {
			if (*end == '[')
				depth++;
			else if (*end == ']' && depth > 0)
				depth--;
			else if (*end == ' ' && (!groups || (depth == 0 &&
			    !(end - p >= 2 && end[-1] == '-' && end[-2] == '-'))))
				brk = end;
			end++;
		}
		if (*end != '\0' && brk != NULL)
			end = brk;
		printf("%*s%.*s\n", printed ? 0 : indent, "", (int)(end - p), p);
		p = *end == ' ' ? end + 1 : end;
		indent = rest;
		printed = 0;
	}
}

/* Wrap TEXT at 78 columns, indented by two spaces. */
static void
print_wrapped(const char *text)
{
	print_wrapped_at(text, 78, 2, 2, 0);
}

void
ac_command_help(const struct ac_cmd *cmd)
{
	ac_print_usage(cmd, 0);
	printf("\n");
	print_wrapped(cmd->help);
	printf("\nOptions:\n");
	for (const struct ac_optdef *o = cmd->opts; o != NULL && o->lng; o++) {
		char left[64];

		snprintf(left, sizeof(left), "%s%c%s--%s%s%s",
		    o->shrt ? "-" : "", o->shrt ? o->shrt : ' ',
		    o->shrt ? ", " : "  ", o->lng, o->argname ? " " : "",
		    o->argname ? o->argname : "");
		printf("  %-24s %s\n", o->shrt ? left : left + 2, o->help);
	}
	/* print takes no options, so only "--help" alone is one (not "-h"). */
	printf("  %-24s %s\n", cmd->raw ? "--help" : "-h, --help",
	    "show this help");
}

void
ac_global_help(void)
{
	const char *group = NULL;
	char launchers[512];

	printf("usage: accelctl COMMAND [ARGS...]\n"
	    "       accelctl --help | --version | --list-commands\n"
	    "       accelctl COMMAND --help\n\n"
	    "Accelerate's process control for shell scripts: know which process "
	    "you are,\nrun a step on one process only.\n");
	for (int i = 0; ac_commands[i] != NULL; i++) {
		const struct ac_cmd *c = ac_commands[i];
		char left[512];

		if (group == NULL || strcmp(group, c->group) != 0) {
			group = c->group;
			printf("\n%s:\n", group);
		}
		snprintf(left, sizeof(left), "%s %s", c->name, c->args);
		if (strlen(left) > 28) {
			/* A long usage wraps between its options, never in one. */
			print_wrapped_at(left, 78, 2, 4 + (int)strlen(c->name),
			    1);
			printf("  %-28s ", "");
		} else
			printf("  %-28s ", left);
		/* A long summary wraps under itself (column 31). */
		print_wrapped_at(c->summary, 78, -31, 31, 0);
	}
	/* From detection's own table, so that it stays true. */
	snprintf(launchers, sizeof(launchers), "The launcher is detected from "
	    "the variables of these launchers, in this order: %s; see "
	    "'accelctl info' and accelctl(1).", ac_topo_launchers());
	printf("\n%s\n", exit_codes);
	print_wrapped_at(launchers, 78, 0, 0, 0);
}

/* Optimal string alignment distance: a swap of two letters costs one. */
static int
distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), d[33][33];

	if (la > 32 || lb > 32)
		return 99;
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++) {
		for (int j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

int
ac_unknown_command(const char *word)
{
	const char *best = NULL;
	int bestd = 3;

	for (int i = 0; ac_commands[i] != NULL; i++) {
		int d = distance(word, ac_commands[i]->name);
		if (d < bestd) {
			bestd = d;
			best = ac_commands[i]->name;
		}
	}
	if (best != NULL)
		ac_warnx("unknown command '%.40s'; did you mean '%s'?", word,
		    best);
	else
		ac_warnx("unknown command '%.40s'; see 'accelctl --help'", word);
	return AC_EXIT_USAGE;
}

const struct ac_cmd *ac_cmd_running;

int
ac_cmd_timeout(const char *opt, long *ms)
{
	if (ac_timeout_ms(opt, ms) == 0)
		return 0;
	if (opt != NULL && ac_cmd_running != NULL)
		ac_print_usage(ac_cmd_running, 1);
	return -1;
}

const struct ac_cmd *
ac_cmd_find(const char *name)
{
	for (int i = 0; ac_commands[i] != NULL; i++)
		if (strcmp(ac_commands[i]->name, name) == 0)
			return ac_commands[i];
	return NULL;
}

static int
run_command(const struct ac_cmd *cmd, int argc, char **argv)
{
	char *pos[argc + 1], err[256];
	struct ac_args a;

	ac_cmdname = cmd->name;
	ac_cmd_running = cmd;
	if (cmd->raw) {
		memset(&a, 0, sizeof(a));
		if (argc == 1 && strcmp(argv[0], "--help") == 0) {
			ac_command_help(cmd);
			return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
		}
		if (argc > 0 && strcmp(argv[0], "--") == 0) {
			argc--;
			argv++;
		}
		a.pos = argv;
		a.npos = argc;
		return cmd->exec(cmd, &a);
	}
	if (ac_args_parse_upto(cmd->opts, cmd->child == AC_CHILD_REQUIRED ?
	    cmd->maxpos : -1, argc, argv, pos, &a, err, sizeof(err)) == -1)
		return ac_usage_error(cmd, "%s", err);
	if (a.help) {
		ac_command_help(cmd);
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	}
	if (cmd->child == AC_CHILD_REQUIRED) {
		if (!a.dashdash && a.stray != NULL)
			return ac_usage_error(cmd, "missing '--' before CMD "
			    "'%.40s' (accelctl %s ... -- %.40s ...)", a.stray,
			    cmd->name, a.stray);
		if (!a.dashdash)
			return ac_usage_error(cmd,
			    "missing '--' before CMD");
		if (a.nchild == 0)
			return ac_usage_error(cmd, "missing CMD after '--'");
	} else if (a.dashdash) {
		/* "--" only ended the options: what follows is positional. */
		for (int i = 0; i < a.nchild; i++)
			a.pos[a.npos++] = a.child[i];
		a.child = NULL;
		a.nchild = 0;
	}
	if (a.npos < cmd->minpos)
		return ac_usage_error(cmd, "missing argument%s",
		    cmd->minpos - a.npos > 1 ? "s" : "");
	if (cmd->maxpos >= 0 && a.npos > cmd->maxpos)
		return ac_usage_error(cmd, "unexpected argument '%.40s'",
		    a.pos[cmd->maxpos]);
	return cmd->exec(cmd, &a);
}

int
main(int argc, char **argv)
{
	const char *w;

	/* Before anything opens a file, or it could become our stdout. */
	if (ac_stdfds_open() == -1)
		return AC_EXIT_FAILED;
	ac_proctitle_init(argc, argv);	/* for a helper this process may fork */
	ac_parent_init();		/* a waiter leaves when its parent does */
	/* A closed stdout is a write error, exit 125 as documented, not death
	 * by SIGPIPE (141); CMD gets the default back (ac_exec). */
	signal(SIGPIPE, SIG_IGN);
	/* A SIGCHLD ignored by whoever exec'ed us (inherited: some daemons
	 * and Python programs set SIG_IGN) makes the kernel reap our children
	 * unseen: launch would wait for ranks that are gone, and on-* --wait
	 * would lose CMD's exit status. Ours are waited for. */
	signal(SIGCHLD, SIG_DFL);

	if (argc < 2) {
		fprintf(stderr, "usage: accelctl COMMAND [ARGS...]; "
		    "see 'accelctl --help'\n");
		return AC_EXIT_USAGE;
	}
	w = argv[1];
	if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
		ac_global_help();
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	}
	if (strcmp(w, "--version") == 0 || strcmp(w, "-V") == 0) {
		printf("accelctl %s\n", ACCELCTL_VERSION);
		printf("features: %s\n", ACCELCTL_FEATURES);
#if ACCELCTL_HAVE_HIREDIS
		printf("hiredis: %s\n", ac_hiredis_version);
#else
		printf("hiredis: not compiled in (no Redis rendezvous)\n");
#endif
#if ACCELCTL_HAVE_ETCD
		printf("etcd: etcd:// and etcds:// (v3 JSON gateway; the helper "
		    "loads libcurl and jansson)\n");
#else
		printf("etcd: not compiled in (needs libcurl and jansson)\n");
#endif
#if ACCELCTL_HAVE_NCCL
		printf("nccl: %s\n", ac_cuda_build_version());
#else
		printf("nccl: not compiled in (no NCCL transport; check cannot run)\n");
#endif
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	}
	if (strcmp(w, "--list-commands") == 0) {
		for (int i = 0; ac_commands[i] != NULL; i++)
			printf("%s\n", ac_commands[i]->name);
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	}
	if (w[0] == '-') {
		ac_warnx("unknown option '%.40s'; see 'accelctl --help'", w);
		return AC_EXIT_USAGE;
	}
	const struct ac_cmd *cmd = ac_cmd_find(w);
	if (cmd != NULL) {
		int rc = run_command(cmd, argc - 2, argv + 2);

		if (rc != 0 && cmd->failed != NULL)
			cmd->failed(argc - 2, argv + 2, rc);
		return rc;
	}
	return ac_unknown_command(w);
}
