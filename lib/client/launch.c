/* launch.c: "accelctl launch": K processes on each of M simulated nodes, supervised.
 *
 * One event loop over a signalfd and, with --tag, the children's output pipes.
 * Each rank runs in a session of its own, as torchrun's workers do, so that
 * a signal reaches the whole of a rank (its shell and what the shell
 * started) through its process group, and so that a rank that reads the
 * terminal (rank 0's stdin) is not stopped by it. The terminal's signals
 * (^C, ^\, ^Z) therefore reach launch alone, and every signal launch gets,
 * from the terminal or from kill(2) (a wrapper, a batch system), is sent
 * on to every rank's group. Output is tagged a whole line at a time, so
 * lines of ranks never interleave. At the end each failed rank is named
 * with what ended it, as srun does.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "launch.h"
#include "msg.h"
#include "run.h"
#include "rundir.h"
#include "spawn.h"

/* Time the others get after SIGTERM with --kill-on-bad-exit, as Slurm's KillWait. */
#define KILL_WAIT_MS 5000
/* After a terminating signal sent on (^C, a batch system's SIGTERM), the
 * ranks have this long to end (a trap that saves a checkpoint, say), then
 * SIGKILL; a second such signal sends it at once, as Open MPI's mpirun
 * does. Slurm's KillWait is 30 s too. */
#define SIGNAL_WAIT_MS 30000
/* Why launch stopped the ranks itself (struct child's killed; signals
 * are 1-64). */
#define STOP_BAD_EXIT	1000	/* --kill-on-bad-exit */
#define STOP_SIGNAL_LATE 1001	/* SIGNAL_WAIT_MS after a signal */
#define STOP_SIGNAL_AGAIN 1002	/* a second terminating signal */
/* A line longer than this is cut: a runaway line must not eat memory. */
#define LINE_MAX_BYTES 65536

struct stream {
	int	 fd;		/* read end, -1 once closed */
	int	 to;		/* 1 or 2 */
	char	*buf;
	size_t	 len;
};

struct child {
	pid_t		pid;	/* 0 once reaped; also its process group */
	int		status;	/* waitpid's, once reaped */
	/* Reaped after launch signalled it: the signal it sent on (to tell
	 * that one from the rank's own SIGSEGV), or STOP_BAD_EXIT, STOP_KILL
	 * for launch's own SIGTERM or SIGKILL. */
	int		killed;
	struct stream	out, err;
};

struct launch_state {
	const struct ac_launch	*l;
	struct child		*kids;
	long			 n, running;
	int			 width;		/* digits of the largest rank */
	int			 first_bad;
	/* The first terminating signal launch got (and sent on): its exit
	 * status is 128+N then, whatever the ranks made of it. */
	int			 signalled;
	unsigned long long	 sent;		/* every signal sent on (bit N-1 for N) */
	/* Launch sent SIGTERM or SIGKILL of its own (--kill-on-bad-exit). */
	int			 stopping;
	/* The reader of launch's output is gone (EPIPE under --tag): the
	 * ranks get SIGPIPE, as they would have writing there themselves. */
	int			 pipe_gone;	/* 1 seen, 2 sent on */
	int			 stop_late;	/* the deadline is SIGNAL_WAIT_MS' */
	pid_t			 pid;		/* launch's own */
	char			 base[4096];	/* "" until mkdtemp made it */
	char			 job_id[128];
};

static int
write_all(struct launch_state *s, int fd, const char *p, size_t n)
{
	if (s->pipe_gone)
		return -1;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EPIPE) {
			s->pipe_gone = 1;
			return -1;
		}
		if (w < 0)
			return -1;	/* the output is lost, we go on */
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write one line of LEN bytes (without its newline) behind the rank prefix. */
static void
emit(struct launch_state *s, long rank, int to, const char *line, size_t len)
{
	char pre[32];
	int n = snprintf(pre, sizeof(pre), "%*ld: ", s->width, rank);
	char *out = malloc(len + (size_t)n + 1);

	if (out == NULL)
		return;
	memcpy(out, pre, (size_t)n);
	memcpy(out + n, line, len);
	out[(size_t)n + len] = '\n';
	write_all(s, to, out, (size_t)n + len + 1);
	free(out);
}

/* The stream is over: emit what is left of its last line, and let it go. */
static void
stream_end(struct launch_state *s, long rank, struct stream *st)
{
	if (st->len > 0)
		emit(s, rank, st->to, st->buf, st->len);
	free(st->buf);
	st->buf = NULL;
	st->len = 0;
	close(st->fd);
	st->fd = -1;
}

