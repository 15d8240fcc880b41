/* topo.h: who am I? Rank detection from the launcher's environment. */
#ifndef ACCELCTL_TOPO_H
#define ACCELCTL_TOPO_H

#include <stddef.h>

enum ac_field {
	AC_RANK,	/* global rank */
	AC_WORLD,	/* world size */
	AC_LRANK,	/* local rank on this node */
	AC_LSIZE,	/* processes on this node */
	AC_NODE,	/* node rank */
	AC_NNODES,	/* number of nodes */
	AC_NFIELDS
};

#define AC_JOB_ID_MAX 200

struct ac_topo {
	const char	*launcher;		/* "slurm", "torchrun", ..., "none" */
	long		 v[AC_NFIELDS];		/* -1 where unknown */
	const char	*var[AC_NFIELDS];	/* where each value came from */
	char		 job_id[AC_JOB_ID_MAX + 1];
	const char	*job_id_from;		/* the variables the job id was made of */
	/* Where the launcher cannot tell a value (Flux's non-block task map, a
	 * Kubernetes Indexed Job's count): what to set, for the error; else "". */
	char		 hint[200];
};

/* How detection reads the environment: getenv(3) in the binary, a fixture in tests. */
typedef const char *(*ac_getenv_fn)(const char *name, void *ctx);

/* getenv(3) wrapped as an ac_getenv_fn. */
const char *ac_getenv_process(const char *name, void *ctx);

/*
 * Fill T from the environment as DESIGN.md section 1 prescribes: the first
 * launcher that defines a rank wins, malformed or inconsistent values are
 * errors. Returns 0, or -1 with a one-line reason in ERR (the variable named,
 * its value shortened) for exit code 2.
 */
int ac_topo_detect(struct ac_topo *t, ac_getenv_fn get, void *ctx,
    char *err, size_t errlen);

/* The launchers in the order detection tries them, for --help:
 * "explicit, kubeflow, torchrun, ...". */
const char *ac_topo_launchers(void);

/* For info: the launcher whose row detection reads ("none": no rank set),
 * also where its values are refused, with its variables that are set
 * ("RANK=1 LOCAL_RANK=1") in VARS (NULL: not wanted); and a line per other
 * row whose rank
 * variable is set, saying why it was not used ("SLURM_PROCID=3: slurm not
 * used: no SLURM_STEP_ID: ..."), into BUF ("" when none). */
const char *ac_topo_candidate(ac_getenv_fn get, void *ctx, char *vars,
    size_t len);
void ac_topo_explain(ac_getenv_fn get, void *ctx, char *buf, size_t len);

/* The value of NAME, with "-1" and "" counting as unset (NULL). */
const char *ac_topo_lookup(ac_getenv_fn get, void *ctx, const char *name);

/* The job identity of detected T (lib/detect/jobid.c): 0, or -1 with ERR. */
int ac_topo_job_id(struct ac_topo *t, ac_getenv_fn get, void *ctx,
    char *err, size_t errlen);

/* The field names used by info, in enum order: "rank", "world_size", ... */
extern const char *const ac_field_names[AC_NFIELDS];

#endif
