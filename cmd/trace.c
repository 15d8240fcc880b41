/* trace.c: "accelctl trace merge DIR": the nodes' traces of one job (ACCELCTL_TRACE_DIR) into one file that ui.perfetto.dev opens, and an SVG timeline. */
#include <string.h>

#include "cmd.h"
#include "trace.h"

enum { OPT_OUT, OPT_SVG, OPT_JOB };

static const struct ac_optdef trace_opts[] = {
	[OPT_OUT] = { "output", 'o', "FILE", "write the merged trace to FILE (DIR/accelctl.JOB.json; - for standard output)" },
	[OPT_SVG] = { "svg", 0, "FILE", "also write a timeline of it to FILE, one row per rank" },
	[OPT_JOB] = { "job", 'j', "ID", "the job whose traces to merge (the one in DIR)" },
	{ NULL, 0, NULL, NULL }
};

static int
exec_trace(const struct ac_cmd *self, struct ac_args *a)
{
	if (strcmp(a->pos[0], "merge") != 0)
		return ac_usage_error(self, "unknown action '%.40s': merge",
		    a->pos[0]);
	if (a->npos != 2)
		return ac_usage_error(self, "merge: which directory? (the job's "
		    "ACCELCTL_TRACE_DIR)");
	return ac_trace_merge(a->pos[1], a->val[OPT_JOB], a->val[OPT_OUT],
	    a->val[OPT_SVG]);
}

const struct ac_cmd cmd_trace = {
	.name = "trace",
	.group = "Tools",
	.args = "merge [--output FILE] [--svg FILE] [--job ID] DIR",
	.summary = "merge the nodes' traces of a job into one (Perfetto, chrome://tracing)",
	.help = "With ACCELCTL_TRACE_DIR=DIR (a directory every node sees) each "
	    "node's helper writes its record of the job's collectives to "
	    "DIR/accelctl.JOB.node-N.json as Chrome trace events: one track per "
	    "rank, a slice per wait and per source's CMD, on the node's own "
	    "clock. 'merge DIR' writes one file for the job (DIR/accelctl.JOB.json, "
	    "or --output FILE) that ui.perfetto.dev and chrome://tracing open, "
	    "with the nodes' clocks aligned by the barriers they share (the "
	    "offsets used are printed), and with --svg FILE a timeline of the "
	    "same events, one row per rank. Exit 1 when DIR holds no trace, or "
	    "the traces of more than one job without --job; 2 when an output is "
	    "there and is not a regular file (a link, a FIFO, a device: left as "
	    "it is); 125 when an output cannot be written.",
	.opts = trace_opts,
	.minpos = 1,
	.maxpos = 2,
	.exec = exec_trace,
};
