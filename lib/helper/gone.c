/* gone.c: how a node's helper learns that one of its ranks is gone for good: its process watched, and the news others leave.
 *
 * Three sources, one outcome (lost.c's list, and exit 4 for the waits that
 * need the rank):
 *   - the rank's process: the first call of each local rank names its root
 *     (rankproc.c: the eldest ancestor the launcher started as that rank,
 *     its shell or script), and a pidfd of it wakes the loop when it
 *     exits, with no polling. A root that ends while a call of its rank
 *     still waits (a barrier left running in the background) is not yet
 *     gone: the rank is, once its last connection closes too.
 *   - a file per rank, JOB.gone.RANK in the runtime directory (inotify):
 *     launch writes one when a rank exits ("exited with 7"; it knows the
 *     status, where a pidfd does not, so the roots that launch started are
 *     left to it), and a rank the helper turned away writes its own.
 *   - another node's helper, through the rendezvous (rdvproto.c).
 * What this node learns first-hand it passes to the rendezvous (xport.h's
 * lost), after everything it posted before: every node reads the store in
 * order, so a barrier the gone rank passed is over everywhere before the
 * news arrives (lost.c).
 */
#define _GNU_SOURCE
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "gone.h"
#include "hstate.h"
#include "log.h"
#include "lost.h"
#include "rankproc.h"
#include "where.h"
#include "xport.h"

/* Without pidfds (Linux before 5.3) the roots are looked at this often, and
 * only while a rank waits. */
#define POLL_ROOTS_MS	1000

struct root {
	struct ac_rankroot r;
	int		known;		/* r names the rank's root */
	int		fd;		/* its pidfd, -1 none */
	int		dead;		/* exited; declared once no call is left */
	int64_t		died_us;
};

static struct {
	char		 dir[600];	/* the runtime directory, through its fd */
	char		 prefix[320];	/* "JOB.gone.": then the rank */
	int		 ifd;		/* inotify, -1 none */
	struct root	*roots;		/* [lsize] */
	long		 nroots;
	int		 no_pidfd;	/* the kernel has none: POLL_ROOTS_MS */
	long		 next_poll;
	long		 launch_pid;	/* ACCELCTL_LAUNCH_PID: launch tells its ranks' ends */
} G = { .ifd = -1 };

static int64_t
wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* RANK is gone: remember it, end the local waits that need it, tell the
 * other nodes. */
static void
declare(int64_t rank, long lrank, int64_t died_us, const char *text)
{
	struct ac_job *j = &ac_hs.job;
	int full = 0;
	char *frontier = lrank >= 0 ? ac_lost_frontier(j, lrank, &full) : NULL;
	char w[AC_KEY_MAX + 48], why[sizeof(w) + 400];
	int news;

	/* A rank that timed out and then exited is gone for a reason of the
	 * job's own (ranks at different names, a branch taken on one rank):
	 * the others' "lost" says where it gave up, not a machine's fault. */
	if (ac_where_left(lrank, w, sizeof(w))) {
		snprintf(why, sizeof(why), "%.300s, after its wait at %s timed "
		    "out", text, w);
		text = why;
	}
	news = ac_lost_add(j, rank, j->node, lrank, died_us, text, frontier,
	    full);

	free(frontier);
	if (news != 1)
		return;
	ac_log("%s", text);
	if (j->gone != NULL)
		j->gone(j);
	if (j->x != NULL && j->x->lost != NULL)
		j->x->lost(j, ac_lost_find(j, rank));
}

static struct root *
root_of(long lrank)
{
	struct ac_job *j = &ac_hs.job;

	if (lrank < 0 || j->lsize <= 0 || lrank >= j->lsize)
		return NULL;
	if (G.roots == NULL) {
		if ((G.roots = calloc((size_t)j->lsize, sizeof(*G.roots))) == NULL)
			return NULL;
		G.nroots = j->lsize;
		for (long i = 0; i < G.nroots; i++)
			G.roots[i].fd = -1;
	}
	return lrank < G.nroots ? &G.roots[lrank] : NULL;
}

