/* hconn.c: the helper's clients: one connection's input, its requests (HELLO, ARRIVE, FINISH, ...) and its replies.
 *
 * Each client is a short-lived accelctl of this node's job. Its frames are
 * read as they come (a client may send half a frame and stall), dispatched
 * to coll.c, and answered when a collective is released; a client that
 * misbehaves (no HELLO, a frame left unfinished, replies left unread) costs
 * the helper a bounded buffer and then its connection, never a spin.
 */
#define _GNU_SOURCE
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "history.h"
#include "duration.h"
#include "gone.h"
#include "helper.h"
#include "log.h"
#include "lost.h"
#include "proto.h"
#include "rankproc.h"
#include "twin.h"
#include "where.h"
#include "xport.h"

/* A rendezvous never reached since the job began fails a wait this soon
 * (DESIGN.md §4): a typo'd port costs seconds, not the deadline. */
#define NEVER_REACHED_MS 30000L
/* A status waits this long for the look it asked for (dispatch). */
#define STATUS_LOOK_MS 200L

/* An ARRIVE's timeout and progress interval, at most (ms): a year. */
#define ARRIVE_MS_MAX (366L * 24 * 3600 * 1000)

/*
 * Limits on what one local client may cost the helper (DESIGN-NOTES.md,
 * "Limits"). Each ends in a message to the client, or, for one that does not
 * read, a closed connection; never a spin or an unbounded buffer.
 */
#define FRAME_WAIT_MS	10000		/* a started frame (or HELLO) must be done by then */
#define OUT_PAUSE	65536		/* unread replies past which we stop reading requests */
#define OUT_BUDGET	(AC_FRAME_MAX + (1u << 20))	/* unread replies: then dropped */
#define IN_MAX		(AC_FRAME_HDR + AC_FRAME_MAX + 16384)	/* a client's input buffer */

void
ac_hconn_flush(struct ac_hconn *c)
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
queued(struct ac_hconn *c)
{
	ac_hconn_flush(c);
	if (c->closing != 2 && c->out.len - c->outoff > OUT_BUDGET) {
		ac_log("dropped a client (rank %lld) that left %zu bytes of "
		    "replies unread (at most %u)", (long long)c->rank,
		    c->out.len - c->outoff, (unsigned)OUT_BUDGET);
		c->closing = 2;
	}
}

static void
send_text(struct ac_hconn *c, int type, const char *text)
{
	size_t f = ac_frame_begin(&c->out, type);

	ac_put_str(&c->out, text);
	ac_frame_end(&c->out, f);
	queued(c);
}

static void
send_i64(struct ac_hconn *c, int type, int64_t v)
{
	size_t f = ac_frame_begin(&c->out, type);

	ac_put_i64(&c->out, v);
	ac_frame_end(&c->out, f);
	queued(c);
}

static void
detach(struct ac_hconn *c)
{
	free(c->timeout_text);
	c->timeout_text = NULL;
	if (c->coll == NULL)
		return;
	c->coll->waiters--;
	c->coll = NULL;
	ac_hs.idle_since = ac_now_ms();	/* the idle period starts at the last wait */
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
leave_wait(struct ac_hconn *c)
{
	struct ac_coll *co = c->coll;

	if (co == NULL)
		return;
	detach(c);
	for (struct ac_hconn *o = ac_hs.conns; o != NULL; o = o->next)
		if (o != c && o->coll == co && o->lrank == c->lrank)
			return;
	if (ac_job_withdraw(&ac_hs.job, c->lrank, co->key, co->gen) == 0)
		ac_log("rank %lld left %s generation %lld before it "
		    "completed: its arrival is withdrawn", (long long)c->rank,
		    co->key, (long long)co->gen);
}

/* A rank that C's wait needs is gone for good (lost.c): C exits 4 naming it,
 * and its arrival is taken back, as a rank's that leaves a wait is, so
 * that an attempt that runs the job again starts every rank at the same
 * generation. */
static void
release_lost(struct ac_hconn *c, const struct ac_lost *l)
{
	ac_log("rank %lld: %s: %s", (long long)c->rank, c->coll->key, l->text);
	send_text(c, AC_MSG_LOST, l->text);
	leave_wait(c);
}

/* lost.c's news: end the waits that need the rank that is gone. */
static void
on_gone(struct ac_job *j)
{
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next) {
		const struct ac_lost *l;

		if (c->coll != NULL &&
		    (l = ac_lost_needed(j, c->coll, c->root_us)) != NULL)
			release_lost(c, l);
	}
}

