/* cmd.h: the subcommand table entry, and helpers shared by the subcommands. */
#ifndef ACCELCTL_CMD_H
#define ACCELCTL_CMD_H

#include "args.h"
#include "msg.h"
#include "sync.h"
#include "topo.h"

/* What follows the positionals. */
enum ac_child {
	AC_CHILD_NONE,		/* nothing: "--" only ends the options */
	AC_CHILD_REQUIRED,	/* "-- CMD..." must follow */
};

struct ac_cmd {
	const char		*name;		/* matched exactly: scripts need stable names */
	const char		*group;		/* heading in "accelctl --help" */
	const char		*args;		/* usage after the options, "N -- CMD..." */
	const char		*summary;	/* one line for "accelctl --help" */
	const char		*help;		/* paragraphs for "accelctl NAME --help" */
	const struct ac_optdef	*opts;		/* NULL-terminated, or NULL */
	int			 minpos, maxpos; /* positional count before "--" */
	enum ac_child		 child;
	int			 raw;		/* no option parsing at all (print) */
	int			(*exec)(const struct ac_cmd *, struct ac_args *);
	/* Or NULL: called with the words after the name when the command
	 * exits RC != 0, usage errors included ("rendezvous start" prints
	 * there what makes its caller's eval fail). */
	void			(*failed)(int argc, char **argv, int rc);
};

/* The NULL-terminated table, in the order "accelctl --help" shows it. */
extern const struct ac_cmd *const ac_commands[];

/* Print "accelctl: NAME: message" and the usage line; return exit code 2. */
int ac_usage_error(const struct ac_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The command running now (set by main before its exec). */
extern const struct ac_cmd *ac_cmd_running;

/* ac_timeout_ms (sync.h) for a command: a bad --timeout OPT is a usage
 * error, with the usage line as every other one has; a bad
 * ACCELCTL_TIMEOUT (OPT NULL) is not. 0, or -1 after printing. */
int ac_cmd_timeout(const char *opt, long *ms);

/* The entry named NAME, or NULL. */
const struct ac_cmd *ac_cmd_find(const char *name);

/* "accelctl --help" and "accelctl NAME --help", on stdout. */
void ac_global_help(void);
void ac_command_help(const struct ac_cmd *cmd);

/* "unknown command 'WORD'; did you mean ...?" on stderr; returns exit code 2. */
int ac_unknown_command(const char *word);

/* "usage: accelctl NAME [options] ARGS" to stdout or stderr. */
void ac_print_usage(const struct ac_cmd *cmd, int to_stderr);

/* Detect the topology of this process; on error print it and return -1 (exit 2). */
int ac_cmd_topo(struct ac_topo *t);

/*
 * Local rank and local size of T, or -1 after printing why they are unknown
 * (a launcher that gives no local rank; exit 2).
 */
int ac_cmd_need_local(const struct ac_topo *t);

/* The same for the world size (a Kubernetes Indexed Job has none), and for
 * the node rank and number of nodes. */
int ac_cmd_need_world(const struct ac_topo *t);
int ac_cmd_need_node(const struct ac_topo *t);

/*
 * What a helper needs of its clients (their HELLO): the world size, the local
 * rank and size, and the node rank where the node count is known; else -1
 * after printing what to set. For helper and status, which would otherwise
 * start a helper that refuses them, or be refused (125).
 */
int ac_cmd_need_helper(const struct ac_topo *t);

/* The options of the on-* commands: --wait, --timeout. */
extern const struct ac_optdef ac_on_opts[];

/* The shared bodies of is-main / is-local-main and of the on-* commands. */
int ac_cmd_is(int local);
int ac_cmd_on(const struct ac_cmd *cmd, struct ac_args *a, int local,
    int indexed);

/*
 * For barrier, broadcast, main-first, on-* --wait: detect, and refuse a job
 * that spans nodes without a rendezvous (NODE_SCOPE: only this node meets).
 * Returns 0 or an exit code after printing why.
 */
int ac_cmd_sync_topo(struct ac_topo *t, int node_scope);
/* ac_sync_init with --timeout and the progress interval; 0 or exit code 2. */
int ac_cmd_sync_init(struct ac_sync *s, const struct ac_topo *t,
    const char *timeout_opt, int op, int scope, int role, const char *key,
    const char *what, int64_t source);

/* The subcommands: one file each in cmd/. */
extern const struct ac_cmd cmd_is_main, cmd_is_local_main, cmd_on_main,
    cmd_on_local_main, cmd_on_process, cmd_on_local_process, cmd_print,
    cmd_info, cmd_launch, cmd_barrier, cmd_main_first, cmd_broadcast,
    cmd_abort, cmd_status, cmd_helper, cmd_check, cmd_rendezvous, cmd_trace, cmd_help;

#endif
