/* client.c: a short-lived accelctl talking to its node's helper.
 *
 * Connecting follows tmux's client_connect(): try the socket; on ENOENT or
 * ECONNREFUSED take a flock on the job's lock file, try once more (another
 * client may have started the helper while we waited), and only then start
 * one. The helper is this same program, forked twice and detached; it says
 * it is listening by writing one byte to a pipe, so no client polls for it.
 * Where the file socket is not there (ranks with a private /tmp each), the
 * helper's abstract name is tried (rundir.h), before one is started and
 * after: a helper started here stands down for one serving there.
 */
#define _GNU_SOURCE
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "helper.h"
#include "msg.h"
#include "parent.h"
#include "spawn.h"

/* How long a client waits for a helper it started to listen. */
#define START_WAIT_MS 10000
/* How long a connect may find the helper's listen queue full (EAGAIN). */
#define CONNECT_WAIT_MS 10000

/*
 * Connect without blocking: a Unix socket whose listen queue is full (a
 * stopped or swamped helper) makes a blocking connect(2) wait for ever. A
 * full queue is EAGAIN; we try again for CONNECT_WAIT_MS, then fail with
 * ETIMEDOUT. The descriptor is blocking again on return.
 */
static int
connect_to(const struct sockaddr_un *sa, socklen_t salen)
{
	long until = ac_now_ms() + CONNECT_WAIT_MS;
	int fd, saved;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	while (connect(fd, (const struct sockaddr *)sa, salen) == -1) {
		struct timespec ts = { 0, 20 * 1000000L };

		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			goto fail;
		if (ac_now_ms() >= until) {
			errno = ETIMEDOUT;
			goto fail;
		}
		nanosleep(&ts, NULL);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1)
		goto fail;
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static int
try_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	return connect_to(&sa, sizeof(sa));
}

/*
 * The helper's abstract name (rundir.h): -1 with errno ECONNREFUSED when
 * nobody listens there (or no name, off Linux). Anyone may bind an
 * abstract name: a listener that is not of our uid is refused, said once.
 */
static int
try_abstract(struct ac_client *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cr = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cr);
	int fd;

	if (c->paths.asock_len == 0 || c->paths.asock_len > sizeof(sa.sun_path)) {
		errno = ECONNREFUSED;
		return -1;
	}
	memcpy(sa.sun_path, c->paths.asock, c->paths.asock_len);
	fd = connect_to(&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    c->paths.asock_len));
	if (fd == -1)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1 ||
	    cr.uid != getuid()) {
		static int said;

		if (!said++)
			ac_warnx("the helper's abstract socket @%s is held by uid "
			    "%ld, not yours: not used", sa.sun_path + 1,
			    (long)cr.uid);
		close(fd);
		errno = ECONNREFUSED;
		return -1;
	}
	c->name_pid = cr.pid > 0 ? (long)cr.pid : -1;
	return fd;
}

struct helper_start {
	const struct ac_topo	*t;
	int			 ready;
};

static int
helper_body(void *arg)
{
	struct helper_start *h = arg;

	return ac_helper_main(h->t, h->ready, 0);
}

/* Start the helper, detached from us (spawn.c); it says "r" on a pipe once
 * it listens. */
static int
start_helper(struct ac_client *c)
{
	int ready[2];
	char b;
	struct pollfd pfd;
	struct helper_start h = { .t = c->t };
	struct ac_child k = AC_CHILD_INIT;

	if (pipe2(ready, O_CLOEXEC) == -1)
		return -1;
	h.ready = ready[1];
	k.fn = helper_body;
	k.arg = &h;
	k.close_fd = ready[0];
	k.detach = 1;
	if (ac_child_start(&k) == -1) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	close(ready[1]);
	pfd = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	if (poll(&pfd, 1, START_WAIT_MS) != 1 || read(ready[0], &b, 1) != 1) {
		close(ready[0]);
		errno = ECONNREFUSED;
		return -1;
	}
	close(ready[0]);
	return 0;
}

