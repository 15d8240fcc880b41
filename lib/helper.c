/* helper.c: the resident per-node helper: one event loop over a Unix socket.
 *
 * One helper serves one job on one node. Clients (short-lived accelctl
 * processes) say HELLO, then ARRIVE at a collective and block on their socket
 * until the helper answers RELEASE, TIMEOUT or ABORTED: no client polls, and
 * the helper wakes only for a message, a deadline of a waiting client or its
 * own idle timeout. The generation state lives in coll.c and its journal.
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
#include "rankproc.h"
#include "rdvurl.h"
#include "rundir.h"
#include "transport.h"
#include "xport.h"

/*
 * Limits on what one local client may cost the helper (DESIGN-NOTES.md,
 * "Limits"). Each ends in a message to the client, or, for one that does not
 * read, a closed connection; never a spin or an unbounded buffer.
 */
#define MAX_CLIENTS	1024		/* connections; fewer under a low fd limit */
#define FD_RESERVE	32		/* fds kept for the journal, transports, logs */
#define FRAME_WAIT_MS	10000		/* a started frame (or HELLO) must be done by then */
#define OUT_PAUSE	65536		/* unread replies past which we stop reading requests */
#define OUT_BUDGET	(AC_FRAME_MAX + (1u << 20))	/* unread replies: then dropped */
#define IN_MAX		(AC_FRAME_HDR + AC_FRAME_MAX + 16384)	/* a client's input buffer */

struct conn {
	struct conn	*next;
	int		 fd;
	uint8_t		*in;
	size_t		 inlen, incap;
	long		 since;		/* accepted, or the unfinished frame's first byte */
	struct ac_buf	 out;
	size_t		 outoff;
	int		 hello, closing;
	long		 lrank;
	int64_t		 rank;
	struct ac_coll	*coll;		/* the collective it waits on */
	int		 role;
	long		 deadline;	/* ms, -1 none */
	long		 progress_ms, next_progress;
	long		 pid;		/* the client's (SO_PEERCRED) */
};

static struct {
	struct ac_job	 job;
	struct ac_paths	 paths;
	struct conn	*conns;
	long		 nconns;
	int		 lfd, sfd;
	int		 spare;		/* a reserved fd, to refuse clients at EMFILE */
	int		 accept_paused;	/* at the fd limit: until a connection closes */
	long		 max_clients;
	int		 pidfd;		/* the .pid file, flocked for our whole life */
	struct ac_rankproc *rproc;	/* [lsize]: who ran each rank's last call */
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
	/* A reply as large as a broadcast is not kept once sent. */
	if (c->out.cap > OUT_PAUSE)
		ac_buf_free(&c->out);
}

/* Queue what the client has not read; a client that stops reading its
 * replies is dropped at OUT_BUDGET rather than let grow the helper. */
static void
queued(struct conn *c)
{
	flush_out(c);
	if (c->closing != 2 && c->out.len - c->outoff > OUT_BUDGET) {
		ac_helper_log("dropped a client (rank %lld) that left %zu bytes of "
		    "replies unread (at most %u)", (long long)c->rank,
		    c->out.len - c->outoff, (unsigned)OUT_BUDGET);
		c->closing = 2;
	}
}

static void
send_text(struct conn *c, int type, const char *text)
{
	size_t f = ac_frame_begin(&c->out, type);

	ac_put_str(&c->out, text);
	ac_frame_end(&c->out, f);
	queued(c);
}

static void
send_i64(struct conn *c, int type, int64_t v)
{
	size_t f = ac_frame_begin(&c->out, type);

	ac_put_i64(&c->out, v);
	ac_frame_end(&c->out, f);
	queued(c);
}

static void
detach(struct conn *c)
{
	if (c->coll == NULL)
		return;
	c->coll->waiters--;
	c->coll = NULL;
	H.idle_since = ac_now_ms();	/* the idle period starts at the last wait */
	c->deadline = -1;
	c->progress_ms = 0;
}

/*
 * C's process left its wait before the collective completed (killed, its
 * parent gone, Ctrl-C: its connection dropped): its arrival is withdrawn
 * (coll.c), unless another
 * connection of the same rank waits there (a client that gave up on a slow
 * ACK and arrived again with its nonce before this one's close was read).
 */
