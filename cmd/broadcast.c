/* broadcast.c: "accelctl broadcast NAME [VALUE]": rank 0's VALUE, or its stdin, is
 * printed on every rank (broadcast_object_list). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

enum { OPT_TIMEOUT };

static const struct ac_optdef bc_opts[] = {
	[OPT_TIMEOUT] = { "timeout", 't', "DURATION", "how long to wait for rank 0 (default 30m); exit 124" },
	{ NULL, 0, NULL, NULL }
};

/* Why rank 0 has no value to send, for its own stderr and, as the
 * broadcast's result, for the others' (they exit 3 naming it). */
static char why_not[256];

static int
failed(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
failed(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_not, sizeof(why_not), fmt, ap);
	va_end(ap);
	ac_warnx("%s", why_not);
	return rc;
}

static int
too_large(void)
{
	return failed(AC_EXIT_USAGE, "the value is larger than %u MiB (%u "
	    "bytes), the most a broadcast carries", AC_PAYLOAD_MAX >> 20,
	    AC_PAYLOAD_MAX);
}

/* Read all of stdin, at most AC_PAYLOAD_MAX bytes. 0, or an exit code after
 * printing: 2 for a value too large (bad input, as a bad argument), 125. */
static int
read_stdin(uint8_t **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	uint8_t *p = malloc(cap);
	ssize_t r;

	if (p == NULL)
		return failed(AC_EXIT_FAILED, "out of memory");
	/* One byte past the maximum is enough to refuse it. */
	while ((r = read(STDIN_FILENO, p + n, cap - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;

			free(p);
			return failed(AC_EXIT_FAILED, "read error on standard "
			    "input: %s", strerror(e));
		}
		n += (size_t)r;
		if (n > AC_PAYLOAD_MAX) {
			free(p);
			return too_large();
		}
		if (n == cap) {
			uint8_t *q;
			size_t ncap = cap * 2 > AC_PAYLOAD_MAX + 1 ?
			    AC_PAYLOAD_MAX + 1 : cap * 2;

			if ((q = realloc(p, ncap)) == NULL) {
				free(p);
				return failed(AC_EXIT_FAILED, "out of memory");
			}
			p = q;
			cap = ncap;
		}
	}
	*out = p;
	*len = n;
	return 0;
}

static int
print_value(const uint8_t *p, size_t n)
{
	if (n > 0 && fwrite(p, 1, n, stdout) != n)
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
	return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
}

/* VALUE given: it and a newline, as echo prints it. 0 or an exit code. */
static int
value_arg(struct ac_args *a, uint8_t **p, size_t *n)
{
	size_t len = strlen(a->pos[1]);

	if (len + 1 > AC_PAYLOAD_MAX)
		return too_large();
	if ((*p = malloc(len + 1)) == NULL)
		return failed(AC_EXIT_FAILED, "out of memory");
	memcpy(*p, a->pos[1], len);
	(*p)[len] = '\n';
	*n = len + 1;
	return 0;
}

static int
exec_broadcast(const struct ac_cmd *self, struct ac_args *a)
{
	const char *name = a->pos[0], *why;
	char key[AC_KEY_MAX], what[256];
	uint8_t *value = NULL;
	size_t n = 0;
	struct ac_topo t;
	struct ac_sync s;
	int rc;

	if (ac_check_name(name, &why) == -1)
		return ac_usage_error(self, "invalid name '%.40s': %s", name, why);
	if ((rc = ac_cmd_sync_topo(&t, 0)) != 0)
		return rc;
	if (t.v[AC_WORLD] == 1 || t.v[AC_RANK] != 0) {
		if (t.v[AC_WORLD] == 1) {
			long ms;
			/* Nobody to wait for; the timeout is still checked, as
			 * barrier's: a typo is exit 2 in a job of one, too. */
			if (ac_cmd_timeout(a->val[OPT_TIMEOUT], &ms) == -1)
				return AC_EXIT_USAGE;
			if ((rc = a->npos > 1 ? value_arg(a, &value, &n) :
			    read_stdin(&value, &n)) != 0)
				return rc;
			rc = print_value(value, n);
			free(value);
			return rc;
		}
	}
	snprintf(key, sizeof(key), "c:%s", name);
	snprintf(what, sizeof(what), "'%s'", name);
	if ((rc = ac_cmd_sync_init(&s, &t, a->val[OPT_TIMEOUT], AC_OP_RESULT,
	    AC_SCOPE_JOB, t.v[AC_RANK] == 0 ? AC_ROLE_SOURCE : AC_ROLE_WAIT, key,
	    what, 0)) != 0)
		return rc;
	if (t.v[AC_RANK] == 0) {
		/* Register first: if we die reading stdin, the others learn it. */
		if ((rc = ac_sync_source_begin(&t, &s)) == 0) {
			if ((rc = a->npos > 1 ? value_arg(a, &value, &n) :
			    read_stdin(&value, &n)) == 0)
				rc = ac_sync_source_finish(&t, &s, 0, value, n);
			else
				/* Alive, but without a value: the others are
				 * told why, not that rank 0 died. */
				(void)ac_sync_source_finish(&t, &s, rc,
				    (const uint8_t *)why_not, strlen(why_not));
		}
	} else {
		rc = ac_sync_wait(&t, &s);
		if (rc == 0 && s.result != 0) {
			ac_warnx("%s: aborted: rank 0 has no value to send: %.*s",
			    what, (int)(s.paylen < 256 ? s.paylen : 256),
			    (const char *)s.payload);
			ac_sync_free(&s);
			return AC_EXIT_ABORTED;
		}
	}
	if (rc == 0)
		rc = print_value(s.payload, s.paylen);
	free(value);
	ac_sync_free(&s);
	return rc;
}

const struct ac_cmd cmd_broadcast = {
	.name = "broadcast",
	.group = "Synchronise (through the node's helper)",
	.args = "[--timeout DURATION] NAME [VALUE]",
	.summary = "print rank 0's VALUE (or stdin) on every rank",
	.help = "Rank 0's VALUE, followed by a newline, or its standard input byte "
	    "for byte (binary data and NUL bytes included, up to 16 MiB), is "
	    "printed on every rank: broadcast_object_list for shells, as in "
	    "run=$(accelctl broadcast run-id \"$(date +%s)\"). The other ranks' VALUE "
	    "and stdin are not read. NAME follows the barrier rules and may be "
	    "used again. When rank 0 dies before it has sent the value, or has "
	    "none to send (its stdin cannot be read), the others exit 3 saying "
	    "why.",
	.opts = bc_opts,
	.minpos = 1,
	.maxpos = 2,
	.exec = exec_broadcast,
};