static int
connect_or_start(struct ac_client *c, int autostart)
{
	int fd, lockfd;

	if ((fd = try_connect(c->paths.sock)) != -1)
		return fd;
	if (errno != ENOENT && errno != ECONNREFUSED)
		return -1;
	if ((fd = try_abstract(c)) != -1 || errno == ETIMEDOUT)
		return fd;
	errno = ENOENT;
	if (!autostart)
		return -1;
	lockfd = open(c->paths.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lockfd == -1)
		return -1;
	if (flock(lockfd, LOCK_EX) == -1) {
		close(lockfd);
		return -1;
	}
	if ((fd = try_connect(c->paths.sock)) == -1 &&
	    (fd = try_abstract(c)) == -1) {
		/* A socket nobody listens on is stale: its helper died. */
		unlink(c->paths.sock);
		if (start_helper(c) == 0)
			fd = try_connect(c->paths.sock);
		/* It stood down for a helper that serves this node from a
		 * runtime directory we cannot see (helper.c: claim_abstract). */
		if (fd == -1 && errno != ETIMEDOUT)
			fd = try_abstract(c);
	}
	close(lockfd);	/* releases the flock */
	return fd;
}

static int
hello(struct ac_client *c, int *rc)
{
	struct ac_buf b = { 0 };
	struct ac_rd r;
	size_t f;
	int type;
	char text[512];

	f = ac_frame_begin(&b, AC_MSG_HELLO);
	ac_put_u32(&b, AC_PROTO_VERSION);
	ac_put_str(&b, c->t->job_id);
	for (int i = 0; i < AC_NFIELDS; i++)
		ac_put_i64(&b, c->t->v[i]);
	ac_frame_end(&b, f);
	type = ac_client_send(c, &b);
	ac_buf_free(&b);
	/* A helper that refuses us at accept (its maximum of clients, out of
	 * descriptors) may have closed before our HELLO went out: the send
	 * fails, but its reason waits in our socket, and is read below. */
	type = ac_client_recv(c, ac_now_ms() + (type == -1 ? 1000 :
	    START_WAIT_MS), &r);
	if (type == AC_MSG_WELCOME) {
		uint32_t v = ac_get_u32(&r);

		c->helper_pid = (long)ac_get_i64(&r);
		if (v != AC_PROTO_VERSION) {
			ac_warnx("the helper speaks protocol version %u, this "
			    "accelctl speaks version %u: %s", v, AC_PROTO_VERSION,
			    v < AC_PROTO_VERSION ? "stop the old helper "
			    "(accelctl helper stop) or use one accelctl version" :
			    "this accelctl is older than the one that started "
			    "the helper: use one accelctl version");
			*rc = AC_EXIT_FAILED;
			return -2;
		}
		return 0;
	}
	if (type == AC_MSG_ERROR) {
		static char said[512];

		ac_get_str(&r, text, sizeof(text));
		/* A client that retries (a slot may free up) says it once. */
		if (strcmp(said, text) != 0)
			ac_warnx("helper refused: %s", text);
		snprintf(said, sizeof(said), "%s", text);
		/* Before WELCOME: refused at accept, not for what we said. */
		c->turned_away = 1;
		snprintf(c->why, sizeof(c->why), "%.200s", text);
		*rc = AC_EXIT_FAILED;
		return -2;
	}
	return -1;
}

int
ac_client_open(struct ac_client *c, const struct ac_topo *t, int autostart,
    int *rc)
{
	char err[512];
	int h;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->t = t;
	if (ac_paths_init(&c->paths, t, autostart, err,
	    sizeof(err)) == -1) {
		/* No runtime directory here, but a helper may serve this
		 * node by its abstract name, from a /tmp we do not see (a
		 * container's): "status" and "helper stop" must find it
		 * (rundir.c names it, and makes no directory). */
		if (!autostart && errno == ENOENT) {
			if ((c->fd = try_abstract(c)) != -1)
				goto connected;
			return -2;
		}
		ac_warnx("%s", err);
		*rc = AC_EXIT_USAGE;
		return -1;
	}
	if ((c->fd = connect_or_start(c, autostart)) == -1) {
		int saved = errno;

		/* A client that retries opens the directory again. */
		ac_paths_close(&c->paths);
		errno = saved;
		if (errno == ETIMEDOUT) {
			ac_warnx("the helper at %s does not accept connections: "
			    "its listen queue stayed full for %ds (its log: %s)",
			    c->paths.shown_sock, CONNECT_WAIT_MS / 1000,
			    c->paths.shown_log);
			*rc = AC_EXIT_FAILED;
			c->busy = 1;
			return -1;
		}
		if (!autostart)
			return -2;
		ac_warn("cannot reach the helper at %s (its log: %s)",
		    c->paths.shown_sock, c->paths.shown_log);
		*rc = AC_EXIT_FAILED;
		return -1;
	}
connected:
	if ((h = hello(c, rc)) == 0)
		return 0;
	/* The reply buffer too: a client retrying in a loop must not leak it. */
	ac_client_close(c);
	if (h == -1 && c->name_pid != 0)
		ac_warnx("the helper at @%s (pid %ld, by its abstract name: "
		    "not in this runtime directory) did not answer HELLO or "
		    "closed the connection", c->paths.asock + 1, c->name_pid);
	else if (h == -1)
		ac_warnx("the helper at %s closed the connection (its log: %s)",
		    c->paths.shown_sock, c->paths.shown_log);
	if (h == -1)
		*rc = AC_EXIT_FAILED;
	return -1;
}