static void
leave_wait(struct conn *c)
{
	struct ac_coll *co = c->coll;

	if (co == NULL)
		return;
	detach(c);
	for (struct conn *o = H.conns; o != NULL; o = o->next)
		if (o != c && o->coll == co && o->lrank == c->lrank)
			return;
	if (ac_job_withdraw(&H.job, c->lrank, co->key, co->gen) == 0)
		ac_helper_log("rank %lld left %s generation %lld before it "
		    "completed: its arrival is withdrawn", (long long)c->rank,
		    co->key, (long long)co->gen);
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
		queued(c);
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
	queued(c);
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
	    v[AC_LRANK] >= v[AC_LSIZE] || v[AC_RANK] < 0 || v[AC_WORLD] < 1 ||
	    v[AC_RANK] >= v[AC_WORLD] || v[AC_LSIZE] > v[AC_WORLD] ||
	    (v[AC_NNODES] > 0 && (v[AC_NODE] < 0 || v[AC_NODE] >= v[AC_NNODES])))
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

/* Does a process of this node's ranks still run (a rank waiting at a
 * collective, or the processes that ran one's last collective call)? An
 * earlier launch's helper, idling on after its ranks ended, says no
 * (coll.h: alive). `status`, `helper` and the like are not ranks: an
 * operator's shell that ran one would keep an old launch alive for ever,
 * and overwrite the record of the rank whose LOCAL_RANK it has. */