/*
 * Read what is there, up to PUMP_CHUNKS reads; emit complete lines; at EOF
 * emit the rest. Bounded: a rank that writes without pause (`yes`) never
 * leaves its pipe empty, and read to EAGAIN it kept launch from its
 * signals and its children's ends (a ^C went unheard).
 */
#define PUMP_CHUNKS 4
static void
pump(struct launch_state *s, long rank, struct stream *st)
{
	char chunk[16384];
	ssize_t r;
	int reads = 0;

	while ((r = read(st->fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			break;
		}
		char *nb = realloc(st->buf, st->len + (size_t)r);
		if (nb == NULL)
			break;
		st->buf = nb;
		memcpy(st->buf + st->len, chunk, (size_t)r);
		st->len += (size_t)r;

		size_t start = 0;
		for (size_t i = 0; i < st->len; i++) {
			if (st->buf[i] == '\n' || i - start >= LINE_MAX_BYTES) {
				emit(s, rank, st->to, st->buf + start, i - start);
				start = i + (st->buf[i] == '\n');
			}
		}
		memmove(st->buf, st->buf + start, st->len - start);
		st->len -= start;
		if (++reads == PUMP_CHUNKS)
			return;
	}
	stream_end(s, rank, st);
}

static void
set_env(const char *name, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	setenv(name, buf, 1);
}

/* What one rank's child needs to become that rank (spawn.c runs it); with
 * ARGV, a process that acts for it ("accelctl helper start"). */
struct rank_start {
	struct launch_state	*s;
	long			 rank;
	char			**argv;
};

/* In the child, between fork and exec: its environment, then CMD. Its
 * descriptors and signal mask are spawn.c's. */
static int
child_exec(void *arg)
{
	struct rank_start *r = arg;
	struct launch_state *s = r->s;
	const struct ac_launch *l = s->l;
	long rank = r->rank, node = rank / l->nproc;
	char dir[4200];

	signal(SIGPIPE, SIG_DFL);
	/* A launch killed for good (kill -9, the OOM killer, a batch system's
	 * last word) takes its ranks with it, as their parent would in the
	 * shell: in sessions of their own, nothing else would end them. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != s->pid)
		_exit(AC_EXIT_FAILED);
	/* A shell without job control starts "accelctl launch ... &" with
	 * SIGINT and SIGQUIT ignored, and an ignored signal stays ignored
	 * across exec: the SIGINT launch sends on would be lost on every rank,
	 * which would run to its end. A rank gets them as a foreground job
	 * would. (SIGHUP ignored by nohup stays ignored: launch sends it on
	 * only where it was not.) */
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	snprintf(dir, sizeof(dir), "%s/node%ld", s->base, node);
	set_env("ACCELCTL_RANK", rank);
	set_env("ACCELCTL_WORLD_SIZE", l->nproc * l->nnodes);
	set_env("ACCELCTL_LOCAL_RANK", rank % l->nproc);
	set_env("ACCELCTL_LOCAL_WORLD_SIZE", l->nproc);
	set_env("ACCELCTL_NODE_RANK", node);
	set_env("ACCELCTL_NNODES", l->nnodes);
	setenv("ACCELCTL_JOB_ID", s->job_id, 1);
	setenv("ACCELCTL_RUNTIME_DIR", dir, 1);
	/* The helpers the ranks start know that launch tells them when a
	 * rank exits, with its status (gone.c). */
	set_env("ACCELCTL_LAUNCH_PID", (long)getppid());
	return ac_exec(r->argv != NULL ? r->argv : l->argv);
}

static int
spawn(struct launch_state *s, long rank)
{
	struct child *c = &s->kids[rank];
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	struct rank_start r = { .s = s, .rank = rank };
	struct ac_child k = AC_CHILD_INIT;
	sigset_t none;

	if (s->l->tag && (pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1)) {
		ac_warn("pipe");
		return -1;
	}
	sigemptyset(&none);
	k.fn = child_exec;
	k.arg = &r;
	k.mask = &none;
	k.session = 1;
	k.out = out[1];
	k.err = err[1];
	/* stdin goes to rank 0 only, as mpirun does: readers must not race. */
	k.in = rank != 0 ? AC_CHILD_NULL : -1;
	if (ac_child_start(&k) == -1) {
		ac_warn("fork");
		c->pid = 0;
		return -1;
	}
	c->pid = k.pid;
	/* The child's setsid makes its group; before it ran, a signal to
	 * -PID would find no group: the child's own pid is signalled then. */
	s->running++;
	c->out.fd = out[0];
	c->err.fd = err[0];
	c->out.to = STDOUT_FILENO;
	c->err.to = STDERR_FILENO;
	if (s->l->tag) {
		close(out[1]);
		close(err[1]);
		fcntl(out[0], F_SETFL, O_NONBLOCK);
		fcntl(err[0], F_SETFL, O_NONBLOCK);
	}
	return 0;
}

/* Send SIG to every rank still running: to its process group (its session),
 * so that what its shell started gets it too; to the rank itself when the
 * group is not there yet (the child has not run setsid). */
static void
signal_all(struct launch_state *s, int sig)
{
	for (long i = 0; i < s->n; i++) {
		pid_t p = s->kids[i].pid;

		if (p > 0 && kill(-p, sig) == -1)
			kill(p, sig);
	}
}

/* What ended rank I, as srun says it (the summary, the helpers' news). */
static void outcome(const struct child *c, char *buf, size_t len);

/* Simulated node NODE's runtime files (rundir.c), as its ranks name them. */
static int
node_paths(const struct launch_state *s, long node, struct ac_paths *p)
{
	struct ac_topo t;
	char dir[4200], err[256];

	memset(&t, 0, sizeof(t));
	snprintf(t.job_id, sizeof(t.job_id), "%s", s->job_id);
	t.v[AC_NNODES] = s->l->nnodes;
	t.v[AC_NODE] = node;
	snprintf(dir, sizeof(dir), "%s/node%ld", s->base, node);
	return ac_paths_init_at(p, &t, dir, 0, err, sizeof(err));
}

/*
 * Rank I exited while others run on: its node's helper is told, with what
 * ended it (gone.c), so that the ranks that wait for it, there and on the
 * other nodes, exit 4 at once rather than at their deadline. A node none of
 * whose ranks started its helper gets one now: it is the one that tells
 * the other nodes, after its own posts.
 */
static void
tell_gone(struct launch_state *s, long i)
{
	struct ac_paths p;
	char path[1100], tmp[1100], what[128], buf[512];
	long node = i / s->l->nproc;
	struct timespec ts;
	int fd, n;

	if (node_paths(s, node, &p) == -1)
		return;
	outcome(&s->kids[i], what, sizeof(what));
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%lld %ld\nrank %ld (node %ld) %s\n",
	    (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
	    i % s->l->nproc, i, node, what);
	/* Written aside, renamed into place: the helper reads it whole. */
	snprintf(path, sizeof(path), "%s/%s%ld", p.gone_dir, p.gone_prefix, i);
	snprintf(tmp, sizeof(tmp), "%s/.%s%ld", p.gone_dir, p.gone_prefix, i);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0) {
		int ok = write(fd, buf, (size_t)n) == n;

		close(fd);
		/* Whole or not at all: the helper reads it when it appears. */
		if (!ok || rename(tmp, path) == -1)
			unlink(tmp);
	}
	if (s->l->nnodes > 1 && access(p.sock, F_OK) == -1) {
		static char exe[] = "/proc/self/exe", helper[] = "helper",
		    start[] = "start";
		char *argv[] = { exe, helper, start, NULL };
		struct rank_start r = { .s = s, .rank = i, .argv = argv };
		struct ac_child k = AC_CHILD_INIT;

		k.fn = child_exec;
		k.arg = &r;
		/* Quiet: what the rank's environment lacks, the rank said. */
		k.in = k.out = k.err = AC_CHILD_NULL;
		if (ac_child_start(&k) == 0)
			(void)ac_child_wait(&k);
	}
	ac_paths_close(&p);
}

