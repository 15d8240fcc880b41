/* info.c: "accelctl info": what was detected, and from which launcher. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "transport.h"
#if ACCELCTL_HAVE_NCCL
#include "ncclso.h"
#define STR_(x) #x
#define STR(x) STR_(x)
#define NCCL_VERSION_STRING STR(NCCL_MAJOR) "." STR(NCCL_MINOR) "." STR(NCCL_PATCH)
#endif

static const struct ac_optdef info_opts[] = {
	{ "json", 0, NULL, "print one JSON object" },
	{ "shell", 0, NULL, "print ACCELCTL_*=value lines for eval" },
	{ NULL, 0, NULL, NULL }
};

/* The row-1 variable each field sets, for --shell. */
static const char *const shell_names[AC_NFIELDS] = {
	"ACCELCTL_RANK", "ACCELCTL_WORLD_SIZE", "ACCELCTL_LOCAL_RANK",
	"ACCELCTL_LOCAL_WORLD_SIZE", "ACCELCTL_NODE_RANK", "ACCELCTL_NNODES"
};

/*
 * The transport the job's cross-node collectives take, as the helper chooses
 * it (ACCELCTL_TRANSPORT, NCCL compiled in, nodes, a GPU visible), with the
 * reason in WHY. The helper decides again when it starts, and may fall back
 * to Redis later: "accelctl status" shows what it uses now. -1: invalid.
 */
static int
transport(const struct ac_topo *t, char *why, size_t len)
{
	const char *v = getenv("ACCELCTL_TRANSPORT"), *w;
	/* Fewer processes here than in the job: several nodes, also where
	 * their count is unknown (uneven PALS, MPI or Horovod nodes). */
	long nnodes = t->v[AC_NNODES] > 0 ? t->v[AC_NNODES] :
	    t->v[AC_LSIZE] > 0 && t->v[AC_LSIZE] < t->v[AC_WORLD] ? 2 : 1;
	int setting, gpu = 0, n;

	if (ac_transport_parse(v, &setting, &w) == -1) {
		ac_warnx("invalid ACCELCTL_TRANSPORT '%.40s': %s", v, w);
		return -1;
	}
	n = snprintf(why, len, "ACCELCTL_TRANSPORT=%s", setting == AC_TSET_NCCL ?
	    "nccl" : setting == AC_TSET_REDIS ? "redis" : "auto");
	if (t->v[AC_WORLD] == 1) {
		snprintf(why + n, len - (size_t)n, ": one process");
		return AC_T_NONE;
	}
#if ACCELCTL_HAVE_NCCL
	if (setting == AC_TSET_NCCL || (setting == AC_TSET_AUTO && nnodes > 1)) {
		const struct ac_cuda *cu;
		char err[512];
		int dev = ac_cuda_pick_gpu(&cu, 0, err, sizeof(err));

		gpu = dev >= 0;
		if (gpu)
			snprintf(why + n, len - (size_t)n, ": NCCL %s, GPU %d",
			    cu->nccl_release, dev);
		else
			snprintf(why + n, len - (size_t)n, ": %s", err);
	}
#else
	if (setting == AC_TSET_NCCL)
		snprintf(why + n, len - (size_t)n, ": NCCL not compiled in");
#endif
	return ac_transport_choose(setting, ACCELCTL_HAVE_NCCL, nnodes, gpu);
}

/* Job ids hold only [A-Za-z0-9._:@-]: they need no escaping in JSON or sh. */
static void
print_json(const struct ac_topo *t, int tr)
{
	printf("{\"launcher\":\"%s\"", t->launcher);
	for (int f = 0; f < AC_NFIELDS; f++) {
		if (t->v[f] < 0)
			printf(",\"%s\":null", ac_field_names[f]);
		else
			printf(",\"%s\":%ld", ac_field_names[f], t->v[f]);
	}
	printf(",\"job_id\":\"%s\",\"transport\":\"%s\",\"nccl\":%s}\n",
	    t->job_id, ac_transport_name(tr),
#if ACCELCTL_HAVE_NCCL
	    "\"" NCCL_VERSION_STRING "\""
#else
	    "null"
#endif
	    );
}

static void
print_shell(const struct ac_topo *t)
{
	for (int f = 0; f < AC_NFIELDS; f++)
		if (t->v[f] >= 0)
			printf("%s=%ld\n", shell_names[f], t->v[f]);
	printf("ACCELCTL_JOB_ID='%s'\n", t->job_id);
}

/* The launchers whose variables are set but were not used, and why: a
 * Slurm batch script's SLURM_PROCID, torchrun's RANK inside a Kubeflow pod. */
