/* slurm.h: parsing of Slurm's compressed tasks-per-node lists ("2(x3),1"). */
#ifndef ACCELCTL_SLURM_H
#define ACCELCTL_SLURM_H

/*
 * SPEC is SLURM_STEP_TASKS_PER_NODE or SLURM_TASKS_PER_NODE: comma-separated
 * groups "COUNT" or "COUNT(xREPEAT)", one COUNT per node in node order.
 * Stores the task count of node NODE in *COUNT, the number of nodes the list
 * describes in *NNODES and the sum of all counts in *NTASKS. Returns 0, or -1
 * with *WHY set (malformed list, or NODE beyond its end).
 */
int ac_slurm_tasks_on_node(const char *spec, long node, long *count,
    long *nnodes, long *ntasks, const char **why);

#endif