static void
release_one(struct ac_hconn *c)
{
	struct ac_coll *co = c->coll;
	size_t f;

	if (co->src == AC_SRC_LOST) {
		char text[512];

		ac_coll_summary(&ac_hs.job, co, text, sizeof(text));
		send_text(c, AC_MSG_ABORTED, text);
	} else {
		f = ac_frame_begin(&c->out, AC_MSG_RELEASE);
		ac_put_i64(&c->out, co->result);
		ac_put_str(&c->out, co->failed);
		ac_put_blob(&c->out, co->payload, co->paylen);
		ac_frame_end(&c->out, f);
		queued(c);
	}
	/* A source that arrived again after its FINISH was journaled (its
	 * helper died) finds the collective done and still sends FINISH. */
	c->late_finish = c->role == AC_ROLE_SOURCE;
	detach(c);
}

/* coll.c's callback: a collective was released (or its source died). A
 * waiter that reports progress and waited over a minute is told first who
 * came last (history.c), for the log of a job where one node was slow. */
static void
on_released(struct ac_job *j, struct ac_coll *co)
{
	char text[512];

	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next) {
		if (c->coll != co)
			continue;
		if (c->progress_ms > 0 && co->src != AC_SRC_LOST &&
		    ac_history_note(j, co, c->lrank, text, sizeof(text)) == 0)
			send_text(c, AC_MSG_NOTE, text);
		release_one(c);
	}
}

static void
on_abort(struct ac_job *j)
{
	ac_log("job aborted: %s", j->aborted);
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next) {
		if (c->coll != NULL) {
			send_text(c, AC_MSG_ABORTED, j->aborted);
			detach(c);
		}
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
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next)
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
	return ac_hs.job.x != NULL ? ac_hs.job.x->down(final) : NULL;
}

static void
refuse(struct ac_hconn *c, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ac_log("refused a client: %s", text);
	send_text(c, AC_MSG_ERROR, text);
	c->closing = 1;
}

static void
on_hello(struct ac_hconn *c, struct ac_rd *r)
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
		ac_log("refused a client of protocol version %u (this helper "
		    "speaks %u)", version, AC_PROTO_VERSION);
		c->closing = 1;
		return;
	}
	ac_get_str(r, job, sizeof(job));
	for (int i = 0; i < AC_NFIELDS; i++)
		v[i] = ac_get_i64(r);
	if (r->err)
		return refuse(c, "malformed HELLO");
	if (strcmp(job, ac_hs.job.id) != 0)
		return refuse(c, "this helper serves job %s, not %s", ac_hs.job.id, job);
	if (v[AC_LSIZE] < 1 || v[AC_LSIZE] > 1 << 20 || v[AC_LRANK] < 0 ||
	    v[AC_LRANK] >= v[AC_LSIZE] || v[AC_RANK] < 0 || v[AC_WORLD] < 1 ||
	    v[AC_RANK] >= v[AC_WORLD] || v[AC_LSIZE] > v[AC_WORLD] ||
	    (v[AC_NNODES] > 0 && (v[AC_NODE] < 0 || v[AC_NODE] >= v[AC_NNODES])))
		return refuse(c, "HELLO with impossible ranks");
	if (ac_hs.job.lsize == 0 && ac_job_shape(&ac_hs.job, v[AC_LSIZE], v[AC_WORLD],
	    v[AC_NODE], v[AC_NNODES]) == -1)
		return refuse(c, "out of memory");
	if (v[AC_LSIZE] != ac_hs.job.lsize || v[AC_WORLD] != ac_hs.job.world ||
	    v[AC_NODE] != ac_hs.job.node || v[AC_NNODES] != ac_hs.job.nnodes)
		return refuse(c, "rank %lld sees %lld local ranks of %lld on node "
		    "%lld of %lld, but this node's helper has %ld of %ld on node "
		    "%ld of %ld: the ranks disagree on the job's shape",
		    (long long)v[AC_RANK], (long long)v[AC_LSIZE],
		    (long long)v[AC_WORLD], (long long)v[AC_NODE],
		    (long long)v[AC_NNODES], ac_hs.job.lsize, ac_hs.job.world, ac_hs.job.node,
		    ac_hs.job.nnodes);
	c->hello = 1;
	c->lrank = (long)v[AC_LRANK];
	c->rank = v[AC_RANK];
	ac_job_hello(&ac_hs.job, c->lrank, c->rank);
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
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next)
		if (c->coll != NULL)
			return 1;
	for (long l = 0; ac_hs.rproc != NULL && l < j->lsize; l++)
		if (ac_rankproc_alive(&ac_hs.rproc[l]))
			return 1;
	return 0;
}

