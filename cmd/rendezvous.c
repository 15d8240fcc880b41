/* rendezvous.c: "accelctl rendezvous start|stop|status": a redis-server for one job.
 * The work is in lib/rdv*.c: where it listens (rdvaddr.c), whose lifetime it
 * follows (rdvowner.c), its directory and password (rdvstate.c), running and
 * supervising it (rdvserver.c) and asking it (rdvquery.c). */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "config.h"
#include "num.h"
#include "rdvaddr.h"
#include "rdvstate.h"
#include "rdvurl.h"
#if ACCELCTL_HAVE_HIREDIS
#include "rdvquery.h"
#include "rdvserver.h"
#endif

enum { OPT_BIND, OPT_PORT, OPT_DIR, OPT_REDIS, OPT_SHELL, OPT_JSON, NOPT };

static const struct ac_optdef rdv_opts[] = {
	[OPT_BIND] = { "bind", 0, "ADDR", "listen on ADDR (default: this host's address)" },
	[OPT_PORT] = { "port", 0, "N", "listen on port N (default: a free one)" },
	[OPT_DIR] = { "dir", 0, "DIR", "make the job's directory in DIR" },
	[OPT_REDIS] = { "redis-server", 0, "PATH", "the redis-server to run" },
	[OPT_SHELL] = { "shell", 0, "SHELL", "print lines for sh (default) or fish" },
	[OPT_JSON] = { "json", 0, NULL, "print one JSON object instead" },
	{ NULL, 0, NULL, NULL }
};

