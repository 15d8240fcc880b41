/* helper.c: the resident per-node helper: one event loop over a Unix socket.
 *
 * One helper serves one job on one node. Clients (short-lived accelctl
 * processes) say HELLO, then ARRIVE at a collective and block on their socket
 * until the helper answers RELEASE, TIMEOUT or ABORTED: no client polls, and
 * the helper wakes only for a message, a deadline of a waiting client or its
 * own idle timeout. The generation state lives in coll.c and its journal.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "coll.h"
#include "duration.h"
#include "journal.h"
#include "msg.h"
#include "proctitle.h"
#include "proto.h"
#include "rdvurl.h"
#include "rundir.h"
#include "kind.h"
#include "transport.h"
#include "xport.h"

struct conn {
	struct conn	*next;
	int		 fd;
	uint8_t		*in;
	size_t		 inlen, incap;
	struct ac_buf	 out;
	size_t		 outoff;
	int		 hello, closing;
	long		 lrank;
	int64_t		 rank;
	struct ac_coll	*coll;		/* the collective it waits on */
	int		 role;
	long		 deadline;	/* ms, -1 none */
	long		 progress_ms, next_progress;
};

static struct {
	struct ac_job	 job;
	struct ac_paths	 paths;
	struct conn	*conns;
	long		 nconns;
	int		 lfd, sfd;
	long		 idle_ms, idle_since;
	int		 stop;
	ino_t		 sock_ino;
	struct ac_runid	 runid;		/* this node's place in the run (xport.h) */
	char		 runfile[1000];
} H;

void
ac_helper_log(const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	va_list ap;

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime(&now));
	fprintf(stderr, "%s accelctl-helper[%ld]: ", ts, (long)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void
flush_out(struct conn *c)
{
	while (c->outoff < c->out.len) {
		ssize_t n = send(c->fd, c->out.p + c->outoff,
		    c->out.len - c->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN)
				c->closing = 2;	/* peer gone: drop now */
			return;
		}
		c->outoff += (size_t)n;
	}
	c->out.len = c->outoff = 0;
}

static void
send_text(struct conn *c, int type, const char *text)
{
	size_t f = ac_frame_begin(&c->out, type);

	ac_put_str(&c->out, text);
	ac_frame_end(&c->out, f);
	flush_out(c);
}

static void
send_i64(struct conn *c, int type, int64_t v)
{
	size_t f = ac_frame_begin(&c->out, type);

	ac_put_i64(&c->out, v);
	ac_frame_end(&c->out, f);
	flush_out(c);
}

static void
detach(struct conn *c)
{
	if (c->coll == NULL)
		return;
	c->coll->waiters--;
	c->coll = NULL;
	c->deadline = -1;
	c->progress_ms = 0;
}

static void
release_one(struct conn *c)
{
	struct ac_coll *co = c->coll;
	size_t f;

	if (co->src == AC_SRC_LOST) {
		char text[512];

		ac_coll_summary(&H.job, co, text, sizeof(text));
		send_text(c, AC_MSG_ABORTED, text);
	} else {
		f = ac_frame_begin(&c->out, AC_MSG_RELEASE);
		ac_put_i64(&c->out, co->result);
		ac_put_str(&c->out, co->failed);
		ac_put_blob(&c->out, co->payload, co->paylen);
		ac_frame_end(&c->out, f);
		flush_out(c);
	}
	detach(c);
}

/* coll.c's callback: a collective was released (or its source died). */
static void
on_released(struct ac_job *j, struct ac_coll *co)
{
	(void)j;
	for (struct conn *c = H.conns; c != NULL; c = c->next)
		if (c->coll == co)
			release_one(c);
}

static void
on_abort(struct ac_job *j)
{
	ac_helper_log("job aborted: %s", j->aborted);
	for (struct conn *c = H.conns; c != NULL; c = c->next) {
		if (c->coll != NULL) {
			send_text(c, AC_MSG_ABORTED, j->aborted);
			detach(c);
		}
	}
}

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

	snprintf(tmp, sizeof(tmp), "%s.tmp", H.runfile);
	if ((f = fopen(tmp, "w")) == NULL)
		return;
	fprintf(f, "%016llx %ld\n", (unsigned long long)r->nonce, r->run);
	if (fclose(f) == 0)
		rename(tmp, H.runfile);
	else
		unlink(tmp);
}

