/* sync.c: one collective from the client's side, with retries across helper restarts.
 *
 * The helper may die at any moment (kill -9, an OOM kill). A client that
 * loses its connection reconnects, which starts a new helper, and arrives
 * again: with its nonce when it never saw an ACK (so the helper can tell a
 * retry from a new arrival) and with its generation when it did. The new
 * helper has replayed the journal, so the retry joins the same generation.
 */
#define _GNU_SOURCE
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "rdvstate.h"
#include "rundir.h"
#include "msg.h"
#include "parent.h"
#include "run.h"
#include "spawn.h"
#include "sync.h"

/* After the deadline, how long to wait for the helper's own TIMEOUT. */
#define GRACE_MS 3000
/* Reconnect attempts that may fail outright before giving up (exit 125). */
#define MAX_OPEN_FAILURES 5
/* A waiter whose parent exited leaves with the status of a hung-up process. */
#define EXIT_ORPHANED (128 + SIGHUP)
/* After SIGTERM, how long a source's CMD has before SIGKILL once the job
 * script that ran accelctl is gone. */
#define ORPHAN_KILL_MS 5000

int
ac_check_name(const char *name, const char **why)
{
	size_t n = strlen(name);

	*why = "names are 1-200 characters of A-Z a-z 0-9 . _ : -";
	if (n == 0 || n > 200)
		return -1;
	for (const char *p = name; *p != '\0'; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
		    c == '-'))
			return -1;
	}
	return 0;
}

int
ac_timeout_ms(const char *opt, long *ms)
{
	const char *v = opt, *why, *name = "--timeout";

	if (v == NULL) {
		v = getenv("ACCELCTL_TIMEOUT");
		name = "ACCELCTL_TIMEOUT";
	}
	/* An empty variable is an unset one (as the rank variables); an
	 * empty --timeout is a mistake, such as --timeout "$UNSET". */
	if (v == NULL || (*v == '\0' && opt == NULL)) {
		*ms = 30 * 60 * 1000L;
		return 0;
	}
	if (ac_parse_duration(v, ms, &why) == -1) {
		ac_warnx("invalid %s '%.40s': %s", name, v, why);
		return -1;
	}
	/* timeout(1) and curl read 0 as "no deadline"; here every wait has
	 * one (the contract), and a 0 that meant at once or never is refused
	 * rather than guessed. */
	if (*ms == 0) {
		ac_warnx("invalid %s '%.40s': must be more than 0 (every wait has "
		    "a deadline: for a long one, say 30d)", name, v);
		return -1;
	}
	return 0;
}

void
ac_sync_init(struct ac_sync *s, int op, int scope, int role, const char *key,
    const char *what, int64_t source, long timeout_ms)
{
	memset(s, 0, sizeof(*s));
	s->op = op;
	s->scope = scope;
	s->role = role;
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->what = what;
	s->source = source;
	s->timeout_ms = timeout_ms;
	s->gen = -1;
	s->c.fd = -1;
	s->started = ac_now_ms();
	s->deadline = s->started + timeout_ms;
	if (getrandom(&s->nonce, sizeof(s->nonce), 0) != sizeof(s->nonce))
		s->nonce = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	if (s->nonce == 0)
		s->nonce = 1;
}

void
ac_sync_free(struct ac_sync *s)
{
	ac_client_close(&s->c);
	free(s->payload);
	s->payload = NULL;
}

