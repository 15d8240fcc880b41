/* latency.c: from the last rank's arrival to the last rank's release, per barrier:
 * NPROC processes run GENS barriers through the helper (lib/sync.c, as the
 * accelctl binary does) and record monotonic timestamps around each call.
 *
 *   bench_latency NPROC GENS     (ACCELCTL_* of a job in the environment)
 * prints the median and p99 of (last release - last arrival) in microseconds.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sync.h"

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	long nproc, gens;
	long long *t, *lat;

	if (argc != 3 || (nproc = atol(argv[1])) < 1 || (gens = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: bench_latency NPROC GENS\n");
		return 2;
	}
	/* enter/exit of every process and generation, shared with the children. */
	t = mmap(NULL, (size_t)(nproc * gens * 2) * sizeof(*t),
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return 1;
	for (long p = 0; p < nproc; p++) {
		if (fork() != 0)
			continue;
		char buf[32];
		struct ac_topo topo;
		char err[256];

		snprintf(buf, sizeof(buf), "%ld", p);
		setenv("ACCELCTL_RANK", buf, 1);
		setenv("ACCELCTL_LOCAL_RANK", buf, 1);
		if (ac_topo_detect(&topo, ac_getenv_process, NULL, err, sizeof(err)) == -1) {
			fprintf(stderr, "%s\n", err);
			_exit(2);
		}
		for (long g = 0; g < gens; g++) {
			struct ac_sync s;

			ac_sync_init(&s, AC_OP_BARRIER, AC_SCOPE_JOB, AC_ROLE_WAIT,
			    "b:latency", "'latency'", 0, 60000);
			t[(p * gens + g) * 2] = now_ns();
			if (ac_sync_wait(&topo, &s) != 0)
				_exit(1);
			t[(p * gens + g) * 2 + 1] = now_ns();
			ac_sync_free(&s);
		}
		_exit(0);
	}
	for (long p = 0; p < nproc; p++) {
		int st;
		wait(&st);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	lat = calloc((size_t)gens, sizeof(*lat));
	for (long g = 0; g < gens; g++) {
		long long last_in = 0, last_out = 0;

		for (long p = 0; p < nproc; p++) {
			if (t[(p * gens + g) * 2] > last_in)
				last_in = t[(p * gens + g) * 2];
			if (t[(p * gens + g) * 2 + 1] > last_out)
				last_out = t[(p * gens + g) * 2 + 1];
		}
		lat[g] = last_out - last_in;
	}
	qsort(lat, (size_t)gens, sizeof(*lat), cmp);
	printf("%.0f %.0f\n", lat[gens / 2] / 1000.0, lat[gens * 99 / 100] / 1000.0);
	free(lat);
	return 0;
}
