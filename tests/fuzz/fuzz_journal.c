/* fuzz_journal.c: libFuzzer target for journal replay (ac_journal_open in lib/coll/journal.c) and compaction.
 *
 * The input is a journal file, as a killed helper leaves it. It is replayed
 * into a fresh job, the job's status is shown (what "accelctl status" asks
 * of a restarted helper), the journal is compacted (rewritten as the job's
 * present state) and the compacted file replayed into a second job, whose
 * status is shown too.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "journal.h"
#include "record.h"

static char path[4096];
static char *text;

static void
remove_files(void)
{
	char tmp[4200];

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(path);
	unlink(tmp);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	/* Compact whatever the replay leaves. */
	setenv("ACCELCTL_JOURNAL_MAX", "1", 1);
	/* A file in memory where there is one: creating, truncating and
	 * renaming on a disk's file system made every run ten times slower. */
	if (access("/dev/shm", W_OK) == 0)
		dir = "/dev/shm";
	snprintf(path, sizeof(path), "%s/fuzz_journal.%ld.state",
	    dir != NULL && *dir != '\0' ? dir : "/tmp", (long)getpid());
	atexit(remove_files);
	if ((text = malloc(65536)) == NULL)
		abort();
	return 0;
}

/* Replay PATH into a fresh job J and show its status; J keeps the journal open. */
static void
replay(struct ac_job *j)
{
	memset(j, 0, sizeof(*j));
	j->journal = -1;
	j->rec = &ac_record;
	snprintf(j->id, sizeof(j->id), "fuzz");
	if (ac_journal_open(j, path) == -1)
		abort();
	ac_job_status(j, text, 65536);
	for (struct ac_coll *c = j->colls; c != NULL; c = c->next)
		ac_coll_summary(j, c, text, 2048);
}

static void
done(struct ac_job *j)
{
	if (j->journal >= 0)
		close(j->journal);
	ac_job_free(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ac_job j, k;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd == -1 || write(fd, data, size) != (ssize_t)size || close(fd) == -1)
		abort();
	replay(&j);
	ac_journal_compact(&j, path);
	replay(&k);
	done(&k);
	done(&j);
	return 0;
}
