/* b64.h: base64 (RFC 4648, with padding), as etcd's JSON gateway carries keys and values. */
#ifndef ACCELCTL_B64_H
#define ACCELCTL_B64_H

#include <stddef.h>

/* Encode N bytes of P; a malloc()ed, NUL-terminated string, or NULL. */
char *ac_b64_encode(const void *p, size_t n);
/* Decode the N characters of S; malloc()ed bytes (NUL-terminated, *LEN
 * without it), or NULL when S is not base64 or memory ran out. */
char *ac_b64_decode(const char *s, size_t n, size_t *len);

#endif
