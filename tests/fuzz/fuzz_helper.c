/* fuzz_helper.c: libFuzzer target for the helper's message handling: read_conn, dispatch and the on_* handlers of lib/helper.c.
 *
 * Why it includes helper.c: the handlers, the connection struct and the
 * helper's state are static, and the helper's connection handling is being
 * changed. Compiling helper.c into this file drives the real code with no
 * seam in it: only the names used below (struct conn, H, read_conn,
 * flush_out, drop_conn, timers and the on_* callbacks) tie this file to it.
 * The linker then takes ac_helper_main and ac_helper_log from here, never
 * helper.c's object from the library.
 *
 * Each client is a socketpair: the helper's end is a struct conn, as
 * accept_conn makes it; this file writes the client's bytes to the other end
 * and reads the replies. The input is a sequence of records:
 *
 *   u8 control, u16 length (little-endian), LENGTH bytes
 *
 * control bits 0-1: which of 4 clients sends the bytes (it connects at its
 * first record, or again after it was dropped); bit 2: it hangs up after
 * them (a rank killed while it waits); bit 3: every deadline and progress
 * report of the waiting clients falls due now (timers() runs).
 *
 * Checks beyond the sanitizers: everything the helper sends is a sequence of
 * well-formed frames; and the journal the session wrote, replayed into a
 * fresh job, gives a state whose status can be shown (a helper restarted
 * after this session must not crash).
 */
#include "helper.c"

#include <sys/mman.h>

#define NCLIENTS 4

struct client {
	struct conn	*c;		/* the helper's end, NULL while not connected */
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
	k->c->next = H.conns;
	H.conns = k->c;
	H.nconns++;
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

/* What the helper's loop does with a connection after poll(2). */
static void
settle(struct client *k)
{
	struct conn *c = k->c;

	if (c == NULL)
		return;
	flush_out(c);
	drain(k);
	if (c->closing == 1 && c->out.len == c->outoff)
		c->closing = 2;
	if (c->closing == 2) {
		drop_conn(c);
		k->c = NULL;
		drain(k);
		hang_up(k);
	}
}

/* Replay the session's journal into a fresh job, as a restarted helper would. */
static void
replay_journal(void)
{
	struct ac_job j = { .journal = -1 };
	char *text = malloc(65536);

	if (text == NULL)
		abort();
	snprintf(j.id, sizeof(j.id), "%s", H.job.id);
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
	memset(&H, 0, sizeof(H));
	memset(cl, 0, sizeof(cl));
	for (int i = 0; i < NCLIENTS; i++)
		cl[i].fd = -1;
	if (ftruncate(journal_fd, 0) == -1 || lseek(journal_fd, 0, SEEK_SET) == -1)
		abort();
	H.job.journal = journal_fd;
	H.lfd = H.sfd = -1;
	H.idle_ms = 600000;
	snprintf(H.job.id, sizeof(H.job.id), "fuzz");
	H.job.released = on_released;
	H.job.aborting = on_abort;
	H.job.shaped = start_transport;
	H.job.failed = on_failed;

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
			read_conn(k->c);
			settle(k);
		}
		data += len;
		size -= len;
		if (k->c != NULL && (ctl & 4)) {
			hang_up(k);
			read_conn(k->c);	/* reads the end of file */
			settle(k);
		}
		if (ctl & 8) {
			for (struct conn *c = H.conns; c != NULL; c = c->next) {
				if (c->deadline >= 0)
					c->deadline = 0;
				c->next_progress = 0;
			}
			(void)timers();
			for (int i = 0; i < NCLIENTS; i++)
				settle(&cl[i]);
		}
	}
	/* The helper exits: every connection is dropped, as ac_helper_main does. */
	for (int i = 0; i < NCLIENTS; i++)
		if (cl[i].c != NULL) {
			drop_conn(cl[i].c);
			cl[i].c = NULL;
		}
	for (int i = 0; i < NCLIENTS; i++) {
		drain(&cl[i]);
		hang_up(&cl[i]);
	}
	replay_journal();
	ac_job_free(&H.job);
	free(H.rproc);		/* the helper frees it as it exits */
	return 0;
}
