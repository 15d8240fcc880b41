/* rconn.h: the helper's two connections to one Redis server: dial, AUTH/SELECT, backoff, reconnect. */
#ifndef ACCELCTL_RCONN_H
#define ACCELCTL_RCONN_H

#include <poll.h>
#include <stddef.h>

#include "rdvurl.h"

struct redisReply;

/*
 * A reply, or NULL when there will be none: the connection went down, or
 * Redis answered with an error (handled here: a transient one reconnects, a
 * final one fails the rendezvous for good). The user's ready hook posts again
 * whatever was lost.
 */
typedef void ac_rconn_cb(struct redisReply *reply, void *priv);

struct ac_rconn_hooks {
	/* Both connections are connected and set up (again): post everything. */
	void	(*ready)(void);
	/* An entry read from the blocking read's stream (its field's value). */
	void	(*entry)(const char *v, size_t len);
	/* An entry read from its second stream (ac_rconn_block's WAKE). */
	void	(*wake)(const char *v, size_t len);
};

/* Start connecting (asynchronously) to U. */
void ac_rconn_start(const struct ac_rdv_url *u, const struct ac_rconn_hooks *h);
int  ac_rconn_fds(struct pollfd *pfd, int room);
void ac_rconn_events(const struct pollfd *pfd, int n);
/* Reconnect when due, look at connect deadlines; ms to the next wake-up, or -1. */
long ac_rconn_timer(long now);
void ac_rconn_stop(void);

/* Both connections set up: commands can be sent. */
int  ac_rconn_up(void);
/*
 * The user's own set-up (registering the run) succeeded: the rendezvous is
 * healthy, and down() says so, until the next failure.
 */
void ac_rconn_healthy(void);
/* Fail for good with WHY (the user's set-up found it cannot go on). */
void ac_rconn_fail(const char *why);
/* NULL while healthy; else "host:port: why" (never the password), with
 * *FINAL set when waiting cannot help. */
const char *ac_rconn_down(int *final);
/* "host:port" or the socket path. */
const char *ac_rconn_where(void);

/* ARGV (lengths LEN, or NULL for strings) on the command connection. 0, or
 * -1 when down (CB is not called). */
int  ac_rconn_cmd(ac_rconn_cb *cb, void *priv, int argc, const char **argv,
    const size_t *len);
/*
 * As ac_rconn_cmd, but an error reply that starts with PASS (a static string,
 * e.g. "NOSCRIPT") reaches CB as the reply itself, for the caller to mend;
 * every other error is handled as above.
 */
int  ac_rconn_cmd_pass(const char *pass, ac_rconn_cb *cb, void *priv, int argc,
    const char **argv, const size_t *len);
/*
 * The blocking read: XREAD BLOCK 0 STREAMS KEY CURSOR on the second
 * connection, issued again after every answer, after an error reply and after
 * every reconnect, from the last entry read; a new KEY is read from its start
 * and replaces the old one from the next issue on. WAKE (or NULL) is a second
 * stream read in the same call, from its entries added after the first read
 * on (entries added between two reads before its first entry may be missed:
 * for a signal its senders repeat).
 */
void ac_rconn_block(const char *key, const char *wake);

/*
 * ARGV on a connection of its own, waiting for the answer at most TIMEOUT_MS:
 * for a helper's last words as it exits, which the loop will not send.
 * 0, or -1.
 */
int  ac_rconn_sync(int argc, const char **argv, const size_t *len,
    long timeout_ms);

/*
 * Is Redis error TEXT final (a refused password, NOPERM, an unknown command:
 * waiting cannot help), or transient (LOADING, BUSY, OOM, READONLY, ...)?
 */
int  ac_rconn_final_error(const char *text);

#endif