static void
on_arrive(struct ac_hconn *c, struct ac_rd *r)
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
	/* A status is what --status takes, 0 to 2^31-1: a negative one was
	 * exit 0 (-256) for every rank, and the stores read it apart. */
	if (r->err || scope > AC_SCOPE_NODE || role > AC_ROLE_SOURCE ||
	    source < 0 || status < 0 || status > INT32_MAX || timeout < 0 ||
	    progress < 0 || c->coll != NULL)
		return refuse(c, "malformed ARRIVE");
	if (ac_hs.job.aborted != NULL) {
		send_text(c, AC_MSG_ABORTED, ac_hs.job.aborted);
		return;
	}
	co = ac_job_arrive(&ac_hs.job, c->lrank, op, scope, role, key, nonce, gen,
	    source, status, &why);
	if (co == NULL)
		return refuse(c, "%s: %s", key, why);
	send_i64(c, AC_MSG_ACK, co->gen);
	/* Who ran this rank's call (its shell or script, past a wrapper):
	 * while one of them runs, this helper serves a live launch. */
	if (ac_hs.rproc == NULL)
		ac_hs.rproc = calloc((size_t)ac_hs.job.lsize, sizeof(*ac_hs.rproc));
	if (ac_hs.rproc != NULL)
		(void)ac_rankproc_parent(c->pid, &ac_hs.rproc[c->lrank]);
	c->coll = co;
	co->waiters++;
	c->role = role;
	c->late_finish = 0;
	/* A client sends at most 30 days (duration.c); a frame's larger one
	 * is a deadline no wait reaches, capped before the clock's sum
	 * overflows (fuzz_helper found INT64_MAX). */
	if (timeout > ARRIVE_MS_MAX)
		timeout = ARRIVE_MS_MAX;
	if (progress > ARRIVE_MS_MAX)
		progress = ARRIVE_MS_MAX;
	c->deadline = timeout > 0 ? ac_now_ms() + timeout : -1;
	c->waiting_since = ac_now_ms();
	ac_where_arrived(c->lrank);
	/* The source runs CMD and reads nothing until it finishes; progress
	 * is for those who wait (a frame it did not expect looked like a lost
	 * helper to older clients, which then gave up their source role). */
	c->progress_ms = role == AC_ROLE_SOURCE ? 0 : progress;
	c->next_progress = ac_now_ms() + progress;
	ac_gone_arrived(c);
	if (co->xfailed != NULL) {
		send_text(c, AC_MSG_FAILED, co->xfailed);
		detach(c);
	} else if (co->done || co->src == AC_SRC_LOST)
		release_one(c);
	else {
		const struct ac_lost *l = ac_lost_needed(&ac_hs.job, co, c->root_us);

		if (l != NULL)
			release_lost(c, l);
	}
}

static void
on_finish(struct ac_hconn *c, struct ac_rd *r)
{
	int64_t status = ac_get_i64(r);
	size_t n;
	const uint8_t *p = ac_get_bytes(r, &n);

	if (!r->err && c->coll == NULL && c->late_finish) {
		c->late_finish = 0;
		return;
	}
	if (r->err || c->coll == NULL || c->role != AC_ROLE_SOURCE)
		return refuse(c, "FINISH without a collective to finish");
	if (status < 0 || status > INT32_MAX)
		return refuse(c, "malformed FINISH");
	ac_job_finish(&ac_hs.job, c->coll, status, p, n);
}

