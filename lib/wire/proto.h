/* proto.h: the helper protocol: typed, length-prefixed frames over a Unix socket. */
#ifndef ACCELCTL_PROTO_H
#define ACCELCTL_PROTO_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bump on any change of a message's layout. A client and a helper of
 * different versions refuse each other with a message naming both (the
 * helper answers HELLO with its own version before anything else).
 */
#define AC_PROTO_VERSION 3

/* A frame: u32 length of what follows, u8 type, then the fields of the type. */
#define AC_FRAME_HDR 5
/* A broadcast value may be this large; anything larger is refused. */
#define AC_PAYLOAD_MAX (16u << 20)
#define AC_FRAME_MAX (AC_PAYLOAD_MAX + 4096u)
#define AC_KEY_MAX 256

enum ac_msg {
	AC_MSG_HELLO = 1,	/* c: version u32, job str, rank, world, lrank, lsize, node, nnodes i64 */
	AC_MSG_WELCOME,		/* h: version u32, pid i64 */
	AC_MSG_ERROR,		/* h: text str; the helper closes after it */
	AC_MSG_ARRIVE,		/* c: op u8, scope u8, role u8, key str, nonce u64, gen i64,
				 *    source i64, status i64, timeout_ms i64, progress_ms i64 */
	AC_MSG_ACK,		/* h: gen i64 */
	AC_MSG_RELEASE,		/* h: status i64, failed str, payload bytes */
	AC_MSG_PROGRESS,	/* h: text str */
	AC_MSG_TIMEOUT,		/* h: text str */
	AC_MSG_ABORTED,		/* h: text str */
	AC_MSG_FINISH,		/* c (source): status i64, payload bytes */
	AC_MSG_ABORT,		/* c: reason str; h answers ACK */
	AC_MSG_STATUS,		/* c; h answers TEXT */
	AC_MSG_TEXT,		/* h: text str */
	AC_MSG_STOP,		/* c; h answers ACK and exits */
	AC_MSG_FAILED,		/* h: text str; the rendezvous is unreachable (exit 125) */
	AC_MSG_HISTORY,		/* c: n i64, json u8; h answers TEXT */
	AC_MSG_NOTE,		/* h: text str, a line for the log; RELEASE follows */
	AC_MSG_LOST,		/* h: text str; a rank the wait needs is gone (exit 4) */
	AC_MSG_MAX
};

/* What an ARRIVE joins. */
enum ac_op { AC_OP_BARRIER = 1, AC_OP_RESULT = 2 };
enum ac_scope { AC_SCOPE_JOB = 0, AC_SCOPE_NODE = 1 };
enum ac_role { AC_ROLE_WAIT = 0, AC_ROLE_SOURCE = 1 };

/* A growing output buffer; a failed allocation sets err and drops later puts. */
struct ac_buf {
	uint8_t	*p;
	size_t	 len, cap;
	int	 err;
};

void	ac_buf_free(struct ac_buf *);
void	ac_put_u8(struct ac_buf *, uint8_t);
void	ac_put_u32(struct ac_buf *, uint32_t);
void	ac_put_i64(struct ac_buf *, int64_t);
void	ac_put_bytes(struct ac_buf *, const void *, size_t);
void	ac_put_str(struct ac_buf *, const char *);
/* Length-prefixed bytes, read back with ac_get_bytes. */
void	ac_put_blob(struct ac_buf *, const void *, size_t);
/* Start a frame of TYPE at the end of B; ac_frame_end writes its length. */
size_t	ac_frame_begin(struct ac_buf *, int type);
void	ac_frame_end(struct ac_buf *, size_t start);

/* A reader over one frame's fields; any overrun sets err and yields zeros. */
struct ac_rd {
	const uint8_t	*p;
	size_t		 n;
	int		 err;
};

uint8_t	 ac_get_u8(struct ac_rd *);
uint32_t ac_get_u32(struct ac_rd *);
int64_t	 ac_get_i64(struct ac_rd *);
/* Bytes: points into the frame; *LEN set. */
const uint8_t *ac_get_bytes(struct ac_rd *, size_t *len);
/* A string copied into DST (size DSTLEN, NUL-terminated); too long or with a
 * NUL inside is an error. */
void	 ac_get_str(struct ac_rd *, char *dst, size_t dstlen);

/*
 * Given the bytes received so far, the size of the first complete frame, 0 if
 * more bytes are needed, or -1 if the frame is malformed (length out of range,
 * unknown type): the peer is broken and the connection must be closed.
 */
long	ac_frame_ready(const uint8_t *p, size_t n);

#endif
