/* test_client.c: the client's edges that shell tests cannot reach: memory per
 * failed connect, a helper whose listen queue is full, poll timeouts beyond
 * INT_MAX ms, a large send against a helper that writes first and reads
 * later, and the small validators of keys, idle times and URLs.
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "client.h"
#include "coll.h"
#include "duration.h"
#include "helper.h"
#include "rankproc.h"
#include "rdvurl.h"

static char dir[] = "/tmp/accelctl-test-client.XXXXXX";

static struct ac_topo
topo(void)
{
	struct ac_topo t = { .launcher = "explicit", .job_id_from = "ACCELCTL_JOB_ID" };

	snprintf(t.job_id, sizeof(t.job_id), "tc");
	t.v[AC_RANK] = 0;
	t.v[AC_WORLD] = 2;
	t.v[AC_LRANK] = 0;
	t.v[AC_LSIZE] = 2;
	t.v[AC_NODE] = 0;
	t.v[AC_NNODES] = 1;
	return t;
}

static int
listen_at(const char *path, int backlog)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, backlog) == -1) {
		perror(path);
		exit(1);
	}
	return fd;
}

/*
 * A "helper" that accepts and closes at once: every open fails after the
 * reply buffer was allocated. 200 failed opens must not cost 200 x 64 KiB.
 */
static void
test_no_leak_per_failed_open(void)
{
	struct ac_topo t = topo();
	struct ac_client c;
	char path[100];
	size_t before, after;
	int lfd, rc, saved;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/tc.sock", dir);
	lfd = listen_at(path, 64);
	if ((pid = fork()) == 0) {
		for (;;) {
			int fd = accept(lfd, NULL, NULL);
			char hello[512];

			/* Read the HELLO, so the client waits for a reply. */
			if (fd >= 0 && read(fd, hello, sizeof(hello)) >= 0)
				close(fd);
		}
	}
	close(lfd);
	memset(&c, 0, sizeof(c));
	(void)ac_client_open(&c, &t, 0, &rc);	/* the first allocations */
	before = mallinfo2().uordblks;
	saved = dup(STDERR_FILENO);	/* 200 times the same message */
	dup2(open("/dev/null", O_WRONLY), STDERR_FILENO);
	for (int i = 0; i < 200; i++)
		CHECK(ac_client_open(&c, &t, 0, &rc) != 0);
	dup2(saved, STDERR_FILENO);
	after = mallinfo2().uordblks;
	fprintf(stderr, "heap in use: %zu before, %zu after 200 failed opens\n",
	    before, after);
	CHECK(after < before + 65536);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
}

/* A helper whose listen queue is full (stopped, swamped): the client gives
 * up after its connect deadline (10 s) with a message, never blocks. */
