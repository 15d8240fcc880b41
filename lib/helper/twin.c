/* twin.c: a second helper of this job's node that its ranks cannot reach (another network namespace and another /tmp), found in /proc, so that the waits fail at once, saying what to set, instead of at their deadline. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "twin.h"

/*
 * Ranks of one node meet by the runtime directory's socket or, where each
 * has its own /tmp, by the abstract name (rundir.c). A container per rank
 * with its own network namespace as well (podman or bubblewrap without the
 * host's network, `unshare -n`) shares neither: each rank there starts a
 * helper of its own, and every one of them waits for ranks that "never
 * connected" until the deadline. What those helpers still share, in every
 * runtime that keeps the host's pid namespace (enroot, Apptainer,
 * bubblewrap, `podman --pid host`), is /proc: a helper is a process of
 * ours named "accelctl-helper" (helper.c sets its comm) that holds this
 * job's pid file (the file's name is the job's and the node's, whatever
 * its directory) open and lives in another network namespace. Both sides
 * find each other. A runtime with its own pid namespace hides the helpers
 * from each other: documented (DESIGN-NOTES "One node, one helper").
 *
 * The scan reads /proc only while a wait misses a rank that never
 * connected, TWIN_AFTER_MS into it, then every TWIN_EVERY_MS: a rank that
 * is merely late costs a few stat(2)s per process every few seconds.
 */
#define TWIN_AFTER_MS	5000
#define TWIN_EVERY_MS	4000

static struct {
	char	 pidname[320];	/* our pid file's base name; "": off */
	long	 next_scan;	/* ms; 0: not scheduled */
	char	*found;		/* the failure's text, while the twin lives */
} T;

void
ac_twin_init(const char *pidfile, int enabled)
{
	const char *slash = strrchr(pidfile, '/');

	T.pidname[0] = '\0';
	if (enabled)
		snprintf(T.pidname, sizeof(T.pidname), "%s",
		    slash != NULL ? slash + 1 : pidfile);
}

void
ac_twin_stop(void)
{
	free(T.found);
	T.found = NULL;
}

/* The inode of /proc/PID/ns/NS ("self" for PID), or 0. */
static unsigned long
ns_of(const char *pid, const char *ns)
{
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, ns);
	return stat(path, &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* 1 when process PID holds a file named T.pidname open. */
static int
holds_pidfile(const char *pid)
{
	char path[300], link[1024];
	struct dirent *e;
	DIR *d;
	int yes = 0;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while (!yes && (e = readdir(d)) != NULL) {
		char fdpath[600];
		const char *base;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, e->d_name);
		if ((n = readlink(fdpath, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		base = strrchr(link, '/');
		yes = base != NULL && strcmp(base + 1, T.pidname) == 0;
	}
	closedir(d);
	return yes;
}

/* A helper of this job's node in another network namespace: its pid, or 0. */
static long
scan(void)
{
	unsigned long mynet = ns_of("self", "net");
	uid_t uid = getuid();
	pid_t self = getpid();
	struct dirent *e;
	long found = 0;
	DIR *d;

	if (mynet == 0 || (d = opendir("/proc")) == NULL)
		return 0;
	while (found == 0 && (e = readdir(d)) != NULL) {
		char path[300], comm[32];
		struct stat st;
		unsigned long net;
		long pid;
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid = strtol(e->d_name, NULL, 10);
		snprintf(path, sizeof(path), "/proc/%s", e->d_name);
		if (pid == (long)self || stat(path, &st) == -1 || st.st_uid != uid)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) == NULL)
			comm[0] = '\0';
		fclose(f);
		if (strcmp(comm, "accelctl-helper\n") != 0)
			continue;
		net = ns_of(e->d_name, "net");
		if (net != 0 && net != mynet && holds_pidfile(e->d_name))
			found = pid;
	}
	closedir(d);
	return found;
}

const char *
ac_twin_timer(long now, long waited_since, long *next)
{
	long pid, due;

	if (T.pidname[0] == '\0')
		return NULL;
	if (waited_since < 0) {
		T.next_scan = 0;
		return NULL;
	}
	/* A twin found before is looked for again at once: a wait it
	 * splits fails without waiting. */
	due = T.next_scan > 0 ? T.next_scan : T.found != NULL ? waited_since :
	    waited_since + TWIN_AFTER_MS;
	if (now < due) {
		if (*next < 0 || due < *next)
			*next = due;
		return T.found;
	}
	T.next_scan = now + TWIN_EVERY_MS;
	if (*next < 0 || T.next_scan < *next)
		*next = T.next_scan;
	pid = scan();
	free(T.found);
	T.found = NULL;
	if (pid != 0) {
		char host[256], text[900];

		if (gethostname(host, sizeof(host)) == -1)
			snprintf(host, sizeof(host), "this host");
		host[sizeof(host) - 1] = '\0';
		snprintf(text, sizeof(text), "another helper serves this job's "
		    "node on %s: pid %ld, in another network namespace, with "
		    "its own runtime directory: its ranks and these cannot meet "
		    "(a container per rank, without the host's network and a "
		    "shared /tmp). Give the ranks of a node one network "
		    "namespace (podman --network host), or set "
		    "ACCELCTL_RUNTIME_DIR to a directory they all see", host,
		    pid);
		ac_log("%s", text);
		T.found = strdup(text);
	}
	return T.found;
}
