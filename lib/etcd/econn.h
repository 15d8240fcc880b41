/* econn.h: the helper's HTTP connection to etcd's JSON gateway, on libcurl's multi socket interface. */
#ifndef ACCELCTL_ECONN_H
#define ACCELCTL_ECONN_H

#include <poll.h>

#include "etcdso.h"
#include "etcdurl.h"

/*
 * A reply (borrowed, valid during the call), or NULL when there will be none:
 * the endpoint failed or etcd refused the request. The connection then resets
 * (or fails for good) by itself, and the ready hook posts again what was lost.
 */
typedef void ac_econn_cb(json_t *reply, void *priv);

struct ac_econn_hooks {
	/* Connected and authenticated (again): register, watch, post everything. */
	void	(*ready)(void);
	/* One message of the watch stream ({"result": ...}). */
	void	(*watch)(json_t *msg);
	/* etcd no longer knows the lease we put keys with: grant a new one. */
	void	(*lease_lost)(void);
};

/* Start (asynchronously) with the endpoints of U, tried in turn. */
void ac_econn_start(const struct ac_etcd_url *u, const struct ac_econn_hooks *h);
int  ac_econn_fds(struct pollfd *pfd, int room);
void ac_econn_events(const struct pollfd *pfd, int n);
/* Drive libcurl's timer and our reconnect; ms to the next wake-up, or -1. */
long ac_econn_timer(long now);
/* How many answers and watch messages were handed to their callbacks so far:
 * a caller sees whether a call delivered any (which may have set timers). */
unsigned long ac_econn_answers(void);
void ac_econn_stop(void);

/* Authenticated on an endpoint: requests can be sent. */
int  ac_econn_up(void);
/* The user's set-up (the run's registration) worked: down() says NULL. */
void ac_econn_healthy(void);
/* Fail for good with WHY (waiting cannot help). */
void ac_econn_fail(const char *why);
/* A transient failure: drop everything, try the next endpoint. */
void ac_econn_reset(const char *why);
/* NULL while healthy; else "host:port: why" (never the password). */
const char *ac_econn_down(int *final);
/* The endpoint in use, "host:port". */
const char *ac_econn_where(void);

/* POST BODY (stolen) to PATH ("/v3/kv/txn"). 0, or -1 when down (CB not called). */
int  ac_econn_call(const char *path, json_t *body, ac_econn_cb *cb, void *priv);
/*
 * The same for a request that may exceed etcd's size limit (a result's
 * value): when etcd refuses it as too large, CB gets NULL while
 * ac_econn_refusal() says why, and the connection stays up. Any other
 * request refused so fails the connection for good.
 */
int  ac_econn_call_large(const char *path, json_t *body, ac_econn_cb *cb,
    void *priv);
const char *ac_econn_refusal(void);
/* Open the watch stream with the WatchRequest BODY (stolen), or an array
 * of them (several watches on one stream), replacing the one open. Its
 * end, however it comes, resets the connection. */
int  ac_econn_watch(json_t *body);
/* Requests sent since the start (for the benchmark's per-barrier count). */
unsigned long ac_econn_requests(void);

/*
 * POST BODY (stolen) to PATH on a blocking handle of its own, waiting at most
 * TIMEOUT_MS: a helper's last words as it exits. 0, or -1. REPLY, unless
 * NULL: the reply parsed (the caller's to json_decref), or NULL.
 */
int  ac_econn_sync(const char *path, json_t *body, long timeout_ms,
	json_t **reply);

/* int64 fields come as strings ("123"), or absent when 0 (proto3 JSON). */
long long ac_json_i64(const json_t *obj, const char *field);

#endif
