/* rdvserver.c: a job-scoped redis-server: found, configured, started, supervised, stopped.
 *
 * "accelctl rendezvous start" forks a supervisor (setsid, forked twice, its
 * standard streams on the job directory's log, so the shell's $(...) sees
 * EOF as soon as accelctl itself exits; a copy of the stderr it had, to
 * tell the script of the server's end) which runs redis-server as its child
 * and stays for as long as the owner runs: the script that started it
 * (rdvowner.c). It waits in poll(2) on a pidfd of the owner and a signalfd,
 * so the owner's exit, killed or not, wakes it at once: it stops the server
 * (SIGTERM, SIGKILL after 500 ms) and removes the directory. redis-server
 * gets PR_SET_PDEATHSIG, so a supervisor killed with SIGKILL takes the
 * server with it. A server that dies on its own is started again (the
 * helpers post their state again after a reconnect) up to 3 times; after
 * that its end is kept in the directory until the script exits (give_up).
 *
 * The configuration reaches redis-server on its standard input
 * ("redis-server -"), never in argv; the job's ACL user gets the SHA-256 of
 * the password ("#hex"), so redis-server never holds the password at all. */
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proctitle.h"
#include "rdvaddr.h"
#include "rdvquery.h"
#include "rdvserver.h"
#include "sha256.h"
#include "spawn.h"

#define READY_MS	10000	/* redis-server must answer PING within this */
#define STOP_MS		500	/* after SIGTERM, before SIGKILL */
#define RESTARTS	3	/* a server that dies on its own, started again */
#define BIND_TRIES	5	/* free ports tried when another process was faster */

/*
 * The commands of the job's ACL user: what the helpers send (lib/redis/xredis.c:
 * AUTH is always allowed, SELECT, GET, HSET, EXISTS, EXPIRE, HGETALL,
 * BITFIELD, XREAD, EVALSHA, EVAL after NOSCRIPT and for a withdrawal, SCRIPT
 * LOAD) and what its scripts call (SET, INCR, GET, EXISTS, EXPIRE, HSET,
 * HSETNX, HEXISTS, HGET, HDEL, HVALS, SETBIT, BITFIELD, BITCOUNT, XADD: Redis
 * checks a script's calls against the caller's ACL); PING and INFO for
 * "rendezvous start" and "status"; CLIENT SETNAME/GETNAME/ID to name
 * connections; SCRIPT EXISTS and, on Redis 7, FUNCTION LOAD/LIST and FCALL,
 * so that another way of sending a script needs no new ACL. Keys: the
 * accelctl:* prefix only. See DESIGN-NOTES.md.
 */
static const char acl_base[] =
    "+ping +select +info +client|setname +client|getname +client|id "
    "+eval +evalsha +script|load +script|exists "
    "+get +set +incr +exists +expire +hset +hsetnx +hexists +hget +hdel "
    "+hvals +hgetall +bitfield +setbit +bitcount +xadd +xread";
static const char acl_redis7[] =
    " +function|load +function|list +fcall +fcall_ro";

static struct ac_rdv_conf *C;
static int logfd = 2;
static int tellfd = -1;	/* the starting script's stderr, or -1 */

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void
nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	nanosleep(&ts, NULL);
}

/* A line in the job directory's log, beside redis-server's own. */
static void __attribute__((format(printf, 1, 2)))
logmsg(const char *fmt, ...)
{
	char buf[1024];
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;
	int n;

	localtime_r(&t, &tm);
	n = (int)strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S accelctl "
	    "rendezvous: ", &tm);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	dprintf(logfd, "%s\n", buf);
}

/* pipe(2) with both ends closed on exec (pipe2 is not POSIX). */
static int
cloexec_pipe(int p[2])
{
	if (pipe(p) == -1)
		return -1;
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

/* NAME on PATH, or with a slash as it stands; 0 when executable. */
static int
search(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(name, '/') != NULL) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK);
	}
	for (p = path != NULL ? path : "/usr/bin:/bin"; ; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		if (end > p && (size_t)snprintf(out, len, "%.*s/%s",
		    (int)(end - p), p, name) < len && access(out, X_OK) == 0)
			return 0;
		if (*end == '\0')
			return -1;
	}
}