/* Reap every child that exited; remember the first failure. */
static int
reap(struct launch_state *s)
{
	int status, failed = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (long i = 0; i < s->n; i++) {
			if (s->kids[i].pid != pid)
				continue;
			int code = ac_exit_code(status);
			s->kids[i].pid = 0;
			s->kids[i].status = status;
			s->kids[i].killed = s->stopping ? s->stopping :
			    s->signalled;
			/* One that does not stop launch (SIGUSR1) killed it. */
			if (s->kids[i].killed == 0 && WIFSIGNALED(status) &&
			    WTERMSIG(status) <= 64 &&
			    (s->sent >> (WTERMSIG(status) - 1) & 1))
				s->kids[i].killed = WTERMSIG(status);
			s->running--;
			if (code != 0 && s->first_bad == 0)
				s->first_bad = code;
			if (code != 0)
				failed = 1;
			if (s->running > 0)
				tell_gone(s, i);
		}
	}
	return failed;
}

/* Stop the helpers of the simulated nodes (their pid files), then remove. */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	size_t n = strlen(path);
	FILE *f;
	long pid;

	(void)sb;
	(void)flag;
	(void)ftw;
	if (n > 4 && strcmp(path + n - 4, ".pid") == 0 &&
	    (f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%ld", &pid) == 1 && pid > 1)
			kill((pid_t)pid, SIGTERM);
		fclose(f);
	}
	remove(path);
	return 0;
}

