/* client.h: a short-lived accelctl talking to its node's helper. */
#ifndef ACCELCTL_CLIENT_H
#define ACCELCTL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "duration.h"
#include "proto.h"
#include "rundir.h"
#include "topo.h"

struct ac_client {
	int			 fd;
	const struct ac_topo	*t;
	struct ac_paths		 paths;
	uint8_t			*in;
	size_t			 inlen, incap;
	size_t			 consumed;	/* the frame last handed out */
	long			 helper_pid;
	int			 watch_parent;	/* recv returns -3 when our parent exits */
	int			 busy;		/* open failed: the helper's queue was full */
	/* Open failed: the helper turned us away at accept (its maximum of
	 * clients, out of descriptors), for this reason. */
	int			 turned_away;
	char			 why[256];
	/* Connected by the helper's abstract name (rundir.h), not its file:
	 * the listener's pid (-1 not visible here); 0: by the file. */
	long			 name_pid;
};

/*
 * Connect to this job's helper and exchange versions. With AUTOSTART, start
 * the helper when none answers: under a flock, so that exactly one client
 * starts it, retrying the connect once after taking the lock (another client
 * may have started it meanwhile). Returns 0; or -1 with *RC the exit code and
 * a message printed (2: unsafe runtime directory, 125: no helper), or -2
 * (without message) when AUTOSTART is off and no helper runs.
 */
int  ac_client_open(struct ac_client *c, const struct ac_topo *t, int autostart,
    int *rc);
void ac_client_close(struct ac_client *c);

/* Send the frames in B, taking in what the helper sends meanwhile (the
 * frame the last recv handed out is then no longer valid); -1 when the
 * helper is gone. */
int  ac_client_send(struct ac_client *c, const struct ac_buf *b);

/*
 * One request and its one reply: a frame of TYPE, with the string field
 * TEXT unless NULL (abort's reason), then the next frame within 10 s.
 * Returns the reply's type with R over its fields, or -1 / -2 as below.
 */
int  ac_client_request(struct ac_client *c, int type, const char *text,
    struct ac_rd *r);

/*
 * Wait for the next frame until DEADLINE (CLOCK_MONOTONIC ms, -1 for none).
 * Returns its type with R over its fields, -1 when the helper is gone, -2 at
 * the deadline, -3 (with watch_parent set) when the process that started
 * accelctl exited (parent.h). R stays valid until the next call.
 */
int  ac_client_recv(struct ac_client *c, long deadline, struct ac_rd *r);

#endif
