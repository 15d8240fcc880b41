/* rundir.c: the private runtime directory and the per-job file names in it.
 *
 * Which directory: ACCELCTL_RUNTIME_DIR when set (the user's choice: it is
 * that one or an error). Else the first usable of $XDG_RUNTIME_DIR/accelctl
 * (only where XDG_RUNTIME_DIR names a directory that exists here: Slurm
 * exports the login node's /run/user/UID to nodes that have none),
 * /tmp/accelctl-UID, and, only when another user took that name first,
 * $HOME/.accelctl/run.HOST. Every local rank of a job must choose the same
 * one, also when the machine changes under the job (a login creates
 * /run/user/UID, the other user removes the /tmp directory): so a place that
 * already holds this job's lock file is chosen before any other, and the
 * order decides only for a job that has none yet (DESIGN-NOTES.md).
 *
 * How it is used: the directory is opened once (O_PATH, O_DIRECTORY,
 * O_NOFOLLOW, on the name with trailing slashes and "." components taken
 * off, so that "link/" and "link/." are the link they name), checked on
 * that descriptor (fstat), and every file in it is named through
 * /proc/self/fd/N/NAME. That name resolves to the directory we checked
 * whatever happens to its path afterwards (a link retargeted), and works
 * for bind(2) and connect(2) of the helper's socket, which take a path and
 * no directory descriptor; it is also short, so that a long directory fits
 * sun_path. Without /proc the path itself is used, as before. */
#define _GNU_SOURCE	/* O_PATH */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rundir.h"
#include "sha256.h"

/* The longest "/proc/self/fd/N": the file names must not depend on N. */
#define FD_PREFIX_MAX	24

/* PATH with repeated and trailing slashes and "." components taken off. */
static int
normalize(const char *path, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = path; *p != '\0';) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n;
			continue;
		}
		if (o + n + 2 >= len)
			return -1;
		out[o++] = '/';
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

/* " (NAME)" of UID, or "". */
static const char *
user_of(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw == NULL || pw->pw_name == NULL)
		buf[0] = '\0';
	else
		snprintf(buf, len, " (%.60s)", pw->pw_name);
	return buf;
}

static void
unsafe(const char *dir, const struct stat *st, char *err, size_t errlen)
{
	snprintf(err, errlen, "runtime directory %.300s has unsafe "
	    "permissions (%s, mode %03o, owner uid %ld): it must be a "
	    "directory of uid %ld with mode 0700", dir,
	    S_ISDIR(st->st_mode) ? "directory" : S_ISLNK(st->st_mode) ?
	    "symbolic link" : "not a directory",
	    (unsigned)(st->st_mode & 0777), (long)st->st_uid, (long)getuid());
}

/*
 * Open DIR (normalized), made 0700 first when CREATE, and check it is a
 * directory of ours with no group or other bits. Returns its descriptor; or
 * -1 with errno and a reason in ERR, and *OWNER the uid of what is there
 * (-1 when nothing is).
 */
static int
open_private(const char *dir, int create, long *owner, char *err,
    size_t errlen)
{
	struct stat st;
	int fd, saved;

	*owner = -1;
	if (create && mkdir(dir, 0700) == -1 && errno != EEXIST) {
		saved = errno;
		snprintf(err, errlen, "cannot create runtime directory %.300s: "
		    "%s", dir, strerror(errno));
		if (lstat(dir, &st) == 0)
			*owner = (long)st.st_uid;
		errno = saved;
		return -1;
	}
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1) {
		saved = errno;
		if (lstat(dir, &st) == -1) {
			snprintf(err, errlen, "runtime directory %.300s: %s", dir,
			    strerror(saved));
			errno = saved;
			return -1;
		}
		*owner = (long)st.st_uid;
		unsafe(dir, &st, err, errlen);	/* a link, or no directory */
		errno = saved;
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		saved = errno;
		snprintf(err, errlen, "runtime directory %.300s: %s", dir,
		    strerror(errno));
		close(fd);
		errno = saved;
		return -1;
	}
	*owner = (long)st.st_uid;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		unsafe(dir, &st, err, errlen);
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* FNV-1a: a stable short name for a job id too long for sun_path. */
static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* The files' base name in DIR: the job id, when a socket path has room. */
static void
base_name(const char *dir, const char *job_id, char *base, size_t len)
{
	size_t d = strlen(dir);

	if ((d > FD_PREFIX_MAX ? d : FD_PREFIX_MAX) + strlen(job_id) + 7 <
	    sizeof(((struct ac_paths *)0)->sock))
		snprintf(base, len, "%s", job_id);
	else
		snprintf(base, len, "job-%016llx",
		    (unsigned long long)fnv1a(job_id));
}

