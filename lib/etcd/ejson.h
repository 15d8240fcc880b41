/* ejson.h: the JSON of etcd v3's gateway: base64 keys and values, int64 as strings, txn ops and compares. */
#ifndef ACCELCTL_EJSON_H
#define ACCELCTL_EJSON_H

#include <stddef.h>

#include "etcdso.h"

#define EJ_KEY_MAX 1100		/* the longest key built (a prefix, a name, numbers) */

/* Bytes as base64; a C string as base64; a number as proto3 JSON's string. */
json_t *ej_b64(const char *s, size_t n);
json_t *ej_b64s(const char *s);
json_t *ej_i64(long long v);
/* The end of the range of keys that start with PREFIX (which ends in '/'). */
json_t *ej_prefix_end(const char *prefix);

/* Txn ops: a put (with LEASE, 0 for none); a range of KEY, or of the keys
 * that start with it (PREFIX); a delete of KEY up to END (not included; ""
 * for KEY alone), or of the keys that start with KEY when END is NULL. */
json_t *ej_put(const char *key, const void *v, size_t len, long long lease);
json_t *ej_range(const char *key, int prefix);
/* A range of the keys that start with PREFIX sending back only the one of
 * least value (byte-wise), with every key counted (ej_count). */
json_t *ej_range_min(const char *prefix);
json_t *ej_delete(const char *key, const char *end);
/* Compares: KEY's value is greater than V (byte-wise; a missing key fails);
 * KEY does not exist; KEY was last modified at REV. */
json_t *ej_cmp_greater(const char *key, const char *v);
json_t *ej_cmp_absent(const char *key);
json_t *ej_cmp_mod(const char *key, long long rev);
json_t *ej_txn(json_t *compare, json_t *success, json_t *failure);

/* The kvs of response I of a txn reply (of a range reply when I < 0), or NULL. */
json_t *ej_kvs(json_t *reply, int i);
/* The count of keys in response I of a txn reply (a range's). */
long long ej_count(json_t *reply, int i);
/* The revision in a reply's header (0 when absent). */
long long ej_revision(json_t *reply);
/* A kv's FIELD ("key", "value") decoded: malloc()ed, NUL-terminated, *LEN
 * bytes; "" for a value proto3 left out; NULL on bad base64 or no memory. */
char *ej_kv_field(json_t *kv, const char *field, size_t *len);

#endif
