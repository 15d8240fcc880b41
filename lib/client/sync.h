/* sync.h: one collective from the client's side, with retries across helper restarts. */
#ifndef ACCELCTL_SYNC_H
#define ACCELCTL_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"

struct ac_sync {
	/* The request. */
	int		 op, scope, role;	/* enum ac_op, ac_scope, ac_role */
	char		 key[AC_KEY_MAX];	/* "b:NAME" ... */
	const char	*what;			/* "'NAME'" for messages */
	int64_t		 source, status;
	long		 timeout_ms, progress_ms;
	/* State and result. */
	uint64_t	 nonce;
	int64_t		 gen;			/* -1 until the helper said */
	long		 deadline, started;
	int64_t		 result;
	char		 failed[512];
	uint8_t		*payload;
	size_t		 paylen;
	struct ac_client c;
};

/* Fill S for KEY with the deadline from TIMEOUT_MS (from now). */
void ac_sync_init(struct ac_sync *s, int op, int scope, int role,
    const char *key, const char *what, int64_t source, long timeout_ms);

/*
 * Wait for the collective's release. Returns 0 with S's result filled, or an
 * exit code after printing why: 124 deadline, 3 aborted, 125 helper lost for
 * good, 2 bad runtime directory.
 */
int ac_sync_wait(const struct ac_topo *t, struct ac_sync *s);

/*
 * For the rank others wait for: register as the source (0, or an exit code),
 * run CMD while watching the helper connection, then hand in the result.
 * ac_sync_run_cmd returns CMD's exit code (126/127/128+N as the shell).
 */
int ac_sync_source_begin(const struct ac_topo *t, struct ac_sync *s);
int ac_sync_run_cmd(const struct ac_topo *t, struct ac_sync *s, char **argv);
int ac_sync_source_finish(const struct ac_topo *t, struct ac_sync *s,
    int64_t status, const void *p, size_t n);

void ac_sync_free(struct ac_sync *s);

/* Barrier names: 1-200 characters of [A-Za-z0-9._:-]. -1 with *WHY if not. */
int ac_check_name(const char *name, const char **why);

/* Timeout for waits: --timeout, else ACCELCTL_TIMEOUT (empty: unset), else
 * 30m. -1 after printing why (exit 2): not a duration, --timeout "", or 0. */
int ac_timeout_ms(const char *opt, long *ms);

#endif