/* Is a call of local rank LRANK still connected (it may be waiting)? */
static int
calls_left(long lrank)
{
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next)
		if (c->hello && c->lrank == lrank && c->closing != 2)
			return 1;
	return 0;
}

/* Rank LRANK's root ended: gone now, or once its last call closes. */
static void
maybe_declare(long lrank)
{
	struct root *rt = root_of(lrank);
	char text[256];

	if (rt == NULL || !rt->dead || calls_left(lrank))
		return;
	rt->dead = 0;
	rt->known = 0;
	snprintf(text, sizeof(text), "rank %lld (node %ld) is gone: its "
	    "process %s (pid %ld) exited", ac_hs.job.rank_of != NULL ?
	    (long long)ac_hs.job.rank_of[lrank] : (long long)lrank,
	    ac_hs.job.node, rt->r.comm[0] ? rt->r.comm : "?", rt->r.pid);
	declare(ac_hs.job.rank_of != NULL ? ac_hs.job.rank_of[lrank] : lrank,
	    lrank, rt->died_us, text);
}

static void
root_ended(struct root *rt)
{
	if (rt->fd >= 0)
		close(rt->fd);
	rt->fd = -1;
	rt->dead = 1;
	rt->died_us = wall_us();
	maybe_declare(rt - G.roots);
}

/* When process PID started (wall µs), or 0. */
static int64_t
started_us(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %*c %*d %*d %*d "
	    "%*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
	    &start) != 1)
		return 0;
	return ac_rankproc_start_us(start);
}

void
ac_gone_arrived(struct ac_hconn *c)
{
	struct root *rt = root_of(c->lrank);
	struct ac_rankroot r;

	/* Under launch every rank starts once: no earlier attempt to tell
	 * apart (and a rank started late, of hundreds, is not one). Else the
	 * rank's process, or where it cannot be told (a driver that set the
	 * ranks' variables after its exec) the call itself: a rank gone
	 * before it began is of an earlier attempt for it (lost.h). */
	c->root_us = G.launch_pid > 0 ? 0 : c->pid > 0 ? started_us(c->pid) : 0;
	if (rt == NULL)
		return;
	/* The root known and running serves every call of the rank: one walk
	 * of /proc per rank and attempt, not per call. */
	if (!rt->known || rt->dead) {
		if (c->pid <= 0 || ac_rankproc_root(c->pid, ac_hs.job.id,
		    (long long)c->rank, &r) == -1)
			return;
		if (rt->fd >= 0)
			close(rt->fd);
		rt->fd = -1;
		rt->r = r;
		rt->known = 1;
		rt->dead = 0;
		/* launch tells its ranks' ends itself, with their status. */
		if (G.launch_pid <= 0 || r.ppid != G.launch_pid) {
			if (!G.no_pidfd) {
				rt->fd = (int)syscall(SYS_pidfd_open, (pid_t)r.pid, 0);
				if (rt->fd == -1 && errno == ENOSYS)
					G.no_pidfd = 1;
				if (rt->fd >= 0)
					(void)fcntl(rt->fd, F_SETFD, FD_CLOEXEC);
			}
			/* Opened after the walk: still the same process? */
			if (!ac_rankproc_root_alive(&rt->r)) {
				root_ended(rt);
				return;
			}
		}
	}
	if (G.launch_pid <= 0)
		c->root_us = rt->r.start_us;
}

void
ac_gone_closed(long lrank)
{
	maybe_declare(lrank);
}

