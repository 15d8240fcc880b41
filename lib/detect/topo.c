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

/* How a row's values are completed once read. */
enum row_kind {
	ROW_PLAIN,	/* as read, node rank derived from a uniform local size */
	ROW_SLURM,	/* local size from the tasks-per-node list */
	ROW_NODE,	/* one process per node: local 0 of 1, the node is the rank */
	ROW_FLUX,	/* local size = size / nodes where that divides */
	ROW_PALS,	/* nodes = size / local size where the node id agrees */
	ROW_HOROVOD,	/* cross rank is the node only where every node is full */
};

struct row {
	const char	*launcher;
	const char	*alt_launcher;		/* name when an alternative name was used */
	const char	*names[AC_NFIELDS][2];	/* alternatives, the first set wins */
	enum row_kind	 kind;
	/* NULL, or whether the row applies although its rank is set; and
	 * why not, for info. */
	int		(*applies)(ac_getenv_fn get, void *ctx);
	const char	*not_applied;
};

static int
set(ac_getenv_fn get, void *ctx, const char *name)
{
	return ac_topo_lookup(get, ctx, name) != NULL;
}

/* A Slurm batch script has SLURM_PROCID=0 but is one process, not a step. */
static int
slurm_step(ac_getenv_fn get, void *ctx)
{
	return set(get, ctx, "SLURM_STEP_ID") || set(get, ctx, "SLURM_STEPID");
}

/*
 * A PyTorchJob v1 pod sets RANK (the pod's index) and WORLD_SIZE (pods x
 * processes per pod) for torchrun to read, with PET_NODE_RANK: without
 * LOCAL_RANK no torchrun ran, and the pod row describes the process.
 */
static int
torchrun_ran(ac_getenv_fn get, void *ctx)
{
	return !set(get, ctx, "PET_NODE_RANK") || set(get, ctx, "LOCAL_RANK") ||
	    !set(get, ctx, "PET_NNODES");
}

/*
 * The node-level rows yield to a torchrun started inside them (its row then
 * reads RANK and LOCAL_RANK); a LOCAL_RANK alone, exported by a script, is
 * no torchrun.
 */
static int
no_process_launcher(ac_getenv_fn get, void *ctx)
{
	return !set(get, ctx, "LOCAL_RANK") || !set(get, ctx, "RANK");
}

/*
 * "srun --mpi=cray_shasta" sets PALS_RANKID, PALS_NODEID and PALS_APID but
 * not PMI_SIZE: there Slurm's row is the truth. Real PALS sets PMI_SIZE.
 */
static int
pals_complete(ac_getenv_fn get, void *ctx)
{
	return set(get, ctx, "PMI_SIZE") || !slurm_step(get, ctx);
}

/*
 * The table of DESIGN.md section 1, in the order it is tried. A row that
 * shadows another comes first: Flux and PALS also set PMI_RANK, jsrun's
 * Spectrum MPI OMPI_COMM_WORLD_*, and Horovod, Kubeflow and SkyPilot often
 * run inside a Slurm step whose variables the processes inherit.
 */
