/* rdsweep.c: the runtime directory's files of jobs long over, removed.
 *
 * Each job leaves its files in the runtime directory (JOB.lock, .log,
 * .state and the like): the journal must outlive a helper that exits idle
 * in the middle of a job, and the lock file tells a late rank where its job
 * went. Nothing said when a job was over, so they piled up, a set per job
 * id, for ever. A helper that starts removes the sets that no helper holds
 * (its JOB.pid is not locked) and that nothing has touched for
 * AC_SWEEP_DAYS (14): longer than batch systems let a job run, so that a
 * job that is still running, however idle, keeps its files.
 */
#define _GNU_SOURCE
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "rdsweep.h"

/* A job's files, by the name they share. */
struct set {
	char	 base[300];
	time_t	 newest;
};

/* The job name of file NAME (its set), into BASE; 0, or -1 when it is no
 * file of a job. */
static int
base_of(const char *name, char *base, size_t len)
{
	static const char *const ext[] = { ".state.run.tmp", ".state.run",
	    ".state.tmp", ".state", ".lock", ".log", ".pid", ".sock", NULL };
	const char *n = name[0] == '.' ? name + 1 : name, *g;
	size_t nl = strlen(n);

	if ((g = strstr(n, ".gone.")) != NULL && g[6] >= '0' && g[6] <= '9') {
		nl = (size_t)(g - n);
	} else {
		int i;

		for (i = 0; ext[i] != NULL; i++) {
			size_t el = strlen(ext[i]);

			if (nl > el && strcmp(n + nl - el, ext[i]) == 0) {
				nl -= el;
				break;
			}
		}
		if (ext[i] == NULL)
			return -1;
	}
	if (nl == 0 || nl >= len)
		return -1;
	memcpy(base, n, nl);
	base[nl] = '\0';
	return 0;
}

static struct set *
find_set(struct set **sets, size_t *n, size_t *cap, const char *base)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*sets)[i].base, base) == 0)
			return &(*sets)[i];
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct set *ns = realloc(*sets, nc * sizeof(*ns));

		if (ns == NULL)
			return NULL;
		*sets = ns;
		*cap = nc;
	}
	snprintf((*sets)[*n].base, sizeof((*sets)[*n].base), "%s", base);
	(*sets)[*n].newest = 0;
	return &(*sets)[(*n)++];
}

/* Does a helper hold BASE.pid (flock) under directory DFD? */
static int
held(int dfd, const char *base)
{
	char name[320];
	int fd, busy;

	snprintf(name, sizeof(name), "%s.pid", base);
	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return 0;
	busy = flock(fd, LOCK_EX | LOCK_NB) == -1;
	close(fd);
	return busy;
}

int
ac_rdsweep(int dfd, const char *own, long days)
{
	DIR *d;
	struct dirent *e;
	struct set *sets = NULL;
	size_t n = 0, cap = 0;
	time_t cut = time(NULL) - (time_t)days * 86400;
	char base[300];
	int fd, removed = 0;

	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/* The newest file of each set: one touched lately keeps them all. */
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		struct set *s;

		if (base_of(e->d_name, base, sizeof(base)) == -1 ||
		    strcmp(base, own) == 0 ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    (s = find_set(&sets, &n, &cap, base)) == NULL)
			continue;
		if (st.st_mtime > s->newest)
			s->newest = st.st_mtime;
	}
	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		struct set *s = NULL;

		if (base_of(e->d_name, base, sizeof(base)) == -1 ||
		    strcmp(base, own) == 0)
			continue;
		for (size_t i = 0; i < n && s == NULL; i++)
			if (strcmp(sets[i].base, base) == 0)
				s = &sets[i];
		if (s == NULL || s->newest >= cut || held(dfd, base))
			continue;
		if (unlinkat(dfd, e->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	free(sets);
	if (removed > 0)
		ac_log("removed %d files of jobs untouched for %ld days", removed,
		    days);
	return removed;
}
