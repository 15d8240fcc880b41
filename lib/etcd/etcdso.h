/* etcdso.h: libcurl and jansson loaded at run time (dlopen), only by a helper whose rendezvous is etcd. */
#ifndef ACCELCTL_ETCDSO_H
#define ACCELCTL_ETCDSO_H

#include <stddef.h>

/* curl_easy_setopt() is called through a pointer: no type-checking macro. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <jansson.h>

#define AC_ETCDSO_CURL(X) X(curl_global_init) X(curl_multi_init) \
	X(curl_multi_setopt) X(curl_multi_socket_action) X(curl_multi_info_read) \
	X(curl_multi_add_handle) X(curl_multi_remove_handle) X(curl_multi_cleanup) \
	X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_getinfo) \
	X(curl_easy_cleanup) X(curl_easy_strerror) X(curl_easy_perform) \
	X(curl_slist_append) X(curl_slist_free_all)
#define AC_ETCDSO_JSON(X) X(json_loadb) X(json_loads) X(json_dumps) \
	X(json_object_get) X(json_string_value) X(json_integer_value) \
	X(json_array_get) X(json_array_size) X(json_object) X(json_string) \
	X(json_object_set_new) X(json_array) X(json_array_append_new) \
	X(json_pack) X(json_delete)

/* The types come from the headers: a prototype mismatch is a compile error. */
struct ac_etcdso {
#define AC_ETCDSO_MEMBER(f) __typeof__(&f) f;
	AC_ETCDSO_CURL(AC_ETCDSO_MEMBER)
	AC_ETCDSO_JSON(AC_ETCDSO_MEMBER)
#undef AC_ETCDSO_MEMBER
};
extern struct ac_etcdso ac_etcdso;

/* Load both libraries (once). 0, or -1 with why in WHY. */
int ac_etcdso_load(char *why, size_t len);

#ifndef AC_ETCDSO_IMPL
/* curl.h makes these function-like macros of themselves (three arguments). */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#undef curl_share_setopt
#define curl_global_init		(ac_etcdso.curl_global_init)
#define curl_multi_init			(ac_etcdso.curl_multi_init)
#define curl_multi_setopt		(ac_etcdso.curl_multi_setopt)
#define curl_multi_socket_action	(ac_etcdso.curl_multi_socket_action)
#define curl_multi_info_read		(ac_etcdso.curl_multi_info_read)
#define curl_multi_add_handle		(ac_etcdso.curl_multi_add_handle)
#define curl_multi_remove_handle	(ac_etcdso.curl_multi_remove_handle)
#define curl_multi_cleanup		(ac_etcdso.curl_multi_cleanup)
#define curl_easy_init			(ac_etcdso.curl_easy_init)
#define curl_easy_setopt		(ac_etcdso.curl_easy_setopt)
#define curl_easy_getinfo		(ac_etcdso.curl_easy_getinfo)
#define curl_easy_cleanup		(ac_etcdso.curl_easy_cleanup)
#define curl_easy_strerror		(ac_etcdso.curl_easy_strerror)
#define curl_easy_perform		(ac_etcdso.curl_easy_perform)
#define curl_slist_append		(ac_etcdso.curl_slist_append)
#define curl_slist_free_all		(ac_etcdso.curl_slist_free_all)
#define json_loadb			(ac_etcdso.json_loadb)
#define json_loads			(ac_etcdso.json_loads)
#define json_dumps			(ac_etcdso.json_dumps)
#define json_object_get			(ac_etcdso.json_object_get)
#define json_string_value		(ac_etcdso.json_string_value)
#define json_integer_value		(ac_etcdso.json_integer_value)
#define json_array_get			(ac_etcdso.json_array_get)
#define json_array_size			(ac_etcdso.json_array_size)
#define json_object			(ac_etcdso.json_object)
#define json_string			(ac_etcdso.json_string)
#define json_object_set_new		(ac_etcdso.json_object_set_new)
#define json_array			(ac_etcdso.json_array)
#define json_array_append_new		(ac_etcdso.json_array_append_new)
#define json_pack			(ac_etcdso.json_pack)
/* jansson.h's inline json_decref() would name json_delete at link time. */
static inline void
ac_json_decref(json_t *j)
{
	if (j != NULL && j->refcount != (size_t)-1 && JSON_INTERNAL_DECREF(j) == 0)
		ac_etcdso.json_delete(j);
}
#define json_decref			ac_json_decref
#endif

#endif
