/* ncclso.h: libcudart and libnccl loaded at run time (dlopen), only where NCCL is used. */
#ifndef ACCELCTL_NCCLSO_H
#define ACCELCTL_NCCLSO_H

#include <stddef.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

/*
 * Every symbol accelctl uses, once: the table below, the loader and the link
 * test (tests/c/test_nccl_link.c) are all built from these lists, so a symbol
 * cannot be used here without the link test resolving it against the real
 * libraries.
 */
#define AC_CUDART_SYMS(X)						\
	X(cudaGetDeviceCount) X(cudaSetDevice) X(cudaGetErrorString)	\
	X(cudaRuntimeGetVersion) X(cudaDeviceGetPCIBusId)		\
	X(cudaStreamCreateWithFlags) X(cudaStreamQuery)			\
	X(cudaStreamSynchronize) X(cudaStreamDestroy) X(cudaMalloc)	\
	X(cudaFree) X(cudaMallocHost) X(cudaFreeHost) X(cudaMemcpyAsync)	\
	X(cudaMemsetAsync) X(cudaLaunchHostFunc) X(cudaEventCreate)	\
	X(cudaEventRecord) X(cudaEventSynchronize) X(cudaEventElapsedTime)	\
	X(cudaEventDestroy)
#define AC_NCCL_SYMS(X)							\
	X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRankConfig)	\
	X(ncclCommGetAsyncError) X(ncclCommAbort) X(ncclAllReduce)	\
	X(ncclBroadcast) X(ncclGetErrorString) X(ncclGetLastError)

/* The functions, typed from the headers the build found. */
struct ac_cuda {
#define AC_FIELD(name) __typeof__(name) *name;
	AC_CUDART_SYMS(AC_FIELD)
	AC_NCCL_SYMS(AC_FIELD)
#undef AC_FIELD
	int	nccl_version;	/* 22809 for 2.28.9 */
	char	nccl_release[16];	/* "2.28.9" */
	int	cudart_version;	/* 13000 for 13.0 */
	char	cudart_name[256];	/* "libcudart.so.12": the one loaded */
};

/*
 * Load both libraries (once per process) and look up every symbol. Returns
 * the table, or NULL with why in ERR ("cannot load libnccl.so.2: ..."). NCCL's
 * soname matches the headers' major; the CUDA runtime's is tried for the
 * headers' CUDA major, then 13, 12 and 14 (the symbols used are the same),
 * skipping one the driver is too old for; ACCELCTL_CUDART_LIBRARY and
 * ACCELCTL_NCCL_LIBRARY override them, and the directory where the build
 * found the library is tried after each soname.
 */
const struct ac_cuda *ac_cuda_load(char *err, size_t errlen);

/*
 * The GPU to use: ACCELCTL_HELPER_GPU, else the first visible device. Loads
 * the libraries and counts the devices; with SET makes it current
 * (cudaSetDevice: a context, seconds); returns the device index, or -1 with
 * why in ERR ("no GPU visible: ..."); -2 when ACCELCTL_HELPER_GPU is malformed
 * or out of range (a usage error).
 */
int ac_cuda_pick_gpu(const struct ac_cuda **api, int set, char *err,
    size_t errlen);

/* "NCCL 2.28.9 (headers; libraries loaded at run time), CUDA 13.0". */
const char *ac_cuda_build_version(void);

#endif