static void
backoff(int attempt)
{
	struct timespec ts = { 0, (attempt < 5 ? 20L << attempt : 500L) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The job script that ran us exited (a launcher killed it): nobody is left
 * to use what we wait for, and a launcher that restarts the job may wait
 * for us. We leave now; the helper sees the connection drop, as when a
 * waiting rank is killed.
 */
static int
orphaned(const struct ac_sync *s)
{
	ac_warnx("%s: the process that ran accelctl (pid %ld) exited: leaving",
	    s->what, ac_parent_pid());
	return EXIT_ORPHANED;
}

/* ABORTED or ERROR: print it, return the exit code; -1 for any other type. */
static int
final_reply(struct ac_sync *s, int type, struct ac_rd *r)
{
	char text[1024];

	if (type != AC_MSG_ABORTED && type != AC_MSG_ERROR &&
	    type != AC_MSG_FAILED && type != AC_MSG_LOST)
		return -1;
	ac_get_str(r, text, sizeof(text));
	if (type == AC_MSG_LOST) {
		ac_warnx("%s: lost: %s", s->what, text);
		return AC_EXIT_LOST;
	}
	if (type == AC_MSG_ABORTED) {
		ac_warnx("%s: aborted: %s", s->what, text);
		return AC_EXIT_ABORTED;
	}
	if (type == AC_MSG_FAILED) {
		ac_warnx("%s: %s", s->what, text);
		return AC_EXIT_FAILED;
	}
	ac_warnx("%s: the helper refused: %s", s->what, text);
	return AC_EXIT_FAILED;
}

/*
 * The helper turned this rank away (its maximum of clients): the ranks that
 * wait for it would wait to their deadline. It leaves the news in the
 * job's JOB.gone.RANK (gone.c), which the helper reads, so that they exit 4 at
 * once naming it.
 */
static void
tell_turned_away(const struct ac_topo *t, const struct ac_client *c)
{
	struct ac_paths p;
	struct timespec ts;
	char err[256], path[1100], tmp[1100], buf[600];
	int fd, n;

	if (ac_paths_init(&p, t, 0, err, sizeof(err)) == -1)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%lld %ld\nrank %ld (node %ld) was "
	    "turned away by its node's helper: %s\n", (long long)ts.tv_sec *
	    1000000 + ts.tv_nsec / 1000, t->v[AC_LRANK], t->v[AC_RANK],
	    t->v[AC_NODE] >= 0 ? t->v[AC_NODE] : 0, c->why);
	snprintf(path, sizeof(path), "%s/%s%ld", p.gone_dir, p.gone_prefix,
	    t->v[AC_RANK]);
	snprintf(tmp, sizeof(tmp), "%s/.%s%ld.%ld", p.gone_dir, p.gone_prefix,
	    t->v[AC_RANK], (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0) {
		int ok = n > 0 && write(fd, buf, (size_t)n) == n;

		close(fd);
		if (!ok || rename(tmp, path) == -1)
			unlink(tmp);
	}
	ac_paths_close(&p);
}

/*
 * Connect and send ARRIVE; wait for the ACK. Returns 0, -1 when the helper
 * went away (retry), or an exit code with the message printed.
 */
static int
arrive(const struct ac_topo *t, struct ac_sync *s)
{
	struct ac_buf b = { 0 };
	struct ac_rd r;
	int rc = 0, type, failures = 0;
	long left;

	for (;;) {
		if (ac_client_open(&s->c, t, 1, &rc) == 0)
			break;
		if (rc == AC_EXIT_USAGE || s->c.busy ||
		    ++failures >= MAX_OPEN_FAILURES) {
			if (s->c.turned_away)
				tell_turned_away(t, &s->c);
			return rc;
		}
		if (ac_parent_gone())
			return orphaned(s);
		backoff(failures);
	}
	s->c.watch_parent = 1;
	left = s->deadline - ac_now_ms();
	size_t f = ac_frame_begin(&b, AC_MSG_ARRIVE);
	ac_put_u8(&b, (uint8_t)s->op);
	ac_put_u8(&b, (uint8_t)s->scope);
	ac_put_u8(&b, (uint8_t)s->role);
	ac_put_str(&b, s->key);
	ac_put_i64(&b, (int64_t)s->nonce);
	ac_put_i64(&b, s->gen);
	ac_put_i64(&b, s->source);
	ac_put_i64(&b, s->status);
	ac_put_i64(&b, s->role == AC_ROLE_SOURCE ? 0 : (left > 0 ? left : 1));
	ac_put_i64(&b, s->progress_ms);
	ac_frame_end(&b, f);
	type = ac_client_send(&s->c, &b);
	ac_buf_free(&b);
	if (type == -1)
		return -1;
	type = ac_client_recv(&s->c, ac_now_ms() + 10000, &r);
	if (type == AC_MSG_ACK) {
		s->gen = ac_get_i64(&r);
		return 0;
	}
	if (type == -3)
		return orphaned(s);
	return final_reply(s, type, &r);
}

/* Arrive, reconnecting while the helper is gone. 0 or an exit code. */
static int
arrive_retrying(const struct ac_topo *t, struct ac_sync *s)
{
	for (int attempt = 0;; attempt++) {
		int rc = arrive(t, s);

		if (rc != -1)
			return rc;
		ac_client_close(&s->c);
		if (attempt >= 50 || (s->role != AC_ROLE_SOURCE &&
		    ac_now_ms() > s->deadline + GRACE_MS)) {
			ac_warnx("%s: lost the helper (its log: %s)", s->what,
			    s->c.paths.shown_log);
			return AC_EXIT_FAILED;
		}
		backoff(attempt);
	}
}

#define ENDED_CHECK_MS	2000

/* Read frames until RELEASE. 0, -1 (helper gone), or an exit code. */
static int
await(struct ac_sync *s)
{
	struct ac_rd r;
	char text[2048], d1[32];
	size_t n;
	const uint8_t *p;

	/* The job's own server ("rendezvous start"): its end is looked for
	 * every ENDED_CHECK_MS while we wait, by every rank (progress reaches
	 * only local main), so that a rank already waiting when it gives up
	 * exits 125 naming it, not at its deadline. */
	const char *pf = getenv("ACCELCTL_REDIS_PASSWORD_FILE");
	int own = pf != NULL && *pf != '\0';

	for (;;) {
		long hard = s->role == AC_ROLE_SOURCE ? -1 : s->deadline + GRACE_MS;
		long until = hard, soon = (long)ac_now_ms() + ENDED_CHECK_MS;
		int type;

		if (own && (until < 0 || soon < until))
			until = soon;
		type = ac_client_recv(&s->c, until, &r);
		if (type == -2 && until != hard) {
			if (!ac_rdv_job_ended(text, sizeof(text)))
				continue;
			ac_warnx("%s: %s", s->what, text);
			return AC_EXIT_FAILED;
		}
		switch (type) {
		case AC_MSG_RELEASE:
			s->result = ac_get_i64(&r);
			ac_get_str(&r, s->failed, sizeof(s->failed));
			p = ac_get_bytes(&r, &n);
			if (r.err) {
				ac_warnx("%s: malformed reply from the helper", s->what);
				return AC_EXIT_FAILED;
			}
			free(s->payload);
			s->payload = NULL;
			s->paylen = n;
			if (n > 0 && (s->payload = malloc(n)) == NULL) {
				ac_warnx("%s: out of memory", s->what);
				return AC_EXIT_FAILED;
			}
			if (n > 0)
				memcpy(s->payload, p, n);
			return 0;
		case AC_MSG_NOTE:
			/* A long wait ended: who came last (history.c). */
			ac_get_str(&r, text, sizeof(text));
			ac_warnx("passed %s (generation %lld) %s", s->what,
			    (long long)s->gen, text);
			continue;
		case AC_MSG_PROGRESS:
			ac_get_str(&r, text, sizeof(text));
			ac_warnx("waiting %s at %s (generation %lld): %s",
			    ac_format_duration((ac_now_ms() - s->started) / 1000 * 1000,
			    d1, sizeof(d1)), s->what, (long long)s->gen, text);
			continue;
		case -3:
			return orphaned(s);
		case AC_MSG_TIMEOUT:
		case -2:
			if (ac_rdv_job_ended(text, sizeof(text))) {
				ac_warnx("%s: %s", s->what, text);
				return AC_EXIT_FAILED;
			}
			if (type == AC_MSG_TIMEOUT)
				ac_get_str(&r, text, sizeof(text));
			else
				snprintf(text, sizeof(text), "the helper did not answer");
			ac_warnx("timed out after %s at %s (generation %lld): %s",
			    ac_format_duration(s->timeout_ms, d1, sizeof(d1)),
			    s->what, (long long)s->gen, text);
			return AC_EXIT_TIMEOUT;
		default:
			return final_reply(s, type, &r);
		}
	}
}

int
ac_sync_wait(const struct ac_topo *t, struct ac_sync *s)
{
	/* Each round is a helper that died under us; a few are a crash, many a bug. */
	for (int lost = 0; lost < 50; lost++) {
		int rc = arrive_retrying(t, s);

		if (rc != 0)
			return rc;
		if ((rc = await(s)) != -1)
			return rc;
		ac_client_close(&s->c);
		backoff(lost);
	}
	ac_warnx("%s: lost the helper 50 times (its log: %s)", s->what,
	    s->c.paths.shown_log);
	return AC_EXIT_FAILED;
}

int
ac_sync_source_begin(const struct ac_topo *t, struct ac_sync *s)
{
	return arrive_retrying(t, s);
}

int
ac_sync_source_finish(const struct ac_topo *t, struct ac_sync *s,
    int64_t status, const void *p, size_t n)
{
	for (;;) {
		struct ac_buf b = { 0 };
		size_t f = ac_frame_begin(&b, AC_MSG_FINISH);
		int rc;

		ac_put_i64(&b, status);
		ac_put_blob(&b, p, n);
		ac_frame_end(&b, f);
		rc = b.err ? -1 : ac_client_send(&s->c, &b);
		ac_buf_free(&b);
		if (rc == 0 && (rc = await(s)) != -1)
			return rc;
		ac_client_close(&s->c);
		if ((rc = arrive_retrying(t, s)) != 0)
			return rc;
	}
}

/*
 * The source's connection is readable while CMD runs. The helper sends a
 * source nothing then, but a helper of another build may report progress:
 * such frames are skipped. EOF, or any other frame (the job was aborted,
 * say), is a lost registration: arrive again, which also starts a new
 * helper when this one died.
 */
static void
source_reads(const struct ac_topo *t, struct ac_sync *s)
{
	struct ac_rd r;
	int type, watch = s->c.watch_parent;

	s->c.watch_parent = 0;	/* run_cmd watches the parent itself */
	while ((type = ac_client_recv(&s->c, ac_now_ms(), &r)) ==
	    AC_MSG_PROGRESS)
		;
	s->c.watch_parent = watch;
	if (type == -2)
		return;		/* half a frame so far, or nothing */
	ac_client_close(&s->c);
	if (arrive_retrying(t, s) != 0)
		ac_client_close(&s->c);
}

/*
 * Run CMD as a child (not exec: we must tell the others how it ended) and
 * forward the signals a launcher sends us. While it runs, a lost helper
 * connection is re-established, so that the helper knows we are alive.
 */
int
ac_sync_run_cmd(const struct ac_topo *t, struct ac_sync *s, char **argv)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
	    SIGUSR2, SIGCHLD };
	sigset_t mask, old;
	int sfd, status = 0, done = 0;
	long killed_at = -1;
	pid_t pid;
	struct ac_child k = AC_CHILD_INIT;

	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		sigaddset(&mask, fwd[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	if ((sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) == -1) {
		ac_warn("signalfd");
		return AC_EXIT_FAILED;
	}
	k.argv = argv;
	k.mask = &old;
	k.close_fd = s->c.fd;
	/* Killed ourselves (kill -9, the OOM killer), we can no longer
	 * forward signals or report CMD's status, and the others are told
	 * we died: CMD must not go on as an orphan (an upload the job
	 * thinks failed). This process has one thread, so the death
	 * signal fires when it exits, not when some thread does. */
	k.deathsig = SIGKILL;
	if (ac_child_start(&k) == -1) {
		ac_warn("fork");
		close(sfd);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return AC_EXIT_FAILED;
	}
	pid = k.pid;
	while (!done) {
		struct pollfd pfd[3] = { { .fd = sfd, .events = POLLIN },
		    { .fd = s->c.fd, .events = POLLIN },
		    { .fd = killed_at < 0 ? ac_parent_fd() : -1, .events = POLLIN } };
		int timeout = -1;

		/* Without a pidfd the parent is looked at every second. */
		if (killed_at < 0 && pfd[2].fd < 0)
			timeout = 1000;
		else if (killed_at >= 0)
			timeout = ac_poll_ms(killed_at + ORPHAN_KILL_MS);
		if (poll(pfd, 3, timeout) == -1 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo != SIGCHLD) {
					if (si.ssi_code != SI_KERNEL)
						kill(pid, (int)si.ssi_signo);
					continue;
				}
				if (waitpid(pid, &status, WNOHANG) == pid)
					done = 1;
			}
		}
		if (done)
			break;
		/* The job script is gone: CMD is stopped as its launcher would. */
		if (killed_at < 0 && (pfd[2].fd >= 0 ?
		    (pfd[2].revents & POLLIN) != 0 : ac_parent_gone())) {
			ac_warnx("%s: the process that ran accelctl (pid %ld) "
			    "exited: stopping CMD", s->what, ac_parent_pid());
			kill(pid, SIGTERM);
			killed_at = ac_now_ms();
		} else if (killed_at >= 0 && ac_now_ms() >= killed_at +
		    ORPHAN_KILL_MS)
			kill(pid, SIGKILL);
		if (s->c.fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP)))
			source_reads(t, s);
	}
	close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ac_exit_code(status);
}
