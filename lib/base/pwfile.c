/* pwfile.c: a password read from the file a setting names: its first line, never echoed.
 * The Redis and the etcd addresses both take one (ACCELCTL_*_PASSWORD_FILE). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pwfile.h"

int
ac_read_password_file(const char *var, const char *file, char *dst,
    size_t len, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");
	char line[600];

	if (f == NULL) {
		snprintf(err, errlen, "cannot read %s %.200s: %s", var, file,
		    strerror(errno));
		return -1;
	}
	if (fgets(line, sizeof(line), f) == NULL) {
		line[0] = '\0';
		if (ferror(f)) {	/* a directory: EISDIR */
			snprintf(err, errlen, "cannot read %s %.200s: %s", var,
			    file, strerror(errno));
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	if (strlen(line) >= len) {
		explicit_bzero(line, sizeof(line));
		snprintf(err, errlen, "the password in %.200s is too long", file);
		return -1;
	}
	memcpy(dst, line, strlen(line) + 1);
	explicit_bzero(line, sizeof(line));
	return 0;
}
