/* etcdso.c: libcurl and jansson loaded at run time (dlopen), only by a helper whose rendezvous is etcd.
 *
 * The accelctl binary answers rank questions in about the time /bin/true
 * takes; linked, libcurl alone would make every "accelctl is-main" load some
 * thirty libraries (TLS, Kerberos, LDAP, ...). As ncclso.c does for NCCL, the
 * build compiles against the headers it found, and the helper loads the
 * libraries when the etcd transport starts.
 */
#include <dlfcn.h>
#include <stdio.h>

#define AC_ETCDSO_IMPL
#include "etcdso.h"

struct ac_etcdso ac_etcdso;
static int loaded;		/* 1 ok, -1 failed (why below) */
static char load_err[512];

static void *
open_lib(const char *name)
{
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL)
		snprintf(load_err, sizeof(load_err), "cannot load %s: %s", name,
		    dlerror());
	return h;
}

int
ac_etcdso_load(char *why, size_t len)
{
	void *curl, *json;

	if (loaded == 0) {
		loaded = -1;
		/* The SONAMEs the build's -dev packages link (Debian 12). */
		if ((curl = open_lib("libcurl.so.4")) == NULL ||
		    (json = open_lib("libjansson.so.4")) == NULL)
			goto out;
#define AC_ETCDSO_SYM(lib, f) \
		if ((*(void **)&ac_etcdso.f = dlsym(lib, #f)) == NULL) { \
			snprintf(load_err, sizeof(load_err), "%s: no %s", #lib, #f); \
			goto out; \
		}
#define AC_ETCDSO_CURL_SYM(f) AC_ETCDSO_SYM(curl, f)
#define AC_ETCDSO_JSON_SYM(f) AC_ETCDSO_SYM(json, f)
		AC_ETCDSO_CURL(AC_ETCDSO_CURL_SYM)
		AC_ETCDSO_JSON(AC_ETCDSO_JSON_SYM)
		loaded = 1;
	}
out:
	if (loaded == 1)
		return 0;
	snprintf(why, len, "%s", load_err);
	return -1;
}
