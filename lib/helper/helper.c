/* helper.c: the resident per-node helper's life: lock, socket, signals, journal, transport, and the one poll loop.
 *
 * One helper serves one job on one node. Clients (short-lived accelctl
 * processes) say HELLO, then ARRIVE at a collective and block on their socket
 * until the helper answers RELEASE, TIMEOUT or ABORTED: no client polls, and
 * the helper wakes only for a message, a deadline of a waiting client or its
 * own idle timeout. The connections are hconn.c's; the generation state
 * lives in coll.c and its journal; the cross-node transport is an ac_xport.
 */
#define _GNU_SOURCE
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "history.h"
#include "trace.h"
#include "duration.h"
#include "helper.h"
#include "journal.h"
#include "log.h"
#include "msg.h"
#include "proctitle.h"
#include "rundir.h"
#include "gone.h"
#include "lost.h"
#include "rdsweep.h"
#include "record.h"
#include "transport.h"
#include "twin.h"
#include "where.h"
#include "xport.h"

#define MAX_CLIENTS	1024		/* connections; fewer under a low fd limit */
#define FD_RESERVE	AC_HELPER_FD_RESERVE

/* What only the process needs: the connections never see it. */
static struct {
	struct ac_paths	 paths;
	int		 sfd;		/* signalfd: SIGTERM, SIGINT, SIGHUP */
	int		 pidfd;		/* the .pid file, flocked for our whole life */
	long		 idle_ms;
	ino_t		 sock_ino;
	struct ac_runid	 runid;		/* this node's place in the run (xport.h) */
	char		 runfile[1000];
} D;

/*
 * Who this run is (DESIGN-NOTES "Run identity"): a helper that replays a
 * journal is the same run as the helper it replaces, and keeps its nonce and
 * run number from the file beside the journal; a helper with an empty journal
 * is a new lineage: a new nonce, and the rendezvous gives it its run.
 */
static void
save_runid(const struct ac_runid *r)
{
	char tmp[1100];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", D.runfile);
	if ((f = fopen(tmp, "w")) == NULL)
		return;
	fprintf(f, "%016llx %ld\n", (unsigned long long)r->nonce, r->run);
	if (fclose(f) == 0)
		rename(tmp, D.runfile);
	else
		unlink(tmp);
}

static void
load_runid(int fresh)
{
	unsigned long long nonce = 0;
	long run = 0;
	FILE *f;

	snprintf(D.runfile, sizeof(D.runfile), "%s.run", D.paths.state);
	D.runid.save = save_runid;
	if (!fresh && (f = fopen(D.runfile, "r")) != NULL) {
		if (fscanf(f, "%llx %ld", &nonce, &run) != 2 || run < 0)
			nonce = 0, run = 0;
		fclose(f);
	}
	if (nonce == 0) {
		/* Random enough to tell lineages apart; not a secret. */
		FILE *u = fopen("/dev/urandom", "r");

		if (u == NULL || fread(&nonce, sizeof(nonce), 1, u) != 1)
			nonce = ((unsigned long long)getpid() << 32) ^
			    (unsigned long long)ac_now_ms();
		if (u != NULL)
			fclose(u);
		nonce |= 1;	/* never 0 */
		run = 0;
		unlink(D.runfile);
	}
	D.runid.nonce = nonce;
	D.runid.run = run;
}

/*
 * Start the job's cross-node transport (transport.c chooses it from
 * ACCELCTL_RENDEZVOUS and ACCELCTL_TRANSPORT), once the job's shape is known
 * and before any arrival is counted.
 */
void
ac_helper_shaped(struct ac_job *j)
{
	const char *why;
	char err[600], desc[800];
	struct ac_xstart s = {
		.url = getenv("ACCELCTL_RENDEZVOUS"),
		.password_file = getenv("ACCELCTL_REDIS_PASSWORD_FILE"),
		.runid = &D.runid,
	};

	if (ac_transport_parse(getenv("ACCELCTL_TRANSPORT"), &s.setting, &why) == -1) {
		ac_log("invalid ACCELCTL_TRANSPORT: %s; using auto", why);
		s.setting = AC_TSET_AUTO;
	}
	if (ac_transport_open(j, &s, err, sizeof(err)) == -1) {
		ac_log("%s", err);
		return;
	}
	if (j->x != NULL) {
		j->x->describe(desc, sizeof(desc));
		ac_log("node %ld of %ld: cross-node transport %s", j->node,
		    j->nnodes, desc);
	}
	ac_gone_shaped();
}