static const struct row rows[] = {
	{ "explicit", NULL, {
	    { "ACCELCTL_RANK" }, { "ACCELCTL_WORLD_SIZE" },
	    { "ACCELCTL_LOCAL_RANK" }, { "ACCELCTL_LOCAL_WORLD_SIZE" },
	    { "ACCELCTL_NODE_RANK" }, { "ACCELCTL_NNODES" } }, ROW_PLAIN, NULL, NULL },
	/* Before torchrun's row: the pod's RANK is not a process rank. */
	{ "kubeflow", NULL, {
	    { "PET_NODE_RANK" }, { "PET_NNODES" },
	    { NULL }, { NULL }, { NULL }, { NULL } }, ROW_NODE,
	    no_process_launcher, "RANK and LOCAL_RANK are set: torchrun runs "
	    "in the pod, and its row describes the process" },
	{ "torchrun", "deepspeed", {
	    { "RANK" }, { "WORLD_SIZE" },
	    { "LOCAL_RANK" }, { "LOCAL_WORLD_SIZE", "LOCAL_SIZE" },
	    { "GROUP_RANK", "CROSS_RANK" },
	    { "GROUP_WORLD_SIZE", "CROSS_SIZE" } }, ROW_PLAIN, torchrun_ran,
	    "PET_NODE_RANK without LOCAL_RANK: a Kubeflow pod's index, not a "
	    "torchrun worker's rank" },
	{ "horovod", NULL, {
	    { "HOROVOD_RANK" }, { "HOROVOD_SIZE" },
	    { "HOROVOD_LOCAL_RANK" }, { "HOROVOD_LOCAL_SIZE" },
	    { "HOROVOD_CROSS_RANK" }, { "HOROVOD_CROSS_SIZE" } }, ROW_HOROVOD,
	    NULL, NULL },
	{ "flux", NULL, {
	    { "FLUX_TASK_RANK" }, { "FLUX_JOB_SIZE" },
	    { "FLUX_TASK_LOCAL_ID" }, { NULL },
	    { NULL }, { "FLUX_JOB_NNODES" } }, ROW_FLUX, NULL, NULL },
	{ "pals", NULL, {
	    { "PALS_RANKID" }, { "PMI_SIZE" },
	    { "PALS_LOCAL_RANKID", "PMI_LOCAL_RANK" }, { "PMI_LOCAL_SIZE" },
	    { "PALS_NODEID" }, { NULL } }, ROW_PALS, pals_complete,
	    "no PMI_SIZE inside a Slurm step (srun --mpi=cray_shasta): Slurm's "
	    "row is the truth there" },
	{ "jsrun", NULL, {
	    { "JSM_NAMESPACE_RANK" }, { "JSM_NAMESPACE_SIZE" },
	    { "JSM_NAMESPACE_LOCAL_RANK" }, { "JSM_NAMESPACE_LOCAL_SIZE" },
	    { NULL }, { NULL } }, ROW_PLAIN, NULL, NULL },
	/* OMPI_COMM_WORLD_NODE_RANK is not the node index: never read it. */
	{ "openmpi", NULL, {
	    { "OMPI_COMM_WORLD_RANK" }, { "OMPI_COMM_WORLD_SIZE" },
	    { "OMPI_COMM_WORLD_LOCAL_RANK" }, { "OMPI_COMM_WORLD_LOCAL_SIZE" },
	    { NULL }, { NULL } }, ROW_PLAIN, NULL, NULL },
	{ "mpich", NULL, {
	    { "PMI_RANK" }, { "PMI_SIZE" },
	    { "MPI_LOCALRANKID" }, { "MPI_LOCALNRANKS" },
	    { NULL }, { NULL } }, ROW_PLAIN, NULL, NULL },
	{ "mvapich2", NULL, {
	    { "MV2_COMM_WORLD_RANK" }, { "MV2_COMM_WORLD_SIZE" },
	    { "MV2_COMM_WORLD_LOCAL_RANK" }, { "MV2_COMM_WORLD_LOCAL_SIZE" },
	    { NULL }, { NULL } }, ROW_PLAIN, NULL, NULL },
	/* After the MPI rows: mpirun inside a SkyPilot node describes its ranks. */
	{ "skypilot", NULL, {
	    { "SKYPILOT_NODE_RANK" }, { "SKYPILOT_NUM_NODES" },
	    { NULL }, { NULL }, { NULL }, { NULL } }, ROW_NODE,
	    no_process_launcher, "RANK and LOCAL_RANK are set: a process "
	    "launcher runs on the node, and its row describes the process" },
	{ "slurm", NULL, {
	    { "SLURM_PROCID" }, { "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS" },
	    { "SLURM_LOCALID" }, { NULL },
	    { "SLURM_NODEID" }, { "SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES" } },
	    ROW_SLURM, slurm_step, "no SLURM_STEP_ID: not inside an srun step "
	    "(a batch script is one process; run the ranks with srun)" },
	/* A Kubernetes Indexed Job: one pod per index, its count not in the
	 * environment (ACCELCTL_WORLD_SIZE gives it). */
	{ "k8s-indexed-job", NULL, {
	    { "JOB_COMPLETION_INDEX" }, { "ACCELCTL_WORLD_SIZE" },
	    { NULL }, { NULL }, { NULL }, { NULL } }, ROW_NODE, NULL, NULL },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

const char *
ac_topo_launchers(void)
{
	static char list[256];

	if (list[0] == '\0') {
		size_t n = 0;

		for (size_t i = 0; i < NROWS; i++) {
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s, ",
			    rows[i].launcher);
			if (rows[i].alt_launcher != NULL)
				n += (size_t)snprintf(list + n, sizeof(list) - n,
				    "%s, ", rows[i].alt_launcher);
		}
		snprintf(list + n, sizeof(list) - n, "none");
	}
	return list;
}

