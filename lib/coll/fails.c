/* fails.c: the text that names a barrier's failing ranks, one form for one node and every store.
 *
 * A barrier with --status names the ranks that failed, lowest first, and
 * exits with the lowest one's status. The text was built three ways: one
 * node listed as many as fit and never said how many it left out; etcd
 * stopped at its buffer's end but said "and N more" counting from 40, not
 * from what it showed; Redis' script showed 40 whatever their length, and
 * the helper cut the text at 511 bytes, mid-rank. Now one rule: at most 40,
 * at most AC_FAILS_ROOM bytes of them, then the rest counted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fails.h"

static int
by_rank(const void *a, const void *b)
{
	const struct ac_fail *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->status > y->status) - (x->status < y->status);
}

int64_t
ac_fails_text(struct ac_fail *f, size_t n, size_t extra, char *buf, size_t len)
{
	size_t used = 0, shown = 0;
	char one[64];

	buf[0] = '\0';
	if (n == 0 && extra == 0)
		return 0;
	if (n > 0)
		qsort(f, n, sizeof(*f), by_rank);
	for (; shown < n && shown < AC_FAILS_SHOWN; shown++) {
		int k = snprintf(one, sizeof(one), "%s%" PRId64 " (exit %" PRId64
		    ")", shown ? ", " : "", f[shown].rank, f[shown].status);

		if (used + (size_t)k > AC_FAILS_ROOM || used + (size_t)k >= len)
			break;
		snprintf(buf + used, len - used, "%s", one);
		used += (size_t)k;
	}
	if (shown < n + extra)
		snprintf(buf + used, len - used, "%sand %zu more", shown ? ", " :
		    "", n + extra - shown);
	/* None listed (a node out of memory said only how many): failed. */
	return n > 0 ? f[0].status : 1;
}

/* Its AC_FAILS_SHOWN lowest, and how many more: the lowest of the job are
 * among every node's lowest, and a node's arrival stays small (all of them,
 * cut at 4 KiB, left 700 of 1,000 uncounted: review of issue 19). */
size_t
ac_fails_of(const int64_t *rank_of, const int64_t *status, long lsize,
    char *buf, size_t len)
{
	struct ac_fail *f;
	size_t n = 0, k = 0, nf = 0;

	buf[0] = '\0';
	for (long l = 0; l < lsize; l++)
		nf += status[l] != 0;
	if (nf == 0 || (f = malloc(nf * sizeof(*f))) == NULL)
		return nf == 0 ? 0 : (size_t)snprintf(buf, len, "+%zu", nf);
	for (long l = 0; l < lsize; l++)
		if (status[l] != 0) {
			f[k].rank = rank_of[l] >= 0 ? rank_of[l] : (int64_t)l;
			f[k++].status = status[l];
		}
	qsort(f, nf, sizeof(*f), by_rank);
	for (k = 0; k < nf && k < AC_FAILS_SHOWN && n + 48 < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64 ":%" PRId64,
		    n ? " " : "", f[k].rank, f[k].status);
	if (k < nf && n + 24 < len)
		n += (size_t)snprintf(buf + n, len - n, "%s+%zu", n ? " " : "",
		    nf - k);
	free(f);
	return n;
}

size_t
ac_fails_add(const char *s, struct ac_fail **f, size_t n, size_t *cap,
    size_t *extra)
{
	while (s != NULL && *s != '\0') {
		char *end;
		long long rank, status;

		if (*s == '+') {	/* that many more, not listed */
			unsigned long long more = strtoull(s + 1, &end, 10);

			if (end == s + 1)
				break;
			*extra += (size_t)more;
			for (s = end; *s == ' '; s++)
				;
			continue;
		}
		rank = strtoll(s, &end, 10);
		if (end == s || *end != ':')
			break;
		status = strtoll(end + 1, &end, 10);
		if (n == *cap) {
			size_t want = *cap ? 2 * *cap : 16;
			struct ac_fail *g = realloc(*f, want * sizeof(**f));

			if (g == NULL)
				break;
			*f = g;
			*cap = want;
		}
		(*f)[n].rank = rank;
		(*f)[n++].status = status;
		for (s = end; *s == ' '; s++)
			;
	}
	return n;
}
