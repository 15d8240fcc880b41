/* test_nccl_link.c: the NCCL variant links: every CUDA and NCCL symbol accelctl
 * looks up at run time (lib/nccl/ncclso.h) resolves against the libraries CMake found. */
#include <stdio.h>

#include "ncclso.h"

/* void (*)(void) converts from any function pointer without a warning. */
#define AC_REF(name) (void (*)(void))name,
static void (*const refs[])(void) = {
	AC_CUDART_SYMS(AC_REF)
	AC_NCCL_SYMS(AC_REF)
};

int
main(void)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		n += refs[i] != NULL;
	printf("%zu of %zu CUDA runtime and NCCL symbols resolved (NCCL %d.%d.%d "
	    "headers, CUDA runtime %d)\n", n, sizeof(refs) / sizeof(refs[0]),
	    NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, CUDART_VERSION);
	return n == sizeof(refs) / sizeof(refs[0]) ? 0 : 1;
}