/* The transport's timer, the clients' deadlines and the idle exit; the next wake-up. */
static long
timers(void)
{
	long now = ac_now_ms(), next = -1;

	if (ac_hs.job.x != NULL) {
		long t = ac_hs.job.x->timer(now);
		if (t >= 0)
			next = now + t;
	}
	{
		long t = ac_gone_timer(now), w = ac_where_timer(now);
		if (t >= 0 && (next < 0 || now + t < next))
			next = now + t;
		if (w >= 0 && (next < 0 || now + w < next))
			next = now + w;
	}
	/* Only clients that wait keep the helper: a connection that holds
	 * half a frame or says nothing does not. */
	if (ac_hconn_timers(now, &next) == 0) {
		long idle_end;

		/* Across nodes, a rank's process still running is a job still
		 * running here: the beat goes on (gone.h), whatever the idle
		 * period; once they have all ended, it counts from then. */
		if (ac_hs.job.x != NULL && ac_hs.job.nnodes > 1 &&
		    ac_gone_live_roots())
			ac_hs.idle_since = now;
		idle_end = ac_hs.idle_since + D.idle_ms;
		if (now >= idle_end)
			ac_hs.stop = 1;
		else if (next < 0 || idle_end < next)
			next = idle_end;
	}
	/* A time already past is due now: poll's negative timeout would
	 * wait for ever, and every timer after it with it. */
	return next < 0 ? -1 : next > now ? next - now : 0;
}

static int
listen_on(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, 512) == -1) {
		snprintf(err, errlen, "cannot listen on %s: %s", path,
		    strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	if (stat(path, &st) == 0)
		D.sock_ino = st.st_ino;
	return fd;
}

/* Connect to the abstract name SA (LEN) and say who listens there: 0 with
 * *CR, or -1 (nobody: a listener closing, ECONNREFUSED). */
static int
peer_at(const struct sockaddr_un *sa, socklen_t len, struct ucred *cr)
{
	socklen_t cl = sizeof(*cr);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), ok;

	if (fd == -1)
		return -1;
	ok = connect(fd, (const struct sockaddr *)sa, len) == 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &cl) == 0;
	close(fd);
	return ok ? 0 : -1;
}

/* Does process PID see our mounts (our /tmp)? No when it is not visible
 * from our pid namespace (PID 0) or /proc cannot tell. */