static void
on_abort_msg(struct ac_hconn *c, struct ac_rd *r)
{
	char reason[512];

	ac_get_str(r, reason, sizeof(reason));
	if (r->err)
		return refuse(c, "malformed ABORT");
	ac_job_abort(&ac_hs.job, c->lrank, reason);
	send_i64(c, AC_MSG_ACK, 0);
}

static void
on_status(struct ac_hconn *c)
{
	char *text = malloc(65536);

	if (text == NULL)
		return refuse(c, "out of memory");
	ac_job_status(&ac_hs.job, text, 65536);
	if (ac_hs.job.x != NULL) {
		char t[1600];
		size_t n = strlen(text);

		ac_hs.job.x->describe(t, sizeof(t));
		snprintf(text + n, 65536 - n, "transport: %s\n", t);
	}
	send_text(c, AC_MSG_TEXT, text);
	free(text);
}

/* "status --history": the record's last N, as text or JSON. */
static void
on_history(struct ac_hconn *c, struct ac_rd *r)
{
	int64_t n = ac_get_i64(r);
	int json = ac_get_u8(r);
	char *text;

	if (r->err || n < 0 || json > 1)
		return refuse(c, "malformed HISTORY");
	/* One frame: what is past its size is left out (and said so). */
	if ((text = ac_history_format(&ac_hs.job, n > INT32_MAX ? 0 : (long)n,
	    json, AC_PAYLOAD_MAX)) == NULL)
		return refuse(c, "out of memory");
	send_text(c, AC_MSG_TEXT, text);
	free(text);
}

static void
dispatch(struct ac_hconn *c, int type, struct ac_rd *r)
{
	ac_hs.idle_since = ac_now_ms();
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
		/* The answer names the nodes of the last look: while something
		 * waits across nodes, one is read now and the answer waits
		 * STATUS_LOOK_MS for it (a loopback store answers in well
		 * under 1 ms; a slow one leaves the last look's names). */
		if (ac_hs.job.x != NULL && ac_hs.job.x->look_by != NULL &&
		    ac_hs.job.x->look_by(0) >= 0) {
			if (c->status_at > 0)
				on_status(c);	/* one answer a request, in order */
			c->status_at = ac_now_ms() + STATUS_LOOK_MS;
			return;
		}
		return on_status(c);
	case AC_MSG_HISTORY:
		return on_history(c, r);
	case AC_MSG_STOP:
		ac_log("stop requested by rank %lld", (long long)c->rank);
		send_i64(c, AC_MSG_ACK, 0);
		ac_hs.stop = 1;
		return;
	default:
		return refuse(c, "unexpected message type %d", type);
	}
}

void
ac_hconn_read(struct ac_hconn *c)
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

