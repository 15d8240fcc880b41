/* rundir.h: the private runtime directory and the per-job file names in it. */
#ifndef ACCELCTL_RUNDIR_H
#define ACCELCTL_RUNDIR_H

#include <stddef.h>
#include <sys/un.h>

#include "topo.h"

struct ac_paths {
	char	dir[512];
	char	sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char	lock[900];	/* flock taken by a client starting the helper */
	char	log[900];	/* the helper's log */
	char	state[900];	/* the helper's journal of generations */
	char	pid[900];	/* the running helper's pid, for launch's clean-up */
};

/*
 * Resolve the runtime directory (ACCELCTL_RUNTIME_DIR, else
 * $XDG_RUNTIME_DIR/accelctl, else /tmp/accelctl-UID), create it with mode 0700
 * when CREATE and missing, and check it is a directory (not a link) owned by
 * us with no group or other permissions: anyone who can write there could
 * impersonate the helper. Fills the file names of T's job on T's node. Returns 0, or -1 with a
 * reason in ERR.
 */
int ac_paths_init(struct ac_paths *p, const struct ac_topo *t, int create,
    char *err, size_t errlen);

#endif
