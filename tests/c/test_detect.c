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

/* A value of expected.tsv: a number, or "null" where the environment cannot
 * tell it (-1, unknown). */
static int
want_value(const char *s, long *v)
{
	char *end;

	if (strcmp(s, "null") == 0) {
		*v = -1;
		return 0;
	}
	*v = strtol(s, &end, 10);
	return end != s && *end == '\0' ? 0 : -1;
}

/* One launch: every rankN.env must give exactly its expected.tsv row (and
 * its launcher, where the 8th column names it), and all processes of the
 * launch the same job id. */
static int
check_launch(const char *dir, char ids[][AC_JOB_ID_MAX + 1], int nids)
{
	char path[8192], line[512], file[64], err[256], first_id[AC_JOB_ID_MAX + 1] = "";
	char tok[AC_NFIELDS][32], launcher[64];
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

		int n = sscanf(line, "%63s %31s %31s %31s %31s %31s %31s %63s",
		    file, tok[0], tok[1], tok[2], tok[3], tok[4], tok[5],
		    launcher);
		int bad = n < 7;

		for (int i = 0; !bad && i < AC_NFIELDS; i++)
			bad = want_value(tok[i], &want[i]) == -1;
		CHECK(!bad);
		if (bad) {
			fprintf(stderr, "%s/expected.tsv: bad line: %s", dir, line);
			continue;
		}
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
		if (rc == 0 && n == 8) {
			if (strcmp(t.launcher, launcher) != 0)
				fprintf(stderr, "%s: launcher %s, want %s\n",
				    path, t.launcher, launcher);
			CHECK_STR(t.launcher, launcher);
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
	CHECK(nids >= 27);
	/* Different launches never share a job id (they would meet); only
	 * "default", the documented id of a launch without one, repeats. */
	for (int i = 0; i < nids; i++)
		for (int j = i + 1; j < nids; j++)
			if (strcmp(ids[i], ids[j]) == 0 &&
			    strcmp(ids[i], "default") != 0) {
				fprintf(stderr, "job id %s twice\n", ids[i]);
				CHECK(!"two launches share a job id");
			}
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

/* The rows of the largest sites and of the clouds, and what they shadow. */
static void
test_new_rows(void)
{
	struct ac_topo t;
	char err[256];

	/* Flux wins over its simple PMI's PMI_RANK (the MPICH row). */
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=3", "FLUX_JOB_SIZE=4",
	    "FLUX_TASK_LOCAL_ID=1", "FLUX_JOB_NNODES=2", "PMI_RANK=3",
	    "PMI_SIZE=4", "FLUX_JOB_ID=\xc6\x92" "abc", "SLURM_JOB_ID=9",
	    "SLURM_STEP_ID=0", "SLURM_PROCID=0", "SLURM_NTASKS=1", NULL) == 0);
	CHECK_STR(t.launcher, "flux");
	CHECK(t.v[AC_LSIZE] == 2 && t.v[AC_NODE] == 1 && t.v[AC_NNODES] == 2);
	CHECK_STR(t.job_id, "flux.fabc");
	/* No block map: the local size and node rank stay unknown, with why. */
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=2", "FLUX_JOB_SIZE=3",
	    "FLUX_TASK_LOCAL_ID=0", "FLUX_JOB_NNODES=2", NULL) == 0);
	CHECK(t.v[AC_LRANK] == 0 && t.v[AC_LSIZE] == -1 && t.v[AC_NODE] == -1);
	CHECK(strstr(t.hint, "FLUX_JOB_SIZE=3") != NULL);
	/* ... which the explicit row's variables of those fields give. */
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=2", "FLUX_JOB_SIZE=3",
	    "FLUX_TASK_LOCAL_ID=0", "FLUX_JOB_NNODES=2",
	    "ACCELCTL_LOCAL_WORLD_SIZE=1", "ACCELCTL_NODE_RANK=1", NULL) == 0);
	CHECK(t.v[AC_LSIZE] == 1 && t.v[AC_NODE] == 1);
	CHECK_STR(t.var[AC_NODE], "ACCELCTL_NODE_RANK");
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=2", "FLUX_JOB_SIZE=3",
	    "FLUX_TASK_LOCAL_ID=1", "FLUX_JOB_NNODES=2",
	    "ACCELCTL_LOCAL_WORLD_SIZE=1", NULL) == -1);
	ERR_HAS("FLUX_TASK_LOCAL_ID=1 is not below ACCELCTL_LOCAL_WORLD_SIZE=1");
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=2", "FLUX_JOB_SIZE=3",
	    "FLUX_TASK_LOCAL_ID=1", "FLUX_JOB_NNODES=2",
	    "ACCELCTL_NODE_RANK=x", NULL) == -1);
	CHECK_STR(err, "invalid ACCELCTL_NODE_RANK='x': not a non-negative integer");
	/* A cyclic map whose size divides: the node rank only where block fits. */
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=1", "FLUX_JOB_SIZE=4",
	    "FLUX_TASK_LOCAL_ID=0", "FLUX_JOB_NNODES=2", NULL) == 0);
	CHECK(t.v[AC_LSIZE] == 2 && t.v[AC_NODE] == -1);

	/* PALS wins over PMI_RANK; PMI_LOCAL_RANK where PALS_LOCAL_RANKID is not. */
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=3", "PALS_NODEID=1",
	    "PMI_RANK=3", "PMI_SIZE=4", "PMI_LOCAL_RANK=1", "PMI_LOCAL_SIZE=2",
	    "PALS_APID=ab-12", "PBS_JOBID=7.pbs", NULL) == 0);
	CHECK_STR(t.launcher, "pals");
	CHECK(t.v[AC_LRANK] == 1 && t.v[AC_NODE] == 1 && t.v[AC_NNODES] == 2);
	CHECK_STR(t.var[AC_LRANK], "PMI_LOCAL_RANK");
	CHECK_STR(t.job_id, "pals.ab-12");
	/* A node id that disagrees with a block layout: no node count. */
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=4", "PALS_NODEID=1",
	    "PMI_SIZE=6", "PMI_LOCAL_RANK=0", "PMI_LOCAL_SIZE=2", NULL) == 0);
	CHECK(t.v[AC_NODE] == 1 && t.v[AC_NNODES] == -1);
	/* A node id no world of that size has, though the count is unknown. */
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=1", "PALS_NODEID=3",
	    "PMI_SIZE=2", "PMI_LOCAL_RANK=1", "PMI_LOCAL_SIZE=2", NULL) == -1);
	ERR_HAS("PALS_NODEID=3 is not below PMI_SIZE=2");
	/* srun --mpi=cray_shasta: partial PALS, Slurm's row is the truth. */
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=3", "PALS_NODEID=1",
	    "PALS_APID=5.0", "SLURM_PROCID=3", "SLURM_STEP_ID=0",
	    "SLURM_STEP_NUM_TASKS=4", "SLURM_LOCALID=1", "SLURM_NODEID=1",
	    "SLURM_STEP_NUM_NODES=2", "SLURM_STEP_TASKS_PER_NODE=2(x2)",
	    "SLURM_JOB_ID=5", NULL) == 0);
	CHECK_STR(t.launcher, "slurm");
	CHECK_STR(t.job_id, "5.0");
	/* ... but outside Slurm half a PALS environment is an error. */
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=3", NULL) == -1);
	CHECK_STR(err, "PALS_RANKID is set but PMI_SIZE is not");
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=0", "PMI_SIZE=2",
	    "PMI_LOCAL_RANK=0", "PMI_LOCAL_SIZE=0", NULL) == -1);
	ERR_HAS("must be at least 1");

	/* jsrun wins over Spectrum MPI's OMPI_COMM_WORLD_*; steps differ. */
	CHECK(detect(&t, err, sizeof(err), "JSM_NAMESPACE_RANK=1",
	    "JSM_NAMESPACE_SIZE=2", "JSM_NAMESPACE_LOCAL_RANK=0",
	    "JSM_NAMESPACE_LOCAL_SIZE=1", "OMPI_COMM_WORLD_RANK=1",
	    "OMPI_COMM_WORLD_SIZE=2", "LSB_JOBID=88", "LSB_JOBINDEX=3",
	    "PMIX_NAMESPACE=88.2", NULL) == 0);
	CHECK_STR(t.launcher, "jsrun");
	CHECK(t.v[AC_NODE] == 1 && t.v[AC_NNODES] == 2);
	CHECK_STR(t.job_id, "lsf.88_3.88.2");
	CHECK_STR(t.job_id_from, "LSB_JOBID_LSB_JOBINDEX.PMIX_NAMESPACE");
	/* info names the variable the step's part came from. */
	CHECK(detect(&t, err, sizeof(err), "JSM_NAMESPACE_RANK=0",
	    "JSM_NAMESPACE_SIZE=1", "LSB_JOBID=88",
	    "OMPI_MCA_ess_base_jobid=123", NULL) == 0);
	CHECK_STR(t.job_id, "lsf.88.123");
	CHECK_STR(t.job_id_from, "LSB_JOBID.OMPI_MCA_ess_base_jobid");
	CHECK(detect(&t, err, sizeof(err), "JSM_NAMESPACE_RANK=0",
	    "JSM_NAMESPACE_SIZE=1", "LSB_JOBID=88", NULL) == 0);
	CHECK_STR(t.job_id, "lsf.88");
	CHECK_STR(t.job_id_from, "LSB_JOBID");

	/* horovodrun inside a Slurm step: Horovod's row, Horovod's identity. */
	CHECK(detect(&t, err, sizeof(err), "HOROVOD_RANK=2", "HOROVOD_SIZE=4",
	    "HOROVOD_LOCAL_RANK=0", "HOROVOD_LOCAL_SIZE=2",
	    "HOROVOD_CROSS_RANK=1", "HOROVOD_CROSS_SIZE=2",
	    "HOROVOD_GLOO_RENDEZVOUS_ADDR=10.0.0.1",
	    "HOROVOD_GLOO_RENDEZVOUS_PORT=4000", "SLURM_PROCID=0",
	    "SLURM_STEP_ID=0", "SLURM_NTASKS=1", "SLURM_JOB_ID=4", NULL) == 0);
	CHECK_STR(t.launcher, "horovod");
	CHECK(t.v[AC_NODE] == 1 && t.v[AC_NNODES] == 2);
	CHECK_STR(t.job_id, "horovod.10.0.0.1:4000");
	CHECK_STR(t.job_id_from, "HOROVOD_GLOO_RENDEZVOUS_ADDR:PORT");
	/* A node id that leaves the nodes before it no process: PALS's node 3
	 * of 4 processes, 2 of them here, where no node count checks it. */
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=1", "PMI_SIZE=4",
	    "PALS_LOCAL_RANKID=1", "PMI_LOCAL_SIZE=2", "PALS_NODEID=3",
	    "PALS_APID=a", NULL) == -1);
	CHECK_STR(err, "inconsistent environment: PALS_NODEID=3 nodes before "
	    "this one and PMI_LOCAL_SIZE=2 processes on it are more than "
	    "PMI_SIZE=4");
	CHECK(detect(&t, err, sizeof(err), "PALS_RANKID=3", "PMI_SIZE=4",
	    "PALS_LOCAL_RANKID=0", "PMI_LOCAL_SIZE=1", "PALS_NODEID=3",
	    "PALS_APID=a", NULL) == 0);
	CHECK(detect(&t, err, sizeof(err), "HOROVOD_RANK=0", "HOROVOD_SIZE=1",
	    "HOROVOD_GLOO_RENDEZVOUS_ADDR=10.0.0.1", NULL) == 0);
	CHECK_STR(t.job_id, "horovod.10.0.0.1");
	CHECK_STR(t.job_id_from, "HOROVOD_GLOO_RENDEZVOUS_ADDR");
	CHECK(detect(&t, err, sizeof(err), "HOROVOD_RANK=0", "HOROVOD_SIZE=2",
	    "HOROVOD_CROSS_RANK=0", NULL) == -1);
	CHECK_STR(err, "HOROVOD_CROSS_RANK is set but HOROVOD_CROSS_SIZE is not");
	/*
	 * -H a:3,b:2,c:1: rank 3 (b's local rank 0) has cross size 3, and
	 * 3 x 2 slots is the world size, but horovodrun numbers ranks host by
	 * host: rank 3 of hosts of 2 would be local rank 1. Unknown, as on its
	 * neighbour rank 4; and a cross rank that is not rank / local size is
	 * no node index either.
	 */
	CHECK(detect(&t, err, sizeof(err), "HOROVOD_RANK=3", "HOROVOD_SIZE=6",
	    "HOROVOD_LOCAL_RANK=0", "HOROVOD_LOCAL_SIZE=2",
	    "HOROVOD_CROSS_RANK=1", "HOROVOD_CROSS_SIZE=3", NULL) == 0);
	CHECK(t.v[AC_NODE] == -1 && t.v[AC_NNODES] == -1);
	CHECK(strstr(t.hint, "different numbers of slots") != NULL);
	CHECK(detect(&t, err, sizeof(err), "HOROVOD_RANK=1", "HOROVOD_SIZE=4",
	    "HOROVOD_LOCAL_RANK=1", "HOROVOD_LOCAL_SIZE=2",
	    "HOROVOD_CROSS_RANK=1", "HOROVOD_CROSS_SIZE=2", NULL) == 0);
	CHECK(t.v[AC_NODE] == -1 && t.v[AC_NNODES] == -1);

	/* A PyTorchJob pod without torchrun: the pod is the rank. */
	CHECK(detect(&t, err, sizeof(err), "RANK=1", "WORLD_SIZE=16",
	    "PET_NODE_RANK=1", "PET_NNODES=2", "MASTER_ADDR=j-master-0",
	    "MASTER_PORT=23456", NULL) == 0);
	CHECK_STR(t.launcher, "kubeflow");
	CHECK(t.v[AC_RANK] == 1 && t.v[AC_WORLD] == 2 && t.v[AC_LRANK] == 0 &&
	    t.v[AC_LSIZE] == 1 && t.v[AC_NODE] == 1 && t.v[AC_NNODES] == 2);
	CHECK_STR(t.job_id, "kubeflow.j-master-0:23456");
	/* ... torchrun inside it wins. */
	CHECK(detect(&t, err, sizeof(err), "RANK=5", "WORLD_SIZE=16",
	    "LOCAL_RANK=5", "LOCAL_WORLD_SIZE=8", "PET_NODE_RANK=0",
	    "PET_NNODES=2", NULL) == 0);
	CHECK_STR(t.launcher, "torchrun");
	CHECK(detect(&t, err, sizeof(err), "PET_NODE_RANK=2", "PET_NNODES=2",
	    NULL) == -1);
	ERR_HAS("PET_NODE_RANK=2 is not below PET_NNODES=2");
	CHECK(detect(&t, err, sizeof(err), "PET_NODE_RANK=0", "PET_NNODES=",
	    NULL) == -1);
	CHECK_STR(err, "PET_NODE_RANK is set but PET_NNODES is not");
	/* A LOCAL_RANK a pod's script exported, without torchrun's RANK. */
	CHECK(detect(&t, err, sizeof(err), "PET_NODE_RANK=1", "PET_NNODES=2",
	    "LOCAL_RANK=0", NULL) == 0);
	CHECK_STR(t.launcher, "kubeflow");
	CHECK(t.v[AC_RANK] == 1);

	/* SkyPilot: node level; mpirun and torchrun inside it win. */
	CHECK(detect(&t, err, sizeof(err), "SKYPILOT_NODE_RANK=1",
	    "SKYPILOT_NUM_NODES=2", "SKYPILOT_TASK_ID=sky-1_c_2", NULL) == 0);
	CHECK_STR(t.launcher, "skypilot");
	CHECK_STR(t.job_id, "skypilot.sky-1_c_2");
	CHECK(detect(&t, err, sizeof(err), "SKYPILOT_NODE_RANK=1",
	    "SKYPILOT_NUM_NODES=2", "OMPI_COMM_WORLD_RANK=3",
	    "OMPI_COMM_WORLD_SIZE=4", NULL) == 0);
	CHECK_STR(t.launcher, "openmpi");
	CHECK(detect(&t, err, sizeof(err), "SKYPILOT_NODE_RANK=1",
	    "SKYPILOT_NUM_NODES=2", "RANK=3", "WORLD_SIZE=4", "LOCAL_RANK=1",
	    "LOCAL_WORLD_SIZE=2", NULL) == 0);
	CHECK_STR(t.launcher, "torchrun");
	CHECK(detect(&t, err, sizeof(err), "SKYPILOT_NODE_RANK=0",
	    "SKYPILOT_NUM_NODES=-1", NULL) == -1);
	CHECK_STR(err, "SKYPILOT_NODE_RANK is set but SKYPILOT_NUM_NODES is not");

	/* An Indexed Job: the rank, no count until ACCELCTL_WORLD_SIZE. */
	CHECK(detect(&t, err, sizeof(err), "JOB_COMPLETION_INDEX=2", NULL) == 0);
	CHECK_STR(t.launcher, "k8s-indexed-job");
	CHECK(t.v[AC_RANK] == 2 && t.v[AC_WORLD] == -1 && t.v[AC_LRANK] == 0 &&
	    t.v[AC_NODE] == 2 && t.v[AC_NNODES] == -1);
	CHECK(strstr(t.hint, "Indexed Job") != NULL);
	CHECK(detect(&t, err, sizeof(err), "JOB_COMPLETION_INDEX=2",
	    "ACCELCTL_WORLD_SIZE=3", NULL) == 0);
	CHECK(t.v[AC_WORLD] == 3 && t.v[AC_NNODES] == 3);
	CHECK(detect(&t, err, sizeof(err), "JOB_COMPLETION_INDEX=3",
	    "ACCELCTL_WORLD_SIZE=3", NULL) == -1);
	ERR_HAS("JOB_COMPLETION_INDEX=3 is not below ACCELCTL_WORLD_SIZE=3");
	CHECK(detect(&t, err, sizeof(err), "JOB_COMPLETION_INDEX=1",
	    "ACCELCTL_WORLD_SIZE=0", NULL) == -1);
	ERR_HAS("must be at least 1");
	CHECK(detect(&t, err, sizeof(err), "JOB_COMPLETION_INDEX=1e3", NULL) == -1);
	CHECK_STR(err, "invalid JOB_COMPLETION_INDEX='1e3': not a non-negative integer");

	/* -1 and empty are unset in the new rows too. */
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=-1", "FLUX_JOB_SIZE=4",
	    "HOROVOD_RANK=", "JSM_NAMESPACE_RANK=-1", NULL) == 0);
	CHECK_STR(t.launcher, "none");
	CHECK(detect(&t, err, sizeof(err), "FLUX_TASK_RANK=0", "FLUX_JOB_SIZE=2",
	    "FLUX_JOB_NNODES=3", NULL) == -1);
	ERR_HAS("FLUX_JOB_NNODES=3 is not at most FLUX_JOB_SIZE=2");

	/* The order --help prints is the table's. */
	CHECK(strncmp(ac_topo_launchers(), "explicit, kubeflow, torchrun, "
	    "deepspeed, horovod, flux, pals, jsrun, openmpi, mpich, mvapich2, "
	    "skypilot, slurm, k8s-indexed-job, none", 200) == 0);
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
	CHECK_STR(err, "LOCAL_RANK is set but neither LOCAL_WORLD_SIZE nor LOCAL_SIZE is");
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
	test_new_rows();
	test_errors();
	return CHECK_DONE();
}