void
ac_hconn_drop(struct ac_hconn *c)
{
	struct ac_hconn **pp;

	/* The rank others wait for died: they exit 3 now, not at the deadline. */
	if (c->coll != NULL && c->role == AC_ROLE_SOURCE &&
	    c->coll->src == AC_SRC_RUNNING) {
		ac_log("rank %lld died while others waited for it (%s)",
		    (long long)c->rank, c->coll->key);
		struct ac_coll *co = c->coll;
		detach(c);
		ac_job_source_lost(&ac_hs.job, co);
	}
	leave_wait(c);
	for (pp = &ac_hs.conns; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	close(c->fd);
	free(c->in);
	free(c->timeout_text);
	ac_buf_free(&c->out);
	long lrank = c->hello ? c->lrank : -1;
	free(c);
	ac_hs.nconns--;
	ac_hs.accept_paused = 0;	/* an fd is free again */
	/* Its rank's process may have ended while this call waited. */
	if (lrank >= 0)
		ac_gone_closed(lrank);
	ac_job_gc(&ac_hs.job);
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
accept_at_fd_limit(int lfd, int err)
{
	static long last_log;
	char msg[200];
	int fd, saved;

	if (ac_hs.spare >= 0) {
		close(ac_hs.spare);
		ac_hs.spare = -1;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	saved = errno;
	if (fd != -1) {
		snprintf(msg, sizeof(msg), "the helper is out of file descriptors "
		    "(%s) with %ld clients: raise the fd limit (ulimit -n) of the "
		    "job", strerror(err), ac_hs.nconns);
		refuse_fd(fd, msg);
	}
	ac_hs.spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ac_now_ms() - last_log > 10000) {
		ac_log("out of file descriptors (%s) with %ld clients",
		    strerror(err), ac_hs.nconns);
		last_log = ac_now_ms();
	}
	/* EMFILE comes before the queue is looked at: EAGAIN is no client. */
	if ((fd == -1 && saved != EAGAIN) || ac_hs.spare == -1) {
		ac_hs.accept_paused = 1;
		return -1;
	}
	return fd == -1 ? -1 : 0;
}

static void
accept_one(int lfd)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cred);
	struct ac_hconn *c;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd == -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			(void)accept_at_fd_limit(lfd, errno);
		return;
	}
	/* The directory is ours and 0700, but root gets through, and an
	 * abstract name is anyone's to connect to: check the peer. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    cred.uid != getuid()) {
		ac_log("refused a client of uid %ld", (long)cred.uid);
		refuse_fd(fd, "permission denied: another user's helper");
		return;
	}
	if (ac_hs.nconns >= ac_hs.max_clients) {
		char msg[256];

		snprintf(msg, sizeof(msg), "the helper serves its maximum of %ld "
		    "clients (%ld descriptors are its limit: raise ulimit -n for "
		    "the job)", ac_hs.max_clients, ac_hs.max_clients + AC_HELPER_FD_RESERVE);
		ac_log("refused a client: %s", msg);
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
	c->next = ac_hs.conns;
	ac_hs.conns = c;
	ac_hs.nconns++;
}

/*
 * A client that started a frame (or connected without HELLO) FRAME_WAIT_MS
 * ago and did not finish it is refused: it would hold its buffer and a slot
 * for ever. Returns 1 when C is refused; else lowers *NEXT to its limit.
 */
static int
slow_client(struct ac_hconn *c, long now, long *next)
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

/* C's next line (its timeout, a progress line) names the nodes it waits
 * for: the transport reads them before it is due, not sooner (xport.h's
 * look_by). The loop wakes up for that read. */
static void
look_before_lines(const struct ac_hconn *c, long *next)
{
	long due = c->deadline, at;

	if (ac_hs.job.x == NULL || ac_hs.job.x->look_by == NULL ||
	    !ac_coll_cross(&ac_hs.job, c->coll))
		return;
	if (c->progress_ms > 0 && (due < 0 || c->next_progress < due))
		due = c->next_progress;
	if (due >= 0 && (at = ac_hs.job.x->look_by(due)) >= 0 &&
	    (*next < 0 || at < *next))
		*next = at;
}

