/* twin.c: ranks of this node that live where this helper cannot be reached (another network namespace and another /tmp), found in /proc, so that the waits fail at once, saying what to set, instead of at their deadline. */
#include <sys/stat.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hstate.h"
#include "log.h"
#include "rankproc.h"
#include "twin.h"

/*
 * Ranks of one node meet by the runtime directory's socket or, where each
 * has its own /tmp, by the abstract name (rundir.c). A container per rank
 * with its own network namespace as well (podman or bubblewrap without the
 * host's network, `unshare -n` with a private /tmp) shares neither: each
 * rank starts a helper of its own, and every one of them waited for ranks
 * that "never connected" until the deadline. What such containers still
 * share, in every runtime that keeps the host's pid namespace (enroot,
 * Apptainer, bubblewrap, `podman --pid host`), is /proc: the missing rank
 * itself is there, a process of our user whose environment says it is
 * that local rank of this job's node, in another network namespace, and
 * one that does not see our runtime directory (its /proc/PID/root has
 * another file there, or none), with a helper of this node beside it in
 * that namespace. The two together are the evidence: a helper alone may be
 * an earlier launch's, idle, or a run kept apart on purpose by another
 * ACCELCTL_RUNTIME_DIR (first review); a rank's process alone may be a
 * step it runs in a sandbox of its own, without network (second review).
 * Found, the waits fail after a grace in which the other side's helpers,
 * told by SIGUSR2, look at once and fail theirs: both sides fail. Found
 * stays found until that rank connects here; across nodes the other nodes
 * are told as by abort (hconn.c). A runtime with its own pid namespace per
 * rank hides the ranks: documented (DESIGN-NOTES "One node, one helper").
 *
 * The scan reads /proc only while a wait lasts and a local rank never
 * connected: TWIN_AFTER_MS into the wait, then after TWIN_EVERY_MS,
 * doubling up to TWIN_MAX_MS: a rank that is merely late (minutes of
 * preprocessing) costs two stat(2)s per process of ours now and then, and
 * an environment read only for processes in another network namespace.
 */
#define TWIN_AFTER_MS	5000
#define TWIN_EVERY_MS	4000
#define TWIN_MAX_MS	60000
/* Found, the waits here fail this much later: the other side's helper,
 * told (SIGUSR2), reads /proc while this side's ranks still live. */
#define TWIN_GRACE_MS	1500

static struct {
	const char	*job_id;
	long		 node;
	char		 dir[512];	/* the runtime directory, by name */
	dev_t		 dev;		/* ... and as a file */
	ino_t		 ino;
	char		 rtenv[512];	/* our ACCELCTL_RUNTIME_DIR, "" unset */
	int		 on;
	long		 next_scan;	/* ms; 0: not scheduled */
	long		 every;		/* ms until the scan after the next */
	int		 poked;		/* told to look now */
	long		 fail_at;	/* ms: found; the waits fail from then */
	char		*found;		/* the failure's text (for good) */
	long		 lrank;		/* ... of that local rank */
} T;

void
ac_twin_poke(void)
{
	T.poked = 1;
}

