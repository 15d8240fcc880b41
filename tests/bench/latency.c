/* latency.c: from the last rank's arrival to the last rank's release, per barrier:
 * NODES x NPROC processes run GENS barriers through their node's helper
 * (lib/client/sync.c, as the accelctl binary does) and record monotonic timestamps
 * around each call. Simulated node N uses the runtime directory DIR/nodeN.
 *
 *   bench_latency NODES NPROC GENS DIR   (ACCELCTL_JOB_ID, ACCELCTL_RENDEZVOUS
 *                                          in the environment)
 * prints the median and p99 of (last release - last arrival) in microseconds.
 * BENCH_NAMES=K: barrier g is named "latency-(g mod K)" (K names in rotation,
 * as a job with many barrier names; the store's keys are bounded by names).
 */
#include <sys/mman.h>
#include <sys/stat.h>
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
	long nodes, per, nproc, gens, names = 1;
	long long *t, *lat;
	char v[64], dir[4096];

	if (argc != 5 || (nodes = atol(argv[1])) < 1 || (per = atol(argv[2])) < 1 ||
	    (gens = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: bench_latency NODES NPROC GENS DIR\n");
		return 2;
	}
	if (getenv("BENCH_NAMES") != NULL && (names = atol(getenv("BENCH_NAMES"))) < 1) {
		fprintf(stderr, "bench_latency: BENCH_NAMES: a number of names, 1 or more\n");
		return 2;
	}
	nproc = nodes * per;
	snprintf(v, sizeof(v), "%ld", nproc);
	setenv("ACCELCTL_WORLD_SIZE", v, 1);
	snprintf(v, sizeof(v), "%ld", per);
	setenv("ACCELCTL_LOCAL_WORLD_SIZE", v, 1);
	snprintf(v, sizeof(v), "%ld", nodes);
	setenv("ACCELCTL_NNODES", v, 1);
	for (long n = 0; n < nodes; n++) {
		snprintf(dir, sizeof(dir), "%s/node%ld", argv[4], n);
		mkdir(dir, 0700);
	}
	/* enter/exit of every process and generation, shared with the children. */
	t = mmap(NULL, (size_t)(nproc * gens * 2) * sizeof(*t),
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return 1;
	for (long p = 0; p < nproc; p++) {
		if (fork() != 0)
			continue;
		char buf[4096];
		struct ac_topo topo;
		char err[256];

		snprintf(buf, sizeof(buf), "%ld", p);
		setenv("ACCELCTL_RANK", buf, 1);
		snprintf(buf, sizeof(buf), "%ld", p % per);
		setenv("ACCELCTL_LOCAL_RANK", buf, 1);
		snprintf(buf, sizeof(buf), "%ld", p / per);
		setenv("ACCELCTL_NODE_RANK", buf, 1);
		snprintf(dir, sizeof(dir), "%s/node%ld", argv[4], p / per);
		setenv("ACCELCTL_RUNTIME_DIR", dir, 1);
		if (ac_topo_detect(&topo, ac_getenv_process, NULL, err, sizeof(err)) == -1) {
			fprintf(stderr, "%s\n", err);
			_exit(2);
		}
		for (long g = 0; g < gens; g++) {
			struct ac_sync s;
			char key[64], shown[64];

			if (names == 1) {
				snprintf(key, sizeof(key), "b:latency");
				snprintf(shown, sizeof(shown), "'latency'");
			} else {
				snprintf(key, sizeof(key), "b:latency-%ld", g % names);
				snprintf(shown, sizeof(shown), "'latency-%ld'", g % names);
			}
			ac_sync_init(&s, AC_OP_BARRIER, AC_SCOPE_JOB, AC_ROLE_WAIT,
			    key, shown, 0, 60000);
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
