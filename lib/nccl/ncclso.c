/* ncclso.c: libcudart and libnccl loaded at run time (dlopen), only where NCCL is used.
 *
 * The accelctl binary answers rank questions in about the time /bin/true takes;
 * linking libcudart and libnccl would make every "accelctl is-main" pay for
 * loading them (and for the CUDA driver's libraries behind them). So the build
 * compiles against the headers it found and the helper (or "accelctl check")
 * loads the libraries only when the NCCL transport is actually chosen. The
 * function types come from the headers (ncclso.h), so a prototype mismatch is
 * a compile error, not a crash.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclso.h"
#include "num.h"
#include "config.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static struct ac_cuda api;
static int loaded;		/* 1 ok, -1 failed (why below) */
static char load_err[512];

/* dlopen NAME, else DIR/NAME (where the build found it). */
static void *
open_name(const char *name, const char *dir)
{
	char path[1024];
	void *h;

	if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != NULL || dir[0] == '\0')
		return h;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* dlopen ENV's value, else NAME (or DIR/NAME). */
static void *
open_lib(const char *env, const char *name, const char *dir, char *why,
    size_t len)
{
	const char *over = getenv(env);
	void *h;

	if (over != NULL && *over != '\0') {
		if ((h = dlopen(over, RTLD_NOW | RTLD_LOCAL)) == NULL)
			snprintf(why, len, "cannot load %s=%s: %s", env, over, dlerror());
		return h;
	}
	if ((h = open_name(name, dir)) == NULL)
		snprintf(why, len, "cannot load %s (set %s, or add its directory to "
		    "LD_LIBRARY_PATH): %s", name, env, dlerror());
	return h;
}

/* The NVIDIA driver's library is there (the runtime loads it by this name). */
static int
have_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (h == NULL)
		return 0;
	dlclose(h);
	return 1;
}

/*
 * The CUDA runtime. Its soname carries the CUDA major (libcudart.so.13), and
 * a runtime newer than the driver refuses to work (cudaErrorInsufficientDriver:
 * CUDA 13 needs an r580 driver, and many clusters run CUDA 12 drivers). The
 * symbols we use are the same in 12 and 13, so every known major is tried,
 * the headers' first, and one the driver refuses is put back for the next.
 */
static void *
open_cudart(char *name, size_t namelen, char *why, size_t len)
{
	static const char *const majors[] = { STR(ACCELCTL_CUDART_MAJOR), "13",
	    "12", "14" };
	const char *over = getenv("ACCELCTL_CUDART_LIBRARY");
	char tried[400] = "", cand[64];
	size_t n = 0;
	void *h;

	if (over != NULL && *over != '\0') {
		snprintf(name, namelen, "%s", over);
		return open_lib("ACCELCTL_CUDART_LIBRARY", over, "", why, len);
	}
	for (size_t i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		__typeof__(cudaGetDeviceCount) *count;
		int ndev;

		if (i > 0 && strcmp(majors[i], majors[0]) == 0)
			continue;
		snprintf(cand, sizeof(cand), "libcudart.so.%s", majors[i]);
		if ((h = open_name(cand, ACCELCTL_CUDART_LIBDIR)) == NULL)
			continue;
		*(void **)&count = dlsym(h, "cudaGetDeviceCount");
		/* Without a driver at all the runtime says the same: then
		 * another runtime would not help, and "no GPU" is the truth. */
		if (count != NULL && count(&ndev) == cudaErrorInsufficientDriver &&
		    have_driver()) {
			if (n < sizeof(tried))
				n += (size_t)snprintf(tried + n, sizeof(tried) - n,
				    "%s%s", n ? ", " : "", cand);
			dlclose(h);
			continue;
		}
		snprintf(name, namelen, "%s", cand);
		return h;
	}
	if (n > 0)
		snprintf(why, len, "the NVIDIA driver is too old for the CUDA "
		    "runtime found (%s: CUDA driver version is insufficient for "
		    "CUDA runtime version): add a libcudart.so of the driver's "
		    "CUDA major to LD_LIBRARY_PATH or set ACCELCTL_CUDART_LIBRARY",
		    tried);
	else
		snprintf(why, len, "cannot load libcudart.so.%s (nor .13, .12, "
		    ".14; set ACCELCTL_CUDART_LIBRARY, or add its directory to "
		    "LD_LIBRARY_PATH): %s", STR(ACCELCTL_CUDART_MAJOR), dlerror());
	return NULL;
}