/* "Redis server v=7.0.15 sha=..." from PATH --version. */
static int
version(struct ac_rdv_conf *c, char *err, size_t errlen)
{
	char buf[256], *v, *argv[] = { c->redis, "--version", NULL };
	int p[2];
	ssize_t n, got = 0;
	struct ac_child k = AC_CHILD_INIT;

	k.argv = argv;
	k.in = k.err = AC_CHILD_NULL;
	if (cloexec_pipe(p) == -1 || (k.out = p[1], ac_child_start(&k)) == -1) {
		snprintf(err, errlen, "cannot run %.300s: %s", c->redis,
		    strerror(errno));
		return -1;
	}
	close(p[1]);
	while (got < (ssize_t)sizeof(buf) - 1 &&
	    (n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) != 0)
		if (n > 0)
			got += n;
		else if (errno != EINTR)
			break;
	buf[got] = '\0';
	close(p[0]);
	(void)ac_child_wait(&k);
	if ((v = strstr(buf, " v=")) == NULL ||
	    sscanf(v + 3, "%31[0-9.]", c->version) != 1) {
		snprintf(err, errlen, "%.300s --version does not say a Redis "
		    "version: is it redis-server?", c->redis);
		return -1;
	}
	c->major = atoi(c->version);
	if (c->major < 6) {
		snprintf(err, errlen, "%.300s is Redis %s: ACL users need "
		    "Redis 6 or later", c->redis, c->version);
		return -1;
	}
	return 0;
}

int
ac_rdv_find_redis(const char *opt, struct ac_rdv_conf *c, char *err,
    size_t errlen)
{
	const char *env = getenv("ACCELCTL_REDIS_SERVER");

	if (opt != NULL || (env != NULL && *env != '\0')) {
		const char *name = opt != NULL ? opt : env;

		if (search(name, c->redis, sizeof(c->redis)) == -1) {
			snprintf(err, errlen, "cannot execute %s '%.200s' (%s)",
			    opt != NULL ? "--redis-server" :
			    "ACCELCTL_REDIS_SERVER", name, strerror(errno));
			return -1;
		}
	} else if (search("redis-server", c->redis, sizeof(c->redis)) == -1) {
		snprintf(err, errlen, "redis-server not found on PATH: install "
		    "it (Debian: apt-get install redis-server) or name it with "
		    "--redis-server or ACCELCTL_REDIS_SERVER; or set "
		    "ACCELCTL_RENDEZVOUS to a Redis server the cluster runs");
		return -1;
	}
	return version(c, err, errlen);
}

/* S in double quotes for redis.conf (its parser takes \" and \\). */
static void
quoted(char *out, size_t len, const char *s)
{
	size_t n = 0;

	out[n++] = '"';
	for (; *s != '\0' && n + 4 < len; s++) {
		if (*s == '"' || *s == '\\')
			out[n++] = '\\';
		out[n++] = *s;
	}
	out[n++] = '"';
	out[n] = '\0';
}

/* The whole configuration; the password appears only as its SHA-256. */
static void
config(const struct ac_rdv_conf *c, int port, char *buf, size_t len)
{
	char hash[65], dir[1100];

	ac_sha256_hex(c->password, strlen(c->password), hash);
	quoted(dir, sizeof(dir), c->dir);
	snprintf(buf, len,
	    "bind %s\n"
	    "port %d\n"
	    /* Access is the ACL's business; the default user is off. */
	    "protected-mode no\n"
	    "daemonize no\n"
	    "logfile \"\"\n"
	    "dir %s\n"
	    /* A rendezvous holds seconds of state: nothing worth a disk. */
	    "save \"\"\n"
	    "appendonly no\n"
	    /* Keys carry a TTL; evicting one would lose an arrival. */
	    "maxmemory 256mb\n"
	    "maxmemory-policy noeviction\n"
	    "tcp-keepalive 60\n"
	    "user default off resetpass resetkeys -@all\n"
	    "user %s on #%s ~accelctl:* -@all %s%s\n",
	    c->bind, port, dir, AC_RDV_USER, hash, acl_base,
	    c->major >= 7 ? acl_redis7 : "");
	explicit_bzero(hash, sizeof(hash));
}

/* redis-server as our child, its configuration on its standard input. */
static pid_t
spawn(int port)
{
	char cfg[4096], *argv[] = { C->redis, "-", NULL };
	sigset_t none;
	int p[2];
	struct ac_child k = AC_CHILD_INIT;

	sigemptyset(&none);
	k.argv = argv;
	k.out = k.err = logfd;
	/* It must not outlive its supervisor, even one killed with -9. */
	k.deathsig = SIGKILL;
	k.mask = &none;
	if (cloexec_pipe(p) == -1 || (k.in = p[0], k.close_fd = p[1],
	    ac_child_start(&k)) == -1) {
		logmsg("cannot start %s: %s", C->redis, strerror(errno));
		return -1;
	}
	close(p[0]);
	config(C, port, cfg, sizeof(cfg));
	/* Less than a pipe's buffer: the write cannot wait for the reader. */
	if (write(p[1], cfg, strlen(cfg)) != (ssize_t)strlen(cfg))
		logmsg("cannot hand redis-server its configuration: %s",
		    strerror(errno));
	close(p[1]);
	explicit_bzero(cfg, sizeof(cfg));
	logmsg("started %s (pid %ld) on %s:%d", C->redis, (long)k.pid, C->bind,
	    port);
	return k.pid;
}

