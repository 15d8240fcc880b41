/* wait.c: what the synchronising commands share: the job's shape check and a
 * prepared collective. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "config.h"
#include "duration.h"
#include "helper.h"
#include "rdvstate.h"
#include "transport.h"
#include "xport.h"

int
ac_cmd_sync_topo(struct ac_topo *t, int node_scope)
{
	const char *rdv = getenv("ACCELCTL_RENDEZVOUS");
	const char *tr = getenv("ACCELCTL_TRANSPORT"), *why;
	long idle;
	int setting;

	if (ac_cmd_topo(t) == -1)
		return AC_EXIT_USAGE;
	/* Checked by every client, so that a typo is exit 2 on every rank. */
	if (ac_transport_parse(tr, &setting, &why) == -1) {
		ac_warnx("invalid ACCELCTL_TRANSPORT '%.40s': %s", tr, why);
		return AC_EXIT_USAGE;
	}
	if (t->v[AC_WORLD] == 1)
		return 0;
	if (ac_cmd_need_world(t) == -1)
		return AC_EXIT_USAGE;
	/* Checked by every client: the helper it may start would exit at once
	 * (0), or not start at all, and the wait fail with 125. */
	if (ac_helper_idle_ms(getenv("ACCELCTL_HELPER_IDLE"), &idle, &why) == -1) {
		ac_warnx("invalid ACCELCTL_HELPER_IDLE='%.40s': %s",
		    getenv("ACCELCTL_HELPER_IDLE"), why);
		return AC_EXIT_USAGE;
	}
	if (ac_cmd_need_local(t) == -1)
		return AC_EXIT_USAGE;
	if (!node_scope && setting == AC_TSET_NCCL && !ACCELCTL_HAVE_NCCL) {
		ac_warnx("ACCELCTL_TRANSPORT=nccl, but this accelctl was built "
		    "without NCCL (see accelctl --version)");
		return AC_EXIT_FAILED;
	}
	if (node_scope || t->v[AC_LSIZE] == t->v[AC_WORLD])
		return 0;
	if (ac_cmd_need_node(t) == -1)
		return AC_EXIT_USAGE;
	if (rdv == NULL || *rdv == '\0') {
		ac_warnx("this job spans %ld nodes: set "
		    "ACCELCTL_RENDEZVOUS=redis://HOST:PORT to a Redis the nodes "
		    "reach, or run eval \"$(accelctl rendezvous start)\" in the "
		    "job script before starting the ranks", t->v[AC_NNODES]);
		return AC_EXIT_USAGE;
	}
	/* Checked here, so that a typo is exit 2 on every rank at once. */
	char err[512], ended[1400];

	/* The job's own server ("rendezvous start") gave up and took its
	 * password away: that is its end, said as such, not a bad variable. */
	if (ac_rdv_job_ended(ended, sizeof(ended))) {
		ac_warnx("%s", ended);
		return AC_EXIT_FAILED;
	}
	if (ac_transport_check(rdv, getenv("ACCELCTL_REDIS_PASSWORD_FILE"), err,
	    sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_USAGE;
	}
	return 0;
}

int
ac_cmd_sync_init(struct ac_sync *s, const struct ac_topo *t,
    const char *timeout_opt, int op, int scope, int role, const char *key,
    const char *what, int64_t source)
{
	const char *p = getenv("ACCELCTL_PROGRESS_INTERVAL"), *why;
	long timeout, progress = 10000;

	if (ac_cmd_timeout(timeout_opt, &timeout) == -1)
		return AC_EXIT_USAGE;
	if (p != NULL && *p != '\0' && ac_parse_duration(p, &progress, &why) == -1) {
		ac_warnx("invalid ACCELCTL_PROGRESS_INTERVAL='%.40s': %s", p, why);
		return AC_EXIT_USAGE;
	}
	ac_sync_init(s, op, scope, role, key, what, source, timeout);
	/* Progress on local main only: one report per node keeps logs readable. */
	if (t->v[AC_LRANK] == 0)
		s->progress_ms = progress;
	return 0;
}