/* ROW's rank variable that is set ("SLURM_PROCID"), or NULL. */
static const char *
rank_var(const struct row *row, ac_getenv_fn get, void *ctx)
{
	for (int a = 0; a < 2; a++)
		if (row->names[AC_RANK][a] != NULL &&
		    ac_topo_lookup(get, ctx, row->names[AC_RANK][a]) != NULL)
			return row->names[AC_RANK][a];
	return NULL;
}

/* The first row whose rank is set and that applies, or NULL. */
static const struct row *
candidate(ac_getenv_fn get, void *ctx)
{
	for (size_t i = 0; i < NROWS; i++)
		if (rank_var(&rows[i], get, ctx) != NULL &&
		    (rows[i].applies == NULL || rows[i].applies(get, ctx)))
			return &rows[i];
	return NULL;
}

const char *
ac_topo_candidate(ac_getenv_fn get, void *ctx, char *vars, size_t len)
{
	const struct row *r = candidate(get, ctx);
	size_t n = 0;

	if (vars != NULL && len > 0)
		vars[0] = '\0';
	for (int f = 0; r != NULL && vars != NULL && f < AC_NFIELDS; f++)
		for (int a = 0; a < 2 && n < len; a++) {
			const char *name = r->names[f][a], *v;

			if (name != NULL && (v = ac_topo_lookup(get, ctx, name)) != NULL)
				n += (size_t)snprintf(vars + n, len - n, "%s%s=%.40s",
				    n ? " " : "", name, v);
		}
	return r != NULL ? r->launcher : "none";
}

void
ac_topo_explain(ac_getenv_fn get, void *ctx, char *buf, size_t len)
{
	const struct row *used = candidate(get, ctx);
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NROWS && n < len; i++) {
		const char *var = rank_var(&rows[i], get, ctx);
		char why[200];

		if (var == NULL || &rows[i] == used)
			continue;
		if (rows[i].applies != NULL && !rows[i].applies(get, ctx))
			snprintf(why, sizeof(why), "%s", rows[i].not_applied);
		else
			snprintf(why, sizeof(why), "%s's variables come first",
			    used != NULL ? used->launcher : "another launcher");
		n += (size_t)snprintf(buf + n, len - n, "%s=%.40s: %s not used: "
		    "%s\n", var, ac_topo_lookup(get, ctx, var), rows[i].launcher,
		    why);
	}
}

const char *
ac_getenv_process(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* "-1" and "" count as unset: torchrun and others use them as placeholders. */
const char *
ac_topo_lookup(ac_getenv_fn get, void *ctx, const char *name)
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
	if (r->names[missing][1] != NULL)
		snprintf(err, errlen, "%s is set but neither %s nor %s is",
		    t->var[missing == a ? b : a], r->names[missing][0],
		    r->names[missing][1]);
	else
		snprintf(err, errlen, "%s is set but %s is not",
		    t->var[missing == a ? b : a], r->names[missing][0]);
	return -1;
}