/* The last lines of the log, joined by "; ", for an error message. */
static void
log_tail(char *out, size_t len)
{
	char buf[600], path[600];
	ssize_t n = 0;
	int fd;

	out[0] = '\0';
	if (ac_rdv_path(path, sizeof(path), C->dir, "log") == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	if (lseek(fd, -(off_t)(sizeof(buf) - 1), SEEK_END) == -1)
		lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* From the first full line on; newlines as "; ". */
	char *s = n == (ssize_t)sizeof(buf) - 1 && strchr(buf, '\n') ?
	    strchr(buf, '\n') + 1 : buf;
	size_t o = 0;
	for (; *s != '\0' && o + 3 < len; s++) {
		if (*s == '\n') {
			if (s[1] != '\0') {
				out[o++] = ';';
				out[o++] = ' ';
			}
		} else if (*s != '\r')
			out[o++] = *s;
	}
	out[o] = '\0';
}

/*
 * Wait until PID answers PING as the job's user. 0: it does; 1: it exited
 * because its port was taken (another try may do); -1: it failed, with why
 * in ERR. A server that did not come up is killed.
 */
static int
ready(pid_t pid, int port, char *err, size_t errlen)
{
	long long deadline = now_ms() + READY_MS;
	char reply[64], why[512], tail[400];
	int st, rc;

	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			log_tail(tail, sizeof(tail));
			if (strstr(tail, "in use") != NULL && C->port == 0)
				return 1;
			snprintf(err, errlen, "redis-server exited at start "
			    "(%s %d): %s", WIFEXITED(st) ? "status" : "signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), tail);
			return -1;
		}
		rc = ac_rdv_query(C->addr, port, AC_RDV_USER, C->password, 1000,
		    "PING", reply, sizeof(reply), why, sizeof(why));
		if (rc == 0)
			return 0;
		/* Refused by a server that took the port first, while ours
		 * fails to bind it: ours' exit tells. */
		for (int i = 0; rc == -1 && i < 60; i++) {
			if (waitpid(pid, &st, WNOHANG) == pid) {
				log_tail(tail, sizeof(tail));
				if (strstr(tail, "in use") != NULL && C->port == 0)
					return 1;
				snprintf(err, errlen, "redis-server exited at "
				    "start: %s", tail);
				return -1;
			}
			nap_ms(5);
		}
		if (rc == -1 || now_ms() > deadline) {
			snprintf(err, errlen, "redis-server did not answer PING%s: "
			    "%s", rc == -1 ? "" : " within 10 s", why);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		nap_ms(2);
	}
}

/* Stop PID: SIGTERM, SIGKILL after STOP_MS. */
static void
stop_redis(pid_t pid)
{
	long long deadline = now_ms() + STOP_MS;
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			logmsg("redis-server did not stop in %d ms: killed",
			    STOP_MS);
			return;
		}
		nap_ms(5);
	}
}

/* Start redis-server, on a fresh free port while another was faster. */
static pid_t
bring_up(int *port, char *err, size_t errlen)
{
	for (int tries = 0; tries < BIND_TRIES; tries++) {
		pid_t pid;
		int rc;

		if ((*port = ac_rdv_try_port(C->bind, C->port, err, errlen)) == -1)
			return -1;
		if ((pid = spawn(*port)) == -1) {
			snprintf(err, errlen, "cannot start %.300s: %s",
			    C->redis, strerror(errno));
			return -1;
		}
		if ((rc = ready(pid, *port, err, errlen)) == 0)
			return pid;
		if (rc == -1)
			return -1;
		logmsg("port %d was taken meanwhile: another", *port);
	}
	snprintf(err, errlen, "no free port on %s after %d tries", C->bind,
	    BIND_TRIES);
	return -1;
}

/* Every descriptor but the standard ones and KEEP1, KEEP2. */
static void
close_others(int keep1, int keep2)
{
	long max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = 3; fd < max; fd++)
		if (fd != keep1 && fd != keep2)
			close(fd);
}