static void
load_runid(int fresh)
{
	unsigned long long nonce = 0;
	long run = 0;
	FILE *f;

	snprintf(H.runfile, sizeof(H.runfile), "%s.run", H.paths.state);
	H.runid.save = save_runid;
	if (!fresh && (f = fopen(H.runfile, "r")) != NULL) {
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
		unlink(H.runfile);
	}
	H.runid.nonce = nonce;
	H.runid.run = run;
}

/*
 * Start the job's cross-node transport (transport.c chooses it from
 * ACCELCTL_RENDEZVOUS and ACCELCTL_TRANSPORT), once the job's shape is known
 * and before any arrival is counted.
 */
static void
start_transport(struct ac_job *j)
{
	const char *why;
	char err[600], desc[800];
	struct ac_xstart s = {
		.url = getenv("ACCELCTL_RENDEZVOUS"),
		.password_file = getenv("ACCELCTL_REDIS_PASSWORD_FILE"),
		.runid = &H.runid,
	};

	if (ac_transport_parse(getenv("ACCELCTL_TRANSPORT"), &s.setting, &why) == -1) {
		ac_helper_log("invalid ACCELCTL_TRANSPORT: %s; using auto", why);
		s.setting = AC_TSET_AUTO;
	}
	if (ac_transport_open(j, &s, err, sizeof(err)) == -1) {
		ac_helper_log("%s", err);
		return;
	}
	if (j->x != NULL) {
		j->x->describe(desc, sizeof(desc));
		ac_helper_log("node %ld of %ld: cross-node transport %s", j->node,
		    j->nnodes, desc);
	}
}

/* The transport cannot complete C (forced NCCL unusable, helpers that
 * disagree): its waiters exit 125 with WHY. */
static void
on_failed(struct ac_job *j, struct ac_coll *co, const char *why)
{
	(void)j;
	/* Ranks that arrive later (or are attaching now) fail alike. */
	if (co->xfailed == NULL)
		co->xfailed = strdup(why);
	for (struct conn *c = H.conns; c != NULL; c = c->next)
		if (c->coll == co) {
			send_text(c, AC_MSG_FAILED, why);
			detach(c);
		}
}

/* Why a cross-node wait cannot go on, or NULL; *FINAL when waiting cannot help. */
static const char *
transport_down(int *final)
{
	*final = 0;
	return H.job.x != NULL ? H.job.x->down(final) : NULL;
}

static void
refuse(struct conn *c, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ac_helper_log("refused a client: %s", text);
	send_text(c, AC_MSG_ERROR, text);
	c->closing = 1;
}

