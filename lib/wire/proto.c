/* proto.c: the helper protocol: typed, length-prefixed frames over a Unix socket.
 *
 * Both ends run on one host, so integers travel in host byte order. Every
 * read is bounds-checked: a truncated or lying frame sets the reader's error
 * flag, and the helper answers it with an error and closes the connection.
 */
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static void
reserve(struct ac_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err || b->len + n <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->err = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void
ac_buf_free(struct ac_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void
ac_put_bytes(struct ac_buf *b, const void *p, size_t n)
{
	reserve(b, n);
	if (b->err)
		return;
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

void
ac_put_u8(struct ac_buf *b, uint8_t v)
{
	ac_put_bytes(b, &v, 1);
}

void
ac_put_u32(struct ac_buf *b, uint32_t v)
{
	ac_put_bytes(b, &v, sizeof(v));
}

void
ac_put_i64(struct ac_buf *b, int64_t v)
{
	ac_put_bytes(b, &v, sizeof(v));
}

void
ac_put_str(struct ac_buf *b, const char *s)
{
	size_t n = strlen(s);

	ac_put_u32(b, (uint32_t)n);
	ac_put_bytes(b, s, n);
}

void
ac_put_blob(struct ac_buf *b, const void *p, size_t n)
{
	ac_put_u32(b, (uint32_t)n);
	ac_put_bytes(b, p, n);
}

size_t
ac_frame_begin(struct ac_buf *b, int type)
{
	size_t start = b->len;

	ac_put_u32(b, 0);
	ac_put_u8(b, (uint8_t)type);
	return start;
}

void
ac_frame_end(struct ac_buf *b, size_t start)
{
	uint32_t n;

	if (b->err)
		return;
	n = (uint32_t)(b->len - start - 4);
	memcpy(b->p + start, &n, sizeof(n));
}

static const uint8_t *
take(struct ac_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->err || r->n < n) {
		r->err = 1;
		return NULL;
	}
	p = r->p;
	r->p += n;
	r->n -= n;
	return p;
}

uint8_t
ac_get_u8(struct ac_rd *r)
{
	const uint8_t *p = take(r, 1);

	return p ? *p : 0;
}

uint32_t
ac_get_u32(struct ac_rd *r)
{
	const uint8_t *p = take(r, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, sizeof(v));
	return v;
}

int64_t
ac_get_i64(struct ac_rd *r)
{
	const uint8_t *p = take(r, 8);
	int64_t v = 0;

	if (p)
		memcpy(&v, p, sizeof(v));
	return v;
}

const uint8_t *
ac_get_bytes(struct ac_rd *r, size_t *len)
{
	uint32_t n = ac_get_u32(r);
	const uint8_t *p = take(r, n);

	*len = p ? n : 0;
	return p;
}

void
ac_get_str(struct ac_rd *r, char *dst, size_t dstlen)
{
	size_t n;
	const uint8_t *p = ac_get_bytes(r, &n);

	dst[0] = '\0';
	if (p == NULL)
		return;
	if (n >= dstlen || memchr(p, '\0', n) != NULL) {
		r->err = 1;
		return;
	}
	memcpy(dst, p, n);
	dst[n] = '\0';
}

long
ac_frame_ready(const uint8_t *p, size_t n)
{
	uint32_t len;

	if (n < AC_FRAME_HDR)
		return 0;
	memcpy(&len, p, sizeof(len));
	if (len < 1 || len > AC_FRAME_MAX || p[4] == 0 || p[4] >= AC_MSG_MAX)
		return -1;
	if (n < 4 + (size_t)len)
		return 0;
	return 4 + (long)len;
}