static int
make_dirs(struct launch_state *s)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4200];

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(s->base, sizeof(s->base), "%s/accelctl-launch.XXXXXX", tmp);
	if (mkdtemp(s->base) == NULL) {
		ac_warn("cannot create a directory in %s", tmp);
		s->base[0] = '\0';
		return -1;
	}
	/* mkdtemp's random suffix and our pid make the job id unique. */
	snprintf(s->job_id, sizeof(s->job_id), "launch-%s-%ld",
	    strrchr(s->base, '.') + 1, (long)getpid());
	for (long node = 0; node < s->l->nnodes; node++) {
		snprintf(dir, sizeof(dir), "%s/node%ld", s->base, node);
		if (mkdir(dir, 0700) == -1) {
			ac_warn("cannot create %s", dir);
			return -1;
		}
	}
	return 0;
}

/*
 * A signal launch got, sent on to every rank. ^Z stops the ranks, then
 * launch itself (as a foreground job stops as a whole); SIGCONT, which
 * continues launch whether it is blocked or not, continues them. A
 * terminating signal decides launch's exit status (128+N), as it would
 * for the process it stands for.
 */
static void
forward(struct launch_state *s, int sig, long *deadline)
{
	/* Each rank's group is orphaned (a session of its own), and the
	 * kernel drops SIGTSTP sent to such a group: ^Z stopped launch and
	 * not the ranks. SIGSTOP stops them, as ^Z would have. */
	signal_all(s, sig == SIGTSTP ? SIGSTOP : sig);
	if (sig >= 1 && sig <= 64)
		s->sent |= 1ULL << (sig - 1);
	if (sig == SIGTSTP)
		raise(SIGSTOP);
	else if (sig == SIGCONT || sig == SIGUSR1 || sig == SIGUSR2)
		;
	else if (s->signalled == 0) {
		s->signalled = sig;
		if (*deadline < 0) {
			*deadline = ac_now_ms() + SIGNAL_WAIT_MS;
			s->stop_late = 1;
		}
	} else if (s->stopping == 0) {
		s->stopping = STOP_SIGNAL_AGAIN;
		signal_all(s, SIGKILL);
	}
}

static int
loop(struct launch_state *s, int sfd)
{
	long deadline = -1;
	struct pollfd *pfd = calloc((size_t)s->n * 2 + 1, sizeof(*pfd));

	if (pfd == NULL) {
		ac_warn("out of memory");
		return -1;
	}
	while (s->running > 0) {
		int np = 0, timeout = -1;

		pfd[np++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (long i = 0; i < s->n; i++) {
			if (s->kids[i].out.fd >= 0)
				pfd[np++] = (struct pollfd){ .fd = s->kids[i].out.fd, .events = POLLIN };
			if (s->kids[i].err.fd >= 0)
				pfd[np++] = (struct pollfd){ .fd = s->kids[i].err.fd, .events = POLLIN };
		}
		if (deadline >= 0)
			timeout = (int)(deadline > ac_now_ms() ? deadline - ac_now_ms() : 0);
		if (poll(pfd, (nfds_t)np, timeout) == -1 && errno != EINTR) {
			ac_warn("poll");
			break;
		}
		if (deadline >= 0 && ac_now_ms() >= deadline) {
			if (s->stopping == 0)
				s->stopping = s->stop_late ? STOP_SIGNAL_LATE :
				    STOP_BAD_EXIT;
			signal_all(s, SIGKILL);
			deadline = -1;
		}
		for (long i = 0; i < s->n; i++) {
			for (int k = 0; k < 2; k++) {
				struct stream *st = k ? &s->kids[i].err : &s->kids[i].out;
				for (int j = 1; j < np; j++)
					if (st->fd >= 0 && pfd[j].fd == st->fd &&
					    pfd[j].revents != 0)
						pump(s, i, st);
			}
		}
		/* The reader of tagged output left: SIGPIPE, once, as if the
		 * ranks had written there themselves. */
		if (s->pipe_gone == 1) {
			s->pipe_gone = 2;
			forward(s, SIGPIPE, &deadline);
		}
		if (!(pfd[0].revents & POLLIN))
			continue;

		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD) {
				if (reap(s) && s->l->kill_on_bad_exit &&
				    deadline < 0 && s->running > 0) {
					s->stopping = STOP_BAD_EXIT;
					signal_all(s, SIGTERM);
					deadline = ac_now_ms() + KILL_WAIT_MS;
				}
			} else
				forward(s, (int)si.ssi_signo, &deadline);
		}
	}
	free(pfd);
	/* Children are gone; take what their pipes still hold, without waiting
	 * for grandchildren that may keep them open (then a pipe is still
	 * open, and its partial line and buffer are let go here). */
	for (long i = 0; i < s->n; i++) {
		for (int k = 0; k < 2; k++) {
			struct stream *st = k ? &s->kids[i].err : &s->kids[i].out;

			if (st->fd >= 0)
				pump(s, i, st);
			if (st->fd >= 0)
				stream_end(s, i, st);
		}
	}
	return 0;
}