void
ac_client_close(struct ac_client *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	ac_paths_close(&c->paths);
	free(c->in);
	c->in = NULL;
	c->inlen = c->incap = c->consumed = 0;
}

/*
 * Take in what the helper sent while we send: a helper whose replies to us
 * go unread past its limit stops reading us (hconn.c), so a large FINISH
 * sent against a large RELEASE it queued (a source reconnecting to a helper
 * that replayed its collective as done) blocked both for ever. Frames read
 * here wait in c->in for ac_client_recv. At most two of the largest frames
 * are held: past that the helper is not one we speak with.
 */
static int
take_in(struct ac_client *c)
{
	ssize_t n;

	if (c->consumed > 0) {
		memmove(c->in, c->in + c->consumed, c->inlen - c->consumed);
		c->inlen -= c->consumed;
		c->consumed = 0;
	}
	if (c->incap - c->inlen < 65536) {
		size_t cap = c->incap ? c->incap * 2 : 65536;
		uint8_t *p;

		if (cap > 2 * (size_t)AC_FRAME_MAX + 65536)
			return -1;
		if ((p = realloc(c->in, cap)) == NULL)
			return -1;
		c->in = p;
		c->incap = cap;
	}
	n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return -1;
	c->inlen += (size_t)n;
	return 0;
}

int
ac_client_send(struct ac_client *c, const struct ac_buf *b)
{
	size_t off = 0;

	if (b->err)
		return -1;
	while (off < b->len) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLOUT };
		ssize_t n;

		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if ((pfd.revents & POLLIN) && take_in(c) == -1)
			return -1;
		if (!(pfd.revents & (POLLOUT | POLLERR | POLLHUP)))
			continue;
		n = send(c->fd, b->p + off, b->len - off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

int
ac_client_request(struct ac_client *c, int type, const char *text,
    struct ac_rd *r)
{
	struct ac_buf b = { 0 };
	size_t f = ac_frame_begin(&b, type);
	int rc;

	if (text != NULL)
		ac_put_str(&b, text);
	ac_frame_end(&b, f);
	rc = ac_client_send(c, &b) == 0 ?
	    ac_client_recv(c, ac_now_ms() + 10000, r) : -1;
	ac_buf_free(&b);
	return rc;
}

int
ac_client_recv(struct ac_client *c, long deadline, struct ac_rd *r)
{
	long flen;

	/* Drop the frame handed out by the previous call. */
	if (c->consumed > 0) {
		memmove(c->in, c->in + c->consumed, c->inlen - c->consumed);
		c->inlen -= c->consumed;
		c->consumed = 0;
	}
	for (;;) {
		struct pollfd pfd[2] = { { .fd = c->fd, .events = POLLIN },
		    { .fd = c->watch_parent ? ac_parent_fd() : -1,
		    .events = POLLIN } };
		ssize_t n;
		int timeout = ac_poll_ms(deadline);

		if ((flen = ac_frame_ready(c->in, c->inlen)) == -1)
			return -1;
		if (flen > 0)
			break;
		if (c->incap - c->inlen < 65536) {
			size_t cap = c->incap ? c->incap * 2 : 65536;
			uint8_t *p = realloc(c->in, cap);
			if (p == NULL)
				return -1;
			c->in = p;
			c->incap = cap;
		}
		/* Without a pidfd, the parent is looked at every second. */
		if (c->watch_parent && pfd[1].fd < 0 &&
		    (timeout < 0 || timeout > 1000))
			timeout = 1000;
		n = poll(pfd, 2, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (c->watch_parent && (pfd[1].fd >= 0 ?
		    (pfd[1].revents & POLLIN) != 0 : ac_parent_gone()))
			return -3;
		if (pfd[0].revents == 0) {
			if (deadline >= 0 && ac_now_ms() >= deadline)
				return -2;
			continue;
		}
		n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c->inlen += (size_t)n;
	}
	c->consumed = (size_t)flen;
	r->p = c->in + AC_FRAME_HDR;
	r->n = (size_t)flen - AC_FRAME_HDR;
	r->err = 0;
	return c->in[4];
}
