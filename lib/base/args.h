/* args.h: option parsing for subcommands, stopping at "--" (the child's argv). */
#ifndef ACCELCTL_ARGS_H
#define ACCELCTL_ARGS_H

#include <stddef.h>

#define AC_ARGS_MAXOPT 16

struct ac_optdef {
	const char	*lng;		/* "timeout", matched as --timeout */
	int		 shrt;		/* 'n', or 0 */
	const char	*argname;	/* "DURATION" when it takes a value, else NULL */
	const char	*help;		/* one line for --help */
};

struct ac_args {
	char		**pos;		/* positional arguments before "--" */
	int		  npos;
	char		**child;	/* everything after "--", NULL-terminated */
	int		  nchild;
	int		  dashdash;	/* "--" was given */
	int		  help;		/* -h or --help was given */
	/* With ac_args_parse_upto: the word after the last positional that
	 * began a command without "--" ("bash" of "launch -n 4 bash -c ..."),
	 * where parsing stopped; else NULL. */
	const char	 *stray;
	int		  seen[AC_ARGS_MAXOPT];
	const char	 *val[AC_ARGS_MAXOPT];	/* last value of each option */
};

/*
 * Parse ARGV (the words after the subcommand name; ARGC of them) against the
 * NULL-terminated DEFS. Options and positionals may mix before "--"; a word
 * like "-1" is a positional, so that "on-process -1" is refused by the number
 * parser with a reason instead of as an unknown option. POS points into ARGV;
 * the caller provides room for ARGC pointers. Returns 0, or -1 with a reason
 * in ERR.
 */
int ac_args_parse(const struct ac_optdef *defs, int argc, char **argv,
    char **pos, struct ac_args *a, char *err, size_t errlen);

/*
 * The same for a command whose CMD follows MAXPOS positionals: a word past
 * them stops the parse (a->stray), so that the options of a CMD given
 * without "--" ("-c" of "bash -c") are not taken for ours, and the caller
 * can say that "--" is missing instead of "unknown option '-c'".
 */
int ac_args_parse_upto(const struct ac_optdef *defs, int maxpos, int argc,
    char **argv, char **pos, struct ac_args *a, char *err, size_t errlen);

#endif