/* "DIED_US LRANK\nTEXT" of the news JOB.gone.RANK (NAME), if it is one. */
static void
read_news(const char *name)
{
	char path[1200], buf[512], *nl;
	long long died, lrank;
	long long rank;
	char *end;
	ssize_t n;
	int fd;
	size_t pl = strlen(G.prefix);

	if (pl == 0 || strncmp(name, G.prefix, pl) != 0)
		return;
	rank = strtoll(name + pl, &end, 10);
	if (*end != '\0' || end == name + pl || rank < 0 ||
	    rank >= ac_hs.job.world)
		return;
	snprintf(path, sizeof(path), "%s/%s", G.dir, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((nl = strchr(buf, '\n')) == NULL ||
	    sscanf(buf, "%lld %lld", &died, &lrank) != 2)
		return;
	nl++;
	nl[strcspn(nl, "\n")] = '\0';
	declare(rank, lrank >= 0 && lrank < ac_hs.job.lsize ? (long)lrank : -1,
	    died, nl);
}

static void
scan(void)
{
	DIR *d = opendir(G.dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		read_news(e->d_name);
	closedir(d);
}

void
ac_gone_init(const char *dir, const char *prefix)
{
	const char *lp = getenv("ACCELCTL_LAUNCH_PID");

	snprintf(G.dir, sizeof(G.dir), "%s", dir);
	snprintf(G.prefix, sizeof(G.prefix), "%s", prefix);
	G.launch_pid = lp != NULL ? atol(lp) : 0;
	/* The news is renamed into place, whole: IN_MOVED_TO alone, not the
	 * journals' writes that share the directory. */
	if ((G.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1 ||
	    inotify_add_watch(G.ifd, G.dir, IN_MOVED_TO) == -1) {
		ac_log("inotify on %s: %s (news of gone ranks is read when "
		    "a rank arrives)", G.dir, strerror(errno));
		if (G.ifd >= 0)
			close(G.ifd);
		G.ifd = -1;
	}
}

void
ac_gone_shaped(void)
{
	/* News left before this helper began (its rank died before any call
	 * of the node started it): the job's shape says which ranks exist. */
	scan();
}

int
ac_gone_fds(struct pollfd *pfd, int room)
{
	int n = 0;

	if (G.ifd >= 0 && n < room)
		pfd[n++] = (struct pollfd){ .fd = G.ifd, .events = POLLIN };
	for (long i = 0; i < G.nroots && n < room; i++)
		if (G.roots[i].fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = G.roots[i].fd,
			    .events = POLLIN };
	return n;
}

void
ac_gone_events(const struct pollfd *pfd, int n)
{
	for (int k = 0; k < n; k++) {
		if (pfd[k].revents == 0)
			continue;
		if (pfd[k].fd == G.ifd) {
			char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
			ssize_t len;

			while ((len = read(G.ifd, buf, sizeof(buf))) > 0)
				for (char *p = buf; p < buf + len;) {
					struct inotify_event *ev = (struct inotify_event *)p;

					if (ev->len > 0)
						read_news(ev->name);
					p += sizeof(*ev) + ev->len;
				}
			continue;
		}
		for (long i = 0; i < G.nroots; i++)
			if (G.roots[i].fd == pfd[k].fd) {
				root_ended(&G.roots[i]);
				break;
			}
	}
}

long
ac_gone_timer(long now)
{
	if (!G.no_pidfd)
		return -1;
	if (now >= G.next_poll) {
		for (long i = 0; i < G.nroots; i++)
			if (G.roots[i].known && !G.roots[i].dead &&
			    (G.launch_pid <= 0 || G.roots[i].r.ppid != G.launch_pid) &&
			    !ac_rankproc_root_alive(&G.roots[i].r))
				root_ended(&G.roots[i]);
		G.next_poll = now + POLL_ROOTS_MS;
	}
	return G.next_poll - now;
}

void
ac_gone_stop(void)
{
	for (long i = 0; i < G.nroots; i++)
		if (G.roots[i].fd >= 0)
			close(G.roots[i].fd);
	free(G.roots);
	G.roots = NULL;
	G.nroots = 0;
	if (G.ifd >= 0)
		close(G.ifd);
	G.ifd = -1;
}

int
ac_gone_live_roots(void)
{
	for (long i = 0; G.roots != NULL && i < G.nroots; i++) {
		struct root *rt = &G.roots[i];

		/* A root without a pidfd (launch's, which launch tells the end
		 * of; any, on a kernel without pidfds) is looked at in /proc
		 * here, while the helper has nothing else to do. */
		if (rt->known && !rt->dead && (rt->fd >= 0 ||
		    ac_rankproc_root_alive(&rt->r)))
			return 1;
	}
	return 0;
}
