/* kind.h: the kinds of collective, one table: key letter, name, op, how results combine. */
#ifndef ACCELCTL_KIND_H
#define ACCELCTL_KIND_H

/* How the nodes' parts of a collective make its result. */
enum ac_combine {
	AC_COMBINE_LOWEST_FAILING,	/* every rank's status: 0, or the lowest failing rank's */
	AC_COMBINE_SOURCE,		/* one rank's status and payload */
};

struct ac_kind {
	char		 letter;	/* the key's first character: "b:NAME" */
	const char	*name;		/* in status and messages */
	int		 op;		/* enum ac_op */
	int		 combine;	/* enum ac_combine */
	/*
	 * Carried by a transport that holds a stream of collectives (NCCL):
	 * not the results of --wait and main-first, whose source runs a command
	 * for minutes or hours, and a collective posted for that long would keep
	 * a kernel spinning on every other node's GPU.
	 */
	int		 streamed;
};

/*
 * The kind of collective KEY ("b:NAME"), or NULL when KEY is not a letter of
 * the table, a colon and a name: such a key is refused, never stored.
 */
const struct ac_kind *ac_kind_of(const char *key);
/* The name part of a valid KEY (after the colon). */
const char *ac_kind_label(const char *key);

#endif