static int
same_mounts(pid_t pid)
{
	char p[64];
	struct stat a, b;

	snprintf(p, sizeof(p), "/proc/%ld/ns/mnt", (long)pid);
	return pid > 0 && stat(p, &a) == 0 && stat("/proc/self/ns/mnt", &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Listen on the job's abstract name too (rundir.h), so that ranks of this
 * node whose runtime directory is not ours (a private /tmp each) meet us.
 * We hold the job's lock in our directory, so a helper of ours with the
 * name is either one that let the lock go and is exiting (it sees our
 * mounts, and its name goes a moment later: we try again for 2 s) or one
 * that serves from a directory we cannot see (other mounts: a private
 * /tmp): then we stand down (1) and the client that started us meets that
 * one by the name. A name another user holds (anyone may bind
 * one) or none to bind: we serve on the file socket alone (0), as before.
 */
static int
claim_abstract(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	long until = ac_now_ms() + 2000;
	struct ucred cr;

	if (D.paths.asock_len == 0 || D.paths.asock_len > sizeof(sa.sun_path))
		return 0;
	memcpy(sa.sun_path, D.paths.asock, D.paths.asock_len);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    D.paths.asock_len);
	for (;;) {
		struct timespec ts = { 0, 20 * 1000000L };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0), e;

		cr = (struct ucred){ .pid = 0, .uid = (uid_t)-1 };
		if (fd == -1)
			return 0;
		if (bind(fd, (struct sockaddr *)&sa, len) == 0 &&
		    listen(fd, 512) == 0) {
			ac_hs.afd = fd;
			return 0;
		}
		e = errno;
		close(fd);
		if (e != EADDRINUSE) {
			ac_log("cannot listen on the abstract socket @%s: %s: the "
			    "ranks of this node meet only through %s", sa.sun_path + 1,
			    strerror(e), D.paths.shown_sock);
			return 0;
		}
		if (peer_at(&sa, len, &cr) == 0 && cr.uid != getuid()) {
			ac_log("the abstract socket @%s is held by uid %ld, not "
			    "ours: the ranks of this node meet only through %s",
			    sa.sun_path + 1, (long)cr.uid, D.paths.shown_sock);
			return 0;
		} else if (cr.uid == getuid() && !same_mounts(cr.pid)) {
			ac_log("helper pid %ld serves job %s on this node from "
			    "a runtime directory this one does not see (a "
			    "private /tmp for each task?): standing down; the "
			    "ranks meet there, by @%s", (long)cr.pid,
			    ac_hs.job.id, sa.sun_path + 1);
			return 1;
		}
		if (ac_now_ms() >= until) {
			ac_log("the abstract socket @%s stayed taken: the ranks "
			    "of this node meet only through %s", sa.sun_path + 1,
			    D.paths.shown_sock);
			return 0;
		}
		nanosleep(&ts, NULL);
	}
}

/* Unlink our socket, unless a newer helper already put its own there. */
static void
unlink_own_socket(void)
{
	struct stat st;

	if (stat(D.paths.sock, &st) == 0 && st.st_ino == D.sock_ino)
		unlink(D.paths.sock);
}

/*
 * Take the job's .pid file with a flock held for the helper's whole life, and
 * write our pid into it: while we live no second helper of this job (a
 * "helper run", or a client that found the socket file deleted) can start
 * and append to our journal. The file is checked to be the one at its path
 * after locking, since an exiting helper unlinks it. Returns 0, or -1 with
 * the reason in ERR.
 */
static int
lock_for_life(char *err, size_t errlen)
{
	for (int tries = 0; tries < 10; tries++) {
		struct stat a, b;
		char pid[32] = "";
		int fd = open(D.paths.pid, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		int n;

		if (fd == -1) {
			snprintf(err, errlen, "cannot open %.300s: %s", D.paths.pid,
			    strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
			pid[n > 0 ? n : 0] = '\0';
			pid[strcspn(pid, "\n")] = '\0';
			snprintf(err, errlen, "another helper (pid %s) already serves "
			    "job %.100s: it holds %.300s", *pid ? pid : "?", ac_hs.job.id,
			    D.paths.pid);
			close(fd);
			return -1;
		}
		if (fstat(fd, &a) == 0 && stat(D.paths.pid, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
			if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, (size_t)n, 0) != n)
				ac_log("cannot write %s: %s", D.paths.pid,
				    strerror(errno));
			D.pidfd = fd;
			return 0;
		}
		close(fd);	/* unlinked by the helper that held it: again */
	}
	snprintf(err, errlen, "cannot lock %.300s", D.paths.pid);
	return -1;
}

/* Our pid file goes before the lock does (we hold it: it is ours). */
static void
remove_pid_file(void)
{
	if (D.pidfd < 0)
		return;
	unlink(D.paths.pid);
	close(D.pidfd);
	D.pidfd = -1;
}

/* Every descriptor but stdio and KEEP, however high (close_range(2)). */
static void
close_inherited(int keep)
{
	DIR *d;
	struct dirent *e;

	int ok = 1;

	if (keep > 3)
		ok = close_range(3, (unsigned)keep - 1, 0) == 0;
	if (ok && close_range(keep < 3 ? 3 : (unsigned)keep + 1, ~0U, 0) == 0)
		return;
	/* Kernels before 5.9: what /proc lists. */
	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd > 2 && fd != keep && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
}

/* Clients allowed at once: MAX_CLIENTS, fewer where the fd limit is low
 * (raised to its hard limit first). */
static long
client_limit(void)
{
	struct rlimit rl;
	long n = MAX_CLIENTS;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max &&
		    rl.rlim_cur < MAX_CLIENTS + FD_RESERVE) {
			rl.rlim_cur = rl.rlim_max < MAX_CLIENTS + FD_RESERVE ?
			    rl.rlim_max : MAX_CLIENTS + FD_RESERVE;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur != RLIM_INFINITY &&
		    (long)rl.rlim_cur - FD_RESERVE < n)
			n = (long)rl.rlim_cur - FD_RESERVE;
	}
	return n < 1 ? 1 : n;
}