/*
 * The server is gone for good (REASON). The directory stays, with the log,
 * while the script runs: the password goes (nothing to log in to), an
 * "ended" file says why, and every rank's next wait exits 125 with it
 * (cmd/wait.c) instead of failing on the missing password. The script is
 * told on its stderr (tellfd). We stay until the script exits or "stop",
 * then remove it all as always.
 */
static void
give_up(const char *reason)
{
	char logp[600], line[2000];
	int n;

	if (ac_rdv_end_write(C->dir, reason) == -1)
		logmsg("cannot write the reason into %s: %s", C->dir,
		    strerror(errno));
	if (ac_rdv_path(logp, sizeof(logp), C->dir, "log") == -1)
		logp[0] = '\0';
	n = snprintf(line, sizeof(line), "accelctl: rendezvous: the job's "
	    "redis-server has ended: %s; every wait through it now exits 125 "
	    "(its log: %s)\n", reason, logp);
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	if (tellfd == -1 || write(tellfd, line, (size_t)n) != n)
		logmsg("cannot tell pid %ld on its stderr: %s",
		    (long)C->owner.pid, tellfd == -1 ? "not kept" :
		    strerror(errno));
	logmsg("ended: %s; waiting for pid %ld to exit", reason,
	    (long)C->owner.pid);
}