void
ac_twin_init(const char *job_id, long node, const char *dir, int dfd,
    int enabled)
{
	struct stat st;
	const char *rt = getenv("ACCELCTL_RUNTIME_DIR");

	memset(&T, 0, sizeof(T));
	T.job_id = job_id;
	T.node = node;
	snprintf(T.dir, sizeof(T.dir), "%s", dir);
	snprintf(T.rtenv, sizeof(T.rtenv), "%s", rt != NULL ? rt : "");
	T.on = enabled && dir[0] == '/' && fstat(dfd, &st) == 0;
	if (T.on) {
		T.dev = st.st_dev;
		T.ino = st.st_ino;
	}
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

/* Is process PID a helper ("accelctl helper ...", whatever its comm)? */
static int
is_helper(const char *pid)
{
	char path[300], cmd[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	if ((f = fopen(path, "re")) == NULL)
		return 1;	/* gone: nothing to name */
	n = fread(cmd, 1, sizeof(cmd) - 1, f);
	fclose(f);
	cmd[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	return strstr(cmd, "accelctl helper") != NULL;
}

/* Does process PID see our runtime directory (the same file)? */
static int
sees_dir(const char *pid)
{
	char path[900];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/root%s", pid, T.dir);
	return stat(path, &st) == 0 && st.st_dev == T.dev && st.st_ino == T.ino;
}

/* E's pid, when it is a process of UID other than SELF, else 0. */
static long
ours(const struct dirent *e, uid_t uid, pid_t self)
{
	char path[300];
	struct stat st;
	long pid;

	if (e->d_name[0] < '1' || e->d_name[0] > '9')
		return 0;
	pid = strtol(e->d_name, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%s", e->d_name);
	return pid != (long)self && stat(path, &st) == 0 && st.st_uid == uid ?
	    pid : 0;
}

/* Is process PID (named NAME in /proc) of our job's node, with our
 * ACCELCTL_RUNTIME_DIR? Its local rank into *L. */
static int
of_our_node(long pid, long *l)
{
	char rt[512];

	return ac_rankproc_local_rank(pid, T.job_id, T.node, l, rt,
	    sizeof(rt)) == 0 && strcmp(rt, T.rtenv) == 0;
}

/* Is process NAME a helper that blocks SIGUSR2 (its comm, set with the
 * signals blocked) and not the other commands of "accelctl helper"? */
static int
is_serving_helper(const char *name)
{
	char path[300], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/comm", name);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	return strcmp(comm, "accelctl-helper\n") == 0 && is_helper(name);
}

/*
 * The helpers of our job's node in network namespace NET: their number,
 * and each sent SIGUSR2 when TELL (they look now, and find our ranks
 * before these leave). A namespace with no such helper is no split: a
 * rank's own sandbox (a child run without network, with the rank's
 * environment) is not another side that waits.
 */
static long
helpers_in(unsigned long net, int tell)
{
	uid_t uid = getuid();
	struct dirent *e;
	long n = 0, pid, l;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if ((pid = ours(e, uid, getpid())) == 0 ||
		    ns_of(e->d_name, "net") != net || !is_serving_helper(e->d_name) ||
		    !of_our_node(pid, &l))
			continue;
		n++;
		if (tell)
			(void)kill((pid_t)pid, SIGUSR2);
	}
	closedir(d);
	return n;
}

/* A local rank of ours that never connected, alive where it cannot reach
 * us, beside a helper of our node: its pid, local rank and network
 * namespace, or 0. */
static long
scan(long *lrank_out, unsigned long *net_out)
{
	struct ac_job *j = &ac_hs.job;
	unsigned long mynet = ns_of("self", "net");
	uid_t uid = getuid();
	struct dirent *e;
	long found = 0;
	DIR *d;

	if (mynet == 0 || j->rank_of == NULL || (d = opendir("/proc")) == NULL)
		return 0;
	while (found == 0 && (e = readdir(d)) != NULL) {
		unsigned long net;
		long pid, l;

		if ((pid = ours(e, uid, getpid())) == 0)
			continue;
		net = ns_of(e->d_name, "net");
		if (net == 0 || net == mynet || is_helper(e->d_name) ||
		    sees_dir(e->d_name))
			continue;
		if (of_our_node(pid, &l) && l >= 0 && l < j->lsize &&
		    j->rank_of[l] < 0 && helpers_in(net, 0) > 0) {
			found = pid;
			*lrank_out = l;
			*net_out = net;
		}
	}
	closedir(d);
	return found;
}

const char *
ac_twin_timer(long now, long waited_since, long *next)
{
	long pid, l = -1, due;
	unsigned long net = 0;

	if (!T.on)
		return NULL;
	if (waited_since < 0) {
		T.next_scan = 0;
		T.every = 0;
		return NULL;
	}
	/* Found once, the node is split until that rank connects here (it
	 * may have failed and left since: no evidence then, but no way
	 * either): every later wait fails at once. */
	/* The rank found connected since (it was not split after all):
	 * forgotten. */
	if (T.found != NULL && T.lrank >= 0 && T.lrank < ac_hs.job.lsize &&
	    ac_hs.job.rank_of != NULL && ac_hs.job.rank_of[T.lrank] >= 0) {
		free(T.found);
		T.found = NULL;
	}
	if (T.found != NULL) {
		if (now >= T.fail_at)
			return T.found;
		if (*next < 0 || T.fail_at < *next)
			*next = T.fail_at;
		return NULL;
	}
	due = T.poked ? now : T.next_scan > 0 ? T.next_scan :
	    waited_since + TWIN_AFTER_MS;
	T.poked = 0;
	if (now < due) {
		if (*next < 0 || due < *next)
			*next = due;
		return T.found;
	}
	T.every = T.every == 0 ? TWIN_EVERY_MS : T.every * 2 > TWIN_MAX_MS ?
	    TWIN_MAX_MS : T.every * 2;
	T.next_scan = now + T.every;
	if (*next < 0 || T.next_scan < *next)
		*next = T.next_scan;
	pid = scan(&l, &net);
	if (pid != 0) {
		char host[256], comm[64] = "?", path[64], text[1400];
		FILE *f;

		if (gethostname(host, sizeof(host)) == -1)
			snprintf(host, sizeof(host), "this host");
		host[sizeof(host) - 1] = '\0';
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		if ((f = fopen(path, "re")) != NULL) {
			if (fgets(comm, sizeof(comm), f) != NULL)
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(text, sizeof(text), "local rank %ld of this node runs "
		    "on %.100s as pid %ld (%s) in another network namespace, without "
		    "this runtime directory (%.300s): its helper and this one cannot "
		    "meet (a container per rank, without the host's network and "
		    "a shared /tmp). Give the ranks of a node one network "
		    "namespace (podman --network host), or set "
		    "ACCELCTL_RUNTIME_DIR to a directory they all see", l, host,
		    pid, comm, T.dir);
		ac_log("%s", text);
		T.found = strdup(text);
		T.lrank = l;
		T.fail_at = now + TWIN_GRACE_MS;
		if (*next < 0 || T.fail_at < *next)
			*next = T.fail_at;
		(void)helpers_in(net, 1);
	}
	return NULL;
}