static void
on_hello(struct conn *c, struct ac_rd *r)
{
	uint32_t version = ac_get_u32(r);
	char job[AC_KEY_MAX];
	int64_t v[AC_NFIELDS];
	size_t f;

	/* Our version first, whatever the client speaks: it can then say both. */
	f = ac_frame_begin(&c->out, AC_MSG_WELCOME);
	ac_put_u32(&c->out, AC_PROTO_VERSION);
	ac_put_i64(&c->out, (int64_t)getpid());
	ac_frame_end(&c->out, f);
	flush_out(c);
	if (version != AC_PROTO_VERSION) {
		ac_helper_log("refused a client of protocol version %u (this helper "
		    "speaks %u)", version, AC_PROTO_VERSION);
		c->closing = 1;
		return;
	}
	ac_get_str(r, job, sizeof(job));
	for (int i = 0; i < AC_NFIELDS; i++)
		v[i] = ac_get_i64(r);
	if (r->err)
		return refuse(c, "malformed HELLO");
	if (strcmp(job, H.job.id) != 0)
		return refuse(c, "this helper serves job %s, not %s", H.job.id, job);
	if (v[AC_LSIZE] < 1 || v[AC_LSIZE] > 1 << 20 || v[AC_LRANK] < 0 ||
	    v[AC_LRANK] >= v[AC_LSIZE] || v[AC_RANK] < 0 || v[AC_WORLD] < 1)
		return refuse(c, "HELLO with impossible ranks");
	if (H.job.lsize == 0 && ac_job_shape(&H.job, v[AC_LSIZE], v[AC_WORLD],
	    v[AC_NODE], v[AC_NNODES]) == -1)
		return refuse(c, "out of memory");
	if (v[AC_LSIZE] != H.job.lsize || v[AC_WORLD] != H.job.world ||
	    v[AC_NODE] != H.job.node || v[AC_NNODES] != H.job.nnodes)
		return refuse(c, "rank %lld sees %lld local ranks of %lld on node "
		    "%lld of %lld, but this node's helper has %ld of %ld on node "
		    "%ld of %ld: the ranks disagree on the job's shape",
		    (long long)v[AC_RANK], (long long)v[AC_LSIZE],
		    (long long)v[AC_WORLD], (long long)v[AC_NODE],
		    (long long)v[AC_NNODES], H.job.lsize, H.job.world, H.job.node,
		    H.job.nnodes);
	c->hello = 1;
	c->lrank = (long)v[AC_LRANK];
	c->rank = v[AC_RANK];
	ac_job_hello(&H.job, c->lrank, c->rank);
}

static void
on_arrive(struct conn *c, struct ac_rd *r)
{
	int op = ac_get_u8(r), scope = ac_get_u8(r), role = ac_get_u8(r);
	char key[AC_KEY_MAX];
	uint64_t nonce;
	int64_t gen, source, status, timeout, progress;
	struct ac_coll *co;
	const char *why;

	ac_get_str(r, key, sizeof(key));
	nonce = (uint64_t)ac_get_i64(r);
	gen = ac_get_i64(r);
	source = ac_get_i64(r);
	status = ac_get_i64(r);
	timeout = ac_get_i64(r);
	progress = ac_get_i64(r);
	if (r->err || ac_kind_of(key) == NULL || ac_kind_of(key)->op != op ||
	    scope > AC_SCOPE_NODE || role > AC_ROLE_SOURCE ||
	    strchr(key, ' ') != NULL || strchr(key, '\n') != NULL ||
	    source < 0 || timeout < 0 || progress < 0 || c->coll != NULL)
		return refuse(c, "malformed ARRIVE");
	if (H.job.aborted != NULL) {
		send_text(c, AC_MSG_ABORTED, H.job.aborted);
		return;
	}
	co = ac_job_arrive(&H.job, c->lrank, op, scope, role, key, nonce, gen,
	    source, status, &why);
	if (co == NULL)
		return refuse(c, "%s: %s", key, why);
	send_i64(c, AC_MSG_ACK, co->gen);
	c->coll = co;
	co->waiters++;
	c->role = role;
	c->deadline = timeout > 0 ? ac_now_ms() + timeout : -1;
	c->progress_ms = progress;
	c->next_progress = ac_now_ms() + progress;
	if (co->xfailed != NULL) {
		send_text(c, AC_MSG_FAILED, co->xfailed);
		detach(c);
	} else if (co->done || co->src == AC_SRC_LOST)
		release_one(c);
}

static void
on_finish(struct conn *c, struct ac_rd *r)
{
	int64_t status = ac_get_i64(r);
	size_t n;
	const uint8_t *p = ac_get_bytes(r, &n);

	if (r->err || c->coll == NULL || c->role != AC_ROLE_SOURCE)
		return refuse(c, "FINISH without a collective to finish");
	ac_job_finish(&H.job, c->coll, status, p, n);
}

static void
on_abort_msg(struct conn *c, struct ac_rd *r)
{
	char reason[512];

	ac_get_str(r, reason, sizeof(reason));
	if (r->err)
		return refuse(c, "malformed ABORT");
	ac_job_abort(&H.job, c->lrank, reason);
	send_i64(c, AC_MSG_ACK, 0);
}

