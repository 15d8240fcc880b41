/* fuzz_helper.c: libFuzzer target for the helper's message handling: lib/helper/hconn.c's reading, dispatch and request handlers.
 *
 * It drives the connections through helper.h, as the helper's loop does
 * (ac_hconn_read, ac_hconn_flush, ac_hconn_drop, ac_hconn_timers), over the
 * helper's real state (ac_hs) with no seam in between; only the process
 * around them (socket, signals, poll) is left out.
 *
 * Each client is a socketpair: the helper's end is a struct ac_hconn, as
 * accept_conn makes it; this file writes the client's bytes to the other end
 * and reads the replies. The input is a sequence of records:
 *
 *   u8 control, u16 length (little-endian), LENGTH bytes
 *
 * control bits 0-1: which of 4 clients sends the bytes (it connects at its
 * first record, or again after it was dropped); bit 2: it hangs up after
 * them (a rank killed while it waits); bit 3: every deadline and progress
 * report of the waiting clients falls due now (ac_hconn_timers runs).
 *
 * Checks beyond the sanitizers: everything the helper sends is a sequence of
 * well-formed frames; and the journal the session wrote, replayed into a
 * fresh job, gives a state whose status can be shown (a helper restarted
 * after this session must not crash).
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "duration.h"
#include "helper.h"
#include "journal.h"
#include "proto.h"
#include "record.h"

#define NCLIENTS 4

struct client {
	struct ac_hconn	*c;		/* the helper's end, NULL while not connected */
	int		 fd;		/* the client's end */
	struct ac_buf	 in;		/* replies received, not yet a whole frame */
};

static struct client cl[NCLIENTS];
static char journal_path[64];
static int journal_fd = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* No rendezvous or NCCL: the helper stays on this node, in this process. */
	unsetenv("ACCELCTL_RENDEZVOUS");
	unsetenv("ACCELCTL_TRANSPORT");
	unsetenv("ACCELCTL_JOURNAL_MAX");
	signal(SIGPIPE, SIG_IGN);
	/* The journal lives in memory; replay opens it again by this path. */
	journal_fd = memfd_create("fuzz-journal", MFD_CLOEXEC);
	if (journal_fd == -1)
		abort();
	snprintf(journal_path, sizeof(journal_path), "/proc/self/fd/%d", journal_fd);
	return 0;
}

/* A client connects: the helper's side is made as accept_conn makes it. */
static int
connect_client(struct client *k)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if ((k->c = calloc(1, sizeof(*k->c))) == NULL)
		abort();
	k->c->fd = sv[0];
	k->c->deadline = -1;
	k->c->lrank = -1;
	k->c->rank = -1;
	k->c->next = ac_hs.conns;
	ac_hs.conns = k->c;
	ac_hs.nconns++;
	k->fd = sv[1];
	return 0;
}

/* Read what the helper sent K; it must be whole frames of known types. */
static void
drain(struct client *k)
{
	uint8_t buf[65536];
	ssize_t n;
	long flen;

	if (k->fd < 0)
		return;
	while ((n = read(k->fd, buf, sizeof(buf))) > 0) {
		ac_put_bytes(&k->in, buf, (size_t)n);
		if (k->in.err)
			abort();
		while ((flen = ac_frame_ready(k->in.p, k->in.len)) > 0) {
			memmove(k->in.p, k->in.p + flen, k->in.len - (size_t)flen);
			k->in.len -= (size_t)flen;
		}
		if (flen < 0)
			abort();	/* the helper sent a malformed frame */
	}
}

static void
hang_up(struct client *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	ac_buf_free(&k->in);
}

/* What the helper's loop does with a connection after poll(2) said it may
 * write (its own ac_hconn_ready), then the client reading what it got. */
static void
settle(struct client *k)
{
	if (k->c == NULL)
		return;
	if (ac_hconn_ready(k->c, POLLOUT)) {
		k->c = NULL;	/* dropped: read what it sent, then the end */
		drain(k);
		hang_up(k);
	} else
		drain(k);
}

/* Replay the session's journal into a fresh job, as a restarted helper would. */
static void
replay_journal(void)
{
	struct ac_job j = { .journal = -1, .rec = &ac_record };
	char *text = malloc(65536);

	if (text == NULL)
		abort();
	snprintf(j.id, sizeof(j.id), "%s", ac_hs.job.id);
	if (ac_journal_open(&j, journal_path) == 0) {
		ac_job_status(&j, text, 65536);
		close(j.journal);
	}
	ac_job_free(&j);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	memset(&ac_hs, 0, sizeof(ac_hs));
	memset(cl, 0, sizeof(cl));
	for (int i = 0; i < NCLIENTS; i++)
		cl[i].fd = -1;
	if (ftruncate(journal_fd, 0) == -1 || lseek(journal_fd, 0, SEEK_SET) == -1)
		abort();
	ac_hs.job.journal = journal_fd;
	ac_hs.job.rec = &ac_record;
	ac_hs.lfd = ac_hs.afd = -1;
	snprintf(ac_hs.job.id, sizeof(ac_hs.job.id), "fuzz");
	ac_hconn_bind(&ac_hs.job);
	ac_hs.job.shaped = ac_helper_shaped;

	while (size >= 3) {
		uint8_t ctl = data[0];
		size_t len = (size_t)data[1] | (size_t)data[2] << 8, off = 0;
		struct client *k = &cl[ctl & 3];

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		if (k->c == NULL && connect_client(k) == -1)
			break;
		/* Write in pieces the socket takes, letting the helper read between. */
		while (off < len && k->c != NULL) {
			ssize_t n = write(k->fd, data + off, len - off);

			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN)
				break;
			ac_hconn_read(k->c);
			settle(k);
		}
		data += len;
		size -= len;
		if (k->c != NULL && (ctl & 4)) {
			hang_up(k);
			ac_hconn_read(k->c);	/* reads the end of file */
			settle(k);
		}
		if (ctl & 8) {
			for (struct ac_hconn *c = ac_hs.conns; c != NULL; c = c->next) {
				if (c->deadline >= 0)
					c->deadline = 0;
				c->next_progress = 0;
			}
			long next = -1;

			(void)ac_hconn_timers(ac_now_ms(), &next);
			for (int i = 0; i < NCLIENTS; i++)
				settle(&cl[i]);
		}
	}
	/* The helper exits: every connection is dropped, as ac_helper_main does. */
	for (int i = 0; i < NCLIENTS; i++)
		if (cl[i].c != NULL) {
			ac_hconn_drop(cl[i].c);
			cl[i].c = NULL;
		}
	for (int i = 0; i < NCLIENTS; i++) {
		drain(&cl[i]);
		hang_up(&cl[i]);
	}
	replay_journal();
	ac_job_free(&ac_hs.job);
	free(ac_hs.rproc);		/* the helper frees it as it exits */
	return 0;
}
