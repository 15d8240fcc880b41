/* fuzz_env.c: libFuzzer target for the environment detection (ac_topo_detect in lib/detect/topo.c, lib/detect/slurm.c).
 *
 * The input is an environment, one NAME=VALUE a line, as in
 * tests/fixtures/launcher-env. Detection reads it through its getenv hook,
 * never through the process environment, so no run can leak variables into
 * the next. Checks beyond the sanitizers: detection gives the same answer
 * twice, and an environment it accepts satisfies what DESIGN-NOTES.md
 * promises (every value known or -1, rank < world, local rank < local size,
 * local size <= world, node < nodes <= world, local rank <= rank, a job id
 * of 1-200 allowed characters; the world size unknown only in an Indexed
 * Job).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#define MAXVARS 256

struct env {
	char	*kv[MAXVARS];
	int	 n;
};

/* The first NAME=VALUE line wins, as the fixtures are read in test_detect.c. */
static const char *
env_get(const char *name, void *ctx)
{
	struct env *e = ctx;
	size_t len = strlen(name);

	for (int i = 0; i < e->n; i++)
		if (strncmp(e->kv[i], name, len) == 0 && e->kv[i][len] == '=')
			return e->kv[i] + len + 1;
	return NULL;
}

static int
job_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("._:-@", c) != NULL;
}

static void
check(const struct ac_topo *t)
{
	const long *v = t->v;
	size_t n = strlen(t->job_id);

	if (t->launcher == NULL || n == 0 || n > AC_JOB_ID_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!job_char((unsigned char)t->job_id[i]))
			abort();
	for (int f = 0; f < AC_NFIELDS; f++)
		if (v[f] < -1 || (v[f] >= 0 && t->var[f] == NULL))
			abort();
	/* Only an Indexed Job may leave its world size unknown. */
	if (v[AC_WORLD] < 0 && strcmp(t->launcher, "k8s-indexed-job") != 0)
		abort();
	if (v[AC_RANK] < 0 || v[AC_WORLD] == 0 ||
	    (v[AC_WORLD] > 0 && v[AC_RANK] >= v[AC_WORLD]))
		abort();
	if (v[AC_LRANK] >= 0 && v[AC_LSIZE] >= 0 && v[AC_LRANK] >= v[AC_LSIZE])
		abort();
	if (v[AC_WORLD] > 0 && (v[AC_LSIZE] > v[AC_WORLD] ||
	    v[AC_NNODES] > v[AC_WORLD] || v[AC_NODE] >= v[AC_WORLD]))
		abort();
	if (v[AC_NODE] >= 0 && v[AC_NNODES] >= 0 && v[AC_NODE] >= v[AC_NNODES])
		abort();
	if (v[AC_LRANK] > v[AC_RANK])
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct env e = { .n = 0 };
	struct ac_topo t, u;
	char err[256], err2[256];
	char *buf = malloc(size + 1), *line, *save;
	int rc;

	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL && e.n < MAXVARS;
	    line = strtok_r(NULL, "\n", &save))
		if (strchr(line, '=') != NULL)
			e.kv[e.n++] = line;
	memset(&t, 0, sizeof(t));
	memset(&u, 0, sizeof(u));
	err[0] = err2[0] = '\0';
	rc = ac_topo_detect(&t, env_get, &e, err, sizeof(err));
	if (ac_topo_detect(&u, env_get, &e, err2, sizeof(err2)) != rc)
		abort();
	if (rc == 0) {
		check(&t);
		if (memcmp(t.v, u.v, sizeof(t.v)) != 0 ||
		    strcmp(t.job_id, u.job_id) != 0 || strcmp(t.launcher, u.launcher) != 0)
			abort();
	} else if (rc != -1 || err[0] == '\0' || strlen(err) >= sizeof(err) ||
	    strcmp(err, err2) != 0)
		abort();
	free(buf);
	return 0;
}