static void
on_status(struct conn *c)
{
	char *text = malloc(65536);

	if (text == NULL)
		return refuse(c, "out of memory");
	ac_job_status(&H.job, text, 65536);
	if (H.job.x != NULL) {
		char t[1600];
		size_t n = strlen(text);

		H.job.x->describe(t, sizeof(t));
		snprintf(text + n, 65536 - n, "transport: %s\n", t);
	}
	send_text(c, AC_MSG_TEXT, text);
	free(text);
}

static void
dispatch(struct conn *c, int type, struct ac_rd *r)
{
	if (!c->hello && type != AC_MSG_HELLO)
		return refuse(c, "expected HELLO first");
	switch (type) {
	case AC_MSG_HELLO:
		if (c->hello)
			return refuse(c, "HELLO twice");
		return on_hello(c, r);
	case AC_MSG_ARRIVE:
		return on_arrive(c, r);
	case AC_MSG_FINISH:
		return on_finish(c, r);
	case AC_MSG_ABORT:
		return on_abort_msg(c, r);
	case AC_MSG_STATUS:
		return on_status(c);
	case AC_MSG_STOP:
		ac_helper_log("stop requested by rank %lld", (long long)c->rank);
		send_i64(c, AC_MSG_ACK, 0);
		H.stop = 1;
		return;
	default:
		return refuse(c, "unexpected message type %d", type);
	}
}

static void
read_conn(struct conn *c)
{
	for (;;) {
		long flen;
		ssize_t n;

		while (!c->closing && (flen = ac_frame_ready(c->in, c->inlen)) != 0) {
			struct ac_rd r;

			if (flen < 0)
				return refuse(c, "malformed frame");
			r = (struct ac_rd){ .p = c->in + AC_FRAME_HDR,
			    .n = (size_t)flen - AC_FRAME_HDR };
			dispatch(c, c->in[4], &r);
			memmove(c->in, c->in + flen, c->inlen - (size_t)flen);
			c->inlen -= (size_t)flen;
		}
		if (c->closing)
			return;
		if (c->incap - c->inlen < 16384) {
			size_t cap = c->incap ? c->incap * 2 : 16384;
			uint8_t *p;

			if (cap > AC_FRAME_MAX + 65536)
				return refuse(c, "frame too large");
			if ((p = realloc(c->in, cap)) == NULL)
				return refuse(c, "out of memory");
			c->in = p;
			c->incap = cap;
		}
		n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			c->closing = 2;
			return;
		}
		c->inlen += (size_t)n;
	}
}

