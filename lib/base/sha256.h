/* sha256.h: SHA-256 (FIPS 180-4), for the hashed password of a Redis ACL user. */
#ifndef ACCELCTL_SHA256_H
#define ACCELCTL_SHA256_H

#include <stddef.h>

/* Write the SHA-256 of DATA (LEN bytes) as 64 lower-case hex digits and a NUL into HEX. */
void ac_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
