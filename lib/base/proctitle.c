/* proctitle.c: rewrite the process's command line in place, as tmux and redis do. */
#include <string.h>

#include "proctitle.h"

static char	*area;		/* argv[0] ... the end of the last argument */
static size_t	 area_len;

void
ac_proctitle_init(int argc, char **argv)
{
	/* Only the arguments as the kernel laid them out: one contiguous block. */
	if (argc < 1 || argv[0] == NULL)
		return;
	char *end = argv[0] + strlen(argv[0]) + 1;

	for (int i = 1; i < argc; i++) {
		if (argv[i] != end)
			break;
		end = argv[i] + strlen(argv[i]) + 1;
	}
	area = argv[0];
	area_len = (size_t)(end - argv[0]);
}

void
ac_proctitle_set(const char *title)
{
	if (area == NULL || area_len < 2)
		return;
	size_t n = strlen(title);

	if (n > area_len - 1)
		n = area_len - 1;
	memcpy(area, title, n);
	/* NULs to the end: /proc/PID/cmdline then shows the title alone. */
	memset(area + n, '\0', area_len - n);
}
