/* fuzz_frames.c: libFuzzer target for the frame parser (ac_frame_ready) and the field readers of proto.c.
 *
 * The input is a byte stream as the helper or a client receives it. Each
 * complete frame is decoded field by field with the layout proto.h gives its
 * type, as helper.c and sync.c do, and re-encoded with the ac_put_*
 * functions: a frame read without error and without trailing bytes must come
 * out byte for byte the same (the readers and writers agree).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

/*
 * Each type's fields, as in proto.h: b u8, u u32, q i64, s str, y bytes.
 * Strings are read into a buffer of AC_KEY_MAX, as the helper reads keys and
 * job ids, or of 64 KiB (S), as clients read texts.
 */
static const char *const layout[AC_MSG_MAX] = {
	[AC_MSG_HELLO] = "usqqqqqq",
	[AC_MSG_WELCOME] = "uq",
	[AC_MSG_ERROR] = "S",
	[AC_MSG_ARRIVE] = "bbbsqqqqqq",
	[AC_MSG_ACK] = "q",
	[AC_MSG_RELEASE] = "qSy",
	[AC_MSG_PROGRESS] = "S",
	[AC_MSG_TIMEOUT] = "S",
	[AC_MSG_ABORTED] = "S",
	[AC_MSG_FINISH] = "qy",
	[AC_MSG_ABORT] = "S",
	[AC_MSG_STATUS] = "",
	[AC_MSG_TEXT] = "S",
	[AC_MSG_STOP] = "",
	[AC_MSG_FAILED] = "S",
	[AC_MSG_HISTORY] = "qb",
	[AC_MSG_NOTE] = "S",
	[AC_MSG_LOST] = "S",
};

static char text[65536];

/* Decode one frame of FLEN bytes at P and check that it re-encodes to itself. */
static void
one_frame(const uint8_t *p, long flen)
{
	struct ac_rd r = { .p = p + AC_FRAME_HDR, .n = (size_t)flen - AC_FRAME_HDR };
	struct ac_buf b = { 0 };
	size_t start = ac_frame_begin(&b, p[4]), n;
	const uint8_t *bytes;
	int type = p[4];

	/* A type of proto.h's that this table forgot (HISTORY and NOTE
	 * were, once: a NULL layout read, found by the fuzzer). */
	if (layout[type] == NULL)
		abort();
	for (const char *f = layout[type]; *f != '\0'; f++) {
		switch (*f) {
		case 'b':
			ac_put_u8(&b, ac_get_u8(&r));
			break;
		case 'u':
			ac_put_u32(&b, ac_get_u32(&r));
			break;
		case 'q':
			ac_put_i64(&b, ac_get_i64(&r));
			break;
		case 's':
		case 'S':
			ac_get_str(&r, text, *f == 's' ? AC_KEY_MAX : sizeof(text));
			if (strlen(text) >= (*f == 's' ? AC_KEY_MAX : sizeof(text)))
				abort();	/* not terminated within its buffer */
			ac_put_str(&b, text);
			break;
		case 'y':
			bytes = ac_get_bytes(&r, &n);
			if (bytes == NULL && n != 0)
				abort();
			/* The bytes must lie inside the frame. */
			if (bytes != NULL && (bytes < p || bytes + n > p + flen))
				abort();
			ac_put_blob(&b, bytes, n);
			break;
		}
	}
	ac_frame_end(&b, start);
	if (!r.err && r.n == 0 && !b.err &&
	    (b.len != (size_t)flen || memcmp(b.p, p, b.len) != 0))
		abort();	/* read and written back, the frame changed */
	ac_buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long flen;

	while ((flen = ac_frame_ready(data, size)) > 0) {
		/* A complete frame is at least its header and within the input. */
		if (flen < AC_FRAME_HDR || (size_t)flen > size)
			abort();
		/* One byte less is never a frame yet. */
		if (ac_frame_ready(data, (size_t)flen - 1) > 0)
			abort();
		one_frame(data, flen);
		data += flen;
		size -= (size_t)flen;
	}
	return 0;
}