static void
drop_conn(struct conn *c)
{
	struct conn **pp;

	/* The rank others wait for died: they exit 3 now, not at the deadline. */
	if (c->coll != NULL && c->role == AC_ROLE_SOURCE &&
	    c->coll->src == AC_SRC_RUNNING) {
		ac_helper_log("rank %lld died while others waited for it (%s)",
		    (long long)c->rank, c->coll->key);
		struct ac_coll *co = c->coll;
		detach(c);
		ac_job_source_lost(&H.job, co);
	}
	detach(c);
	for (pp = &H.conns; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	close(c->fd);
	free(c->in);
	ac_buf_free(&c->out);
	free(c);
	if (--H.nconns == 0)
		H.idle_since = ac_now_ms();
	ac_job_gc(&H.job);
}

static void
accept_conn(void)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int fd = accept4(H.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd == -1)
		return;
	/* The directory is ours and 0700, but root gets through: check the peer. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    cred.uid != getuid()) {
		static const char msg[] = "permission denied: another user's helper";
		struct ac_buf b = { 0 };
		size_t f = ac_frame_begin(&b, AC_MSG_ERROR);

		ac_put_str(&b, msg);
		ac_frame_end(&b, f);
		if (!b.err)
			(void)!send(fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		ac_buf_free(&b);
		ac_helper_log("refused a client of uid %ld", (long)cred.uid);
		close(fd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->deadline = -1;
	c->lrank = -1;
	c->rank = -1;
	c->next = H.conns;
	H.conns = c;
	H.nconns++;
}

/* Deadlines and progress reports of waiting clients; the next wake-up. */
static long
timers(void)
{
	long now = ac_now_ms(), next = -1;
	char text[2048];

	if (H.job.x != NULL) {
		long t = H.job.x->timer(now);
		if (t >= 0)
			next = now + t;
	}
	for (struct conn *c = H.conns; c != NULL; c = c->next) {
		const char *down;
		int final;

		if (c->coll == NULL)
			continue;
		/* A transport that cannot withdraw a collective (NCCL) gives
		 * up its channel now; that may release C (on one node). */
		if (c->deadline >= 0 && now >= c->deadline &&
		    ac_coll_cross(&H.job, c->coll) && H.job.x->expired != NULL) {
			H.job.x->expired(&H.job, c->coll);
			if (c->coll == NULL)
				continue;
		}
		/* A rendezvous that is down at the deadline (or refused us for
		 * good) is accelctl failing, exit 125, not a missing rank. */
		down = ac_coll_cross(&H.job, c->coll) ? transport_down(&final) :
		    NULL;
		if (down != NULL && (final || (c->deadline >= 0 &&
		    now >= c->deadline))) {
			snprintf(text, sizeof(text), "rendezvous %s: %s", final ?
			    "failed" : "unreachable", down);
			send_text(c, AC_MSG_FAILED, text);
			detach(c);
			continue;
		}
		if (c->deadline >= 0 && now >= c->deadline) {
			ac_coll_summary(&H.job, c->coll, text, sizeof(text));
			send_text(c, AC_MSG_TIMEOUT, text);
			detach(c);
			continue;
		}
		if (c->progress_ms > 0 && now >= c->next_progress) {
			ac_coll_summary(&H.job, c->coll, text, sizeof(text));
			send_text(c, AC_MSG_PROGRESS, text);
			c->next_progress = now + c->progress_ms;
		}
		if (c->deadline >= 0 && (next < 0 || c->deadline < next))
			next = c->deadline;
		if (c->progress_ms > 0 && (next < 0 || c->next_progress < next))
			next = c->next_progress;
	}
	if (H.nconns == 0) {
		long idle_end = H.idle_since + H.idle_ms;
		if (now >= idle_end)
			H.stop = 1;
		else if (next < 0 || idle_end < next)
			next = idle_end;
	}
	return next < 0 ? -1 : next - now;
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
		H.sock_ino = st.st_ino;
	return fd;
}

/* Unlink our socket, unless a newer helper already put its own there. */
static void
unlink_own_socket(void)
{
	struct stat st;

	if (stat(H.paths.sock, &st) == 0 && st.st_ino == H.sock_ino)
		unlink(H.paths.sock);
}

static void
write_pid_file(void)
{
	FILE *f = fopen(H.paths.pid, "w");

	if (f != NULL) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
	}
}

/* Remove the pid file, unless a newer helper wrote its own. */
static void
remove_pid_file(void)
{
	FILE *f = fopen(H.paths.pid, "r");
	long pid = 0;

	if (f == NULL)
		return;
	if (fscanf(f, "%ld", &pid) == 1 && pid == (long)getpid())
		unlink(H.paths.pid);
	fclose(f);
}

