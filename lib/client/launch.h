/* launch.h: "accelctl launch": K processes on each of M simulated nodes, supervised. */
#ifndef ACCELCTL_LAUNCH_H
#define ACCELCTL_LAUNCH_H

struct ac_launch {
	long	  nproc;		/* processes per node */
	long	  nnodes;		/* simulated nodes */
	int	  tag;			/* prefix output lines with the rank */
	int	  kill_on_bad_exit;	/* stop the others when one fails */
	char	**argv;			/* the command every process runs */
};

/*
 * Start the processes with the ACCELCTL_* variables of DESIGN.md row 1, a
 * fresh job id and one runtime directory per simulated node; forward signals
 * sent to us; wait for all. Returns the first non-zero exit code (128+N for
 * a signal), 0 when all succeeded, or 125 when launching itself failed.
 */
int ac_launch_run(const struct ac_launch *l);

#endif
