/* rdvstate.c: the per-job directory of a rendezvous server: password, state, log.
 *
 * Every node of the job must read the password file, so the directory lies
 * where a cluster's nodes share files: the Slurm submit directory, else the
 * home directory. It is made with mkdtemp (mode 0700, a name nobody can
 * predict or take first) and checked like the helper's runtime directory:
 * anyone who could enter it could read the password. */
#include <sys/random.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "rdvowner.h"
#include "rdvstate.h"

/* The files a server leaves in its directory, removed when it stops. */
static const char *const files[] = { "password", "state", "state.tmp", "log",
    "ended", "ended.tmp", NULL };

int
ac_rdv_path(char *path, size_t len, const char *dir, const char *name)
{
	int n = snprintf(path, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* 0 when PATH is a directory of ours with no group or other bits. */
static int
check_private(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) == -1) {
		snprintf(err, errlen, "%.300s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "%.300s has unsafe permissions (mode "
		    "%03o, owner uid %ld): it must be a directory of uid %ld "
		    "with mode 0700", path, (unsigned)(st.st_mode & 0777),
		    (long)st.st_uid, (long)getuid());
		return -1;
	}
	return 0;
}

/*
 * A --dir of the user's choosing: its entries must be renamed by nobody but
 * us (or root), or another user could swap the job's directory for a link
 * and have our clean-up remove files elsewhere. So: a directory, owned by us
 * or root, that group and others cannot write, unless it is sticky (/tmp).
 */
static int
check_parent(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "%.300s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || (st.st_uid != getuid() && st.st_uid != 0) ||
	    ((st.st_mode & 022) != 0 && (st.st_mode & S_ISVTX) == 0)) {
		snprintf(err, errlen, "%.300s has unsafe permissions (mode %04o, "
		    "owner uid %ld): others could replace the job's directory in "
		    "it; use a directory of yours that only you can write, or a "
		    "sticky one such as /tmp", path, (unsigned)(st.st_mode & 07777),
		    (long)st.st_uid);
		return -1;
	}
	return 0;
}

/* A Slurm job id, made safe for a file name; "" outside Slurm. */
static void
job_tag(char *tag, size_t len)
{
	const char *j = getenv("SLURM_JOB_ID");
	size_t n = 0;

	tag[0] = '\0';
	if (j == NULL)
		return;
	for (; *j != '\0' && n + 2 < len && n < 40; j++)
		if ((*j >= '0' && *j <= '9') || (*j >= 'a' && *j <= 'z') ||
		    (*j >= 'A' && *j <= 'Z') || *j == '_' || *j == '-')
			tag[n++] = *j;
	if (n > 0)
		tag[n++] = '.';
	tag[n] = '\0';
}

/*
 * BASE/.accelctl made (0700) when missing and checked private into DEF.
 * Returns 0; 1 when another user owns it (their uid into *OTHER), to look
 * elsewhere; -1 with ERR.
 */
static int
default_parent(const char *base, const char *what, char *def, size_t len,
    long *other, char *err, size_t errlen)
{
	struct stat st;
	int n = snprintf(def, len, "%s/.accelctl", base);

	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "%s is too long", what);
		return -1;
	}
	/* Ours alone: made 0700 here, and refused if it is not. */
	if (mkdir(def, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %.300s: %s", def,
		    strerror(errno));
		return -1;
	}
	if (lstat(def, &st) == 0 && st.st_uid != getuid()) {
		*other = (long)st.st_uid;
		return 1;
	}
	return check_private(def, err, errlen);
}