static void
detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);
	int log = open(H.paths.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
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

	while (!H.stop) {
		long timeout = timers();

		ac_journal_compact(&H.job, H.paths.state);
		size_t n = 0;
		struct conn *c, *next;

		if (H.stop)
			break;
		if (cap < (size_t)H.nconns + 8) {
			cap = (size_t)H.nconns + 64;
			free(pfd);
			if ((pfd = calloc(cap, sizeof(*pfd))) == NULL)
				break;
		}
		pfd[n++] = (struct pollfd){ .fd = H.lfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = H.sfd, .events = POLLIN };
		for (c = H.conns; c != NULL; c = c->next)
			pfd[n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN |
			    (c->out.len > c->outoff ? POLLOUT : 0) };
		/* The transport's descriptors last; it says how many. */
		size_t xfirst = n;
		int nx = H.job.x != NULL ? H.job.x->fds(pfd + n, (int)(cap - n)) : 0;

		n += (size_t)nx;
		if (poll(pfd, n, timeout > INT32_MAX ? INT32_MAX : (int)timeout) == -1 &&
		    errno != EINTR)
			break;
		if (nx > 0)
			H.job.x->events(pfd + xfirst, nx);
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(H.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				ac_helper_log("signal %u: exiting", si.ssi_signo);
				H.stop = 1;
			}
		}
		/* conns added by accept_conn below are polled next round. */
		n = 2;
		for (c = H.conns; c != NULL; c = next) {
			next = c->next;
			short re = pfd[n++].revents;

			if (re & POLLOUT)
				flush_out(c);
			if (re & (POLLIN | POLLHUP | POLLERR))
				read_conn(c);
			if (c->closing == 1 && c->out.len == c->outoff)
				c->closing = 2;
			if (c->closing == 2)
				drop_conn(c);
		}
		if (pfd[0].revents & POLLIN)
			for (int i = 0; i < 64; i++) {
				long before = H.nconns;
				accept_conn();
				if (H.nconns == before)
					break;
			}
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
ac_helper_main(const struct ac_topo *t, int ready_fd, int foreground)
{
	char err[512];
	const char *idle = getenv("ACCELCTL_HELPER_IDLE"), *why;
	sigset_t mask;
	int rc = AC_EXIT_FAILED;

	memset(&H, 0, sizeof(H));
	H.job.journal = -1;
	H.lfd = H.sfd = -1;
	H.idle_ms = 600000;
	if (idle != NULL && *idle != '\0' &&
	    ac_parse_duration(idle, &H.idle_ms, &why) == -1) {
		ac_warnx("invalid ACCELCTL_HELPER_IDLE='%.40s': %s", idle, why);
		return AC_EXIT_USAGE;
	}
	snprintf(H.job.id, sizeof(H.job.id), "%s", t->job_id);
	H.job.released = on_released;
	H.job.aborting = on_abort;
	H.job.shaped = start_transport;
	H.job.failed = on_failed;
	if (ac_paths_init(&H.paths, t, 1, err, sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_USAGE;
	}
	if (!foreground) {
		detach_stdio();
		prctl(PR_SET_NAME, "accelctl-helper");
		set_title(t);
		/* Close what the client had open: a helper holding the pipe of
		 * "$(accelctl barrier x)" would make that shell wait for ever. */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != ready_fd)
				close(fd);
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	H.sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	{
		struct stat st;

		load_runid(stat(H.paths.state, &st) == -1 || st.st_size == 0);
	}
	/* Shape the job now when we know it (a client started us). */
	if (t->v[AC_WORLD] > 1 && t->v[AC_LSIZE] > 0 &&
	    ac_job_shape(&H.job, t->v[AC_LSIZE], t->v[AC_WORLD], t->v[AC_NODE],
	    t->v[AC_NNODES]) == -1)
		goto out;
	if (ac_journal_open(&H.job, H.paths.state) == -1) {
		ac_helper_log("cannot open journal %s: %s", H.paths.state, strerror(errno));
		goto out;
	}
	if (H.job.journal_size == 0 && H.job.lsize > 0)
		ac_journal_shape(&H.job);
	if ((H.lfd = listen_on(H.paths.sock, err, sizeof(err))) == -1) {
		ac_helper_log("%s", err);
		if (foreground)
			ac_warnx("%s", err);
		goto out;
	}
	write_pid_file();
	ac_helper_log("serving job %s on %s (idle exit after %lds)", H.job.id,
	    H.paths.sock, H.idle_ms / 1000);
	H.idle_since = ac_now_ms();
	if (ready_fd >= 0) {
		(void)!write(ready_fd, "r", 1);
		close(ready_fd);
		ready_fd = -1;
	}
	loop();
	unlink_own_socket();
	remove_pid_file();
	ac_helper_log("exiting");
	rc = 0;
out:
	while (H.conns != NULL)
		drop_conn(H.conns);
	if (H.job.x != NULL)
		H.job.x->stop();
	if (H.lfd >= 0)
		close(H.lfd);
	if (H.sfd >= 0)
		close(H.sfd);
	if (H.job.journal >= 0)
		close(H.job.journal);
	ac_job_free(&H.job);
	return rc;
}
