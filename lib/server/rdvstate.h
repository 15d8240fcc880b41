/* rdvstate.h: the per-job directory of a rendezvous server: password, state, log. */
#ifndef ACCELCTL_RDVSTATE_H
#define ACCELCTL_RDVSTATE_H

#include <stddef.h>
#include <sys/types.h>

#define AC_RDV_USER	"accelctl"	/* the ACL user the job's helpers log in as */

/* What "rendezvous status" and "stop" need to find the server, in DIR/state. */
struct ac_rdv_state {
	pid_t			sup;		/* the supervisor: stop signals it */
	unsigned long long	sup_start;	/* its start time, against pid reuse */
	pid_t			redis;
	pid_t			owner;		/* the script it lives as long as */
	char			owner_comm[32];
	char			host[256];	/* gethostname() of the server's host */
	char			addr[64];	/* the address in the URL */
	char			bind[64];	/* the address it listens on */
	int			port;
	char			version[32];	/* redis-server's */
	long long		started;	/* time(NULL) when it answered */
};

/*
 * Create the job's directory (mode 0700, a fresh name) under PARENT, else
 * under $SLURM_SUBMIT_DIR/.accelctl in a Slurm job, else (or when another
 * user made that one: said on stderr) $HOME/.accelctl (created 0700 when
 * missing), and check it: a directory of ours that no one else may enter.
 * Its name into DIR. Returns 0, or -1 with a reason in ERR.
 */
int ac_rdv_mkdir(const char *parent, char *dir, size_t len, char *err,
    size_t errlen);

/* A random 256-bit password (getrandom) as 64 hex digits into PW, and the
 * same with a newline into DIR/password (mode 0600, created exclusively). */
int ac_rdv_new_password(const char *dir, char pw[65], char *err,
    size_t errlen);

/* DIR/NAME into PATH (LEN bytes); -1 when it does not fit. */
int ac_rdv_path(char *path, size_t len, const char *dir, const char *name);

/* Write S into DIR/state (atomically), read it back. 0, or -1 with ERR. */
int ac_rdv_state_write(const char *dir, const struct ac_rdv_state *s,
    char *err, size_t errlen);
int ac_rdv_state_read(const char *dir, struct ac_rdv_state *s, char *err,
    size_t errlen);

/* Remove DIR: the files a server leaves there, then the directory. */
void ac_rdv_remove(const char *dir);

/*
 * The directory of the server whose lines this shell evaluated: that of
 * ACCELCTL_REDIS_PASSWORD_FILE. Returns 0, or -1 with a reason in ERR.
 */
int ac_rdv_dir_from_env(char *dir, size_t len, char *err, size_t errlen);

/*
 * The server of DIR ended for good (WHY): into DIR/ended, and DIR/password
 * removed. 0, or -1 with errno. ac_rdv_ended: 1 with the reason in WHY when
 * DIR has one, else 0.
 */
int ac_rdv_end_write(const char *dir, const char *why);
int ac_rdv_ended(const char *dir, char *why, size_t len);

/*
 * The job's own server (ACCELCTL_REDIS_PASSWORD_FILE of "rendezvous start")
 * ended for good: 1 with the line a rank says in MSG ("the job's rendezvous
 * server ... has ended: WHY (its log: DIR/log)"), else 0. For the check
 * before a wait and for a rank already waiting (sync.c).
 */
int ac_rdv_job_ended(char *msg, size_t len);

/* 1 while the supervisor of S runs on this host, else 0. */
int ac_rdv_running(const struct ac_rdv_state *s);
/* 1, with its state in S, when a server in a directory beside DIR (the
 * same parent) runs on this host for the same OWNER (a second start in
 * one script, its lines not evaluated: nothing else would tell), else 0. */
int ac_rdv_same_owner(const char *dir, pid_t owner, struct ac_rdv_state *s);

#endif
