/* fuzz_rdvurl.c: libFuzzer target for the rendezvous URL parser (ac_rdv_parse in lib/proto/rdvurl.c).
 *
 * The input is the URL (ACCELCTL_RENDEZVOUS), optionally followed by a NUL
 * byte and the contents of ACCELCTL_REDIS_PASSWORD_FILE, written to a
 * temporary file. Checks beyond the sanitizers: a parsed address has a port
 * in 1-65535 (or a Unix socket path starting with /; or sentinels or seeds,
 * each with a port, and a printable master's name for Sentinel), a database in
 * 0-1000000 and terminated strings; a refused one has a reason.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdvurl.h"

static char pwfile[4096];

static void
remove_file(void)
{
	unlink(pwfile);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	/* A file in memory where there is one: faster than a disk's. */
	if (access("/dev/shm", W_OK) == 0)
		dir = "/dev/shm";
	snprintf(pwfile, sizeof(pwfile), "%s/fuzz_rdvurl.%ld.password",
	    dir != NULL && *dir != '\0' ? dir : "/tmp", (long)getpid());
	atexit(remove_file);
	return 0;
}

static void
terminated(const char *s, size_t size)
{
	if (memchr(s, '\0', size) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *url = malloc(size + 1), err[512] = "";
	const uint8_t *nul = memchr(data, '\0', size);
	struct ac_rdv_url u;
	const char *file = NULL;

	if (url == NULL)
		abort();
	memcpy(url, data, size);
	url[size] = '\0';
	if (nul != NULL) {
		int fd = open(pwfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		size_t n = size - (size_t)(nul + 1 - data);

		if (fd == -1 || write(fd, nul + 1, n) != (ssize_t)n || close(fd) == -1)
			abort();
		file = pwfile;
	}
	if (ac_rdv_parse(url, file, &u, err, sizeof(err)) == 0) {
		terminated(u.host, sizeof(u.host));
		terminated(u.path, sizeof(u.path));
		terminated(u.user, sizeof(u.user));
		terminated(u.password, sizeof(u.password));
		terminated(u.where, sizeof(u.where));
		terminated(u.master, sizeof(u.master));
		if (u.nhosts > 0) {
			/* Sentinels or a cluster's seeds: each with a port; a
			 * Sentinel URL names its master (the address comes later). */
			if (u.nhosts > AC_RDV_HOSTS_MAX ||
			    (u.master[0] == '\0') == (u.cluster == 0))
				abort();
			for (int i = 0; i < u.nhosts; i++) {
				terminated(u.hosts[i].host, sizeof(u.hosts[i].host));
				if (u.hosts[i].host[0] == '\0' ||
				    u.hosts[i].port < 1 || u.hosts[i].port > 65535)
					abort();
			}
			for (const char *c = u.master; *c != '\0'; c++)
				if (*c <= ' ' || *c > '~')
					abort();
		} else if (u.path[0] != '\0' ? u.path[0] != '/' || u.host[0] != '\0' :
		    u.port < 1 || u.port > 65535)
			abort();
		if (u.db < 0 || u.db > 1000000 || u.where[0] == '\0')
			abort();
	} else if (err[0] == '\0')
		abort();
	free(url);
	return 0;
}