/* 1 when DIR exists, is safe, and holds JOB_ID's lock file. */
static int
holds_job(const char *dir, const char *job_id)
{
	char base[300], lock[320], err[16];
	struct stat st;
	long owner;
	int fd, yes;

	if ((fd = open_private(dir, 0, &owner, err, sizeof(err))) == -1)
		return 0;
	base_name(dir, job_id, base, sizeof(base));
	snprintf(lock, sizeof(lock), "%s.lock", base);
	yes = fstatat(fd, lock, &st, AT_SYMLINK_NOFOLLOW) == 0;
	close(fd);
	return yes;
}

/*
 * $HOME/.accelctl/run.HOST, made on the way when CREATE; -1 without HOME, or
 * when $HOME/.accelctl is not a directory of ours that only we can write
 * (why into BAD): a HOME others can write (HOME=/tmp, a shared project
 * directory) would let them make it first, a link or a directory of theirs,
 * and move our run.HOST away under a job, whose later ranks would then
 * make another and never meet the first (rendezvous start's default_parent
 * refuses the same).
 */
static int
home_dir(char *out, size_t len, int create, char *bad, size_t badlen)
{
	const char *home = getenv("HOME");
	char host[72] = "", u[80];
	struct stat st;
	int n;

	if (badlen > 0)
		bad[0] = '\0';
	if (home == NULL || *home != '/')
		return -1;
	if (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0')
		snprintf(host, sizeof(host), "host");
	/* One per host: a home shared by the nodes must not share sockets. */
	for (char *p = host; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			*p = '_';
	n = snprintf(out, len, "%s/.accelctl", home);
	if (n < 0 || (size_t)n >= len)
		return -1;
	if (create)
		(void)mkdir(out, 0700);	/* run.HOST itself is checked */
	if (lstat(out, &st) == 0 && (!S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid() || (st.st_mode & 022) != 0)) {
		snprintf(bad, badlen, "%.300s is %s of uid %ld%s%s", out,
		    S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ?
		    "a directory" : "not a directory", (long)st.st_uid,
		    user_of(st.st_uid, u, sizeof(u)), st.st_uid == getuid() ?
		    " that others can write" : ", another user");
		return -1;
	}
	n = snprintf(out, len, "%s/.accelctl/run.%s", home, host);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * Choose the directory when ACCELCTL_RUNTIME_DIR is not set: its name into
 * P->dir, its descriptor returned, why it is not the first place into
 * P->note. -1 with errno and ERR.
 */
static int
choose(struct ac_paths *p, const char *job_id, int create, char *err,
    size_t errlen)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	/* WHY: XDG_RUNTIME_DIR skipped; WHYHOME: that, and /tmp taken. */
	char cand[3][512], why[600] = "", whyhome[1000], e2[600], *w;
	int n = 0, fd;
	long owner;
	struct stat st;

	if (xdg != NULL && *xdg == '/') {
		int bad = stat(xdg, &st) == -1 ? errno : S_ISDIR(st.st_mode) ?
		    0 : ENOTDIR;

		if (bad == 0)
			snprintf(cand[n++], sizeof(cand[0]), "%.480s/accelctl", xdg);
		else
			snprintf(why, sizeof(why), "XDG_RUNTIME_DIR=%.300s: %s on "
			    "this host: taken as unset", xdg, strerror(bad));
	}
	snprintf(cand[n++], sizeof(cand[0]), "/tmp/accelctl-%ld",
	    (long)getuid());
	int tmp = n - 1;
	char homebad[400];
	if (home_dir(cand[n], sizeof(cand[0]), 0, homebad, sizeof(homebad)) == 0)
		n++;
	/* Another user's name in /tmp is theirs, not our mistake: then the
	 * home directory, where they cannot make it first. */
	char taken[300] = "", u[80];
	if (lstat(cand[tmp], &st) == 0 && st.st_uid != getuid())
		snprintf(taken, sizeof(taken), "%.200s belongs to uid %ld%s, another "
		    "user", cand[tmp], (long)st.st_uid, user_of(st.st_uid, u,
		    sizeof(u)));
	if (taken[0] != '\0' && tmp + 1 < n)
		snprintf(whyhome, sizeof(whyhome), "%s%s%s", why, why[0] ?
		    "; " : "", taken);
	else
		snprintf(whyhome, sizeof(whyhome), "%s", why);

	/* A place with this job's lock file: where its other ranks went. */
	for (int i = 0; i < n; i++)
		if (normalize(cand[i], p->dir, sizeof(p->dir)) == 0 &&
		    holds_job(p->dir, job_id)) {
			w = i > tmp ? whyhome : why;
			if (i > 0 || w[0] != '\0')
				snprintf(p->note, sizeof(p->note), "%.600s%susing %.500s%s",
				    w, w[0] ? "; " : "", p->dir, i > 0 ?
				    ", which holds this job's files" : "");
			return open_private(p->dir, create, &owner, err, errlen);
		}
	for (int i = 0; i < n; i++) {
		normalize(cand[i], p->dir, sizeof(p->dir));
		if (i == n - 1 && i > tmp && create &&
		    home_dir(cand[i], sizeof(cand[0]), 1, homebad,
		    sizeof(homebad)) == -1) {
			/* Made by another between the look and the mkdir. */
			snprintf(err, errlen, "%.500s; and %.380s (set "
			    "ACCELCTL_RUNTIME_DIR to a directory of yours)", whyhome,
			    homebad);
			errno = EPERM;
			return -1;
		}
		fd = open_private(p->dir, create, &owner, i == tmp ? e2 : err,
		    i == tmp ? sizeof(e2) : errlen);
		if (fd != -1) {
			w = i > tmp ? whyhome : why;
			if (w[0] != '\0')
				snprintf(p->note, sizeof(p->note), "%.600s; using %.500s",
				    w, p->dir);
			return fd;
		}
		if (i == tmp && owner >= 0 && owner != (long)getuid() &&
		    i + 1 < n)
			continue;	/* taken: said in WHYHOME */
		if (i == tmp) {
			int saved = errno;

			if (owner >= 0 && owner != (long)getuid())
				snprintf(err, errlen, "runtime directory %.200s "
				    "belongs to uid %ld%s, another user%s%.380s: set "
				    "ACCELCTL_RUNTIME_DIR to a directory of yours "
				    "(or HOME, for $HOME/.accelctl)", p->dir, owner,
				    user_of((uid_t)owner, u, sizeof(u)), homebad[0] ?
				    ", and " : "", homebad);
			else
				snprintf(err, errlen, "%s", e2);
			errno = saved;
			return -1;
		}
		if (i > tmp) {
			int saved = errno;
			char mine[600];

			snprintf(mine, sizeof(mine), "%s", err);
			snprintf(err, errlen, "%.500s; and %.400s (set "
			    "ACCELCTL_RUNTIME_DIR to a directory of yours)", whyhome,
			    mine);
			errno = saved;
			return -1;
		}
		return -1;	/* XDG's: its errors are the user's to see */
	}
	return -1;
}

/*
 * The helper's abstract socket name (rundir.h): "\0accelctl-UID-HASH", the
 * hash of the user, the directory's name and JOB_ID (with its node). The
 * directory's name, not its file: ranks with a private /tmp each see their
 * own /tmp/accelctl-UID, by one name, and must meet; two runs under one job
 * id but different ACCELCTL_RUNTIME_DIRs (test suites side by side, launch's
 * simulated nodes) kept apart before and stay apart. Abstract names are
 * Linux's, per network namespace, and anyone's to bind: both ends check the
 * other's uid (SO_PEERCRED), as they do on the file socket.
 */
static void
abstract_name(struct ac_paths *p, const struct ac_topo *t, const char *job_id)
{
#ifdef __linux__
	char in[1200], hex[65];
	int n;

	/* Not for a job run by hand (job id "default": no launcher, no
	 * ACCELCTL_JOB_ID): its runs in separate containers are separate
	 * jobs, as a private /tmp kept them before there was a name. */
	if (t->job_id_from != NULL && strcmp(t->job_id_from, "default") == 0)
		return;
	n = snprintf(in, sizeof(in), "%lu\n%s\n%s", (unsigned long)getuid(),
	    p->dir, job_id);

	ac_sha256_hex(in, n > 0 && (size_t)n < sizeof(in) ? (size_t)n :
	    strlen(in), hex);
	p->asock[0] = '\0';
	n = snprintf(p->asock + 1, sizeof(p->asock) - 1, "accelctl-%lu-%.32s",
	    (unsigned long)getuid(), hex);
	p->asock_len = 1 + (size_t)n;
#else
	(void)t;
	(void)job_id;
	p->asock_len = 0;
#endif
}

int
ac_paths_init(struct ac_paths *p, const struct ac_topo *t, int create,
    char *err, size_t errlen)
{
	return ac_paths_init_at(p, t, getenv("ACCELCTL_RUNTIME_DIR"), create,
	    err, errlen);
}

int
ac_paths_init_at(struct ac_paths *p, const struct ac_topo *t, const char *env,
    int create, char *err, size_t errlen)
{
	char job_id[AC_JOB_ID_MAX + 32], base[300], name[600], cwd[256];
	struct stat a, b;
	long owner;
	int fd;

	memset(p, 0, sizeof(*p));
	p->dfd = -1;
	/*
	 * One helper per node of a job: the node rank is part of the name, so
	 * that nodes sharing a runtime directory (two torchrun launchers or
	 * several slurmd on one host, a /tmp shared by mistake) keep apart.
	 */
	if (t->v[AC_NNODES] > 1 && t->v[AC_NODE] >= 0)
		snprintf(job_id, sizeof(job_id), "%s.node%ld", t->job_id,
		    t->v[AC_NODE]);
	else
		snprintf(job_id, sizeof(job_id), "%s", t->job_id);

	if (env != NULL && *env != '\0') {
		/* Absolute: the helper leaves the job's working directory. */
		if (*env != '/' && getcwd(cwd, sizeof(cwd)) != NULL)
			snprintf(name, sizeof(name), "%s/%s", cwd, env);
		else
			snprintf(name, sizeof(name), "%s", env);
		if (strlen(name) >= sizeof(p->dir) - 1 ||
		    normalize(name, p->dir, sizeof(p->dir)) == -1) {
			snprintf(err, errlen, "runtime directory name is too long");
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open_private(p->dir, create, &owner, err, errlen);
	} else
		fd = choose(p, job_id, create, err, errlen);
	if (fd == -1) {
		/* Not here, but named (P->dir): its abstract name still
		 * reaches a helper that serves from a /tmp we do not see. */
		int saved = errno;

		if (saved == ENOENT)
			abstract_name(p, t, job_id);
		errno = saved;
		return -1;
	}
	p->dfd = fd;

	base_name(p->dir, job_id, base, sizeof(base));
	snprintf(p->shown_sock, sizeof(p->shown_sock), "%s/%s.sock", p->dir,
	    base);
	snprintf(p->shown_log, sizeof(p->shown_log), "%s/%s.log", p->dir, base);

	/* Through the descriptor, if /proc shows it as the directory. */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	if (stat(name, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		;
	else if (strlen(p->dir) + strlen(base) + 7 < sizeof(p->sock))
		snprintf(name, sizeof(name), "%s", p->dir);
	else {
		snprintf(err, errlen, "runtime directory %.300s is too long for "
		    "a socket path: set ACCELCTL_RUNTIME_DIR to a shorter one",
		    p->dir);
		ac_paths_close(p);
		errno = ENAMETOOLONG;
		return -1;
	}
	{
		char tmp[sizeof(name) + sizeof(base) + 8];
		size_t len = (size_t)snprintf(tmp, sizeof(tmp), "%s/%s.sock",
		    name, base);

		memcpy(p->sock, tmp, len + 1);	/* fits: checked above */
	}
	snprintf(p->lock, sizeof(p->lock), "%.500s/%.300s.lock", name,
	    base);
	snprintf(p->log, sizeof(p->log), "%.500s/%.300s.log", name,
	    base);
	snprintf(p->state, sizeof(p->state), "%.500s/%.300s.state", name,
	    base);
	snprintf(p->pid, sizeof(p->pid), "%.500s/%.300s.pid", name,
	    base);
	snprintf(p->gone_dir, sizeof(p->gone_dir), "%.500s", name);
	snprintf(p->gone_prefix, sizeof(p->gone_prefix), "%.300s.gone.", base);
	abstract_name(p, t, job_id);
	return 0;
}

void
ac_paths_close(struct ac_paths *p)
{
	if (p->dfd >= 0)
		close(p->dfd);
	p->dfd = -1;
}
