/* jobid.c: the job identity that scopes every synchronisation (DESIGN.md
 * section 1): the same string on every process of one launch, another on the
 * next launch. The order and its reasons are in DESIGN-NOTES.md. */
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "topo.h"

/* Characters allowed in a job id: it becomes part of paths and Redis keys. */
static int
job_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
	    c == '-' || c == '@';
}

/*
 * Append S, other characters made '_'. Flux's F58 ids start with 'ƒ'
 * (U+0192, two bytes in UTF-8): written 'f', as Flux itself accepts them in
 * ASCII, so that the id reads as Flux prints it.
 */
static void
job_append(struct ac_topo *t, const char *s)
{
	size_t n = strlen(t->job_id);

	for (; *s != '\0' && n < AC_JOB_ID_MAX; s++) {
		if ((unsigned char)s[0] == 0xc6 && (unsigned char)s[1] == 0x92) {
			t->job_id[n++] = 'f';
			s++;
			continue;
		}
		t->job_id[n++] = job_char((unsigned char)*s) ? *s : '_';
	}
	t->job_id[n] = '\0';
}

/* Append "PREFIX.A" or "PREFIX.A:B" (B only when set); 0 when A is unset.
 * FROM names both, FROM_A the first alone (the id info shows came from it). */
static int
job_from(struct ac_topo *t, ac_getenv_fn get, void *ctx, const char *prefix,
    const char *a, const char *b, const char *from, const char *from_a)
{
	const char *va = ac_topo_lookup(get, ctx, a);
	const char *vb = b != NULL ? ac_topo_lookup(get, ctx, b) : NULL;

	if (va == NULL)
		return 0;
	job_append(t, prefix);
	job_append(t, va);
	t->job_id_from = from_a;
	if (vb != NULL) {
		job_append(t, ":");
		job_append(t, vb);
		t->job_id_from = from;
	}
	return 1;
}

static const char *
first_set(ac_getenv_fn get, void *ctx, const char *const *names,
    const char **which)
{
	for (; *names != NULL; names++) {
		const char *v = ac_topo_lookup(get, ctx, *names);
		if (v != NULL) {
			*which = *names;
			return v;
		}
	}
	return NULL;
}

/*
 * The launchers of the largest sites and of the clouds have an identity of
 * their own, which wins over the Slurm step they may run inside (a Flux
 * instance started by srun, horovodrun in a step): every launch inside one
 * step would share the step's id. 1 when the winner gave one.
 */
static int
launcher_id(struct ac_topo *t, ac_getenv_fn get, void *ctx)
{
	static const char *const lsf_steps[] = { "PMIX_NAMESPACE",
	    "OMPI_MCA_ess_base_jobid", NULL };
	const char *l = t->launcher, *v, *which;

	if (strcmp(l, "flux") == 0)
		return job_from(t, get, ctx, "flux.", "FLUX_JOB_ID", NULL,
		    "FLUX_JOB_ID", "FLUX_JOB_ID");
	if (strcmp(l, "pals") == 0)
		return job_from(t, get, ctx, "pals.", "PALS_APID", NULL,
		    "PALS_APID", "PALS_APID");
	if (strcmp(l, "horovod") == 0)
		return job_from(t, get, ctx, "horovod.",
		    "HOROVOD_GLOO_RENDEZVOUS_ADDR", "HOROVOD_GLOO_RENDEZVOUS_PORT",
		    "HOROVOD_GLOO_RENDEZVOUS_ADDR:PORT",
		    "HOROVOD_GLOO_RENDEZVOUS_ADDR");
	if (strcmp(l, "skypilot") == 0)
		return job_from(t, get, ctx, "skypilot.", "SKYPILOT_TASK_ID",
		    NULL, "SKYPILOT_TASK_ID", "SKYPILOT_TASK_ID");
	if (strcmp(l, "kubeflow") == 0)
		return job_from(t, get, ctx, "kubeflow.", "PET_MASTER_ADDR",
		    "PET_MASTER_PORT", "PET_MASTER_ADDR:PET_MASTER_PORT",
		    "PET_MASTER_ADDR") ||
		    job_from(t, get, ctx, "kubeflow.", "MASTER_ADDR",
		    "MASTER_PORT", "MASTER_ADDR:MASTER_PORT", "MASTER_ADDR");
	if (strcmp(l, "jsrun") == 0 &&
	    (v = ac_topo_lookup(get, ctx, "LSB_JOBID")) != NULL) {
		const char *idx = ac_topo_lookup(get, ctx, "LSB_JOBINDEX");
		/* What info shows it came from: [index][namespace variable]. */
		static const char *const froms[2][3] = {
			{ "LSB_JOBID", "LSB_JOBID.PMIX_NAMESPACE",
			    "LSB_JOBID.OMPI_MCA_ess_base_jobid" },
			{ "LSB_JOBID_LSB_JOBINDEX",
			    "LSB_JOBID_LSB_JOBINDEX.PMIX_NAMESPACE",
			    "LSB_JOBID_LSB_JOBINDEX.OMPI_MCA_ess_base_jobid" } };
		int array = 0, step = 0;

		/* Elements of a job array share LSB_JOBID. */
		job_append(t, "lsf.");
		job_append(t, v);
		if (idx != NULL && strcmp(idx, "0") != 0) {
			job_append(t, "_");
			job_append(t, idx);
			array = 1;
		}
		/* Two jsrun steps of one job differ in their namespace. */
		if ((v = first_set(get, ctx, lsf_steps, &which)) != NULL) {
			job_append(t, ".");
			job_append(t, v);
			step = strcmp(which, "PMIX_NAMESPACE") == 0 ? 1 : 2;
		}
		t->job_id_from = froms[array][step];
		return 1;
	}
	return 0;
}

static int
explicit_id(struct ac_topo *t, const char *v, char *err, size_t errlen)
{
	char buf[48];

	if (strlen(v) > AC_JOB_ID_MAX) {
		snprintf(err, errlen, "invalid ACCELCTL_JOB_ID='%s': longer "
		    "than 200 characters", ac_shorten(v, buf, sizeof(buf)));
		return -1;
	}
	for (const char *p = v; *p != '\0'; p++)
		if (!job_char((unsigned char)*p)) {
			snprintf(err, errlen, "invalid ACCELCTL_JOB_ID='%s': "
			    "allowed are A-Z a-z 0-9 . _ : - @",
			    ac_shorten(v, buf, sizeof(buf)));
			return -1;
		}
	job_append(t, v);
	t->job_id_from = "ACCELCTL_JOB_ID";
	return 0;
}

int
ac_topo_job_id(struct ac_topo *t, ac_getenv_fn get, void *ctx, char *err,
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
	if ((v = ac_topo_lookup(get, ctx, "ACCELCTL_JOB_ID")) != NULL)
		return explicit_id(t, v, err, errlen);
	slurm_job = ac_topo_lookup(get, ctx, "SLURM_JOB_ID");
	if (launcher_id(t, get, ctx)) {
		/* done */
	} else if (mpi && (v = first_set(get, ctx, mpi_ns, &which)) != NULL) {
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
	} else if ((v = ac_topo_lookup(get, ctx, "TORCHELASTIC_RUN_ID")) != NULL) {
		const char *addr = ac_topo_lookup(get, ctx, "MASTER_ADDR");
		const char *port = ac_topo_lookup(get, ctx, "MASTER_PORT");

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
	restarts = ac_topo_lookup(get, ctx, "TORCHELASTIC_RESTART_COUNT");
	if (restarts != NULL && strcmp(restarts, "0") != 0) {
		job_append(t, ".restart");
		job_append(t, restarts);
	}
	return 0;
}