static void
test_full_queue(void)
{
	struct ac_topo t = topo();
	struct ac_client c;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[100];
	long t0;
	int lfd, rc = 0, fill[4];

	snprintf(path, sizeof(path), "%s/tc.sock", dir);
	lfd = listen_at(path, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (int i = 0; i < 4; i++) {
		fill[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		(void)connect(fill[i], (struct sockaddr *)&sa, sizeof(sa));
	}
	t0 = ac_now_ms();
	CHECK(ac_client_open(&c, &t, 1, &rc) == -1);
	CHECK(rc == 125);
	CHECK(c.busy == 1);
	CHECK(ac_now_ms() - t0 >= 9000 && ac_now_ms() - t0 < 15000);
	for (int i = 0; i < 4; i++)
		close(fill[i]);
	close(lfd);
	unlink(path);
}

/*
 * A helper that queued 1 MiB for us reads nothing more until we read it
 * (hconn.c's OUT_PAUSE): our 1 MiB send must take it in meanwhile. Sent
 * blocking, both waited for ever (a source resending FINISH to a helper
 * that replayed its collective as done: CI's chaos, issue 22's note).
 */
static void
test_send_while_helper_writes(void)
{
	enum { N = 1 << 20 };
	struct ac_client c = { .fd = -1 };
	struct ac_buf out = { 0 }, theirs = { 0 };
	struct ac_rd r;
	uint8_t *big = calloc(1, N);
	const uint8_t *p;
	size_t n = 0, f;
	int sv[2], status;
	pid_t pid;

	CHECK(big != NULL && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	f = ac_frame_begin(&theirs, AC_MSG_RELEASE);
	ac_put_blob(&theirs, big, N);
	ac_frame_end(&theirs, f);
	f = ac_frame_begin(&out, AC_MSG_FINISH);
	ac_put_blob(&out, big, N);
	ac_frame_end(&out, f);
	if ((pid = fork()) == 0) {
		size_t got = 0;
		ssize_t k;

		close(sv[0]);
		alarm(30);
		/* Write all first, as the helper does; then read. */
		for (size_t off = 0; off < theirs.len; off += (size_t)k)
			if ((k = write(sv[1], theirs.p + off, theirs.len - off)) <= 0)
				_exit(1);
		while ((k = read(sv[1], big, N)) > 0)
			got += (size_t)k;
		_exit(got == out.len ? 0 : 2);
	}
	close(sv[1]);
	c.fd = sv[0];
	alarm(30);	/* the old deadlock: SIGALRM ends the test, failed */
	CHECK(ac_client_send(&c, &out) == 0);
	CHECK(ac_client_recv(&c, ac_now_ms() + 10000, &r) == AC_MSG_RELEASE);
	p = ac_get_bytes(&r, &n);
	CHECK(!r.err && p != NULL && n == N);
	alarm(0);
	close(c.fd);
	c.fd = -1;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0);
	ac_client_close(&c);
	ac_buf_free(&out);
	ac_buf_free(&theirs);
	free(big);
}

static void
test_poll_ms(void)
{
	long now = ac_now_ms();

	CHECK(ac_poll_ms(-1) == -1);
	CHECK(ac_poll_ms(now - 5) == 0);
	/* What it returns is the time left when it is called: at most the
	 * time that passed around the call (a busy machine may pause us) less. */
	{
		long before = ac_now_ms(), after;
		int ms = ac_poll_ms(before + 1000);

		after = ac_now_ms();
		CHECK(ms <= 1000 && ms >= 1000 - (after - before) - 1);
	}
	/* 30 days, the longest --timeout: waited for in steps, not for ever. */
	CHECK(ac_poll_ms(now + 30L * 86400 * 1000) == INT_MAX);
	CHECK(ac_poll_ms(now + (1L << 32) + 1000) == INT_MAX);
}

static void
test_validators(void)
{
	const char *why;
	long ms;
	char u1[] = "redis://:pw@host:1/0", u2[] = "redis://user:secret@h:6379",
	    u3[] = "redis://h:6379", u4[] = "etcds://pw@a:1,b:2",
	    u5[] = "etcd://u:p/w?x@a:1";

	CHECK(ac_key_valid("b:name"));
	CHECK(ac_key_valid("w:on-main:0"));
	CHECK(!ac_key_valid("x"));
	CHECK(!ac_key_valid("b:"));
	CHECK(!ac_key_valid("q:name"));
	CHECK(!ac_key_valid("b:a b"));
	CHECK(!ac_key_valid(""));
	CHECK(ac_helper_idle_ms(NULL, &ms, &why) == 0 && ms == 600000);
	CHECK(ac_helper_idle_ms("0", &ms, &why) == -1);
	CHECK(ac_helper_idle_ms("0s", &ms, &why) == -1);
	CHECK(ac_helper_idle_ms("2s", &ms, &why) == 0 && ms == 2000);
	ac_rdv_scrub(u1);
	CHECK_STR(u1, "redis://:**@host:1/0");
	ac_rdv_scrub(u2);
	CHECK_STR(u2, "redis://user:******@h:6379");
	ac_rdv_scrub(u3);
	CHECK_STR(u3, "redis://h:6379");
	ac_rdv_scrub(u4);
	CHECK_STR(u4, "etcds://**@a:1,b:2");
	ac_rdv_scrub(u5);
	CHECK_STR(u5, "etcd://u:*****@a:1");
}

/* The process that ran a call (rankproc.c): a child's parent is us, alive;
 * a child that exited and was reaped is not; nor a pid whose start time is
 * another process's (a reused pid). */
static void
test_rankproc(void)
{
	struct ac_rankproc p, q;
	pid_t kid, grandkid;
	int st, fds[2];

	CHECK(pipe(fds) == 0);
	if ((kid = fork()) == 0) {
		char c;

		close(fds[1]);
		/* The kid's parent is this test: its rank process. */
		(void)read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	CHECK(ac_rankproc_parent((long)kid, &p) == 0);
	CHECK(p.pid[0] == (long)getpid());
	CHECK(getppid() == 1 || p.pid[1] == (long)getppid());
	CHECK(ac_rankproc_alive(&p));
	q = p;
	q.start[0]++;
	q.start[1]++;
	CHECK(!ac_rankproc_alive(&q));
	close(fds[1]);
	waitpid(kid, &st, 0);
	/* A process that ended: its record, as its own child saw it. */
	CHECK(pipe(fds) == 0);
	if ((kid = fork()) == 0) {
		close(fds[0]);
		if ((grandkid = fork()) == 0) {
			sleep(1);
			_exit(0);
		}
		if (ac_rankproc_parent((long)grandkid, &p) == 0)
			(void)write(fds[1], &p, sizeof(p));
		_exit(0);
	}
	close(fds[1]);
	memset(&q, 0, sizeof(q));
	CHECK(read(fds[0], &q, sizeof(q)) == (ssize_t)sizeof(q));
	close(fds[0]);
	CHECK(q.pid[0] == (long)kid);
	CHECK(q.pid[1] == (long)getpid());
	waitpid(kid, &st, 0);
	q.pid[1] = 0;	/* the kid's parent (us) still runs */
	CHECK(!ac_rankproc_alive(&q));
	CHECK(ac_rankproc_parent(-1, &q) == -1);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	setenv("ACCELCTL_RUNTIME_DIR", dir, 1);
	test_validators();
	test_poll_ms();
	test_no_leak_per_failed_open();
	test_full_queue();
	test_send_while_helper_writes();
	test_rankproc();
	rmdir(dir);
	return CHECK_DONE();
}
