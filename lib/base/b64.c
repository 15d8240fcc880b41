/* b64.c: base64 (RFC 4648, with padding), as etcd's JSON gateway carries keys and values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"

static const char digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
ac_b64_encode(const void *p, size_t n)
{
	const uint8_t *in = p;
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		*o++ = digits[v >> 18 & 63];
		*o++ = digits[v >> 12 & 63];
		*o++ = i + 1 < n ? digits[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? digits[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static int
value(char c)
{
	const char *d = c != '\0' ? strchr(digits, c) : NULL;

	return d != NULL ? (int)(d - digits) : -1;
}

char *
ac_b64_decode(const char *s, size_t n, size_t *len)
{
	char *out;
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;

	while (n > 0 && s[n - 1] == '=')
		n--;
	if ((out = malloc(n / 4 * 3 + 4)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int v = value(s[i]);

		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[o++] = (char)(acc >> bits & 0xff);
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}
