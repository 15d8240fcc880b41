/* slurm.c: parsing of Slurm's compressed tasks-per-node lists ("2(x3),1"). */
#include <stddef.h>

#include "slurm.h"

/* Far above any real allocation, far below overflow of their products. */
#define AC_SLURM_MAX 1000000L

static int
number(const char **pp, long *out)
{
	const char *p = *pp;
	long v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > AC_SLURM_MAX)
			return -1;
		p++;
	}
	*pp = p;
	*out = v;
	return 0;
}

int
ac_slurm_tasks_on_node(const char *spec, long node, long *count,
    long *nnodes, long *ntasks, const char **why)
{
	const char *p = spec;
	long nodes = 0, tasks = 0, mine = -1;

	*why = "malformed tasks-per-node list";
	if (p == NULL || *p == '\0')
		return -1;
	for (;;) {
		long c, rep = 1;

		if (number(&p, &c) == -1)
			return -1;
		if (*p == '(') {
			if (p[1] != 'x')
				return -1;
			p += 2;
			if (number(&p, &rep) == -1 || rep == 0 || *p != ')')
				return -1;
			p++;
		}
		if (node >= nodes && node < nodes + rep)
			mine = c;
		nodes += rep;
		tasks += c * rep;
		if (nodes > AC_SLURM_MAX || tasks > AC_SLURM_MAX * 16)
			return -1;
		if (*p == '\0')
			break;
		if (*p != ',')
			return -1;
		p++;
	}
	if (mine < 0) {
		*why = "lists fewer nodes than the node id";
		return -1;
	}
	*count = mine;
	*nnodes = nodes;
	*ntasks = tasks;
	return 0;
}
