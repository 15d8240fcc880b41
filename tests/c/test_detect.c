/* test_detect.c: rank detection against the captured launcher environments
 * (tests/fixtures/launcher-env, every process of every launch) and against
 * hand-made environments for each rule and error of DESIGN.md section 1. */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>

#include "check.h"
#include "topo.h"

#define MAXVARS 256

struct env {
	char	*kv[MAXVARS];
	int	 n;
};

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

static void
env_free(struct env *e)
{
	for (int i = 0; i < e->n; i++)
		free(e->kv[i]);
	e->n = 0;
}

static int
env_load(struct env *e, const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	e->n = 0;
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL && e->n < MAXVARS) {
		line[strcspn(line, "\n")] = '\0';
		if (strchr(line, '=') != NULL)
			e->kv[e->n++] = strdup(line);
	}
	fclose(f);
	return 0;
}

/* One launch: every rankN.env must give exactly its expected.tsv row, and
 * all processes of the launch the same job id. */
static int
check_launch(const char *dir, char ids[][AC_JOB_ID_MAX + 1], int nids)
{
	char path[8192], line[512], file[64], err[256], first_id[AC_JOB_ID_MAX + 1] = "";
	long want[AC_NFIELDS];
	FILE *f;
	int rows = 0;

	snprintf(path, sizeof(path), "%s/expected.tsv", dir);
	if ((f = fopen(path, "r")) == NULL)
		return nids;
	/* The header; checked, as -O2's fortified fgets insists. */
	if (fgets(line, sizeof(line), f) == NULL) {
		fclose(f);
		return nids;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		struct env e;
		struct ac_topo t;

		if (sscanf(line, "%63s %ld %ld %ld %ld %ld %ld", file, &want[0],
		    &want[1], &want[2], &want[3], &want[4], &want[5]) != 7)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		CHECK(env_load(&e, path) == 0);
		int rc = ac_topo_detect(&t, env_get, &e, err, sizeof(err));
		CHECK(rc == 0);
		if (rc != 0)
			fprintf(stderr, "%s: %s\n", path, err);
		for (int i = 0; rc == 0 && i < AC_NFIELDS; i++) {
			if (t.v[i] != want[i])
				fprintf(stderr, "%s: %s is %ld, want %ld\n", path,
				    ac_field_names[i], t.v[i], want[i]);
			CHECK(t.v[i] == want[i]);
		}
		if (rows++ == 0)
			strcpy(first_id, t.job_id);
		else
			CHECK_STR(t.job_id, first_id);
		env_free(&e);
	}
	fclose(f);
	CHECK(rows > 0);
	strcpy(ids[nids], first_id);
	return nids + 1;
}

static void
test_fixtures(const char *root)
{
	char ids[64][AC_JOB_ID_MAX + 1], path[4096];
	struct dirent *de;
	int nids = 0;
	DIR *d = opendir(root);

	CHECK(d != NULL);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL && nids < 64) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, de->d_name);
		nids = check_launch(path, ids, nids);
	}
	closedir(d);
	CHECK(nids >= 10);
	/* Different launches never share a job id (they would meet). */
	for (int i = 0; i < nids; i++)
		for (int j = i + 1; j < nids; j++)
			if (strcmp(ids[i], ids[j]) == 0)
				CHECK(!"two launches share a job id");
}

/* detect(ERR_OUT, "K=V", ..., NULL): run detection on a made-up environment. */
static int
detect(struct ac_topo *t, char *err, size_t errlen, ...)
{
	struct env e = { .n = 0 };
	va_list ap;
	const char *kv;
	int rc;

	va_start(ap, errlen);
	while ((kv = va_arg(ap, const char *)) != NULL)
		e.kv[e.n++] = strdup(kv);
	va_end(ap);
	err[0] = '\0';
	rc = ac_topo_detect(t, env_get, &e, err, errlen);
	env_free(&e);
	return rc;
}

#define ERR_HAS(s) CHECK(strstr(err, (s)) != NULL)