static int
ranks_alive(struct ac_job *j)
{
	for (struct conn *c = H.conns; c != NULL; c = c->next)
		if (c->coll != NULL)
			return 1;
	for (long l = 0; H.rproc != NULL && l < j->lsize; l++)
		if (ac_rankproc_alive(&H.rproc[l]))
			return 1;
	return 0;
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
	/* The key and op are checked by ac_job_arrive (the journal's replay
	 * goes there too), which says what is wrong with them. */
	if (r->err || scope > AC_SCOPE_NODE || role > AC_ROLE_SOURCE ||
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
	/* Who ran this rank's call (its shell or script, past a wrapper):
	 * while one of them runs, this helper serves a live launch. */
	if (H.rproc == NULL)
		H.rproc = calloc((size_t)H.job.lsize, sizeof(*H.rproc));
	if (H.rproc != NULL)
		(void)ac_rankproc_parent(c->pid, &H.rproc[c->lrank]);
	c->coll = co;
	co->waiters++;
	c->role = role;
	c->deadline = timeout > 0 ? ac_now_ms() + timeout : -1;
	/* The source runs CMD and reads nothing until it finishes; progress
	 * is for those who wait (a frame it did not expect looked like a lost
	 * helper to older clients, which then gave up their source role). */
	c->progress_ms = role == AC_ROLE_SOURCE ? 0 : progress;
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
	H.idle_since = ac_now_ms();
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
			c->since = ac_now_ms();
		}
		if (c->closing)
			return;
		/* Replies unread past OUT_PAUSE: read no more now (poll asks
		 * for POLLIN again once they drain). Looping on to EAGAIN let
		 * a client that writes as fast as we read, or many requests a
		 * write, get hundreds of thousands in. */
		if (c->out.len - c->outoff > OUT_PAUSE)
			return;
		/* The buffer a broadcast needed is not kept. */
		if (c->inlen == 0 && c->incap > 65536) {
			free(c->in);
			c->in = NULL;
			c->incap = 0;
		}
		/* Room for one whole frame of the largest size (ac_frame_ready
		 * refuses larger ones), and a little of the next. */
		if (c->incap - c->inlen < 16384 && c->incap < IN_MAX) {
			size_t cap = c->incap ? c->incap * 2 : 16384;
			uint8_t *p;

			if (cap > IN_MAX)
				cap = IN_MAX;
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
		if (c->inlen == 0)
			c->since = ac_now_ms();	/* a new frame starts */
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
	leave_wait(c);
	for (pp = &H.conns; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	close(c->fd);
	free(c->in);
	ac_buf_free(&c->out);
	free(c);
	H.nconns--;
	H.accept_paused = 0;	/* an fd is free again */
	ac_job_gc(&H.job);
}

/* Send one ERROR frame to a connection we do not keep, and close it. */
static void
refuse_fd(int fd, const char *msg)
{
	struct ac_buf b = { 0 };
	size_t f = ac_frame_begin(&b, AC_MSG_ERROR);

	ac_put_str(&b, msg);
	ac_frame_end(&b, f);
	if (!b.err)
		(void)!send(fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
	ac_buf_free(&b);
	close(fd);
}

/*
 * Out of descriptors (EMFILE, ENFILE): the pending client would make poll
 * report the listener again at once, so the loop would spin. The reserved
 * descriptor is given up for a moment to accept it and tell it why, as
 * libev and nginx do; when even that fails, the listener is not polled
 * until a connection closes. Returns 0 when a client was refused.
 */
static int
accept_at_fd_limit(int err)
{
	static long last_log;
	char msg[200];
	int fd, saved;

	if (H.spare >= 0) {
		close(H.spare);
		H.spare = -1;
	}
	fd = accept4(H.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	saved = errno;
	if (fd != -1) {
		snprintf(msg, sizeof(msg), "the helper is out of file descriptors "
		    "(%s) with %ld clients: raise the fd limit (ulimit -n) of the "
		    "job", strerror(err), H.nconns);
		refuse_fd(fd, msg);
	}
	H.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ac_now_ms() - last_log > 10000) {
		ac_helper_log("out of file descriptors (%s) with %ld clients",
		    strerror(err), H.nconns);
		last_log = ac_now_ms();
	}
	/* EMFILE comes before the queue is looked at: EAGAIN is no client. */
	if ((fd == -1 && saved != EAGAIN) || H.spare == -1) {
		H.accept_paused = 1;
		return -1;
	}
	return fd == -1 ? -1 : 0;
}

static void
accept_conn(void)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int fd = accept4(H.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd == -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			(void)accept_at_fd_limit(errno);
		return;
	}
	/* The directory is ours and 0700, but root gets through: check the peer. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    cred.uid != getuid()) {
		ac_helper_log("refused a client of uid %ld", (long)cred.uid);
		refuse_fd(fd, "permission denied: another user's helper");
		return;
	}
	if (H.nconns >= H.max_clients) {
		char msg[160];

		snprintf(msg, sizeof(msg), "the helper serves its maximum of %ld "
		    "clients", H.max_clients);
		ac_helper_log("refused a client: %s", msg);
		refuse_fd(fd, msg);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		refuse_fd(fd, "the helper is out of memory");
		return;
	}
	c->fd = fd;
	c->pid = (long)cred.pid;
	c->since = ac_now_ms();
	c->deadline = -1;
	c->lrank = -1;
	c->rank = -1;
	c->next = H.conns;
	H.conns = c;
	H.nconns++;
}

/*
 * A client that started a frame (or connected without HELLO) FRAME_WAIT_MS
 * ago and did not finish it is refused: it would hold its buffer and a slot
 * for ever. Returns 1 when C is refused; else lowers *NEXT to its limit.
 */
static int
slow_client(struct conn *c, long now, long *next)
{
	long end = c->since + FRAME_WAIT_MS;

	if (c->closing || (c->inlen == 0 && c->hello))
		return 0;
	if (now >= end) {
		refuse(c, "%s for %lds: closing the connection", c->hello ?
		    "an incomplete frame" : "no HELLO", FRAME_WAIT_MS / 1000);
		*next = now;	/* the loop drops it */
		return 1;
	}
	if (*next < 0 || end < *next)
		*next = end;
	return 0;
}

/* Deadlines and progress reports of waiting clients; the next wake-up. */
static long
timers(void)
{
	long now = ac_now_ms(), next = -1, waiting = 0;
	char text[2048];

	if (H.job.x != NULL) {
		long t = H.job.x->timer(now);
		if (t >= 0)
			next = now + t;
	}

	for (struct conn *c = H.conns; c != NULL; c = c->next) {
		const char *down;
		int final;

		if (slow_client(c, now, &next) || c->coll == NULL)
			continue;
		waiting++;
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
		/* A rank that timed out is alive and was there: its arrival
		 * stays (DESIGN-NOTES "Deadlines"); only a rank that is gone
		 * withdraws (drop_conn). */
		if (c->deadline >= 0 && now >= c->deadline) {
			ac_coll_summary(&H.job, c->coll, text, sizeof(text));
			send_text(c, AC_MSG_TIMEOUT, text);
			detach(c);
			continue;
		}
		if (c->progress_ms > 0 && now >= c->next_progress) {
			size_t n;

			ac_coll_summary(&H.job, c->coll, text, sizeof(text));
			/* Say so while the rendezvous is down: "waiting for other
			 * nodes" alone would send the reader to the wrong place. */
			n = strlen(text);
			if (down != NULL && n < sizeof(text))
				snprintf(text + n, sizeof(text) - n, " (rendezvous "
				    "unreachable: %s)", down);
			send_text(c, AC_MSG_PROGRESS, text);
			c->next_progress = now + c->progress_ms;
		}
		if (c->deadline >= 0 && (next < 0 || c->deadline < next))
			next = c->deadline;
		if (c->progress_ms > 0 && (next < 0 || c->next_progress < next))
			next = c->next_progress;
	}
	/* Only clients that wait keep the helper: a connection that holds
	 * half a frame or says nothing does not. */
	if (waiting == 0) {
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
		int fd = open(H.paths.pid, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		int n;

		if (fd == -1) {
			snprintf(err, errlen, "cannot open %.300s: %s", H.paths.pid,
			    strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
			pid[n > 0 ? n : 0] = '\0';
			pid[strcspn(pid, "\n")] = '\0';
			snprintf(err, errlen, "another helper (pid %s) already serves "
			    "job %.100s: it holds %.300s", *pid ? pid : "?", H.job.id,
			    H.paths.pid);
			close(fd);
			return -1;
		}
		if (fstat(fd, &a) == 0 && stat(H.paths.pid, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
			if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, (size_t)n, 0) != n)
				ac_helper_log("cannot write %s: %s", H.paths.pid,
				    strerror(errno));
			H.pidfd = fd;
			return 0;
		}
		close(fd);	/* unlinked by the helper that held it: again */
	}
	snprintf(err, errlen, "cannot lock %.300s", H.paths.pid);
	return -1;
}

/* Our pid file goes before the lock does (we hold it: it is ours). */
static void
remove_pid_file(void)
{
	if (H.pidfd < 0)
		return;
	unlink(H.paths.pid);
	close(H.pidfd);
	H.pidfd = -1;
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
		pfd[n++] = (struct pollfd){ .fd = H.accept_paused ? -1 : H.lfd,
		    .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = H.sfd, .events = POLLIN };
		/* A client that does not read its replies is not read either. */
		for (c = H.conns; c != NULL; c = c->next)
			pfd[n++] = (struct pollfd){ .fd = c->fd, .events =
			    (c->out.len - c->outoff > OUT_PAUSE ? 0 : POLLIN) |
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
	H.lfd = H.sfd = H.spare = H.pidfd = -1;
	if (ac_helper_idle_ms(idle, &H.idle_ms, &why) == -1) {
		ac_warnx("invalid ACCELCTL_HELPER_IDLE='%.40s': %s", idle, why);
		return AC_EXIT_USAGE;
	}
	snprintf(H.job.id, sizeof(H.job.id), "%s", t->job_id);
	H.job.released = on_released;
	H.job.alive = ranks_alive;
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
		close_inherited(ready_fd);
		/* That closed the runtime directory too: open it again. */
		ac_paths_close(&H.paths);
		if (ac_paths_init(&H.paths, t, 1, err, sizeof(err)) == -1) {
			ac_helper_log("%s", err);
			return AC_EXIT_USAGE;
		}
	}
	if (H.paths.note[0] != '\0')
		ac_helper_log("runtime directory %s: %s", H.paths.dir,
		    H.paths.note);
	/* Not the job's working directory: it may be a mount to unmount. The
	 * runtime directory's paths are absolute, or through its descriptor
	 * (rundir.c). */
	if (chdir("/") == -1)
		ac_helper_log("chdir /: %s", strerror(errno));
	H.max_clients = client_limit();
	H.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	/* A file size limit is a journal write that fails (logged), not death. */
	signal(SIGXFSZ, SIG_IGN);
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
	if (lock_for_life(err, sizeof(err)) == -1) {
		ac_helper_log("%s", err);
		if (foreground)
			ac_warnx("%s", err);
		goto out;
	}
	/* We hold the lock: a socket file left there is a dead helper's
	 * (kill -9), and bind would fail on it. */
	if (unlink(H.paths.sock) == 0)
		ac_helper_log("removed the stale socket of a helper that died");
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
	ac_helper_log("serving job %s on %s (idle exit after %lds, at most %ld "
	    "clients)", H.job.id, H.paths.shown_sock, H.idle_ms / 1000,
	    H.max_clients);
	H.idle_since = ac_now_ms();
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
	if (H.job.aborted != NULL && t->job_id_from != NULL &&
	    strcmp(t->job_id_from, "default") == 0) {
		ac_helper_log("the abort of this hand-run job ends with this "
		    "helper: removing its journal");
		unlink(H.paths.state);
	}
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
	if (H.spare >= 0)
		close(H.spare);
	remove_pid_file();
	ac_paths_close(&H.paths);
	ac_job_free(&H.job);
	free(H.rproc);
	return rc;
}