/* S in single quotes for sh ('\'' for a quote) or fish (\' and \\). */
static void
put_quoted(const char *s, int fish)
{
	putchar('\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs(fish ? "\\'" : "'\\''", stdout);
		else if (*s == '\\' && fish)
			fputs("\\\\", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

/* S as a JSON string. */
static void
put_json(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* "redis://accelctl@ADDR:PORT", brackets around an IPv6 address. */
static void
url_of(const struct ac_rdv_state *s, char *url, size_t len)
{
	char hp[300];

	snprintf(url, len, "redis://%s@%s", AC_RDV_USER,
	    ac_rdv_hostport(s->addr, s->port, hp, sizeof(hp)));
}

#if ACCELCTL_HAVE_HIREDIS
static int
start(const struct ac_cmd *self, struct ac_args *a)
{
	static struct ac_rdv_conf c;	/* the supervisor keeps using it */
	struct ac_rdv_state s;
	char err[1200], url[400], pwfile[600];
	const char *why, *shell = a->val[OPT_SHELL];
	int fish = 0;
	long port = 0;

	memset(&c, 0, sizeof(c));
	/* A second start in a shell that holds the first one's exports would
	 * start a second server, and the first would serve nobody until the
	 * script ends: say so instead. One that ended is replaced. */
	{
		char dir[600], host[256];
		struct ac_rdv_state old;

		if (getenv("ACCELCTL_REDIS_PASSWORD_FILE") != NULL &&
		    ac_rdv_dir_from_env(dir, sizeof(dir), err, sizeof(err)) == 0 &&
		    ac_rdv_state_read(dir, &old, err, sizeof(err)) == 0 &&
		    gethostname(host, sizeof(host)) == 0 &&
		    strncmp(host, old.host, sizeof(host)) == 0 &&
		    ac_rdv_running(&old)) {
			url_of(&old, url, sizeof(url));
			ac_warnx("a rendezvous started before serves this shell "
			    "already (%s, pid %ld): use it, or 'accelctl "
			    "rendezvous stop' it first", url, (long)old.sup);
			return AC_EXIT_USAGE;
		}
	}
	if (shell != NULL) {
		if (strcmp(shell, "fish") == 0)
			fish = 1;
		else if (strcmp(shell, "sh") != 0 && strcmp(shell, "bash") != 0 &&
		    strcmp(shell, "zsh") != 0 && strcmp(shell, "dash") != 0)
			return ac_usage_error(self, "invalid --shell '%.40s': "
			    "sh or fish", shell);
		if (a->seen[OPT_JSON])
			return ac_usage_error(self, "--json and --shell exclude "
			    "each other");
	}
	if (a->val[OPT_PORT] != NULL) {
		if (ac_parse_uint(a->val[OPT_PORT], 65535, &port, &why) == -1)
			return ac_usage_error(self, "invalid --port '%.40s': %s",
			    a->val[OPT_PORT], why);
		if (port == 0)
			return ac_usage_error(self, "invalid --port '0': "
			    "expected 1-65535");
	}
	c.port = (int)port;
	if (a->val[OPT_BIND] != NULL && ac_rdv_resolve(a->val[OPT_BIND],
	    c.bind, sizeof(c.bind), err, sizeof(err)) == -1)
		return ac_usage_error(self, "invalid --bind: %s", err);
	if (ac_rdv_find_redis(a->val[OPT_REDIS], &c, err, sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_FAILED;
	}
	if (ac_rdv_owner_find(&c.owner, err, sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_FAILED;
	}
	/* The URL names an address the others reach, even when bound to all. */
	if (c.bind[0] != '\0' && !ac_rdv_is_any(c.bind)) {
		snprintf(c.addr, sizeof(c.addr), "%s", c.bind);
		c.addr_from = "--bind";
	} else if (ac_rdv_host_addr(c.addr, sizeof(c.addr), &c.addr_from, err,
	    sizeof(err)) == -1) {
		ac_warnx("no address to listen on: %s; use --bind", err);
		return AC_EXIT_FAILED;
	}
	if (c.bind[0] == '\0')
		snprintf(c.bind, sizeof(c.bind), "%s", c.addr);
	if (ac_rdv_mkdir(a->val[OPT_DIR], c.dir, sizeof(c.dir), err,
	    sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_USAGE;
	}
	/* Started before by this script, its lines not evaluated (so the
	 * check above saw nothing): a word, not a refusal; both serve. Not
	 * where the lines go to a file or JSON is asked for: kept to be read
	 * later, two servers may well be meant. */
	{
		struct ac_rdv_state old;
		struct stat out;

		if (!a->seen[OPT_JSON] && !(fstat(STDOUT_FILENO, &out) == 0 &&
		    S_ISREG(out.st_mode)) &&
		    ac_rdv_same_owner(c.dir, c.owner.pid, &old)) {
			url_of(&old, url, sizeof(url));
			ac_warnx("start: this script (%.31s, pid %ld) "
			    "started one before, which still runs (%s, pid %ld):"
			    " this starts another. Evaluate the lines it prints "
			    "(eval \"$(accelctl rendezvous start)\"), or 'accelctl "
			    "rendezvous stop' the first", c.owner.comm,
			    (long)c.owner.pid, url, (long)old.sup);
		}
	}
	if (ac_rdv_new_password(c.dir, c.password, err, sizeof(err)) == -1 ||
	    ac_rdv_start(&c, &s, err, sizeof(err)) == -1) {
		explicit_bzero(c.password, sizeof(c.password));
		ac_rdv_remove(c.dir);
		ac_warnx("%s", err);
		return AC_EXIT_FAILED;
	}
	explicit_bzero(c.password, sizeof(c.password));
	url_of(&s, url, sizeof(url));
	ac_rdv_path(pwfile, sizeof(pwfile), c.dir, "password");
	if (a->seen[OPT_JSON]) {
		printf("{\"rendezvous\":");
		put_json(url);
		printf(",\"password_file\":");
		put_json(pwfile);
		printf(",\"address\":\"%s\",\"bind\":\"%s\",\"port\":%d,"
		    "\"user\":\"%s\",\"dir\":", s.addr, s.bind, s.port,
		    AC_RDV_USER);
		put_json(c.dir);
		printf(",\"pid\":%ld,\"redis_pid\":%ld,\"owner_pid\":%ld}\n",
		    (long)s.sup, (long)s.redis, (long)s.owner);
	} else if (fish) {
		/* One command per line, each ending in ';': "| source" and
		 * "eval (...)" (which joins the lines) both work. */
		printf("set -gx ACCELCTL_RENDEZVOUS ");
		put_quoted(url, 1);
		printf(";\nset -gx ACCELCTL_REDIS_PASSWORD_FILE ");
		put_quoted(pwfile, 1);
		printf(";\n");
	} else {
		printf("export ACCELCTL_RENDEZVOUS=");
		put_quoted(url, 0);
		printf(" ACCELCTL_REDIS_PASSWORD_FILE=");
		put_quoted(pwfile, 0);
		printf("\n");
	}
	if (ac_flush_stdout() == -1) {
		/* Nobody learnt where it is: a server nobody can use would
		 * only hold a port and a directory until the script ends. */
		if (ac_rdv_stop(&s, err, sizeof(err)) == -1)
			ac_warnx("%s", err);
		return AC_EXIT_FAILED;
	}
	return 0;
}

/* The value of FIELD in an INFO reply, or "?". */
static const char *
info_field(const char *info, const char *field, char *buf, size_t len)
{
	size_t fl = strlen(field);

	for (const char *p = info; p != NULL && *p != '\0';
	    p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, field, fl) == 0 && p[fl] == ':') {
			snprintf(buf, len, "%.*s", (int)strcspn(p + fl + 1, "\r\n"),
			    p + fl + 1);
			return buf;
		}
	snprintf(buf, len, "?");
	return buf;
}

static int
status(const char *dir, const struct ac_rdv_state *s)
{
	static char info[65536];
	char err[1200], url[400], pw[128], path[600], b[5][64];
	FILE *f;
	int rc;
	long clients;

	pw[0] = '\0';
	if (ac_rdv_path(path, sizeof(path), dir, "password") == 0 &&
	    (f = fopen(path, "r")) != NULL) {
		if (fgets(pw, sizeof(pw), f) == NULL)
			pw[0] = '\0';
		pw[strcspn(pw, "\r\n")] = '\0';
		fclose(f);
	}
	rc = ac_rdv_query(s->addr, s->port, AC_RDV_USER, pw, 2000, "INFO",
	    info, sizeof(info), err, sizeof(err));
	explicit_bzero(pw, sizeof(pw));
	if (rc != 0) {
		ac_warnx("the server does not answer: %s", err);
		return AC_EXIT_FAILED;
	}
	url_of(s, url, sizeof(url));
	/* Each node's helper holds two connections; this query is one more. */
	clients = atol(info_field(info, "connected_clients", b[0], 64)) - 1;
	printf("%-10s %s (redis-server %s, pid %ld, on %s)\n", "rendezvous",
	    url, s->version, (long)s->redis, s->host);
	printf("%-10s %s (listening on %s)\n", "directory", dir, s->bind);
	printf("%-10s the process that started it: pid %ld (%s)\n",
	    "lives as", (long)s->owner, s->owner_comm);
	printf("%-10s %s s\n", "uptime",
	    info_field(info, "uptime_in_seconds", b[1], 64));
	printf("%-10s %ld (%ld connections, 2 per node helper)\n", "helpers",
	    clients / 2, clients);
	printf("%-10s %s used, limit %s\n", "memory",
	    info_field(info, "used_memory_human", b[2], 64),
	    info_field(info, "maxmemory_human", b[3], 64));
	printf("%-10s %s per second now, %s since it started\n", "commands",
	    info_field(info, "instantaneous_ops_per_sec", b[4], 64),
	    info_field(info, "total_commands_processed", b[0], 64));
	return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
}

static int
exec_rendezvous(const struct ac_cmd *self, struct ac_args *a)
{
	const char *action = a->pos[0];
	struct ac_rdv_state s;
	char dir[600], err[1200], host[256];
	int rc;

	if (strcmp(action, "start") != 0 && strcmp(action, "stop") != 0 &&
	    strcmp(action, "status") != 0)
		return ac_usage_error(self, "unknown action '%.40s': start, "
		    "stop or status", action);
	if (strcmp(action, "start") == 0)
		return start(self, a);
	for (int o = 0; o < NOPT; o++)
		if (a->seen[o])
			return ac_usage_error(self, "--%s: for start only",
			    rdv_opts[o].lng);
	if (ac_rdv_dir_from_env(dir, sizeof(dir), err, sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_USAGE;
	}
	if (strcmp(action, "status") == 0 && ac_rdv_ended(dir, err,
	    sizeof(err))) {
		printf("no rendezvous server runs for %s: it ended: %s\n", dir,
		    err);
		return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : AC_EXIT_NO;
	}
	if (ac_rdv_state_read(dir, &s, err, sizeof(err)) == -1) {
		printf("no rendezvous server runs for %s\n", dir);
		rc = ac_flush_stdout() == -1 ? AC_EXIT_FAILED : 0;
		return strcmp(action, "status") == 0 && rc == 0 ? AC_EXIT_NO : rc;
	}
	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	if (strcmp(action, "status") == 0) {
		/* From another node, the server itself is asked. */
		if (strcmp(host, s.host) == 0 && !ac_rdv_running(&s)) {
			printf("no rendezvous server runs for %s (its supervisor "
			    "is gone)\n", dir);
			return ac_flush_stdout() == -1 ? AC_EXIT_FAILED : AC_EXIT_NO;
		}
		return status(dir, &s);
	}
	if (strcmp(host, s.host) != 0) {
		ac_warnx("the server of %s runs on %s: stop it there", dir,
		    s.host);
		return AC_EXIT_USAGE;
	}
	if (!ac_rdv_running(&s)) {
		/* Its supervisor was killed: what it left behind goes now. */
		ac_rdv_remove(dir);
		return 0;
	}
	if (ac_rdv_stop(&s, err, sizeof(err)) == -1) {
		ac_warnx("%s", err);
		return AC_EXIT_FAILED;
	}
	return 0;
}
#else
static int
exec_rendezvous(const struct ac_cmd *self, struct ac_args *a)
{
	(void)self;
	(void)a;
	ac_warnx("this accelctl was built without hiredis: it cannot use a "
	    "Redis rendezvous");
	return AC_EXIT_FAILED;
}
#endif

/*
 * "start" failed (RC): its stdout, empty, would make eval "$(...)" return 0,
 * and the script go on without the server, or with an ACCELCTL_RENDEZVOUS
 * left from elsewhere. So a failed start prints a statement that fails:
 * "(exit RC)" for sh, whose eval then returns RC (|| exit, set -e, if all see
 * it, and an interactive shell is not ended); "false;" for fish, which has
 * no subshell, and whose "return" in a sourced text would leave an
 * enclosing function. Not for --json (its reader has the exit code), not
 * for stop and status, not to a terminal (no eval reads one). The words are
 * scanned here because the parse itself may be what failed.
 */
static void
start_failed(int argc, char **argv, int rc)
{
	int start = 0, fish = 0;

	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "start") == 0)
			start = 1;
		else if (strcmp(argv[i], "--json") == 0)
			return;
		else if (strcmp(argv[i], "--shell=fish") == 0 ||
		    (strcmp(argv[i], "--shell") == 0 && i + 1 < argc &&
		    strcmp(argv[i + 1], "fish") == 0))
			fish = 1;
	}
	/* A stdout that already failed (closed, /dev/full) takes no
	 * statement either: its error was said once, not twice. */
	if (!start || isatty(STDOUT_FILENO) || ferror(stdout))
		return;
	if (fish)
		printf("false;\n");
	else
		printf("(exit %d)\n", rc);
	(void)ac_flush_stdout();
}

const struct ac_cmd cmd_rendezvous = {
	.name = "rendezvous",
	.group = "Tools",
	.args = "[--bind ADDR] [--port N] [--dir DIR] [--redis-server PATH] "
	    "[--shell sh|fish | --json] start | stop | status",
	.summary = "start a private redis-server for this job's nodes",
	.help = "'start' runs a redis-server for this job on this host and "
	    "prints, once it answers, the lines that point the job at it: "
	    "eval \"$(accelctl rendezvous start)\" || exit in a batch script, "
	    "before srun or mpirun (fish: accelctl rendezvous start --shell "
	    "fish | source; or exit). When start fails it prints a statement "
	    "that fails, (exit 125) or fish's false;, so that the script stops "
	    "there. It listens on this host's address (from the host "
	    "name; --bind to choose, 0.0.0.0 only when asked) on a free port "
	    "(--port), keeps nothing on disk, and admits one ACL user with the "
	    "commands accelctl sends, whose random 256-bit password is in a "
	    "0600 file of a new 0700 directory under --dir (default "
	    "$SLURM_SUBMIT_DIR/.accelctl in a Slurm job, else $HOME/.accelctl, "
	    "also when another user made the first; every node must see it). "
	    "The server stops, and the directory goes, when the script that ran "
	    "start exits (killed or not), or at 'stop'. A server that dies is "
	    "started again 3 times; then waits exit 125 saying why, and so does "
	    "the script's stderr. "
	    "'status' shows its address, uptime, helpers, memory and commands "
	    "per second. stop and status find it through "
	    "ACCELCTL_REDIS_PASSWORD_FILE. The redis-server is --redis-server, "
	    "else ACCELCTL_REDIS_SERVER, else the one on PATH; without one, "
	    "exit 125.",
	.opts = rdv_opts,
	.minpos = 1,
	.maxpos = 1,
	.exec = exec_rendezvous,
	.failed = start_failed,
};