int
ac_rdv_mkdir(const char *parent, char *dir, size_t len, char *err,
    size_t errlen)
{
	const char *sub = getenv("SLURM_SUBMIT_DIR"), *home = getenv("HOME");
	char def[512], tag[48], taken[600] = "";
	long other = -1;
	int n, rc = 1;

	if (parent == NULL || *parent == '\0') {
		/*
		 * Another user who can write the submit directory (a project's
		 * shared one) may have made .accelctl there first: that is not
		 * ours to use or remove, and must not deny the job. The home
		 * directory is the next place every node sees, and one nobody
		 * else can make it in. The exported names say where it went.
		 */
		if (getenv("SLURM_JOB_ID") != NULL && sub != NULL && *sub == '/' &&
		    (rc = default_parent(sub, "$SLURM_SUBMIT_DIR", def,
		    sizeof(def), &other, err, errlen)) == -1)
			return -1;
		if (rc == 1 && other >= 0) {
			struct passwd *pw = getpwuid((uid_t)other);

			snprintf(taken, sizeof(taken), "%.300s belongs to uid %ld"
			    "%s%.60s%s, another user", def, other, pw ? " (" : "",
			    pw ? pw->pw_name : "", pw ? ")" : "");
		}
		if (rc == 1) {
			other = -1;
			if (home == NULL || *home != '/') {
				snprintf(err, errlen, "%s%sno directory for the "
				    "password: HOME is not set; use --dir DIR", taken,
				    taken[0] ? "; " : "");
				return -1;
			}
			if ((rc = default_parent(home, "$HOME", def, sizeof(def),
			    &other, err, errlen)) == -1)
				return -1;
			if (rc == 1) {
				snprintf(err, errlen, "%s%s%.300s belongs to uid %ld, "
				    "another user: use --dir DIR", taken, taken[0] ?
				    "; " : "", def, other);
				return -1;
			}
			if (taken[0] != '\0')
				ac_warnx("%s: using %s", taken, def);
		}
		parent = def;
	} else if (check_parent(parent, err, errlen) == -1)
		return -1;
	job_tag(tag, sizeof(tag));
	n = snprintf(dir, len, "%s/rendezvous.%sXXXXXX", parent, tag);
	if (n < 0 || (size_t)n >= len || (size_t)n + 16 > 400) {
		snprintf(err, errlen, "directory name too long: %.100s", parent);
		return -1;
	}
	if (mkdtemp(dir) == NULL) {
		snprintf(err, errlen, "cannot create a directory in %.300s: %s",
		    parent, strerror(errno));
		return -1;
	}
	return check_private(dir, err, errlen);
}

int
ac_rdv_new_password(const char *dir, char pw[65], char *err, size_t errlen)
{
	unsigned char raw[32];
	char path[600], line[66];
	size_t got = 0;
	int fd;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0 && errno != EINTR) {
			snprintf(err, errlen, "getrandom: %s", strerror(errno));
			return -1;
		}
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(pw + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	snprintf(line, sizeof(line), "%s\n", pw);
	if (ac_rdv_path(path, sizeof(path), dir, "password") == -1 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "cannot create the password file in "
		    "%.300s: %s", dir, strerror(errno));
		explicit_bzero(line, sizeof(line));
		return -1;
	}
	if (write(fd, line, 65) != 65 || fsync(fd) == -1 || close(fd) == -1) {
		snprintf(err, errlen, "cannot write %.300s: %s", path,
		    strerror(errno));
		explicit_bzero(line, sizeof(line));
		return -1;
	}
	explicit_bzero(line, sizeof(line));
	return 0;
}