/* What ended a rank, as srun says it: "exited with 7", "killed by signal 15
 * (Terminated)". */
static void
outcome(const struct child *c, char *buf, size_t len)
{
	if (WIFEXITED(c->status))
		snprintf(buf, len, "exited with %d", WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		snprintf(buf, len, "killed by signal %d (%s)%s",
		    WTERMSIG(c->status), strsignal(WTERMSIG(c->status)),
		    c->killed == STOP_BAD_EXIT ? ", sent by --kill-on-bad-exit" :
		    c->killed == STOP_SIGNAL_LATE ? ", sent by launch: the "
		    "ranks outlived its signal by 30 s" :
		    c->killed == STOP_SIGNAL_AGAIN ? ", sent by launch at a "
		    "second signal" :
		    c->killed == WTERMSIG(c->status) ? ", sent on by launch" :
		    "");
	else
		snprintf(buf, len, "ended with status %#x", c->status);
}

/*
 * A line per failed rank, in rank order: "rank 3 (node 0): exited with 7".
 * Neighbours that ended alike share a line ("ranks 4-7: killed by signal
 * 15"), so that 512 ranks stopped by a ^C say so in one line, not 512.
 */
static void
summary(const struct launch_state *s)
{
	for (long i = 0; i < s->n;) {
		char what[128], next[128];
		long j = i + 1;

		if (s->kids[i].pid != 0 || ac_exit_code(s->kids[i].status) == 0) {
			i++;
			continue;
		}
		outcome(&s->kids[i], what, sizeof(what));
		for (; j < s->n && s->kids[j].pid == 0 &&
		    ac_exit_code(s->kids[j].status) != 0; j++) {
			outcome(&s->kids[j], next, sizeof(next));
			if (strcmp(next, what) != 0)
				break;
		}
		if (j - i == 1)
			ac_warnx("rank %ld (node %ld): %s", i, i / s->l->nproc,
			    what);
		else
			ac_warnx("ranks %ld-%ld: %s", i, j - 1, what);
		i = j;
	}
}

int
ac_launch_run(const struct ac_launch *l)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
	    SIGUSR2, SIGTSTP, SIGCONT, SIGCHLD };
	struct launch_state s = { .l = l, .n = l->nproc * l->nnodes,
	    .pid = getpid() };
	sigset_t mask, old;
	int sfd, rc = AC_EXIT_FAILED;

	for (long m = s.n - 1; m > 0; m /= 10)
		s.width++;
	if (s.width == 0)
		s.width = 1;
	if ((s.kids = calloc((size_t)s.n, sizeof(*s.kids))) == NULL) {
		ac_warn("out of memory");
		return AC_EXIT_FAILED;
	}
	for (long i = 0; i < s.n; i++)
		s.kids[i].out.fd = s.kids[i].err.fd = -1;
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++) {
		struct sigaction sa;

		/* nohup's SIGHUP stays ignored, and is not sent on. */
		if (fwd[i] == SIGHUP && sigaction(SIGHUP, NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			continue;
		sigaddset(&mask, fwd[i]);
	}
	sigprocmask(SIG_BLOCK, &mask, &old);
	signal(SIGPIPE, SIG_IGN);
	if ((sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		ac_warn("signalfd");
		goto out;
	}
	if (make_dirs(&s) == -1)
		goto out;
	for (long i = 0; i < s.n; i++) {
		if (spawn(&s, i) == -1) {
			signal_all(&s, SIGTERM);
			break;
		}
	}
	if (loop(&s, sfd) == 0) {
		rc = s.signalled ? 128 + s.signalled : s.first_bad;
		summary(&s);
	}
	if (s.running > 0) {
		signal_all(&s, SIGKILL);
		while (waitpid(-1, NULL, 0) > 0)
			;
	}
out:
	if (s.base[0] != '\0')
		nftw(s.base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(s.kids);
	return rc;
}
