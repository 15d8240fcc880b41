/* rundir.c: the private runtime directory and the per-job file names in it. */
#include <sys/stat.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rundir.h"

static int
check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) == -1) {
		snprintf(err, errlen, "runtime directory %.300s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "runtime directory %.300s has unsafe "
		    "permissions (%s, mode %03o, owner uid %ld): it must be a "
		    "directory of uid %ld with mode 0700", dir,
		    S_ISDIR(st.st_mode) ? "directory" : S_ISLNK(st.st_mode) ?
		    "symbolic link" : "not a directory",
		    (unsigned)(st.st_mode & 0777), (long)st.st_uid,
		    (long)getuid());
		return -1;
	}
	return 0;
}

/* FNV-1a: a stable short name for a job id too long for sun_path. */
static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

int
ac_paths_init(struct ac_paths *p, const struct ac_topo *t, int create,
    char *err, size_t errlen)
{
	const char *env = getenv("ACCELCTL_RUNTIME_DIR"), *xdg;
	char job_id[AC_JOB_ID_MAX + 32], base[300];
	int n;

	/*
	 * One helper per node of a job: the node rank is part of the name, so
	 * that nodes sharing a runtime directory (two torchrun launchers or
	 * several slurmd on one host, a /tmp shared by mistake) keep apart.
	 */
	if (t->v[AC_NNODES] > 1 && t->v[AC_NODE] >= 0)
		snprintf(job_id, sizeof(job_id), "%s.node%ld", t->job_id,
		    t->v[AC_NODE]);
	else
		snprintf(job_id, sizeof(job_id), "%s", t->job_id);

	char cwd[256];

	/* Absolute: the helper leaves the job's working directory (chdir /). */
	if (env != NULL && *env != '\0' && *env != '/' &&
	    getcwd(cwd, sizeof(cwd)) != NULL)
		n = snprintf(p->dir, sizeof(p->dir), "%s/%s", cwd, env);
	else if (env != NULL && *env != '\0')
		n = snprintf(p->dir, sizeof(p->dir), "%s", env);
	else if ((xdg = getenv("XDG_RUNTIME_DIR")) != NULL && *xdg == '/')
		n = snprintf(p->dir, sizeof(p->dir), "%s/accelctl", xdg);
	else
		n = snprintf(p->dir, sizeof(p->dir), "/tmp/accelctl-%ld",
		    (long)getuid());
	if (n < 0 || (size_t)n >= sizeof(p->dir)) {
		snprintf(err, errlen, "runtime directory name is too long");
		return -1;
	}
	if (create && mkdir(p->dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create runtime directory %.300s: %s",
		    p->dir, strerror(errno));
		return -1;
	}
	if (check_dir(p->dir, err, errlen) == -1)
		return -1;

	/* The job id names the files when the socket path has room for it. */
	if (strlen(p->dir) + strlen(job_id) + 7 < sizeof(p->sock))
		snprintf(base, sizeof(base), "%s", job_id);
	else
		snprintf(base, sizeof(base), "job-%016llx",
		    (unsigned long long)fnv1a(job_id));
	if (strlen(p->dir) + strlen(base) + 7 >= sizeof(p->sock)) {
		snprintf(err, errlen, "runtime directory %.300s is too long for "
		    "a socket path: set ACCELCTL_RUNTIME_DIR to a shorter one",
		    p->dir);
		return -1;
	}
	{
		char tmp[sizeof(p->dir) + sizeof(base) + 8];
		size_t len = (size_t)snprintf(tmp, sizeof(tmp), "%s/%s.sock",
		    p->dir, base);

		memcpy(p->sock, tmp, len + 1);	/* fits: checked above */
	}
	snprintf(p->lock, sizeof(p->lock), "%s/%s.lock", p->dir, base);
	snprintf(p->log, sizeof(p->log), "%s/%s.log", p->dir, base);
	snprintf(p->state, sizeof(p->state), "%s/%s.state", p->dir, base);
	snprintf(p->pid, sizeof(p->pid), "%s/%s.pid", p->dir, base);
	return 0;
}