long
ac_hconn_timers(long now, long *next_out)
{
	long next = *next_out, waiting = 0, since = -1;
	const char *twin;
	char text[2048];

	/* The lines of the waits that time out now are made before any of
	 * them leaves: two ranks at two names that time out together each
	 * say where the other waits. */
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next) {
		if (c->coll == NULL || c->deadline < 0 || now < c->deadline ||
		    c->timeout_text != NULL)
			continue;
		ac_coll_summary(&ac_hs.job, c->coll, text, sizeof(text));
		ac_where_append(c->coll, text, sizeof(text));
		c->timeout_text = strdup(text);
	}
	/* While ranks wait and one of the node's never connected, /proc is
	 * read now and then for it, alive where it cannot reach this helper
	 * (another network namespace and /tmp: twin.c); found, the node is
	 * split, and every wait on it fails. */
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next)
		if (c->coll != NULL && (since < 0 || c->waiting_since < since))
			since = c->waiting_since;
	twin = ac_twin_timer(now, ac_job_unseen(&ac_hs.job) ? since : -1, &next);
	for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next) {
		const char *down;
		int final;

		if (c->status_at > 0 && now >= c->status_at) {
			c->status_at = 0;
			on_status(c);
		} else if (c->status_at > 0 && (next < 0 || c->status_at < next))
			next = c->status_at;
		if (slow_client(c, now, &next) || c->coll == NULL)
			continue;
		waiting++;
		if (twin != NULL) {
			send_text(c, AC_MSG_FAILED, twin);
			detach(c);
			continue;
		}
		/* A transport that cannot withdraw a collective (NCCL) gives
		 * up its channel now; that may release C (on one node). */
		if (c->deadline >= 0 && now >= c->deadline &&
		    ac_coll_cross(&ac_hs.job, c->coll) && ac_hs.job.x->expired != NULL) {
			ac_hs.job.x->expired(&ac_hs.job, c->coll);
			if (c->coll == NULL)
				continue;
		}
		/* A rendezvous that is down at the deadline (or refused us for
		 * good) is accelctl failing, exit 125, not a missing rank. */
		down = ac_coll_cross(&ac_hs.job, c->coll) ? transport_down(&final) :
		    NULL;
		if (down == NULL && ac_coll_cross(&ac_hs.job, c->coll))
			ac_hs.job.xreached = 1;
		if (down != NULL && !final && !ac_hs.job.xreached &&
		    now >= c->waiting_since + NEVER_REACHED_MS) {
			snprintf(text, sizeof(text), "rendezvous never reached in "
			    "%lds since the job began: %s", NEVER_REACHED_MS / 1000,
			    down);
			send_text(c, AC_MSG_FAILED, text);
			detach(c);
			continue;
		}
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
		 * withdraws (ac_hconn_drop). */
		if (c->deadline >= 0 && now >= c->deadline) {
			if (c->timeout_text == NULL) {
				ac_coll_summary(&ac_hs.job, c->coll, text, sizeof(text));
				ac_where_append(c->coll, text, sizeof(text));
			} else
				snprintf(text, sizeof(text), "%s", c->timeout_text);
			send_text(c, AC_MSG_TIMEOUT, text);
			ac_where_timed_out(c->lrank, c->coll->key, c->coll->gen);
			detach(c);
			continue;
		}
		if (c->progress_ms > 0 && now >= c->next_progress) {
			size_t n;

			ac_coll_summary(&ac_hs.job, c->coll, text, sizeof(text));
			ac_where_append(c->coll, text, sizeof(text));
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
		look_before_lines(c, &next);
		if (down != NULL && !ac_hs.job.xreached &&
		    (next < 0 || c->waiting_since + NEVER_REACHED_MS < next))
			next = c->waiting_since + NEVER_REACHED_MS;
		if (c->progress_ms > 0 && (next < 0 || c->next_progress < next))
			next = c->next_progress;
	}
	/* A split node never posts: the other nodes would wait for it to
	 * their deadline. They are told, as by abort (exit 3, the words). */
	if (twin != NULL && ac_hs.job.nnodes > 1 && ac_hs.job.aborted == NULL)
		ac_job_abort(&ac_hs.job, -1, twin);
	*next_out = next;
	return waiting;
}

void
ac_hconn_accept(int lfd)
{
	/* A batch, not until EAGAIN: a flood of connects must not starve
	 * the clients already served. */
	for (int i = 0; i < 64; i++) {
		long before = ac_hs.nconns;

		accept_one(lfd);
		if (ac_hs.nconns == before)
			break;
	}
}

short
ac_hconn_events(const struct ac_hconn *c)
{
	/* A client that does not read its replies is not read either. */
	return (short)((c->out.len - c->outoff > OUT_PAUSE ? 0 : POLLIN) |
	    (c->out.len > c->outoff ? POLLOUT : 0));
}

int
ac_hconn_ready(struct ac_hconn *c, short revents)
{
	if (revents & POLLOUT)
		ac_hconn_flush(c);
	if (revents & (POLLIN | POLLHUP | POLLERR))
		ac_hconn_read(c);
	if (c->closing == 1 && c->out.len == c->outoff)
		c->closing = 2;
	if (c->closing != 2)
		return 0;
	ac_hconn_drop(c);
	return 1;
}

void
ac_hconn_bind(struct ac_job *j)
{
	j->released = on_released;
	j->aborting = on_abort;
	j->gone = on_gone;
	j->failed = on_failed;
	j->alive = ranks_alive;
}
