/* helper.h: the per-node helper's parts: its shared state, its clients (hconn.c) and its life and loop (helper.c).
 *
 * As tmux splits server.c (the daemon's life and its loop) from
 * server-client.c (one client's input, requests and replies), helper.c owns
 * the process (lock, socket, signals, journal, transport, poll) and hconn.c
 * owns the connections. Between them is the state (hstate.h) and nothing
 * else; neither knows a store (the transport is struct ac_xport, xport.h).
 */
#ifndef ACCELCTL_HELPER_H
#define ACCELCTL_HELPER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "hstate.h"
#include "topo.h"

/* Descriptors the helper keeps for itself (the journal, the transports,
 * the log), below its fd limit: the rest are for clients. */
#define AC_HELPER_FD_RESERVE	32

/* hconn.c: the connections. */

/* Set J's callbacks that reach the clients: released, aborted, failed, alive. */
void ac_hconn_bind(struct ac_job *j);
/* Accept the clients waiting on listener LFD (up to a batch per round). */
void ac_hconn_accept(int lfd);
/* The poll(2) events C wants: none for input while its replies lie unread. */
short ac_hconn_events(const struct ac_hconn *c);
/* What poll(2) reported on C: send, read and dispatch, maybe drop C.
 * 1 when C was dropped (freed), else 0. */
int  ac_hconn_ready(struct ac_hconn *c, short revents);
/* Send what C has queued (a short write leaves the rest for POLLOUT). */
void ac_hconn_flush(struct ac_hconn *c);
/* Read and dispatch C's whole frames. */
void ac_hconn_read(struct ac_hconn *c);
/* Close C: a waiting source is lost, a waiter withdraws (coll.c). */
void ac_hconn_drop(struct ac_hconn *c);
/*
 * The clients' deadlines, progress reports and limits due at NOW: lowers
 * *NEXT (ms, -1 none) to the next one. Returns how many wait at a
 * collective (only they keep the helper from its idle exit).
 */
long ac_hconn_timers(long now, long *next);

/* helper.c: the process. */

/* The job's shape became known: start its cross-node transport (coll.h: shaped). */
void ac_helper_shaped(struct ac_job *j);
/* Run the helper in this process (the "accelctl helper run" body); READY_FD
 * gets one byte once it listens (-1: none). */
/* ACCELCTL_HELPER_IDLE (V, NULL for unset): *MS, default 10m. 0, or -1 with
 * *WHY (malformed, or 0: a helper that exits at once serves nobody). */
int  ac_helper_idle_ms(const char *v, long *ms, const char **why);
int  ac_helper_main(const struct ac_topo *t, int ready_fd, int foreground);

#endif