const struct ac_cuda *
ac_cuda_load(char *err, size_t errlen)
{
	void *cudart, *nccl;
	const char *missing = NULL;

	if (loaded == 1)
		return &api;
	if (loaded == -1) {
		snprintf(err, errlen, "%s", load_err);
		return NULL;
	}
	loaded = -1;
	cudart = open_cudart(api.cudart_name, sizeof(api.cudart_name), load_err,
	    sizeof(load_err));
	nccl = cudart == NULL ? NULL : open_lib("ACCELCTL_NCCL_LIBRARY",
	    "libnccl.so." STR(NCCL_MAJOR), ACCELCTL_NCCL_LIBDIR, load_err,
	    sizeof(load_err));
	if (cudart == NULL || nccl == NULL) {
		snprintf(err, errlen, "%s", load_err);
		return NULL;
	}
	/* dlsym returns void *; the field has the header's type. */
#define AC_LOOK(lib, name)						\
	if (missing == NULL && (*(void **)&api.name = dlsym(lib, #name)) == NULL) \
		missing = #name;
#define AC_LOOK_CUDART(name) AC_LOOK(cudart, name)
#define AC_LOOK_NCCL(name) AC_LOOK(nccl, name)
	AC_CUDART_SYMS(AC_LOOK_CUDART)
	AC_NCCL_SYMS(AC_LOOK_NCCL)
	if (missing != NULL) {
		snprintf(load_err, sizeof(load_err), "the CUDA or NCCL library "
		    "loaded lacks %s (too old?)", missing);
		snprintf(err, errlen, "%s", load_err);
		return NULL;
	}
	if (api.ncclGetVersion(&api.nccl_version) != ncclSuccess)
		api.nccl_version = 0;
	/* NCCL_VERSION(X,Y,Z) is X*10000 + Y*100 + Z since 2.9. */
	snprintf(api.nccl_release, sizeof(api.nccl_release), "%d.%d.%d",
	    api.nccl_version / 10000, api.nccl_version / 100 % 100,
	    api.nccl_version % 100);
	if (api.cudaRuntimeGetVersion(&api.cudart_version) != cudaSuccess)
		api.cudart_version = 0;
	loaded = 1;
	return &api;
}

int
ac_cuda_pick_gpu(const struct ac_cuda **out, int set, char *err, size_t errlen)
{
	const struct ac_cuda *a = ac_cuda_load(err, errlen);
	const char *want = getenv("ACCELCTL_HELPER_GPU"), *why;
	cudaError_t ce;
	int n = 0;
	long dev = 0;

	*out = a;
	if (a == NULL)
		return -1;
	if (want != NULL && *want != '\0' &&
	    ac_parse_uint(want, 1 << 20, &dev, &why) == -1) {
		snprintf(err, errlen, "invalid ACCELCTL_HELPER_GPU '%.40s': %s",
		    want, why);
		return -2;
	}
	if ((ce = a->cudaGetDeviceCount(&n)) == cudaErrorInsufficientDriver &&
	    have_driver()) {
		snprintf(err, errlen, "the NVIDIA driver is too old for %s "
		    "(cudaGetDeviceCount: %s): load a CUDA runtime of the "
		    "driver's CUDA major (ACCELCTL_CUDART_LIBRARY)", a->cudart_name,
		    a->cudaGetErrorString(ce));
		return -1;
	}
	if (ce != cudaSuccess) {
		snprintf(err, errlen, "no GPU visible: cudaGetDeviceCount: %s",
		    a->cudaGetErrorString(ce));
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "no GPU visible (CUDA_VISIBLE_DEVICES?)");
		return -1;
	}
	if (dev >= n) {
		snprintf(err, errlen, "invalid ACCELCTL_HELPER_GPU '%ld': %d GPU%s "
		    "visible (0-%d)", dev, n, n == 1 ? "" : "s", n - 1);
		return -2;
	}
	/* Only counting (accelctl info) creates no context. */
	if (set && (ce = a->cudaSetDevice((int)dev)) != cudaSuccess) {
		snprintf(err, errlen, "cudaSetDevice(%ld): %s", dev,
		    a->cudaGetErrorString(ce));
		return -1;
	}
	return (int)dev;
}

const char *
ac_cuda_build_version(void)
{
	return "NCCL " STR(NCCL_MAJOR) "." STR(NCCL_MINOR) "." STR(NCCL_PATCH)
	    ", CUDA " STR(ACCELCTL_CUDART_MAJOR) "; loaded at run time";
}
