/* proto_client.c: a deliberately bad client of the helper, for tests/sh/t_protocol.sh:
 * it sends truncated, oversized, garbage and out-of-order frames and checks
 * that the helper answers with an error or closes, and never crashes.
 *
 *   proto_client SOCKET MODE JOB LSIZE [N [SECONDS]]   exit 0 when the helper behaved
 *
 * and loads the helper as a careless local client could, for the limits:
 * "halfframe" holds half a frame, "spam N" sends N requests and reads no
 * reply ("burst N": a thousand a send), "hold N SECONDS" keeps N
 * connections open and counts the refused.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

static int
dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		perror(path);
		exit(2);
	}
	return fd;
}

static void
put(int fd, const void *p, size_t n)
{
	if (send(fd, p, n, MSG_NOSIGNAL) != (ssize_t)n)
		perror("send");	/* the helper may close first: not an error */
}

static void
hello(int fd, uint32_t version, const char *job, long lsize)
{
	struct ac_buf b = { 0 };
	size_t f = ac_frame_begin(&b, AC_MSG_HELLO);

	ac_put_u32(&b, version);
	ac_put_str(&b, job);
	ac_put_i64(&b, 1);		/* rank */
	ac_put_i64(&b, lsize);		/* world */
	ac_put_i64(&b, 1);		/* local rank */
	ac_put_i64(&b, lsize);		/* local size */
	ac_put_i64(&b, 0);		/* node */
	ac_put_i64(&b, 1);		/* nodes */
	ac_frame_end(&b, f);
	put(fd, b.p, b.len);
	ac_buf_free(&b);
}

/*
 * Read what the helper says until it closes (or 5 s pass). Returns a bitmask:
 * 1 closed, 2 saw WELCOME, 4 saw ERROR; the ERROR text goes to stdout.
 */
static int drain_ms = 5000;

static int
drain(int fd)
{
	uint8_t buf[65536];
	size_t n = 0;
	int seen = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long flen;
		ssize_t r;

		while ((flen = ac_frame_ready(buf, n)) > 0) {
			struct ac_rd rd = { .p = buf + AC_FRAME_HDR,
			    .n = (size_t)flen - AC_FRAME_HDR };
			char text[512];

			if (buf[4] == AC_MSG_WELCOME) {
				seen |= 2;
				printf("welcome version %u\n", ac_get_u32(&rd));
			} else if (buf[4] == AC_MSG_ERROR) {
				seen |= 4;
				ac_get_str(&rd, text, sizeof(text));
				printf("error: %s\n", text);
			}
			memmove(buf, buf + flen, n - (size_t)flen);
			n -= (size_t)flen;
		}
		if (poll(&pfd, 1, drain_ms) != 1)
			return seen;
		if ((r = read(fd, buf + n, sizeof(buf) - n)) <= 0)
			return seen | 1;
		n += (size_t)r;
	}
}

/*
 * Open N connections that each say HELLO, and count the helper's answers:
 * "welcome W refused R" (the refused with the first refusal's text); then
 * keep them open for SECONDS.
 */