static int
slurm_local_size(struct ac_topo *t, ac_getenv_fn get, void *ctx, char *err,
    size_t errlen)
{
	const char *name = "SLURM_STEP_TASKS_PER_NODE", *spec, *why;
	long count, nnodes, ntasks;

	spec = ac_topo_lookup(get, ctx, name);
	if (spec == NULL) {
		name = "SLURM_TASKS_PER_NODE";
		spec = ac_topo_lookup(get, ctx, name);
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

static void complete(const struct row *r, struct ac_topo *t);

/*
 * Read row R into T. Returns 1 when the row does not apply (its rank is not
 * set), 0 when read, -1 on a malformed value.
 */
static int
read_row(const struct row *r, struct ac_topo *t, ac_getenv_fn get, void *ctx,
    char *err, size_t errlen)
{
	if (ac_topo_lookup(get, ctx, r->names[AC_RANK][0]) == NULL)
		return 1;
	if (r->applies != NULL && !r->applies(get, ctx))
		return 1;

	t->launcher = r->launcher;
	for (int f = 0; f < AC_NFIELDS; f++) {
		t->v[f] = -1;
		t->var[f] = NULL;
		for (int i = 0; i < 2; i++) {
			const char *name = r->names[f][i], *val, *why;

			if ((val = ac_topo_lookup(get, ctx, name)) == NULL)
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
	/* An Indexed Job's count is not in its environment: known later. */
	if (t->v[AC_WORLD] < 0 && strcmp(r->launcher, "k8s-indexed-job") != 0) {
		snprintf(err, errlen, "%s is set but %s is not",
		    t->var[AC_RANK], r->names[AC_WORLD][0]);
		return -1;
	}
	if (r->kind == ROW_SLURM &&
	    slurm_local_size(t, get, ctx, err, errlen) == -1)
		return -1;
	if (pair(t, r, AC_LRANK, AC_LSIZE, err, errlen) == -1 ||
	    pair(t, r, AC_NODE, AC_NNODES, err, errlen) == -1)
		return -1;
	t->hint[0] = '\0';
	complete(r, t);
	return 0;
}

/*
 * With the same local size on every node, ranks fill nodes in blocks. A node
 * count the launcher gave must agree, or the layout is not that.
 */
static void
derive_node(struct ac_topo *t)
{
	long rank = t->v[AC_RANK], ls = t->v[AC_LSIZE];

	/* A row that said why the layout is unknown (t->hint) knows better. */
	if (t->v[AC_NODE] >= 0 || ls <= 0 || t->v[AC_LRANK] < 0 ||
	    t->v[AC_WORLD] < 0 || t->hint[0] != '\0')
		return;
	if (t->v[AC_WORLD] % ls != 0 || rank % ls != t->v[AC_LRANK])
		return;
	if (t->v[AC_NNODES] >= 0 && t->v[AC_NNODES] != t->v[AC_WORLD] / ls)
		return;
	t->v[AC_NODE] = rank / ls;
	t->var[AC_NODE] = "derived";
	if (t->v[AC_NNODES] < 0) {
		t->v[AC_NNODES] = t->v[AC_WORLD] / ls;
		t->var[AC_NNODES] = "derived";
	}
}

static void
known(struct ac_topo *t, int f, long v, const char *from)
{
	t->v[f] = v;
	t->var[f] = from;
}

/*
 * Complete what row R's kind implies (the node-level rows, Flux's block map,
 * PALS's node count, Horovod's cross rank), and say in T->hint why a value
 * stays unknown.
 */
static void
complete(const struct row *r, struct ac_topo *t)
{
	long w = t->v[AC_WORLD], ls = t->v[AC_LSIZE];

	switch (r->kind) {
	case ROW_NODE:
		known(t, AC_LRANK, 0, "node-level");
		known(t, AC_LSIZE, 1, "node-level");
		known(t, AC_NODE, t->v[AC_RANK], t->var[AC_RANK]);
		if (w >= 0)
			known(t, AC_NNODES, w, t->var[AC_WORLD]);
		else
			snprintf(t->hint, sizeof(t->hint), "a Kubernetes "
			    "Indexed Job's completion count is not in its "
			    "environment");
		break;
	case ROW_FLUX:
		/* Flux gives no local size: only a block map implies one. */
		if (ls < 0 && t->v[AC_NNODES] > 0 && w % t->v[AC_NNODES] == 0)
			known(t, AC_LSIZE, w / t->v[AC_NNODES],
			    "FLUX_JOB_SIZE/FLUX_JOB_NNODES");
		else if (ls < 0 && t->v[AC_NNODES] > 0)
			snprintf(t->hint, sizeof(t->hint), "FLUX_JOB_SIZE=%ld "
			    "tasks on FLUX_JOB_NNODES=%ld nodes is no block "
			    "task map (flux job taskmap tells)", w,
			    t->v[AC_NNODES]);
		else if (ls < 0)
			snprintf(t->hint, sizeof(t->hint), "FLUX_JOB_NNODES is "
			    "not set (flux job taskmap tells the layout)");
		break;
	case ROW_PALS:
		/* PALS gives the node id, not the count: uniform nodes only. */
		if (ls > 0 && t->v[AC_NODE] >= 0 && w % ls == 0 &&
		    t->v[AC_RANK] / ls == t->v[AC_NODE])
			known(t, AC_NNODES, w / ls, "derived");
		else if (t->v[AC_NODE] >= 0)
			snprintf(t->hint, sizeof(t->hint), "PALS gives no node "
			    "count, and PMI_LOCAL_SIZE is not the same on "
			    "every node");
		break;
	case ROW_HOROVOD:
		/*
		 * HOROVOD_CROSS_RANK counts the hosts that have this local
		 * rank: the node index only where every host has as many
		 * slots. horovodrun numbers the ranks host by host, so there
		 * the cross rank is rank / local size and the local rank
		 * rank % local size: a rank of uneven hosts that passes the
		 * size test (hosts of 3, 2 and 1 slots: rank 3, local rank 0
		 * of 2, cross size 3) fails this one. Some still pass both
		 * (DESIGN-NOTES.md, known limit).
		 */
		if (t->v[AC_NODE] >= 0 && (ls <= 0 || t->v[AC_NNODES] * ls != w ||
		    t->v[AC_RANK] / ls != t->v[AC_NODE] ||
		    t->v[AC_LRANK] < 0 ||
		    t->v[AC_RANK] % ls != t->v[AC_LRANK])) {
			known(t, AC_NODE, -1, NULL);
			known(t, AC_NNODES, -1, NULL);
			snprintf(t->hint, sizeof(t->hint), "HOROVOD_CROSS_RANK "
			    "is no node index where hosts have different "
			    "numbers of slots");
		}
		break;
	default:
		break;
	}
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

/*
 * Where the launcher cannot tell a value (Flux's non-block task map, an
 * Indexed Job's count, uneven MPI nodes), the explicit row's variable of
 * that field gives it: the errors of the commands name it.
 */
static int
supplement(struct ac_topo *t, ac_getenv_fn get, void *ctx, char *err,
    size_t errlen)
{
	for (int f = AC_WORLD; f < AC_NFIELDS; f++) {
		const char *name = rows[0].names[f][0], *val, *why;
		long v;

		if (t->v[f] >= 0 || (val = ac_topo_lookup(get, ctx, name)) == NULL)
			continue;
		if (ac_parse_uint(val, AC_MAX_PROCS, &v, &why) == -1)
			return bad_value(err, errlen, name, val, why);
		if (v == 0 && f != AC_LRANK && f != AC_NODE)
			return bad_value(err, errlen, name, val,
			    "must be at least 1");
		known(t, f, v, name);
		/* A node-level process's node count is the world size. */
		if (f == AC_WORLD && t->v[AC_LSIZE] == 1 &&
		    t->var[AC_LSIZE] != NULL &&
		    strcmp(t->var[AC_LSIZE], "node-level") == 0 &&
		    t->v[AC_NNODES] < 0)
			known(t, AC_NNODES, v, name);
	}
	return 0;
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
	    below(t, AC_NODE, AC_WORLD, 0, err, errlen) == -1 ||
	    below(t, AC_LRANK, AC_RANK, 1, err, errlen) == -1)
		return -1;
	/* Every node below this one has a process of its own. */
	if (t->v[AC_NODE] >= 0 && t->v[AC_LSIZE] > 0 && t->v[AC_WORLD] > 0 &&
	    t->v[AC_NODE] + t->v[AC_LSIZE] > t->v[AC_WORLD]) {
		snprintf(err, errlen, "inconsistent environment: %s=%ld nodes "
		    "before this one and %s=%ld processes on it are more than "
		    "%s=%ld", t->var[AC_NODE], t->v[AC_NODE], t->var[AC_LSIZE],
		    t->v[AC_LSIZE], t->var[AC_WORLD], t->v[AC_WORLD]);
		return -1;
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
		t->hint[0] = '\0';
	} else {
		derive_node(t);
		fill_from(t, i, get, ctx);
		if (supplement(t, get, ctx, err, errlen) == -1)
			return -1;
	}
	if (check(t, err, errlen) == -1)
		return -1;
	return ac_topo_job_id(t, get, ctx, err, errlen);
}