static void
detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);
	int log = open(D.paths.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600);

	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	if (log >= 0) {
		dup2(log, STDERR_FILENO);
		close(log);
	}
}

static void
loop(void)
{
	struct pollfd *pfd = NULL;
	size_t cap = 0;

	while (!ac_hs.stop) {
		long timeout = timers();

		ac_journal_compact(&ac_hs.job, D.paths.state);
		size_t n = 0;
		struct ac_hconn *c, *next;

		if (ac_hs.stop)
			break;
		/* 3 fixed entries, the gone news and the transport's (Redis
		 * with Sentinel and NCCL: 6): room for all, whatever comes. */
		if (cap < (size_t)ac_hs.nconns + (size_t)ac_hs.job.lsize + 16) {
			cap = (size_t)ac_hs.nconns + (size_t)ac_hs.job.lsize + 64;
			free(pfd);
			if ((pfd = calloc(cap, sizeof(*pfd))) == NULL)
				break;
		}
		pfd[n++] = (struct pollfd){ .fd = ac_hs.accept_paused ? -1 : ac_hs.lfd,
		    .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = D.sfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = ac_hs.accept_paused ? -1 : ac_hs.afd,
		    .events = POLLIN };
		for (c = ac_hs.conns; c != NULL; c = c->next)
			pfd[n++] = (struct pollfd){ .fd = c->fd,
			    .events = ac_hconn_events(c) };
		/* The news of gone ranks, then the transport's descriptors;
		 * each says how many. */
		size_t gfirst = n;
		int ng = ac_gone_fds(pfd + n, (int)(cap - n));

		n += (size_t)ng;
		size_t xfirst = n;
		int nx = ac_hs.job.x != NULL ? ac_hs.job.x->fds(pfd + n, (int)(cap - n)) : 0;

		n += (size_t)nx;
		if (poll(pfd, n, timeout > INT32_MAX ? INT32_MAX : (int)timeout) == -1 &&
		    errno != EINTR)
			break;
		if (nx > 0)
			ac_hs.job.x->events(pfd + xfirst, nx);
		if (ng > 0)
			ac_gone_events(pfd + gfirst, ng);
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(D.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				/* A helper that found this node split asks
				 * us to look now (twin.c). */
				if (si.ssi_signo == SIGUSR2) {
					ac_twin_poke();
					continue;
				}
				ac_log("signal %u: exiting", si.ssi_signo);
				ac_hs.stop = 1;
			}
		}
		/* Clients accepted below are polled next round. */
		n = 3;
		for (c = ac_hs.conns; c != NULL; c = next) {
			next = c->next;
			(void)ac_hconn_ready(c, pfd[n++].revents);
		}
		if (pfd[0].revents & POLLIN)
			ac_hconn_accept(ac_hs.lfd);
		if (pfd[2].revents & POLLIN)
			ac_hconn_accept(ac_hs.afd);
	}
	free(pfd);
}

/* "accelctl helper JOB [node N]" in ps(1), not the argv of the client that forked us. */
static void
set_title(const struct ac_topo *t)
{
	char title[AC_KEY_MAX + 64];
	int n = snprintf(title, sizeof(title), "accelctl helper %s", t->job_id);

	if (t->v[AC_NNODES] > 1 && n > 0 && (size_t)n < sizeof(title))
		snprintf(title + n, sizeof(title) - (size_t)n, " node %ld",
		    t->v[AC_NODE]);
	ac_proctitle_set(title);
}