int
ac_rdv_state_write(const char *dir, const struct ac_rdv_state *s, char *err,
    size_t errlen)
{
	char tmp[600], path[600];
	FILE *f;
	int fd;

	if (ac_rdv_path(tmp, sizeof(tmp), dir, "state.tmp") == -1 ||
	    ac_rdv_path(path, sizeof(path), dir, "state") == -1 ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "cannot write the state in %.300s: %s",
		    dir, strerror(errno));
		return -1;
	}
	fprintf(f, "supervisor %ld %llu\nredis %ld\nowner %ld %s\nhost %s\n"
	    "addr %s\nbind %s\nport %d\nversion %s\nstarted %lld\n",
	    (long)s->sup, s->sup_start, (long)s->redis, (long)s->owner,
	    s->owner_comm, s->host, s->addr, s->bind, s->port, s->version,
	    s->started);
	if (fclose(f) == EOF || rename(tmp, path) == -1) {
		snprintf(err, errlen, "cannot write %.300s: %s", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
ac_rdv_state_read(const char *dir, struct ac_rdv_state *s, char *err,
    size_t errlen)
{
	char path[600], line[512];
	long a, b;
	FILE *f;
	int got = 0;

	memset(s, 0, sizeof(*s));
	if (ac_rdv_path(path, sizeof(path), dir, "state") == -1 ||
	    (f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%.300s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "supervisor %ld %llu", &a, &s->sup_start) == 2)
			s->sup = (pid_t)a, got++;
		else if (sscanf(line, "redis %ld", &a) == 1)
			s->redis = (pid_t)a;
		else if (sscanf(line, "owner %ld %31s", &a, s->owner_comm) >= 1)
			s->owner = (pid_t)a;
		else if (sscanf(line, "host %255s", s->host) == 1)
			got++;
		else if (sscanf(line, "addr %63s", s->addr) == 1)
			got++;
		else if (sscanf(line, "bind %63s", s->bind) == 1)
			;
		else if (sscanf(line, "port %ld", &b) == 1)
			s->port = (int)b, got++;
		else if (sscanf(line, "version %31s", s->version) == 1)
			;
		else
			sscanf(line, "started %lld", &s->started);
	}
	fclose(f);
	if (got != 4) {
		snprintf(err, errlen, "%.300s: not the state of a rendezvous "
		    "server", path);
		return -1;
	}
	return 0;
}

void
ac_rdv_remove(const char *dir)
{
	char path[600];

	for (int i = 0; files[i] != NULL; i++)
		if (ac_rdv_path(path, sizeof(path), dir, files[i]) == 0)
			unlink(path);
	rmdir(dir);
}

int
ac_rdv_dir_from_env(char *dir, size_t len, char *err, size_t errlen)
{
	const char *pf = getenv("ACCELCTL_REDIS_PASSWORD_FILE"), *slash;

	if (pf == NULL || *pf != '/' || (slash = strrchr(pf, '/')) == pf) {
		snprintf(err, errlen, "no server started here: "
		    "ACCELCTL_REDIS_PASSWORD_FILE is %s (eval \"$(accelctl "
		    "rendezvous start)\" sets it)", pf == NULL || *pf == '\0' ?
		    "not set" : "not an absolute path");
		return -1;
	}
	if ((size_t)(slash - pf) >= len) {
		snprintf(err, errlen, "ACCELCTL_REDIS_PASSWORD_FILE is too long");
		return -1;
	}
	memcpy(dir, pf, (size_t)(slash - pf));
	dir[slash - pf] = '\0';
	return 0;
}

int
ac_rdv_running(const struct ac_rdv_state *s)
{
	char host[256];

	if (gethostname(host, sizeof(host)) == -1)
		return 0;
	host[sizeof(host) - 1] = '\0';
	return strcmp(host, s->host) == 0 && s->sup > 1 &&
	    ac_proc_start(s->sup, NULL, NULL, 0) == s->sup_start;
}

int
ac_rdv_end_write(const char *dir, const char *why)
{
	char tmp[600], path[600];
	int fd, n = (int)strlen(why), ok;

	if (ac_rdv_path(tmp, sizeof(tmp), dir, "ended.tmp") == -1 ||
	    ac_rdv_path(path, sizeof(path), dir, "ended") == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	ok = write(fd, why, (size_t)n) == n && write(fd, "\n", 1) == 1;
	if (close(fd) == -1 || !ok || rename(tmp, path) == -1) {
		unlink(tmp);
		return -1;
	}
	/* Written first: a rank that misses the password finds the reason. */
	if (ac_rdv_path(path, sizeof(path), dir, "password") == 0)
		unlink(path);
	return 0;
}

int
ac_rdv_ended(const char *dir, char *why, size_t len)
{
	char path[600];
	ssize_t n;
	int fd;

	if (ac_rdv_path(path, sizeof(path), dir, "ended") == -1 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, why, len - 1);
	close(fd);
	why[n > 0 ? n : 0] = '\0';
	why[strcspn(why, "\n")] = '\0';
	if (why[0] == '\0')
		snprintf(why, len, "(no reason recorded)");
	return 1;
}

int
ac_rdv_job_ended(char *msg, size_t len)
{
	const char *pf = getenv("ACCELCTL_REDIS_PASSWORD_FILE");
	char dir[600], err[256], ended[1100];

	/* The password goes after the reason is written (ac_rdv_end_write). */
	if (pf == NULL || *pf == '\0' || access(pf, F_OK) == 0 ||
	    ac_rdv_dir_from_env(dir, sizeof(dir), err, sizeof(err)) == -1 ||
	    !ac_rdv_ended(dir, ended, sizeof(ended)))
		return 0;
	snprintf(msg, len, "the job's rendezvous server (accelctl rendezvous "
	    "start) has ended: %s (its log: %s/log)", ended, dir);
	return 1;
}

int
ac_rdv_same_owner(const char *dir, pid_t owner, struct ac_rdv_state *s)
{
	char parent[600], other[900], err[64];
	const char *slash = strrchr(dir, '/');
	struct dirent *e;
	DIR *d;
	int found = 0;

	if (slash == NULL || (size_t)(slash - dir) >= sizeof(parent))
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), dir);
	if ((d = opendir(parent)) == NULL)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "rendezvous.", 11) != 0 ||
		    strcmp(e->d_name, slash + 1) == 0)
			continue;
		snprintf(other, sizeof(other), "%s/%s", parent, e->d_name);
		found = ac_rdv_state_read(other, s, err, sizeof(err)) == 0 &&
		    s->owner == owner && ac_rdv_running(s);
	}
	closedir(d);
	return found;
}
