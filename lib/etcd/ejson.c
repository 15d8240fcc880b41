/* ejson.c: the JSON of etcd v3's gateway: base64 keys and values, int64 as strings, txn ops and compares.
 *
 * Pure builders and readers over jansson (loaded by etcdso.c), shared by the
 * etcd transport's files. Builders return a new reference, or NULL when
 * memory ran out; json_pack's "o" steals it, so a request is one expression
 * with no clean-up path (a NULL inside makes the whole request NULL, which
 * ac_econn_call refuses).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "econn.h"
#include "ejson.h"

json_t *
ej_b64(const char *s, size_t n)
{
	char *e = ac_b64_encode(s, n);
	json_t *j = e != NULL ? json_string(e) : NULL;

	free(e);
	return j;
}

json_t *
ej_b64s(const char *s)
{
	return ej_b64(s, strlen(s));
}

json_t *
ej_i64(long long v)
{
	char s[24];

	snprintf(s, sizeof(s), "%lld", v);
	return json_string(s);
}

/* The end of the range of keys that start with PREFIX. */
json_t *
ej_prefix_end(const char *prefix)
{
	char end[EJ_KEY_MAX];
	size_t n = strlen(prefix);

	if (n == 0 || n >= sizeof(end))
		return NULL;	/* the whole request is refused */
	memcpy(end, prefix, n + 1);
	end[n - 1]++;		/* prefixes end in '/': '0' follows */
	return ej_b64(end, n);
}

json_t *
ej_put(const char *key, const void *v, size_t len, long long lease)
{
	json_t *put = json_pack("{s:o, s:o}", "key", ej_b64s(key), "value",
	    ej_b64(v, len));

	if (put != NULL && lease != 0)
		json_object_set_new(put, "lease", ej_i64(lease));
	return json_pack("{s:o}", "request_put", put);
}

json_t *
ej_range(const char *key, int prefix)
{
	json_t *r = json_pack("{s:o}", "key", ej_b64s(key));

	if (r != NULL && prefix)
		json_object_set_new(r, "range_end", ej_prefix_end(key));
	return json_pack("{s:o}", "request_range", r);
}

json_t *
ej_range_min(const char *prefix)
{
	return json_pack("{s:{s:o, s:o, s:s, s:s, s:o}}", "request_range", "key",
	    ej_b64s(prefix), "range_end", ej_prefix_end(prefix), "sort_order",
	    "ASCEND", "sort_target", "VALUE", "limit", ej_i64(1));
}

/* Delete the keys from KEY up to END (not included), or those that start
 * with KEY when END is NULL. */
json_t *
ej_delete(const char *key, const char *end)
{
	json_t *r = json_pack("{s:o, s:o}", "key", ej_b64s(key), "range_end",
	    end != NULL ? ej_b64s(end) : ej_prefix_end(key));

	return json_pack("{s:o}", "request_delete_range", r);
}

/* KEY exists and its value is greater than V (byte-wise). */
json_t *
ej_cmp_greater(const char *key, const char *v)
{
	return json_pack("{s:o, s:s, s:s, s:o}", "key", ej_b64s(key), "target",
	    "VALUE", "result", "GREATER", "value", ej_b64s(v));
}

json_t *
ej_cmp_absent(const char *key)
{
	return json_pack("{s:o, s:s, s:s, s:s}", "key", ej_b64s(key), "target",
	    "CREATE", "result", "EQUAL", "create_revision", "0");
}

json_t *
ej_cmp_mod(const char *key, long long rev)
{
	return json_pack("{s:o, s:s, s:s, s:o}", "key", ej_b64s(key), "target",
	    "MOD", "result", "EQUAL", "mod_revision", ej_i64(rev));
}

json_t *
ej_txn(json_t *compare, json_t *success, json_t *failure)
{
	return json_pack("{s:o, s:o, s:o}", "compare", compare, "success",
	    success, "failure", failure);
}

/* The kvs of response I of a txn reply (or of a range reply when I < 0). */
json_t *
ej_kvs(json_t *reply, int i)
{
	json_t *r = reply;

	if (i >= 0)
		r = json_object_get(json_object_get(json_array_get(
		    json_object_get(reply, "responses"), (size_t)i),
		    "response_range"), "kvs");
	else
		r = json_object_get(reply, "kvs");
	return json_is_array(r) ? r : NULL;
}

long long
ej_count(json_t *reply, int i)
{
	return ac_json_i64(json_object_get(json_array_get(json_object_get(reply,
	    "responses"), (size_t)i), "response_range"), "count");
}

long long
ej_revision(json_t *reply)
{
	return ac_json_i64(json_object_get(reply, "header"), "revision");
}

/* A kv's key (NUL-terminated, malloc()ed) and value. */
char *
ej_kv_field(json_t *kv, const char *field, size_t *len)
{
	const char *s = json_string_value(json_object_get(kv, field));
	size_t n;

	if (s == NULL) {	/* proto3 JSON leaves out an empty value */
		*len = 0;
		return strdup("");
	}
	n = strlen(s);
	return ac_b64_decode(s, n, len);
}