int
ac_helper_idle_ms(const char *v, long *ms, const char **why)
{
	*ms = 600000;
	if (v == NULL || *v == '\0')
		return 0;
	if (ac_parse_duration(v, ms, why) == -1)
		return -1;
	if (*ms == 0) {
		*why = "must be more than 0 (the helper would exit before it "
		    "served anyone)";
		return -1;
	}
	return 0;
}

int
ac_helper_main(const struct ac_topo *t, int ready_fd, int foreground)
{
	char err[512];
	const char *idle = getenv("ACCELCTL_HELPER_IDLE"), *why;
	sigset_t mask;
	int rc = AC_EXIT_FAILED;

	memset(&ac_hs, 0, sizeof(ac_hs));
	memset(&D, 0, sizeof(D));
	ac_hs.job.journal = -1;
	ac_hs.lfd = ac_hs.afd = D.sfd = ac_hs.spare = D.pidfd = -1;
	if (ac_helper_idle_ms(idle, &D.idle_ms, &why) == -1) {
		ac_warnx("invalid ACCELCTL_HELPER_IDLE='%.40s': %s", idle, why);
		return AC_EXIT_USAGE;
	}
	snprintf(ac_hs.job.id, sizeof(ac_hs.job.id), "%s", t->job_id);
	ac_hconn_bind(&ac_hs.job);
	ac_hs.job.shaped = ac_helper_shaped;
	if (ac_paths_init(&D.paths, t, 1, err, sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_USAGE;
	}
	/* SIGUSR2 is a helper's word to another (twin.c), never death:
	 * blocked before the name that makes this process one. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (!foreground) {
		detach_stdio();
		prctl(PR_SET_NAME, "accelctl-helper");
		set_title(t);
		/* Close what the client had open: a helper holding the pipe of
		 * "$(accelctl barrier x)" would make that shell wait for ever. */
		close_inherited(ready_fd);
		/* That closed the runtime directory too: open it again. */
		ac_paths_close(&D.paths);
		if (ac_paths_init(&D.paths, t, 1, err, sizeof(err)) == -1) {
			ac_log("%s", err);
			return AC_EXIT_USAGE;
		}
	}
	if (D.paths.note[0] != '\0')
		ac_log("runtime directory %s: %s", D.paths.dir,
		    D.paths.note);
	/* Not the job's working directory: it may be a mount to unmount. The
	 * runtime directory's paths are absolute, or through its descriptor
	 * (rundir.c). */
	ac_trace_init();
	if (chdir("/") == -1)
		ac_log("chdir /: %s", strerror(errno));
	ac_hs.max_clients = client_limit();
	ac_hs.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	/* A file size limit is a journal write that fails (logged), not death. */
	signal(SIGXFSZ, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	D.sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	{
		struct stat st;

		load_runid(stat(D.paths.state, &st) == -1 || st.st_size == 0);
	}
	/* Shape the job now when we know it (a client started us). */
	if (t->v[AC_WORLD] > 1 && t->v[AC_LSIZE] > 0 &&
	    ac_job_shape(&ac_hs.job, t->v[AC_LSIZE], t->v[AC_WORLD], t->v[AC_NODE],
	    t->v[AC_NNODES]) == -1)
		goto out;
	if (lock_for_life(err, sizeof(err)) == -1) {
		ac_log("%s", err);
		if (foreground)
			ac_warnx("%s", err);
		goto out;
	}
	/* Before anything of the job is touched: another helper may serve
	 * this node already, from a runtime directory we cannot see. */
	if (claim_abstract() == 1) {
		/* Run by hand, as "helper run": a failure, said (the log
		 * says the same for a helper a client started). */
		if (foreground) {
			ac_warnx("a helper of this job serves this node from a "
			    "runtime directory this one does not see (by @%s): "
			    "this one stands down", D.paths.asock + 1);
			rc = AC_EXIT_FAILED;
		} else
			rc = 0;
		goto out;
	}
	/* We hold the lock: a socket file left there is a dead helper's
	 * (kill -9), and bind would fail on it. */
	if (unlink(D.paths.sock) == 0)
		ac_log("removed the stale socket of a helper that died");
	/* Not for a job run by hand: its runs in two containers are two jobs. */
	ac_twin_init(t->job_id, t->v[AC_NODE] >= 0 ? t->v[AC_NODE] : 0,
	    D.paths.dir, D.paths.dfd, t->job_id_from == NULL ||
	    strcmp(t->job_id_from, "default") != 0);
	ac_hs.job.rec = &ac_record;	/* the replay and every change after it */
	if (ac_journal_open(&ac_hs.job, D.paths.state) == -1) {
		ac_log("cannot open journal %s: %s", D.paths.state, strerror(errno));
		goto out;
	}
	if (ac_hs.job.journal_size == 0 && ac_hs.job.lsize > 0)
		ac_journal_shape(&ac_hs.job);
	ac_gone_init(D.paths.gone_dir, D.paths.gone_prefix);
	{
		/* Our own files' name: the news prefix less ".gone.". */
		char own[320];
		size_t n = strlen(D.paths.gone_prefix);

		snprintf(own, sizeof(own), "%.*s", (int)(n > 6 ? n - 6 : 0),
		    D.paths.gone_prefix);
		(void)ac_rdsweep(D.paths.dfd, own, AC_SWEEP_DAYS);
	}
	if (ac_hs.job.lsize > 0)
		ac_gone_shaped();
	if ((ac_hs.lfd = listen_on(D.paths.sock, err, sizeof(err))) == -1) {
		ac_log("%s", err);
		if (foreground)
			ac_warnx("%s", err);
		goto out;
	}
	ac_log("serving job %s on %s%s%s (idle exit after %lds, at most %ld "
	    "clients)", ac_hs.job.id, D.paths.shown_sock, ac_hs.afd >= 0 ?
	    " and @" : "", ac_hs.afd >= 0 ? D.paths.asock + 1 : "",
	    D.idle_ms / 1000, ac_hs.max_clients);
	ac_hs.idle_since = ac_now_ms();
	if (ready_fd >= 0) {
		(void)!write(ready_fd, "r", 1);
		close(ready_fd);
		ready_fd = -1;
	}
	loop();
	/* A hand-run job (job id "default") has no identity that ends: its abort
	 * ends with this helper (idle exit, "helper stop"), so that the next
	 * run is not aborted too. Its journal goes with it (the aborted run
	 * left uneven counts anyway). A helper that is killed is replaced by
	 * one that replays the abort: that is still the same run. */
	if (ac_hs.job.aborted != NULL && t->job_id_from != NULL &&
	    strcmp(t->job_id_from, "default") == 0) {
		ac_log("the abort of this hand-run job ends with this "
		    "helper: removing its journal");
		unlink(D.paths.state);
	}
	unlink_own_socket();
	/* The abstract name before the lock: a helper that takes the lock
	 * next must find the name free (claim_abstract). */
	if (ac_hs.afd >= 0)
		close(ac_hs.afd);
	ac_hs.afd = -1;
	remove_pid_file();
	ac_log("exiting");
	rc = 0;
out:
	while (ac_hs.conns != NULL)
		ac_hconn_drop(ac_hs.conns);
	if (ac_hs.job.x != NULL)
		ac_hs.job.x->stop();
	if (ac_hs.lfd >= 0)
		close(ac_hs.lfd);
	if (ac_hs.afd >= 0)	/* before the lock goes, at exit (claim_abstract) */
		close(ac_hs.afd);
	if (D.sfd >= 0)
		close(D.sfd);
	if (ac_hs.job.journal >= 0)
		close(ac_hs.job.journal);
	if (ac_hs.spare >= 0)
		close(ac_hs.spare);
	remove_pid_file();
	ac_gone_stop();
	ac_where_stop();
	ac_twin_stop();
	ac_paths_close(&D.paths);
	ac_lost_free(&ac_hs.job);
	ac_job_free(&ac_hs.job);
	ac_history_free();
	ac_trace_close();
	free(ac_hs.rproc);
	return rc;
}
