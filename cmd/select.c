/* select.c: which process runs CMD: the shared body of is-* and on-* commands. */
#include <stdio.h>

#include "cmd.h"
#include "num.h"
#include "run.h"

int
ac_cmd_topo(struct ac_topo *t)
{
	char err[512];

	if (ac_topo_detect(t, ac_getenv_process, NULL, err, sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return -1;
	}
	return 0;
}

/* Why the launcher's variables do not tell a value: its row's reason. */
static const char *
why_unknown(const struct ac_topo *t, char *buf, size_t len)
{
	if (t->hint[0] != '\0')
		return t->hint;
	snprintf(buf, len, "the %s variables give none (%s is set)",
	    t->launcher, t->var[AC_RANK]);
	return buf;
}

int
ac_cmd_need_local(const struct ac_topo *t)
{
	char buf[160];

	if (t->v[AC_LRANK] >= 0 && t->v[AC_LSIZE] >= 0)
		return 0;
	if (t->v[AC_LRANK] >= 0)
		ac_warnx("cannot tell the local world size: %s; set "
		    "ACCELCTL_LOCAL_WORLD_SIZE", why_unknown(t, buf,
		    sizeof(buf)));
	else
		ac_warnx("cannot tell the local rank: %s; set "
		    "ACCELCTL_LOCAL_RANK and ACCELCTL_LOCAL_WORLD_SIZE",
		    why_unknown(t, buf, sizeof(buf)));
	return -1;
}

int
ac_cmd_need_world(const struct ac_topo *t)
{
	char buf[160];

	if (t->v[AC_WORLD] >= 0)
		return 0;
	ac_warnx("cannot tell the world size: %s; set ACCELCTL_WORLD_SIZE",
	    why_unknown(t, buf, sizeof(buf)));
	return -1;
}

int
ac_cmd_need_node(const struct ac_topo *t)
{
	char buf[160];

	if (t->v[AC_NODE] >= 0 && t->v[AC_NNODES] >= 0)
		return 0;
	ac_warnx("cannot tell the %s: %s; set %s", t->v[AC_NODE] >= 0 ?
	    "number of nodes" : "node rank", why_unknown(t, buf, sizeof(buf)),
	    t->v[AC_NODE] >= 0 ? "ACCELCTL_NNODES" : t->v[AC_NNODES] >= 0 ?
	    "ACCELCTL_NODE_RANK" : "ACCELCTL_NODE_RANK and ACCELCTL_NNODES");
	return -1;
}

int
ac_cmd_need_helper(const struct ac_topo *t)
{
	if (ac_cmd_need_world(t) == -1 || ac_cmd_need_local(t) == -1)
		return -1;
	if (t->v[AC_NNODES] > 0 && t->v[AC_NODE] < 0)
		return ac_cmd_need_node(t);
	return 0;
}

int
ac_cmd_is(int local)
{
	struct ac_topo t;

	if (ac_cmd_topo(&t) == -1)
		return AC_EXIT_USAGE;
	if (!local)
		return t.v[AC_RANK] == 0 ? AC_EXIT_OK : AC_EXIT_NO;
	if (t.v[AC_WORLD] == 1)
		return AC_EXIT_OK;
	/* The local rank alone answers (Flux's uneven task map has no size). */
	if (t.v[AC_LRANK] < 0 && ac_cmd_need_local(&t) == -1)
		return AC_EXIT_USAGE;
	return t.v[AC_LRANK] == 0 ? AC_EXIT_OK : AC_EXIT_NO;
}

const struct ac_optdef ac_on_opts[] = {
	{ "wait", 'w', NULL, "the others wait for CMD and exit with its status" },
	{ "timeout", 't', "DURATION", "with --wait, how long the others wait (default 30m)" },
	{ NULL, 0, NULL, NULL }
};

/*
 * --wait: the selected process runs CMD as a child and hands its status to
 * the helper; the others wait for it and exit with it (3 if it dies).
 */
static int
on_wait(const struct ac_cmd *cmd, struct ac_args *a, struct ac_topo *t,
    int local, long index, int selected)
{
	char key[AC_KEY_MAX], what[128];
	struct ac_sync s;
	int rc, status;

	snprintf(key, sizeof(key), "w:%s:%ld", cmd->name, index);
	snprintf(what, sizeof(what), "%s %ld", local ? "local rank" : "rank",
	    index);
	if ((rc = ac_cmd_sync_init(&s, t, a->val[1], AC_OP_RESULT,
	    local ? AC_SCOPE_NODE : AC_SCOPE_JOB,
	    selected ? AC_ROLE_SOURCE : AC_ROLE_WAIT, key, what, index)) != 0)
		return rc;
	if (!selected) {
		if ((rc = ac_sync_wait(t, &s)) == 0)
			rc = (int)(s.result < 0 || s.result > 255 ? 255 : s.result);
		ac_sync_free(&s);
		return rc;
	}
	if ((rc = ac_sync_source_begin(t, &s)) == 0) {
		status = ac_sync_run_cmd(t, &s, a->child);
		if ((rc = ac_sync_source_finish(t, &s, status, NULL, 0)) == 0)
			rc = status;
	}
	ac_sync_free(&s);
	return rc;
}

/*
 * on-main, on-local-main, on-process N, on-local-process N. The index is
 * checked before the environment is read: "on-process 1x" is a usage error
 * on every rank, whatever the launcher.
 */
int
ac_cmd_on(const struct ac_cmd *cmd, struct ac_args *a, int local, int indexed)
{
	struct ac_topo t;
	long index = 0, mine, size;
	const char *why;

	if (indexed && ac_parse_uint(a->pos[0], 16777215L, &index, &why) == -1)
		return ac_usage_error(cmd, "invalid process index '%.40s': %s",
		    a->pos[0], why);
	if (a->val[1] != NULL && !a->seen[0])
		return ac_usage_error(cmd, "--timeout needs --wait");
	if (a->seen[0]) {
		int rc = ac_cmd_sync_topo(&t, local);
		if (rc != 0)
			return rc;
	} else if (ac_cmd_topo(&t) == -1)
		return AC_EXIT_USAGE;
	/* One process runs every on-* whatever N, as Accelerate does. */
	if (t.v[AC_WORLD] == 1) {
		long ms;
		/* Nobody waits; --wait's timeout is still checked, as barrier's. */
		if (a->seen[0] && ac_cmd_timeout(a->val[1], &ms) == -1)
			return AC_EXIT_USAGE;
		return ac_exec(a->child);
	}
	mine = local ? t.v[AC_LRANK] : t.v[AC_RANK];
	size = local ? t.v[AC_LSIZE] : t.v[AC_WORLD];
	/*
	 * Index 0 exists wherever there is a process: without --wait it needs
	 * only the rank, also where the size cannot be told. Any other index
	 * must be checked against the size on every process.
	 */
	if (mine < 0 || (size < 0 && (index != 0 || a->seen[0]))) {
		if (local ? ac_cmd_need_local(&t) : ac_cmd_need_world(&t))
			return AC_EXIT_USAGE;
	}
	if (size >= 0 && index >= size) {
		ac_warnx("%s index %ld is out of range: %s has %ld process%s "
		    "(0-%ld)", local ? "local process" : "process", index,
		    local ? "this node" : "the job", size,
		    size == 1 ? "" : "es", size - 1);
		return AC_EXIT_USAGE;
	}
	if (a->seen[0])
		return on_wait(cmd, a, &t, local, index, mine == index);
	if (mine != index)
		return AC_EXIT_OK;
	return ac_exec(a->child);
}