static void
print_unused(void)
{
	char lines[2048];

	ac_topo_explain(ac_getenv_process, NULL, lines, sizeof(lines));
	for (char *p = lines, *nl; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		*nl = '\0';
		printf("%-17s %s\n", p == lines ? "not used" : "", p);
	}
}

static void
print_text(const struct ac_topo *t, int tr, const char *why)
{
	printf("%-17s %s\n", "launcher", t->launcher);
	for (int f = 0; f < AC_NFIELDS; f++) {
		if (t->v[f] < 0)
			printf("%-17s %-8s (set %s)\n", ac_field_names[f],
			    "unknown", shell_names[f]);
		else
			printf("%-17s %-8ld (%s)\n", ac_field_names[f], t->v[f],
			    t->var[f]);
	}
	printf("%-17s %-8s (%s)\n", "job_id", t->job_id, t->job_id_from);
	print_unused();
	if (t->hint[0] != '\0')
		printf("%-17s %s\n", "why unknown", t->hint);
	printf("%-17s %s (%s)\n", "transport", ac_transport_name(tr), why);
#if ACCELCTL_HAVE_NCCL
	printf("%-17s %s\n", "nccl", ac_cuda_build_version());
#else
	printf("%-17s not compiled in\n", "nccl");
#endif
}

static int
exec_info(const struct ac_cmd *self, struct ac_args *a)
{
	struct ac_topo t;
	char why[600], err[512], vars[512];
	int tr = AC_T_NONE;

	if (a->seen[0] && a->seen[1])
		return ac_usage_error(self, "--json and --shell exclude each other");
	if (ac_topo_detect(&t, ac_getenv_process, NULL, err, sizeof(err)) == -1) {
		/* info is what one runs to find out what is wrong: the
		 * launcher that was refused, why, and what was seen, on
		 * stdout; then exit 2 as every command would. */
		ac_warnx("%s", err);
		if (!a->seen[0] && !a->seen[1]) {
			const char *l = ac_topo_candidate(ac_getenv_process, NULL,
			    vars, sizeof(vars));

			printf("%-17s %s (refused)\n", "launcher", l);
			printf("%-17s %s\n", "why", err);
			if (vars[0] != '\0')
				printf("%-17s %s\n", "seen", vars);
			print_unused();
			(void)ac_flush_stdout();
		}
		return AC_EXIT_USAGE;
	}
	/*
	 * --shell prints the explicit row, which takes both of a pair or
	 * neither: half of one (Flux's local rank without its size, a PALS
	 * node id without the count, an Indexed Job's rank without the world)
	 * would make every later command exit 2, is-main too. Say what to set
	 * instead, and print nothing to eval.
	 */
	if (a->seen[1] && (((t.v[AC_RANK] < 0) != (t.v[AC_WORLD] < 0) &&
	    ac_cmd_need_world(&t) == -1) ||
	    ((t.v[AC_LRANK] < 0) != (t.v[AC_LSIZE] < 0) &&
	    ac_cmd_need_local(&t) == -1) ||
	    ((t.v[AC_NODE] < 0) != (t.v[AC_NNODES] < 0) &&
	    ac_cmd_need_node(&t) == -1)))
		return AC_EXIT_USAGE;
	/* --shell sets the launcher's variables only: no transport there. */
	if (!a->seen[1] && (tr = transport(&t, why, sizeof(why))) == -1)
		return AC_EXIT_USAGE;
	if (a->seen[0])
		print_json(&t, tr);
	else if (a->seen[1])
		print_shell(&t);
	else
		print_text(&t, tr, why);
	return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : AC_EXIT_OK;
}

const struct ac_cmd cmd_info = {
	.name = "info",
	.group = "Tools",
	.args = "[--json | --shell]",
	.summary = "print what was detected, and from which launcher",
	.help = "Print the launcher, rank, world size, local rank, local world size, "
	    "node rank, number of nodes and job id detected for this process, each "
	    "with the variable it came from; a value the launcher cannot tell is "
	    "unknown, with the ACCELCTL_ variable that gives it and why. --json prints one object with the keys "
	    "launcher, rank, world_size, local_rank, local_world_size, node_rank, "
	    "nnodes, job_id (null where unknown), transport and nccl (the NCCL "
	    "version compiled in, or null); --shell prints "
	    "ACCELCTL_*=value lines for eval (a pair of values of which one is "
	    "unknown, as rank and world size, exits 2 naming what to set). transport is what the helper will "
	    "carry cross-node collectives over: none (one node), redis, nccl, or "
	    "unavailable (ACCELCTL_TRANSPORT=nccl without NCCL or a GPU); "
	    "'accelctl status' shows what it uses now.",
	.opts = info_opts,
	.exec = exec_info,
};