static int
hold(const char *path, const char *job, long lsize, long n, long seconds)
{
	long welcome = 0, refused = 0;
	char first[512] = "";

	for (long i = 0; i < n; i++) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		uint8_t buf[4096];
		size_t got = 0;
		long flen;

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (fd == -1 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
			perror("connect");
			break;
		}
		hello(fd, AC_PROTO_VERSION, job, lsize);
		for (;;) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			ssize_t r;

			/* 30 s: a busy machine's (ASan) helper may take
			 * seconds to answer; a client given up on early was
			 * counted as refused, and the counts changed. */
			if ((flen = ac_frame_ready(buf, got)) != 0 ||
			    poll(&pfd, 1, 30000) != 1 ||
			    (r = read(fd, buf + got, sizeof(buf) - got)) <= 0)
				break;
			got += (size_t)r;
		}
		if (flen > 0 && buf[4] == AC_MSG_WELCOME)
			welcome++;
		else if (flen > 0 && buf[4] == AC_MSG_ERROR) {
			struct ac_rd rd = { .p = buf + AC_FRAME_HDR,
			    .n = (size_t)flen - AC_FRAME_HDR };

			if (refused++ == 0)
				ac_get_str(&rd, first, sizeof(first));
		} else
			refused++;
	}
	printf("welcome %ld refused %ld: %s\n", welcome, refused, first);
	fflush(stdout);
	sleep((unsigned)seconds);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *mode;
	int fd, seen;
	long lsize;

	if (argc < 5) {
		fprintf(stderr, "usage: proto_client SOCKET MODE JOB LSIZE [N [SECONDS]]\n");
		return 2;
	}
	if (strcmp(argv[2], "hold") == 0 && argc == 7)
		return hold(argv[1], argv[3], atol(argv[4]), atol(argv[5]),
		    atol(argv[6]));
	mode = argv[2];
	lsize = atol(argv[4]);
	fd = dial(argv[1]);
	if (strcmp(mode, "garbage") == 0) {
		static const char junk[] = "GET / HTTP/1.0\r\n\r\n\x01\x02\xff";
		put(fd, junk, sizeof(junk));
		return (drain(fd) & 1) ? 0 : 1;
	}
	if (strcmp(mode, "truncated") == 0) {
		uint8_t h[10] = { 100, 0, 0, 0, AC_MSG_HELLO, 1, 0 };
		put(fd, h, sizeof(h));
		shutdown(fd, SHUT_WR);	/* then nothing more: EOF mid-frame */
		return (drain(fd) & 1) ? 0 : 1;
	}
	if (strcmp(mode, "oversized") == 0) {
		uint8_t h[5] = { 0xff, 0xff, 0xff, 0x7f, AC_MSG_HELLO };
		put(fd, h, sizeof(h));
		return (drain(fd) & 1) ? 0 : 1;
	}
	if (strcmp(mode, "badtype") == 0) {
		uint8_t h[6] = { 2, 0, 0, 0, 99, 0 };
		put(fd, h, sizeof(h));
		return (drain(fd) & 1) ? 0 : 1;
	}
	if (strcmp(mode, "nohello") == 0) {
		uint8_t h[5] = { 1, 0, 0, 0, AC_MSG_STATUS };
		put(fd, h, sizeof(h));
		return drain(fd) == (1 | 4) ? 0 : 1;
	}
	if (strcmp(mode, "version") == 0) {
		hello(fd, 999, argv[3], lsize);
		return drain(fd) == (1 | 2) ? 0 : 1;
	}
	if (strcmp(mode, "wrongjob") == 0) {
		hello(fd, AC_PROTO_VERSION, "some-other-job", lsize);
		return drain(fd) == (1 | 2 | 4) ? 0 : 1;
	}
	if (strcmp(mode, "badarrive") == 0) {
		uint8_t h[7] = { 3, 0, 0, 0, AC_MSG_ARRIVE, 9, 9 };
		hello(fd, AC_PROTO_VERSION, argv[3], lsize);
		put(fd, h, sizeof(h));
		return drain(fd) == (1 | 2 | 4) ? 0 : 1;
	}
	if (strcmp(mode, "badhistory") == 0) {
		/* "status --history" asking for a negative count. */
		struct ac_buf b = { 0 };
		size_t f = ac_frame_begin(&b, AC_MSG_HISTORY);

		ac_put_i64(&b, -1);
		ac_put_u8(&b, 0);
		ac_frame_end(&b, f);
		hello(fd, AC_PROTO_VERSION, argv[3], lsize);
		put(fd, b.p, b.len);
		ac_buf_free(&b);
		return drain(fd) == (1 | 2 | 4) ? 0 : 1;
	}
	if (strcmp(mode, "hugestring") == 0) {
		/* A string length that points past the end of its frame. */
		uint8_t h[13] = { 9, 0, 0, 0, AC_MSG_HELLO, AC_PROTO_VERSION, 0, 0, 0, 0xff, 0xff,
		    0xff, 0x0f };
		put(fd, h, sizeof(h));
		return drain(fd) == (1 | 2 | 4) ? 0 : 1;
	}
	if (strcmp(mode, "nocolon") == 0) {
		/* A key without the kind's ':' (status used to crash on it). */
		struct ac_buf b = { 0 };
		size_t f = ac_frame_begin(&b, AC_MSG_ARRIVE);

		ac_put_u8(&b, AC_OP_BARRIER);
		ac_put_u8(&b, AC_SCOPE_JOB);
		ac_put_u8(&b, AC_ROLE_WAIT);
		ac_put_str(&b, "x");
		for (int i = 0; i < 6; i++)
			ac_put_i64(&b, i == 1 ? -1 : 0);	/* gen -1: new */
		ac_frame_end(&b, f);
		hello(fd, AC_PROTO_VERSION, argv[3], lsize);
		put(fd, b.p, b.len);
		ac_buf_free(&b);
		return drain(fd) == (1 | 2 | 4) ? 0 : 1;
	}
	if (strcmp(mode, "negstatus") == 0) {
		/* A barrier arrival with status -256: the CLI sends 0 to 2^31-1;
		 * taken, it became exit 0 (-256 & 255) for every rank, and the
		 * stores read it apart (review of issue 19). */
		struct ac_buf b = { 0 };
		size_t f = ac_frame_begin(&b, AC_MSG_ARRIVE);

		ac_put_u8(&b, AC_OP_BARRIER);
		ac_put_u8(&b, AC_SCOPE_JOB);
		ac_put_u8(&b, AC_ROLE_WAIT);
		ac_put_str(&b, "b:neg");
		for (int i = 0; i < 6; i++)	/* nonce gen source status timeout progress */
			ac_put_i64(&b, i == 1 ? -1 : i == 3 ? -256 : 0);
		ac_frame_end(&b, f);
		hello(fd, AC_PROTO_VERSION, argv[3], lsize);
		put(fd, b.p, b.len);
		ac_buf_free(&b);
		return drain(fd) == (1 | 2 | 4) ? 0 : 1;
	}
	if (strcmp(mode, "latefinish") == 0) {
		/* A broadcast's source, released, sends FINISH again: what a
		 * source that arrived again after its helper died (its FINISH
		 * journaled) sends. Dropped, not refused: the refusal closed
		 * the connection of a source whose RELEASE was queued. */
		struct ac_buf b = { 0 };
		size_t f = ac_frame_begin(&b, AC_MSG_ARRIVE);

		ac_put_u8(&b, AC_OP_RESULT);
		ac_put_u8(&b, AC_SCOPE_JOB);
		ac_put_u8(&b, AC_ROLE_SOURCE);
		ac_put_str(&b, "c:late");
		for (int i = 0; i < 6; i++)	/* nonce gen source status timeout progress */
			ac_put_i64(&b, i == 0 ? 7 : i == 1 ? -1 : i == 2 ? 1 : 0);
		ac_frame_end(&b, f);
		for (int k = 0; k < 2; k++) {
			f = ac_frame_begin(&b, AC_MSG_FINISH);
			ac_put_i64(&b, 0);
			ac_put_blob(&b, "v", 1);
			ac_frame_end(&b, f);
		}
		hello(fd, AC_PROTO_VERSION, argv[3], lsize);
		put(fd, b.p, b.len);
		ac_buf_free(&b);
		shutdown(fd, SHUT_WR);
		return drain(fd) == (1 | 2) ? 0 : 1;
	}
	if (strcmp(mode, "halfframe") == 0) {
		/* Said HELLO, then half a STATUS request, then nothing: the
		 * helper refuses it after its frame wait (10 s). */
		uint8_t h[3] = { 1, 0, 0 };

		hello(fd, AC_PROTO_VERSION, argv[3], lsize);
		put(fd, h, sizeof(h));
		drain_ms = 30000;
		return drain(fd) == (1 | 2 | 4) ? 0 : 1;
	}
	if ((strcmp(mode, "spam") == 0 || strcmp(mode, "burst") == 0) &&
	    argc >= 6) {
		/* STATUS requests, none of whose replies are read: one per
		 * send, or ("burst") a thousand per send, as a client writing
		 * from a buffer does: the helper then has many in hand at
		 * once, and must still stop reading. */
		uint8_t h[5 * 1000];
		size_t per = strcmp(mode, "burst") == 0 ? sizeof(h) : 5;
		long long total = atoll(argv[5]) * 5, done = 0;

		for (size_t i = 0; i < sizeof(h); i += 5)
			memcpy(h + i, (uint8_t[5]){ 1, 0, 0, 0, AC_MSG_STATUS }, 5);
		/* A send buffer of a known, small size: what is counted as
		 * sent got into the helper, not into the kernel's queue (the
		 * default one held some 40,000 requests of a burst). */
		int sndbuf = 65536;

		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		hello(fd, AC_PROTO_VERSION, argv[3], lsize);
		fcntl(fd, F_SETFL, O_NONBLOCK);
		while (done < total) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			size_t off = (size_t)(done % (long long)per), len = per - off;
			ssize_t k;

			if ((long long)len > total - done)
				len = (size_t)(total - done);
			if ((k = send(fd, h + off, len, MSG_NOSIGNAL)) > 0) {
				done += k;
				continue;
			}
			if (k == 0 || errno != EAGAIN || poll(&pfd, 1, 2000) != 1)
				break;
		}
		printf("sent %lld\n", done / 5);
		fflush(stdout);
		sleep(argc >= 7 ? (unsigned)atol(argv[6]) : 2);
		return 0;
	}
	if (strcmp(mode, "peer") == 0) {
		seen = drain(fd);
		return seen == (1 | 4) ? 0 : 1;
	}
	fprintf(stderr, "proto_client: unknown mode %s\n", mode);
	return 2;
}
