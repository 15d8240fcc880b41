/* rundir.h: the private runtime directory and the per-job file names in it. */
#ifndef ACCELCTL_RUNDIR_H
#define ACCELCTL_RUNDIR_H

#include <stddef.h>
#include <sys/un.h>

#include "topo.h"

struct ac_paths {
	char	dir[512];	/* the directory, by the name the user knows */
	int	dfd;		/* it, opened and checked once (O_PATH) */
	/* The files, named through dfd (/proc/self/fd/N/NAME): for use. */
	char	sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char	lock[900];	/* flock taken by a client starting the helper */
	char	log[900];	/* the helper's log */
	char	state[900];	/* the helper's journal of generations */
	char	pid[900];	/* the running helper's pid, for launch's clean-up */
	/* News that a rank is gone (gone.c): a file per rank, GONE_DIR/
	 * GONE_PREFIX then the rank, renamed into place by launch or by a rank
	 * the helper turned away. */
	char	gone_dir[600];
	char	gone_prefix[320];
	/* The helper's second name, in Linux's abstract socket namespace
	 * (a leading NUL; ASOCK_LEN bytes with it; 0: none): ranks of one
	 * node that see no common runtime directory (a private /tmp for each
	 * task: enroot, Apptainer --contain, bubblewrap) still meet there.
	 * Made of the user, the directory's name and the job's file name
	 * (job id and node), hashed (rundir.c). */
	char	asock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	size_t	asock_len;
	/* The socket and the log under the directory's name: for messages. */
	char	shown_sock[900];
	char	shown_log[900];
	/* Why the directory is not the first place (XDG_RUNTIME_DIR not on
	 * this host, /tmp/accelctl-UID another user's), for the helper's log;
	 * or "". */
	char	note[1200];
};

/*
 * Resolve the runtime directory (ACCELCTL_RUNTIME_DIR, else the first
 * usable of $XDG_RUNTIME_DIR/accelctl, /tmp/accelctl-UID and, when another
 * user owns that, $HOME/.accelctl/run.HOST; one holding the job's files
 * first: rundir.c), create it with mode 0700 when CREATE and missing, open
 * it once and check on that descriptor that it is a directory (not a link)
 * owned by us with no group or other permissions: anyone who can write
 * there could impersonate the helper. Fills the file names of T's job on
 * T's node, relative to that descriptor. Returns 0, or -1 with errno and a
 * reason in ERR (errno ENOENT: not there, and not CREATE).
 */
int ac_paths_init(struct ac_paths *p, const struct ac_topo *t, int create,
    char *err, size_t errlen);

/* The same for runtime directory DIR (launch's simulated nodes), whatever
 * ACCELCTL_RUNTIME_DIR says. */
int ac_paths_init_at(struct ac_paths *p, const struct ac_topo *t,
    const char *dir, int create, char *err, size_t errlen);

/* Close the directory's descriptor (the names in P stop working). */
void ac_paths_close(struct ac_paths *p);

#endif
