/* info.c: "accelctl info": what was detected, and from which launcher. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

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

/* Job ids hold only [A-Za-z0-9._:@-]: they need no escaping in JSON or sh. */
static void
print_json(const struct ac_topo *t)
{
	printf("{\"launcher\":\"%s\"", t->launcher);
	for (int f = 0; f < AC_NFIELDS; f++) {
		if (t->v[f] < 0)
			printf(",\"%s\":null", ac_field_names[f]);
		else
			printf(",\"%s\":%ld", ac_field_names[f], t->v[f]);
	}
	printf(",\"job_id\":\"%s\"}\n", t->job_id);
}

static void
print_shell(const struct ac_topo *t)
{
	for (int f = 0; f < AC_NFIELDS; f++)
		if (t->v[f] >= 0)
			printf("%s=%ld\n", shell_names[f], t->v[f]);
	printf("ACCELCTL_JOB_ID='%s'\n", t->job_id);
}

static void
print_text(const struct ac_topo *t)
{
	printf("%-17s %s\n", "launcher", t->launcher);
	for (int f = 0; f < AC_NFIELDS; f++) {
		if (t->v[f] < 0)
			printf("%-17s unknown\n", ac_field_names[f]);
		else
			printf("%-17s %-8ld (%s)\n", ac_field_names[f], t->v[f],
			    t->var[f]);
	}
	printf("%-17s %s (%s)\n", "job_id", t->job_id, t->job_id_from);
}

static int
exec_info(const struct ac_cmd *self, struct ac_args *a)
{
	struct ac_topo t;

	if (a->seen[0] && a->seen[1])
		return ac_usage_error(self, "--json and --shell exclude each other");
	if (ac_cmd_topo(&t) == -1)
		return AC_EXIT_USAGE;
	if (a->seen[0])
		print_json(&t);
	else if (a->seen[1])
		print_shell(&t);
	else
		print_text(&t);
	return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : AC_EXIT_OK;
}

const struct ac_cmd cmd_info = {
	.name = "info",
	.group = "Tools",
	.args = "[--json | --shell]",
	.summary = "print what was detected, and from which launcher",
	.help = "Print the launcher, rank, world size, local rank, local world size, "
	    "node rank, number of nodes and job id detected for this process, each "
	    "with the variable it came from. --json prints one object with the keys "
	    "launcher, rank, world_size, local_rank, local_world_size, node_rank, "
	    "nnodes and job_id (null where unknown); --shell prints ACCELCTL_*=value "
	    "lines for eval.",
	.opts = info_opts,
	.exec = exec_info,
};
