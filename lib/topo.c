/* topo.c: who am I? Rank detection from the launcher's environment.
 *
 * The launchers are rows of one table, tried in order; the first whose rank
 * variable is set wins (DESIGN.md section 1). Values the winner does not give
 * are derived (node rank from a uniform local size) or taken from a later row
 * that describes the same process (same rank and world size), so that e.g.
 * MPICH under "srun --mpi=pmi2" still learns its local rank from Slurm.
 * The reasons for these choices are in DESIGN-NOTES.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "slurm.h"
#include "topo.h"

/* 2^24 processes: above any machine built, far below overflow. */
#define AC_MAX_PROCS 16777216L

const char *const ac_field_names[AC_NFIELDS] = {
	"rank", "world_size", "local_rank", "local_world_size", "node_rank",
	"nnodes"
};

struct row {
	const char	*launcher;
	const char	*alt_launcher;		/* name when an alternative name was used */
	const char	*names[AC_NFIELDS][2];	/* alternatives, the first set wins */
	int		 slurm;			/* local size from the tasks-per-node list */
};

static const struct row rows[] = {
	{ "explicit", NULL, {
	    { "ACCELCTL_RANK" }, { "ACCELCTL_WORLD_SIZE" },
	    { "ACCELCTL_LOCAL_RANK" }, { "ACCELCTL_LOCAL_WORLD_SIZE" },
	    { "ACCELCTL_NODE_RANK" }, { "ACCELCTL_NNODES" } }, 0 },
	{ "torchrun", "deepspeed", {
	    { "RANK" }, { "WORLD_SIZE" },
	    { "LOCAL_RANK" }, { "LOCAL_WORLD_SIZE", "LOCAL_SIZE" },
	    { "GROUP_RANK", "CROSS_RANK" },
	    { "GROUP_WORLD_SIZE", "CROSS_SIZE" } }, 0 },
	/* OMPI_COMM_WORLD_NODE_RANK is not the node index: never read it. */
	{ "openmpi", NULL, {
	    { "OMPI_COMM_WORLD_RANK" }, { "OMPI_COMM_WORLD_SIZE" },
	    { "OMPI_COMM_WORLD_LOCAL_RANK" }, { "OMPI_COMM_WORLD_LOCAL_SIZE" },
	    { NULL }, { NULL } }, 0 },
	{ "mpich", NULL, {
	    { "PMI_RANK" }, { "PMI_SIZE" },
	    { "MPI_LOCALRANKID" }, { "MPI_LOCALNRANKS" },
	    { NULL }, { NULL } }, 0 },
	{ "mvapich2", NULL, {
	    { "MV2_COMM_WORLD_RANK" }, { "MV2_COMM_WORLD_SIZE" },
	    { "MV2_COMM_WORLD_LOCAL_RANK" }, { "MV2_COMM_WORLD_LOCAL_SIZE" },
	    { NULL }, { NULL } }, 0 },
	{ "slurm", NULL, {
	    { "SLURM_PROCID" }, { "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS" },
	    { "SLURM_LOCALID" }, { NULL },
	    { "SLURM_NODEID" }, { "SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES" } },
	    1 },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

const char *
ac_getenv_process(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* "-1" and "" count as unset: torchrun and others use them as placeholders. */
static const char *
lookup(ac_getenv_fn get, void *ctx, const char *name)
{
	const char *v;

	if (name == NULL)
		return NULL;
	v = get(name, ctx);
	if (v == NULL || *v == '\0' || strcmp(v, "-1") == 0)
		return NULL;
	return v;
}

static int
bad_value(char *err, size_t errlen, const char *name, const char *value,
    const char *why)
{
	char buf[48];

	snprintf(err, errlen, "invalid %s='%s': %s", name,
	    ac_shorten(value, buf, sizeof(buf)), why);
	return -1;
}

/* Both of a pair or neither: half a pair is a launcher we do not understand. */
static int
pair(struct ac_topo *t, const struct row *r, int a, int b, char *err,
    size_t errlen)
{
	int missing;

	if ((t->v[a] < 0) == (t->v[b] < 0))
		return 0;
	missing = t->v[a] < 0 ? a : b;
	if (r->names[missing][0] == NULL)
		return 0;
	snprintf(err, errlen, "%s is set but %s%s%s is not",
	    t->var[missing == a ? b : a], r->names[missing][0],
	    r->names[missing][1] ? " nor " : "",
	    r->names[missing][1] ? r->names[missing][1] : "");
	return -1;
}

static int
slurm_local_size(struct ac_topo *t, ac_getenv_fn get, void *ctx, char *err,
    size_t errlen)
{
	const char *name = "SLURM_STEP_TASKS_PER_NODE", *spec, *why;
	long count, nnodes, ntasks;

	spec = lookup(get, ctx, name);
	if (spec == NULL) {
		name = "SLURM_TASKS_PER_NODE";
		spec = lookup(get, ctx, name);
	}
	if (spec == NULL || t->v[AC_NODE] < 0)
		return 0;
	if (ac_slurm_tasks_on_node(spec, t->v[AC_NODE], &count, &nnodes,
	    &ntasks, &why) == -1)
		return bad_value(err, errlen, name, spec, why);
	t->v[AC_LSIZE] = count;
	t->var[AC_LSIZE] = name;
	return 0;
}

/*
 * Read row R into T. Returns 1 when the row does not apply (its rank is not
 * set), 0 when read, -1 on a malformed value.
 */
static int
read_row(const struct row *r, struct ac_topo *t, ac_getenv_fn get, void *ctx,
    char *err, size_t errlen)
{
	if (lookup(get, ctx, r->names[AC_RANK][0]) == NULL)
		return 1;
	/* A batch script has SLURM_PROCID=0 but is one process, not a step. */
	if (r->slurm && lookup(get, ctx, "SLURM_STEP_ID") == NULL &&
	    lookup(get, ctx, "SLURM_STEPID") == NULL)
		return 1;

	t->launcher = r->launcher;
	for (int f = 0; f < AC_NFIELDS; f++) {
		t->v[f] = -1;
		t->var[f] = NULL;
		for (int i = 0; i < 2; i++) {
			const char *name = r->names[f][i], *val, *why;

			if ((val = lookup(get, ctx, name)) == NULL)
				continue;
			if (ac_parse_uint(val, AC_MAX_PROCS, &t->v[f],
			    &why) == -1)
				return bad_value(err, errlen, name, val, why);
			if ((f == AC_WORLD || f == AC_LSIZE ||
			    f == AC_NNODES) && t->v[f] == 0)
				return bad_value(err, errlen, name, val,
				    "must be at least 1");
			t->var[f] = name;
			if (i == 1 && r->alt_launcher != NULL)
				t->launcher = r->alt_launcher;
			break;
		}
	}
	if (t->v[AC_WORLD] < 0) {
		snprintf(err, errlen, "%s is set but %s is not",
		    t->var[AC_RANK], r->names[AC_WORLD][0]);
		return -1;
	}
	if (r->slurm && slurm_local_size(t, get, ctx, err, errlen) == -1)
		return -1;
	if (pair(t, r, AC_LRANK, AC_LSIZE, err, errlen) == -1 ||
	    pair(t, r, AC_NODE, AC_NNODES, err, errlen) == -1)
		return -1;
	return 0;
}

/* With the same local size on every node, ranks fill nodes in blocks. */
static void
derive_node(struct ac_topo *t)
{
	long rank = t->v[AC_RANK], ls = t->v[AC_LSIZE];

	if (t->v[AC_NODE] >= 0 || ls <= 0 || t->v[AC_LRANK] < 0)
		return;
	if (t->v[AC_WORLD] % ls != 0 || rank % ls != t->v[AC_LRANK])
		return;
	t->v[AC_NODE] = rank / ls;
	t->v[AC_NNODES] = t->v[AC_WORLD] / ls;
	t->var[AC_NODE] = t->var[AC_NNODES] = "derived";
}

/* Borrow what the winner lacks from a later row that is the same process. */
static void
fill_from(struct ac_topo *t, size_t winner, ac_getenv_fn get, void *ctx)
{
	for (size_t i = winner + 1; i < NROWS; i++) {
		struct ac_topo o;
		char ignored[256];

		if (read_row(&rows[i], &o, get, ctx, ignored,
		    sizeof(ignored)) != 0)
			continue;
		if (o.v[AC_RANK] != t->v[AC_RANK] ||
		    o.v[AC_WORLD] != t->v[AC_WORLD])
			continue;
		for (int a = AC_LRANK; a <= AC_NODE; a += 2) {
			if (t->v[a] >= 0 || o.v[a] < 0 || o.v[a + 1] < 0)
				continue;
			t->v[a] = o.v[a];
			t->v[a + 1] = o.v[a + 1];
			t->var[a] = o.var[a];
			t->var[a + 1] = o.var[a + 1];
		}
	}
}

static int
below(struct ac_topo *t, int a, int b, int allow_equal, char *err,
    size_t errlen)
{
	if (t->v[a] < 0 || t->v[b] < 0)
		return 0;
	if (t->v[a] < t->v[b] || (allow_equal && t->v[a] == t->v[b]))
		return 0;
	snprintf(err, errlen, "inconsistent environment: %s=%ld is not %s %s=%ld",
	    t->var[a], t->v[a], allow_equal ? "at most" : "below", t->var[b],
	    t->v[b]);
	return -1;
}

static int
check(struct ac_topo *t, char *err, size_t errlen)
{
	if (below(t, AC_RANK, AC_WORLD, 0, err, errlen) == -1 ||
	    below(t, AC_LRANK, AC_LSIZE, 0, err, errlen) == -1 ||
	    below(t, AC_LSIZE, AC_WORLD, 1, err, errlen) == -1 ||
	    below(t, AC_NODE, AC_NNODES, 0, err, errlen) == -1 ||
	    below(t, AC_NNODES, AC_WORLD, 1, err, errlen) == -1 ||
	    below(t, AC_LRANK, AC_RANK, 1, err, errlen) == -1)
		return -1;
	return 0;
}

/* Characters allowed in a job id: it becomes part of paths and Redis keys. */
static int
job_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
	    c == '-' || c == '@';
}

static void
job_append(struct ac_topo *t, const char *s)
{
	size_t n = strlen(t->job_id);

	for (; *s != '\0' && n < AC_JOB_ID_MAX; s++)
		t->job_id[n++] = job_char((unsigned char)*s) ? *s : '_';
	t->job_id[n] = '\0';
}

static const char *
first_set(ac_getenv_fn get, void *ctx, const char *const *names,
    const char **which)
{
	for (; *names != NULL; names++) {
		const char *v = lookup(get, ctx, *names);
		if (v != NULL) {
			*which = *names;
			return v;
		}
	}
	return NULL;
}

/*
 * The job identity scopes every synchronisation: every process of one launch
 * must compute the same string, and two launches must not. See DESIGN-NOTES.md
 * for why an MPI launch prefers its own namespace over Slurm's step id.
 */
static int
job_id(struct ac_topo *t, ac_getenv_fn get, void *ctx, char *err,
    size_t errlen)
{
	static const char *const mpi_ns[] = { "PMIX_NAMESPACE",
	    "OMPI_MCA_ess_base_jobid", "PMI_KVSNAME", "PMI_JOBID", NULL };
	static const char *const steps[] = { "SLURM_STEP_ID", "SLURM_STEPID",
	    NULL };
	const char *v, *which, *slurm_job, *restarts;
	int mpi = strcmp(t->launcher, "openmpi") == 0 ||
	    strcmp(t->launcher, "mpich") == 0 ||
	    strcmp(t->launcher, "mvapich2") == 0;

	t->job_id[0] = '\0';
	if ((v = lookup(get, ctx, "ACCELCTL_JOB_ID")) != NULL) {
		if (strlen(v) > AC_JOB_ID_MAX)
			return bad_value(err, errlen, "ACCELCTL_JOB_ID", v,
			    "longer than 200 characters");
		for (const char *p = v; *p != '\0'; p++)
			if (!job_char((unsigned char)*p))
				return bad_value(err, errlen, "ACCELCTL_JOB_ID",
				    v, "allowed are A-Z a-z 0-9 . _ : - @");
		job_append(t, v);
		t->job_id_from = "ACCELCTL_JOB_ID";
		return 0;
	}
	slurm_job = lookup(get, ctx, "SLURM_JOB_ID");
	if (mpi && (v = first_set(get, ctx, mpi_ns, &which)) != NULL) {
		if (slurm_job != NULL) {
			job_append(t, slurm_job);
			job_append(t, ".");
		}
		job_append(t, "mpi.");
		job_append(t, v);
		t->job_id_from = which;
	} else if (slurm_job != NULL) {
		job_append(t, slurm_job);
		job_append(t, ".");
		if ((v = first_set(get, ctx, steps, &which)) != NULL) {
			job_append(t, v);
			t->job_id_from = "SLURM_JOB_ID.SLURM_STEP_ID";
		} else {
			job_append(t, "batch");
			t->job_id_from = "SLURM_JOB_ID";
		}
	} else if ((v = lookup(get, ctx, "TORCHELASTIC_RUN_ID")) != NULL) {
		const char *addr = lookup(get, ctx, "MASTER_ADDR");
		const char *port = lookup(get, ctx, "MASTER_PORT");

		job_append(t, "torchrun.");
		job_append(t, v);
		if (addr != NULL && port != NULL) {
			job_append(t, "@");
			job_append(t, addr);
			job_append(t, ":");
			job_append(t, port);
		}
		t->job_id_from = "TORCHELASTIC_RUN_ID@MASTER_ADDR:MASTER_PORT";
	} else if ((v = first_set(get, ctx, mpi_ns, &which)) != NULL) {
		job_append(t, "mpi.");
		job_append(t, v);
		t->job_id_from = which;
	} else {
		job_append(t, "default");
		t->job_id_from = "default";
	}
	/* A restarted torchrun worker group must not inherit old generations. */
	restarts = lookup(get, ctx, "TORCHELASTIC_RESTART_COUNT");
	if (restarts != NULL && strcmp(restarts, "0") != 0 &&
	    strcmp(t->job_id_from, "ACCELCTL_JOB_ID") != 0) {
		job_append(t, ".restart");
		job_append(t, restarts);
	}
	return 0;
}

int
ac_topo_detect(struct ac_topo *t, ac_getenv_fn get, void *ctx, char *err,
    size_t errlen)
{
	size_t i;
	int rc = 1;

	for (i = 0; i < NROWS; i++) {
		if ((rc = read_row(&rows[i], t, get, ctx, err, errlen)) == -1)
			return -1;
		if (rc == 0)
			break;
	}
	if (rc == 1) {
		/* No launcher: one process, which is main of everything. */
		static const long one[AC_NFIELDS] = { 0, 1, 0, 1, 0, 1 };
		t->launcher = "none";
		for (int f = 0; f < AC_NFIELDS; f++) {
			t->v[f] = one[f];
			t->var[f] = "default";
		}
	} else {
		derive_node(t);
		fill_from(t, i, get, ctx);
	}
	if (check(t, err, errlen) == -1)
		return -1;
	return job_id(t, get, ctx, err, errlen);
}