/* The supervisor: never returns. */
static void __attribute__((noreturn))
supervise(int report)
{
	struct ac_rdv_state s;
	char err[1024], path[600], title[160], died[128], why[1200];
	struct signalfd_siginfo si;
	sigset_t set;
	int sfd, port = 0, restarts = 0, null;
	pid_t redis;

	close_others(report, C->owner.pidfd);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (ac_rdv_path(path, sizeof(path), C->dir, "log") == 0)
		logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (null == -1 || logfd == -1) {
		dprintf(report, "error: cannot open the log in %s: %s",
		    C->dir, strerror(errno));
		ac_rdv_remove(C->dir);
		_exit(1);
	}
	/* The script's stderr, to tell it of the server's end: a descriptor
	 * of its own, sharing its offset (reopened, a file the shell did not
	 * open with O_APPEND would have the script's later lines over ours).
	 * Not when it is the $(...)'s pipe too (2>&1): that would wait for us. */
	struct stat e, o;
	if (fstat(2, &e) == 0 && (fstat(1, &o) == -1 || e.st_dev != o.st_dev ||
	    e.st_ino != o.st_ino))
		tellfd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	dup2(null, 0);
	dup2(logfd, 1);
	dup2(logfd, 2);
	if (chdir("/") == -1)
		logmsg("chdir /: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1) {
		dprintf(report, "error: signalfd: %s", strerror(errno));
		ac_rdv_remove(C->dir);
		_exit(1);
	}
	snprintf(title, sizeof(title), "accelctl rendezvous %s (for pid %ld)",
	    C->bind, (long)C->owner.pid);
	ac_proctitle_set(title);
	logmsg("for pid %ld (%s); address %s (from %s)", (long)C->owner.pid,
	    C->owner.comm, C->addr, C->addr_from);

	if ((redis = bring_up(&port, err, sizeof(err))) == -1) {
		logmsg("%s", err);
		dprintf(report, "error: %s", err);
		ac_rdv_remove(C->dir);
		_exit(1);
	}
	memset(&s, 0, sizeof(s));
	s.sup = getpid();
	s.sup_start = ac_proc_start(s.sup, NULL, NULL, 0);
	s.redis = redis;
	s.owner = C->owner.pid;
	snprintf(s.owner_comm, sizeof(s.owner_comm), "%s", C->owner.comm);
	for (char *p = s.owner_comm; *p != '\0'; p++)
		if (*p == ' ' || *p == '\n')
			*p = '_';
	gethostname(s.host, sizeof(s.host) - 1);
	snprintf(s.addr, sizeof(s.addr), "%s", C->addr);
	snprintf(s.bind, sizeof(s.bind), "%s", C->bind);
	s.port = port;
	snprintf(s.version, sizeof(s.version), "%s", C->version);
	s.started = (long long)time(NULL);
	if (ac_rdv_state_write(C->dir, &s, err, sizeof(err)) == -1) {
		dprintf(report, "error: %s", err);
		stop_redis(redis);
		ac_rdv_remove(C->dir);
		_exit(1);
	}
	/* The password is the file's business from here on. */
	explicit_bzero(C->password, sizeof(C->password));
	dprintf(report, "ok");
	close(report);
	logmsg("ready on %s:%d", C->addr, port);

	for (;;) {
		struct pollfd pf[2] = { { sfd, POLLIN, 0 },
		    { C->owner.pidfd, POLLIN, 0 } };
		int have_pidfd = C->owner.pidfd >= 0;

		/* Without pidfd_open (Linux < 5.3): look every 100 ms. */
		if (poll(pf, have_pidfd ? 2 : 1, have_pidfd ? -1 : 100) == -1 &&
		    errno != EINTR)
			break;
		if (have_pidfd ? pf[1].revents != 0 :
		    !ac_rdv_owner_alive(&C->owner)) {
			logmsg("pid %ld (%s) exited: stopping", (long)C->owner.pid,
			    C->owner.comm);
			break;
		}
		if (!(pf[0].revents & POLLIN) ||
		    read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			logmsg("signal %d: stopping", (int)si.ssi_signo);
			break;
		}
		int st;
		if (redis == -1 || waitpid(redis, &st, WNOHANG) != redis)
			continue;
		snprintf(died, sizeof(died), "redis-server (pid %ld) exited (%s %d)",
		    (long)redis, WIFEXITED(st) ? "status" : "signal",
		    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		logmsg("%s", died);
		redis = -1;
		if (restarts++ == RESTARTS) {
			logmsg("%d restarts: giving up", RESTARTS);
			snprintf(err, sizeof(err), "%s, after %d restarts: not "
			    "started again", died, RESTARTS);
			give_up(err);
			continue;
		}
		/* ready() needs the password again: the file has it. */
		if (ac_rdv_path(path, sizeof(path), C->dir, "password") == 0) {
			FILE *f = fopen(path, "r");

			if (f != NULL) {
				if (fgets(C->password, sizeof(C->password), f) == NULL)
					C->password[0] = '\0';
				fclose(f);
			}
		}
		C->port = port;
		redis = bring_up(&port, err, sizeof(err));
		explicit_bzero(C->password, sizeof(C->password));
		if (redis == -1) {
			logmsg("cannot start it again: %s", err);
			snprintf(why, sizeof(why), "%s, and it could not be started "
			    "again: %s", died, err);
			give_up(why);
			continue;
		}
		s.redis = redis;
		ac_rdv_state_write(C->dir, &s, err, sizeof(err));
	}
	stop_redis(redis);
	ac_rdv_remove(C->dir);
	_exit(0);
}

/* spawn.c's view of it: ARG is the report pipe's descriptor. */
static int
supervisor(void *arg)
{
	supervise(*(int *)arg);
}

int
ac_rdv_start(struct ac_rdv_conf *c, struct ac_rdv_state *s, char *err,
    size_t errlen)
{
	char msg[1100];
	ssize_t n, got = 0;
	int rep[2];
	struct ac_child k = AC_CHILD_INIT;

	C = c;
	/* Forked twice, in a session of its own: no terminal signal and no
	 * wait of the shell reaches it. */
	k.fn = supervisor;
	k.arg = &rep[1];
	k.detach = 1;
	if (cloexec_pipe(rep) == -1 || (k.close_fd = rep[0],
	    ac_child_start(&k)) == -1) {
		snprintf(err, errlen, "cannot start the supervisor: %s",
		    strerror(errno));
		ac_rdv_remove(c->dir);
		return -1;
	}
	close(rep[1]);
	while (got < (ssize_t)sizeof(msg) - 1 &&
	    (n = read(rep[0], msg + got, sizeof(msg) - 1 - (size_t)got)) != 0)
		if (n > 0)
			got += n;
		else if (errno != EINTR)
			break;
	msg[got] = '\0';
	close(rep[0]);
	if (strcmp(msg, "ok") == 0)
		return ac_rdv_state_read(c->dir, s, err, errlen);
	if (strncmp(msg, "error: ", 7) == 0)
		snprintf(err, errlen, "%s", msg + 7);
	else
		snprintf(err, errlen, "the supervisor exited without a word");
	ac_rdv_remove(c->dir);
	return -1;
}

int
ac_rdv_stop(const struct ac_rdv_state *s, char *err, size_t errlen)
{
	long long deadline = now_ms() + 3000;

	if (kill(s->sup, SIGTERM) == -1 && errno != ESRCH) {
		snprintf(err, errlen, "cannot stop pid %ld: %s", (long)s->sup,
		    strerror(errno));
		return -1;
	}
	/* It exits after the server stopped and the directory is gone. */
	while (ac_proc_start(s->sup, NULL, NULL, 0) == s->sup_start) {
		if (now_ms() > deadline) {
			snprintf(err, errlen, "pid %ld did not stop within 3 s",
			    (long)s->sup);
			return -1;
		}
		nap_ms(5);
	}
	return 0;
}