static void
test_rules(void)
{
	struct ac_topo t;
	char err[256];

	/* No launcher: one process. */
	CHECK(detect(&t, err, sizeof(err), NULL) == 0);
	CHECK_STR(t.launcher, "none");
	CHECK(t.v[AC_RANK] == 0 && t.v[AC_WORLD] == 1 && t.v[AC_NNODES] == 1);
	CHECK_STR(t.job_id, "default");

	/* -1 and empty are unset: the next row wins. */
	CHECK(detect(&t, err, sizeof(err), "RANK=-1", "WORLD_SIZE=-1",
	    "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2",
	    "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
	    NULL) == 0);
	CHECK_STR(t.launcher, "openmpi");
	CHECK(t.v[AC_RANK] == 1 && t.v[AC_NODE] == 0 && t.v[AC_NNODES] == 1);
	CHECK(detect(&t, err, sizeof(err), "ACCELCTL_RANK=", "RANK=1",
	    "WORLD_SIZE=2", NULL) == 0);
	CHECK_STR(t.launcher, "torchrun");

	/* The explicit row wins over everything. */
	CHECK(detect(&t, err, sizeof(err), "ACCELCTL_RANK=3",
	    "ACCELCTL_WORLD_SIZE=4", "RANK=0", "WORLD_SIZE=4", NULL) == 0);
	CHECK(t.v[AC_RANK] == 3);
	CHECK_STR(t.launcher, "explicit");

	/* DeepSpeed's names. */
	CHECK(detect(&t, err, sizeof(err), "RANK=5", "WORLD_SIZE=8",
	    "LOCAL_RANK=1", "LOCAL_SIZE=4", "CROSS_RANK=1", "CROSS_SIZE=2",
	    NULL) == 0);
	CHECK_STR(t.launcher, "deepspeed");
	CHECK(t.v[AC_LSIZE] == 4 && t.v[AC_NODE] == 1 && t.v[AC_NNODES] == 2);

	/* MPICH and MVAPICH2 rows, node rank derived. */
	CHECK(detect(&t, err, sizeof(err), "PMI_RANK=3", "PMI_SIZE=4",
	    "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2", NULL) == 0);
	CHECK_STR(t.launcher, "mpich");
	CHECK(t.v[AC_NODE] == 1 && t.v[AC_NNODES] == 2);
	CHECK(detect(&t, err, sizeof(err), "MV2_COMM_WORLD_RANK=2",
	    "MV2_COMM_WORLD_SIZE=3", "MV2_COMM_WORLD_LOCAL_RANK=2",
	    "MV2_COMM_WORLD_LOCAL_SIZE=3", NULL) == 0);
	CHECK_STR(t.launcher, "mvapich2");

	/* Uneven MPI nodes: node rank cannot be derived, stays unknown. */
	CHECK(detect(&t, err, sizeof(err), "OMPI_COMM_WORLD_RANK=3",
	    "OMPI_COMM_WORLD_SIZE=5", "OMPI_COMM_WORLD_LOCAL_RANK=0",
	    "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL) == 0);
	CHECK(t.v[AC_NODE] == -1 && t.v[AC_NNODES] == -1);
	/* Cyclic mapping: rank % local size is not the local rank. */
	CHECK(detect(&t, err, sizeof(err), "OMPI_COMM_WORLD_RANK=1",
	    "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=0",
	    "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL) == 0);
	CHECK(t.v[AC_NODE] == -1);

	/* MPICH under srun --mpi=pmi2: local rank borrowed from Slurm. */
	CHECK(detect(&t, err, sizeof(err), "PMI_RANK=3", "PMI_SIZE=4",
	    "SLURM_PROCID=3", "SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=4",
	    "SLURM_LOCALID=0", "SLURM_NODEID=1", "SLURM_STEP_NUM_NODES=3",
	    "SLURM_STEP_TASKS_PER_NODE=3,1(x2)", NULL) == 0);
	CHECK_STR(t.launcher, "mpich");
	CHECK(t.v[AC_LRANK] == 0 && t.v[AC_LSIZE] == 1 && t.v[AC_NODE] == 1 &&
	    t.v[AC_NNODES] == 3);
	/* ... but never from a row that describes another process. */
	CHECK(detect(&t, err, sizeof(err), "PMI_RANK=3", "PMI_SIZE=4",
	    "SLURM_PROCID=1", "SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=2",
	    "SLURM_LOCALID=0", "SLURM_NODEID=1", "SLURM_STEP_NUM_NODES=2",
	    "SLURM_STEP_TASKS_PER_NODE=1(x2)", NULL) == 0);
	CHECK(t.v[AC_LRANK] == -1);

	/* Slurm: batch script is one process; step without STEP list falls
	 * back to SLURM_TASKS_PER_NODE. */
	CHECK(detect(&t, err, sizeof(err), "SLURM_PROCID=0", "SLURM_NTASKS=8",
	    "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_ID=77", NULL) == 0);
	CHECK(t.v[AC_WORLD] == 1);
	CHECK_STR(t.job_id, "77.batch");
	CHECK(detect(&t, err, sizeof(err), "SLURM_PROCID=5", "SLURM_NTASKS=8",
	    "SLURM_STEP_ID=2", "SLURM_LOCALID=1", "SLURM_NODEID=1",
	    "SLURM_JOB_NUM_NODES=2", "SLURM_TASKS_PER_NODE=4(x2)",
	    "SLURM_JOB_ID=77", NULL) == 0);
	CHECK(t.v[AC_LSIZE] == 4 && t.v[AC_NNODES] == 2);
	CHECK_STR(t.job_id, "77.2");

	/* Job identity. */
	CHECK(detect(&t, err, sizeof(err), "ACCELCTL_JOB_ID=my.job-1",
	    "SLURM_JOB_ID=5", NULL) == 0);
	CHECK_STR(t.job_id, "my.job-1");
	CHECK(detect(&t, err, sizeof(err), "RANK=0", "WORLD_SIZE=2",
	    "TORCHELASTIC_RUN_ID=abc", "MASTER_ADDR=10.0.0.1",
	    "MASTER_PORT=29500", "TORCHELASTIC_RESTART_COUNT=2", NULL) == 0);
	CHECK_STR(t.job_id, "torchrun.abc@10.0.0.1:29500.restart2");
	CHECK(detect(&t, err, sizeof(err), "OMPI_COMM_WORLD_RANK=0",
	    "OMPI_COMM_WORLD_SIZE=2", "PMIX_NAMESPACE=123", "SLURM_JOB_ID=9",
	    NULL) == 0);
	CHECK_STR(t.job_id, "9.mpi.123");
	CHECK(detect(&t, err, sizeof(err), "ACCELCTL_JOB_ID=a b", NULL) == -1);
	ERR_HAS("invalid ACCELCTL_JOB_ID='a b'");
	CHECK(detect(&t, err, sizeof(err), "RANK=0", "WORLD_SIZE=1",
	    "TORCHELASTIC_RUN_ID=x/y z", NULL) == 0);
	CHECK_STR(t.job_id, "torchrun.x_y_z");
}

static void
test_errors(void)
{
	static char big[100001];
	struct ac_topo t;
	char err[256], kv[100020];

	CHECK(detect(&t, err, sizeof(err), "RANK=abc", "WORLD_SIZE=2", NULL) == -1);
	CHECK_STR(err, "invalid RANK='abc': not a non-negative integer");
	CHECK(detect(&t, err, sizeof(err), "RANK=3", "WORLD_SIZE=2", NULL) == -1);
	CHECK_STR(err, "inconsistent environment: RANK=3 is not below WORLD_SIZE=2");
	CHECK(detect(&t, err, sizeof(err), "RANK=0", NULL) == -1);
	CHECK_STR(err, "RANK is set but WORLD_SIZE is not");
	CHECK(detect(&t, err, sizeof(err), "RANK=0", "WORLD_SIZE=2",
	    "LOCAL_RANK=0", NULL) == -1);
	CHECK_STR(err, "LOCAL_RANK is set but LOCAL_WORLD_SIZE nor LOCAL_SIZE is not");
	CHECK(detect(&t, err, sizeof(err), "RANK=0", "WORLD_SIZE=2",
	    "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2", NULL) == -1);
	ERR_HAS("LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2");
	CHECK(detect(&t, err, sizeof(err), "RANK=0", "WORLD_SIZE=0", NULL) == -1);
	ERR_HAS("must be at least 1");
	CHECK(detect(&t, err, sizeof(err), "RANK=0", "WORLD_SIZE=2",
	    "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=4", NULL) == -1);
	ERR_HAS("LOCAL_WORLD_SIZE=4 is not at most WORLD_SIZE=2");
	CHECK(detect(&t, err, sizeof(err), "RANK=99999999999999999999",
	    "WORLD_SIZE=2", NULL) == -1);
	ERR_HAS("too large");
	CHECK(detect(&t, err, sizeof(err), "SLURM_PROCID=0", "SLURM_STEP_ID=0",
	    "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NODEID=0",
	    "SLURM_STEP_TASKS_PER_NODE=garbage", NULL) == -1);
	CHECK_STR(err, "invalid SLURM_STEP_TASKS_PER_NODE='garbage': "
	    "malformed tasks-per-node list");
	/* A 100 kB value is refused with a short message. */
	memset(big, '1', sizeof(big) - 1);
	snprintf(kv, sizeof(kv), "RANK=%s", big);
	CHECK(detect(&t, err, sizeof(err), kv, "WORLD_SIZE=2", NULL) == -1);
	CHECK(strlen(err) < 120);
	/* Malformed values of a row that does not win are not read. */
	CHECK(detect(&t, err, sizeof(err), "RANK=1", "WORLD_SIZE=2",
	    "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2", "SLURM_PROCID=x",
	    "SLURM_STEP_ID=0", NULL) == 0);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_detect FIXTURE-DIR\n");
		return 2;
	}
	test_fixtures(argv[1]);
	test_rules();
	test_errors();
	return CHECK_DONE();
}
