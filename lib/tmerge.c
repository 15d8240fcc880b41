/* tmerge.c: "accelctl trace merge": the nodes' trace files of one job into one, their clocks aligned by the releases they share.
 *
 * Each node's helper wrote its own monotonic clock (trace.c), which means
 * nothing on another host. But a collective across nodes is released on
 * every node at about the same moment (the store's one answer reaches them
 * all within a round trip), so for each node the median, over the
 * collectives it shares with the lowest node, of the difference between the
 * two releases is its offset: a clock aligned to a few milliseconds without
 * a clock protocol, and the spread of those differences says how well. A
 * node that shares none (a job that never met across nodes) is placed by
 * the wall clocks its records carry, and says so. The files are read as
 * trace.c writes them (an event a line, its fields in one order), not as
 * any JSON: merge is for accelctl's own traces.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kind.h"
#include "msg.h"
#include "tmerge.h"
#include "trace.h"

#define MAX_NODES 65536

struct node {
	long		 node;
	struct ac_tev	*ev;
	size_t		 n, cap;
	int64_t		 offset;	/* us, added to its ts */
};

/* A job id's characters (jobid.c's): safe in a path, JSON and XML. */
static int
job_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || strchr("._:-@", s[i]) != NULL))
			return 0;
	return n > 0;
}

/* "accelctl.JOB.node-N.json": JOB and N (digits, no sign or leading
 * zero), or 0. The last ".node-": a job id may hold one. */
static int
parse_name(const char *name, char *job, size_t jlen, long *node)
{
	size_t pl = strlen(AC_TRACE_PREFIX), jl;
	const char *dot = NULL, *end, *p;
	char *e;

	if (strncmp(name, AC_TRACE_PREFIX, pl) != 0)
		return 0;
	for (p = name + pl; (p = strstr(p, AC_TRACE_NODE)) != NULL; p++)
		dot = p;
	if (dot == NULL || dot <= name + pl || (jl = (size_t)(dot - name -
	    pl)) >= jlen || !job_ok(name + pl, jl))
		return 0;
	end = dot + strlen(AC_TRACE_NODE);
	if (*end < '0' || *end > '9' || (*end == '0' && end[1] != '.'))
		return 0;
	*node = strtol(end, &e, 10);
	if (strcmp(e, ".json") != 0 || *node < 0 || *node >= MAX_NODES)
		return 0;
	snprintf(job, jlen, "%.*s", (int)jl, name + pl);
	return 1;
}

/* Times past 2^53 us (285 years) are no clock's: refused, so that no
 * sum or tick below can overflow. */
#define TS_MAX ((int64_t)1 << 53)

/*
 * One line as trace.c writes it: 0, or -1 (not an event: skipped). E's
 * line and key are set by the caller. A line must end as trace.c ends
 * every event ("}}"): one torn by a full disk does not, and its text in
 * the merge would make the whole file invalid JSON.
 */
static int
parse_line(const char *line, size_t len, struct ac_tev *e, char *key,
    size_t klen)
{
	char ph[2];
	const char *p, *k;
	int off = 0;

	memset(e, 0, sizeof(*e));
	key[0] = '\0';
	if (len < 2 || strcmp(line + len - 2, "}}") != 0 ||
	    sscanf(line, "{\"ph\":\"%1[MX]\",\"pid\":%ld,\"tid\":%lld,\"ts\":%n",
	    ph, &e->pid, &e->tid, &off) != 3 || off == 0)
		return -1;
	e->ph = ph[0];
	e->ts_at = (size_t)off;
	e->ts = strtoll(line + off, (char **)&p, 10);
	if (p == line + off || e->ts < -TS_MAX || e->ts > TS_MAX)
		return -1;
	e->ts_end = (size_t)(p - line);
	if (e->ph == 'X') {
		if (sscanf(p, ",\"dur\":%" SCNd64, &e->dur) != 1 || e->dur < 0 ||
		    e->dur > TS_MAX || (k = strstr(p, "\"key\":\"")) == NULL ||
		    sscanf(k, "\"key\":\"%259[^\"]\",\"gen\":%lld", key,
		    &e->gen) != 2 || strlen(key) >= klen)
			return -1;
		e->cmd = strstr(p, "\"cat\":\"cmd\"") != NULL;
		e->local = strstr(p, "\"scope\":\"node\"") != NULL;
	}
	return 0;
}

/* Read FILE's events into N. -1 when it cannot be read. */
static int
read_node(int dirfd, const char *file, struct node *nd)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	/* Not blocking on a FIFO named like a node file, and not reading a
	 * directory or a device as one: regular files only. */
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOFOLLOW);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (fd == -1 || (f = fdopen(fd, "r")) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		struct ac_tev e;

		char key[260];
		size_t kl;

		/* ",\n" off: a line torn by a full disk fails to parse. */
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ','))
			line[--len] = '\0';
		if (parse_line(line, (size_t)len, &e, key, sizeof(key)) == -1)
			continue;
		if (nd->n == nd->cap) {
			size_t c = nd->cap ? nd->cap * 2 : 256;
			struct ac_tev *v = realloc(nd->ev, c * sizeof(*v));

			if (v == NULL)
				break;
			nd->ev = v;
			nd->cap = c;
		}
		/* The line and its key in one block: an event is its line's
		 * size and some 80 bytes, not a key's buffer more. */
		kl = strlen(key);
		if ((e.line = malloc((size_t)len + kl + 2)) == NULL)
			break;
		memcpy(e.line, line, (size_t)len + 1);
		memcpy(e.line + len + 1, key, kl + 1);
		e.key = e.line + len + 1;
		nd->ev[nd->n++] = e;
	}
	free(line);
	fclose(f);
	return 0;
}

/* A collective's release on one node: the latest end of its slices. */
struct rel {
	const char	*key;
	long long	 gen;
	int64_t		 at, wall;
};

static int
rel_cmp(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c != 0 ? c : (x->gen > y->gen) - (x->gen < y->gen);
}

static int
i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* ND's releases, sorted by collective: how many, into *OUT. */
static size_t
releases(const struct node *nd, struct rel **out)
{
	struct rel *r = calloc(nd->n + 1, sizeof(*r));
	size_t n = 0, w = 0;

	*out = r;
	if (r == NULL)
		return 0;
	for (size_t i = 0; i < nd->n; i++) {
		const struct ac_tev *e = &nd->ev[i];
		const char *wl;

		/* A node's own (main-first --local, on-local-*): released
		 * when that node's source finished, not with the others. */
		if (e->ph != 'X' || e->local)
			continue;
		r[n].key = e->key;
		r[n].gen = e->gen;
		r[n].at = e->ts + e->dur;
		wl = strstr(e->line + e->ts_end, "\"wall_ms\":");
		r[n].wall = INT64_MIN;
		if (wl != NULL) {
			long long w = strtoll(wl + 10, NULL, 10);

			/* Milliseconds since 1970, before the year 2248. */
			if (w > 0 && w < (1LL << 43))
				r[n].wall = (int64_t)w * 1000 - r[n].at;
		}
		n++;
	}
	qsort(r, n, sizeof(*r), rel_cmp);
	/* One per collective: its latest end (the waits end at the release). */
	for (size_t i = 0; i < n; i++) {
		if (w > 0 && rel_cmp(&r[w - 1], &r[i]) == 0) {
			if (r[i].at > r[w - 1].at)
				r[w - 1] = r[i];
			continue;
		}
		r[w++] = r[i];
	}
	return w;
}

static int64_t
median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), i64_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median wall-minus-monotonic of R: the node's clock as its wall
 * clock sees it; INT64_MIN when none says. */
static int64_t
wall_of(struct rel *r, size_t n)
{
	int64_t *v = malloc((n + 1) * sizeof(*v)), m = INT64_MIN;
	size_t k = 0;

	for (size_t i = 0; v != NULL && i < n; i++)
		if (r[i].wall != INT64_MIN)
			v[k++] = r[i].wall;
	if (k > 0)
		m = median(v, k);
	free(v);
	return m;
}

/* Set ND's offset against the reference's releases REF (sorted). */
static void
align(struct node *nd, long refnode, struct rel *ref, size_t nref,
    int64_t ref_wall)
{
	struct rel *r;
	size_t n = releases(nd, &r), i = 0, k = 0, shared = 0;
	int64_t *d = malloc((n + 1) * sizeof(*d)), lo = 0, hi = 0, w;

	for (size_t a = 0; d != NULL && a < n && i < nref;) {
		int c = rel_cmp(&r[a], &ref[i]);

		if (c == 0) {
			d[k++] = ref[i].at - r[a].at;
			a++;
			i++;
		} else if (c < 0)
			a++;
		else
			i++;
	}
	shared = k;
	if (k > 0) {
		nd->offset = median(d, k);
		lo = d[0] - nd->offset;
		hi = d[k - 1] - nd->offset;
		fprintf(stderr, "accelctl: trace: node %ld: %+.3f ms (the median of "
		    "%zu releases shared with node %ld; they differ by %.3f ms "
		    "from it at most)\n", nd->node, (double)nd->offset / 1e3,
		    shared, refnode, (double)(hi > -lo ? hi :
		    -lo) / 1e3);
	} else if ((w = wall_of(r, n)) != INT64_MIN && ref_wall != INT64_MIN) {
		nd->offset = w - ref_wall;
		fprintf(stderr, "accelctl: trace: node %ld: %+.3f ms (by the wall "
		    "clocks: it shares no release with the first node)\n",
		    nd->node, (double)nd->offset / 1e3);
	} else
		fprintf(stderr, "accelctl: trace: node %ld: not aligned (no "
		    "release shared, no wall clock)\n", nd->node);
	free(d);
	free(r);
}

static int
ev_cmp(const void *a, const void *b)
{
	const struct ac_tev *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	if (x->ph != y->ph)		/* metadata first */
		return x->ph == 'M' ? -1 : 1;
	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	if (x->ts != y->ts)
		return (x->ts > y->ts) - (x->ts < y->ts);
	return (x->dur < y->dur) - (x->dur > y->dur);	/* outer first */
}

/* The job's nodes in DIR: how many read into *NODES (sorted by node). */
static long
collect(int dirfd, const char *dir, const char **job, char *jbuf, size_t jlen,
    struct node **nodes)
{
	DIR *d = fdopendir(dup(dirfd));
	struct dirent *de;
	char other[256] = "", j[256];
	long nn = 0, cap = 0, node;
	struct node *v = NULL;

	*nodes = NULL;
	if (d == NULL)
		return -1;
	/* First pass: which jobs are there. */
	while ((de = readdir(d)) != NULL) {
		if (!parse_name(de->d_name, j, sizeof(j), &node))
			continue;
		if (*job == NULL && jbuf[0] == '\0')
			snprintf(jbuf, jlen, "%s", j);
		else if (*job == NULL && strcmp(jbuf, j) != 0)
			snprintf(other, sizeof(other), "%s", j);
	}
	if (*job == NULL && other[0] != '\0') {
		ac_warnx("%s holds the traces of more than one job (%s, "
		    "%s, ...): name one with --job", dir, jbuf, other);
		closedir(d);
		return -2;
	}
	if (*job == NULL)
		*job = jbuf;
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (!parse_name(de->d_name, j, sizeof(j), &node) ||
		    strcmp(j, *job) != 0)
			continue;
		if (nn == cap) {
			struct node *w = realloc(v, (size_t)(cap = cap ? cap * 2 : 8) *
			    sizeof(*w));

			if (w == NULL)
				break;
			v = w;
		}
		memset(&v[nn], 0, sizeof(v[nn]));
		v[nn].node = node;
		if (read_node(dirfd, de->d_name, &v[nn]) == -1)
			ac_warn("%s/%s", dir, de->d_name);
		else
			nn++;
	}
	closedir(d);
	for (long a = 1; a < nn; a++)		/* by node: a handful */
		for (long b = a; b > 0 && v[b - 1].node > v[b].node; b--) {
			struct node t = v[b];

			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	*nodes = v;
	return nn;
}

static int
write_merged(FILE *f, const struct ac_tev *ev, size_t n, const char *job,
    const struct node *nodes, long nn)
{
	fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"job\":\"%s\","
	    "\"offsets_us\":{", job);
	for (long i = 0; i < nn; i++)
		fprintf(f, "%s\"%ld\":%" PRId64, i ? "," : "", nodes[i].node,
		    nodes[i].offset);
	fprintf(f, "}},\"traceEvents\":[");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n%.*s%" PRId64 "%s", i ? "," : "", (int)ev[i].ts_at,
		    ev[i].line, ev[i].ts, ev[i].line + ev[i].ts_end);
	fprintf(f, "\n]}\n");
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* Write through a temporary file, renamed: a reader never sees half. */
static int
write_file(const char *path, const struct ac_tev *ev, size_t n, const char *job,
    const struct node *nodes, long nn, int svg)
{
	char *tmp;
	FILE *f;
	int rc;

	int fd;

	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) == -1)
		return -1;
	/* A new file: never through a link planted at its name. */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		ac_warn("%s", tmp);
		if (fd >= 0)
			close(fd);
		free(tmp);
		return -1;
	}
	rc = svg ? ac_tsvg_write(f, ev, n, job) : write_merged(f, ev, n, job,
	    nodes, nn);
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) == -1)
		rc = -1;
	if (rc != 0) {
		ac_warn("%s", path);
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

/* A collective across the job, from every rank's own wait (no clocks
 * compared: a wait's length is one node's clock only). */
struct cost {
	const struct ac_tev *ev;	/* one of its slices: key, generation */
	int64_t	 sum, longest;
	const struct ac_tev *who;	/* the longest wait's */
};

static int
cost_cmp(const void *a, const void *b)
{
	const struct cost *x = a, *y = b;

	return (x->sum < y->sum) - (x->sum > y->sum);
}

/* Print the costliest collectives of the job: the rank-seconds its ranks
 * waited, the longest wait (the first to arrive: the spread across the job)
 * and who came last, as the trace says. What "status --history" shows of
 * one node, for the whole job: every node's file reports its own waits. */
static int
byname_cmp(const void *a, const void *b)
{
	const struct ac_tev *x = *(const struct ac_tev *const *)a;
	const struct ac_tev *y = *(const struct ac_tev *const *)b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	if (x->gen != y->gen)
		return (x->gen > y->gen) - (x->gen < y->gen);
	/* A node's own collective is each node's: one per node. */
	if (x->local != y->local)
		return x->local - y->local;
	return x->local ? (x->pid > y->pid) - (x->pid < y->pid) : 0;
}

static void
costliest(const struct ac_tev *ev, size_t n, size_t top)
{
	const struct ac_tev **w = malloc((n + 1) * sizeof(*w));
	struct cost *c = calloc(n + 1, sizeof(*c));
	size_t nw = 0, nc = 0;

	if (w == NULL || c == NULL) {
		free(w);
		free(c);
		return;
	}
	/* The waits by collective (sorted: a trace of 10,000 collectives
	 * per node is grouped in n log n, not n times their number). */
	for (size_t i = 0; i < n; i++)
		if (ev[i].ph == 'X' && !ev[i].cmd)
			w[nw++] = &ev[i];
	qsort(w, nw, sizeof(*w), byname_cmp);
	for (size_t i = 0; i < nw; i++) {
		const struct ac_tev *e = w[i];

		if (nc == 0 || byname_cmp(&c[nc - 1].ev, &w[i]) != 0)
			c[nc++].ev = e;
		c[nc - 1].sum += e->dur;
		if (c[nc - 1].who == NULL || e->dur > c[nc - 1].longest) {
			c[nc - 1].longest = e->dur;
			c[nc - 1].who = e;
		}
	}
	qsort(c, nc, sizeof(*c), cost_cmp);
	for (size_t k = 0; k < nc && k < top && c[k].sum > 0; k++) {
		const char *l = strstr(c[k].ev->line, "\"last\":\"");
		const struct ac_kind *kd = ac_kind_of(c[k].ev->key);
		int ll = 0;

		if (l != NULL) {
			l += 8;
			ll = (int)strcspn(l, "\"");
		}
		char where[40] = "";

		if (c[k].ev->local)
			snprintf(where, sizeof(where), " on node %ld", c[k].ev->pid);
		fprintf(stderr, "accelctl: trace: %s '%s' generation %lld%s: %.3f "
		    "rank-seconds waited; the longest wait %.3f s (rank %lld, node "
		    "%ld); last: %.*s\n", kd != NULL ? kd->name : "?",
		    ac_kind_label(c[k].ev->key), c[k].ev->gen, where,
		    (double)c[k].sum / 1e6, (double)c[k].longest / 1e6,
		    c[k].who->tid, c[k].who->pid, l != NULL ? ll : 1,
		    l != NULL ? l : "?");
	}
	free(w);
	free(c);
}

/* The last part of PATH. */
static const char *
base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* Are A and B one file (the same name, or an existing file both)? */
static int
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return 1;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	    sa.st_ino == sb.st_ino;
}

int
ac_trace_merge(const char *dir, const char *job, const char *out,
    const char *svg)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 1;
	char jbuf[256] = "", *path = NULL;
	struct node *nodes = NULL;
	struct ac_tev *all = NULL;
	struct rel *ref = NULL;
	size_t nref = 0, n = 0, total = 0, nmeta = 0, *meta = NULL;
	int64_t base = INT64_MAX, ref_wall;
	long nn, refi;
	char jb[256];
	long nb;

	if (dirfd == -1) {
		ac_warn("%s", dir);
		return 1;
	}
	/* Outputs that would destroy the input or each other. */
	if ((out != NULL && parse_name(base_of(out), jb, sizeof(jb), &nb)) ||
	    (svg != NULL && parse_name(base_of(svg), jb, sizeof(jb), &nb))) {
		ac_warnx("'%s': a node's trace file: not an output",
		    out != NULL && parse_name(base_of(out), jb, sizeof(jb), &nb) ?
		    out : svg);
		close(dirfd);
		return 2;
	}
	if (out != NULL && svg != NULL && same_file(out, svg)) {
		ac_warnx("--output and --svg are the same file: '%s'", svg);
		close(dirfd);
		return 2;
	}
	nn = collect(dirfd, dir, &job, jbuf, sizeof(jbuf), &nodes);
	close(dirfd);
	if (nn == -2)
		goto out;
	if (nn <= 0) {
		ac_warnx("no trace in %s (accelctl.%s.node-N.json: set "
		    "ACCELCTL_TRACE_DIR=%s for the job)", dir, job != NULL &&
		    *job ? job : "JOB", dir);
		goto out;
	}
	/* The reference: the lowest node with a release (one whose file
	 * holds only its names would align nobody). */
	for (refi = 0; refi < nn; refi++) {
		free(ref);
		if ((nref = releases(&nodes[refi], &ref)) > 0)
			break;
	}
	if (refi == nn) {
		ac_warnx("no collective in the traces of job %s in %s: nothing "
		    "to merge", job, dir);
		goto out;
	}
	ref_wall = wall_of(ref, nref);
	nodes[refi].offset = 0;
	fprintf(stderr, "accelctl: trace: node %ld: +0.000 ms (the reference)\n",
	    nodes[refi].node);
	for (long i = 0; i < nn; i++)
		if (i != refi)
			align(&nodes[i], nodes[refi].node, ref, nref, ref_wall);
	for (long i = 0; i < nn; i++)
		total += nodes[i].n;
	if ((all = malloc((total + 1) * sizeof(*all))) == NULL) {
		ac_warnx("out of memory");
		goto out;
	}
	/* Metadata once per track (a replaced helper wrote it again),
	 * looked for among the metadata kept: a few per rank. */
	if ((meta = malloc((total + 1) * sizeof(*meta))) == NULL) {
		ac_warnx("out of memory");
		goto out;
	}
	for (long i = 0; i < nn; i++)
		for (size_t k = 0; k < nodes[i].n; k++) {
			struct ac_tev e = nodes[i].ev[k];
			int dup = 0;

			if (e.ph == 'M') {
				for (size_t m = 0; m < nmeta && !dup; m++)
					dup = all[meta[m]].pid == e.pid &&
					    all[meta[m]].tid == e.tid &&
					    strcmp(all[meta[m]].line + all[meta[m]].ts_end,
					    e.line + e.ts_end) == 0;
				if (dup)
					continue;
				meta[nmeta++] = n;
			}
			if (e.ph == 'X') {
				e.ts += nodes[i].offset;
				if (e.ts < base)
					base = e.ts;
			}
			all[n++] = e;
		}
	for (size_t k = 0; k < n; k++)
		if (all[k].ph == 'X')
			all[k].ts -= base;
	qsort(all, n, sizeof(*all), ev_cmp);
	if (out == NULL && asprintf(&path, "%s/accelctl.%s.json", dir, job) == -1)
		goto out;
	if (write_file(out != NULL ? out : path, all, n, job, nodes, nn, 0) == 0 &&
	    (svg == NULL || write_file(svg, all, n, job, nodes, nn, 1) == 0)) {
		costliest(all, n, 5);
		fprintf(stderr, "accelctl: trace: %ld node%s, %zu events: %s%s%s\n",
		    nn, nn == 1 ? "" : "s", n, out != NULL ? out : path,
		    svg != NULL ? " and " : "", svg != NULL ? svg : "");
		rc = 0;
	}
out:
	free(meta);
	free(path);
	free(all);
	free(ref);
	for (long i = 0; i < (nn > 0 ? nn : 0); i++) {
		for (size_t k = 0; k < nodes[i].n; k++)
			free(nodes[i].ev[k].line);
		free(nodes[i].ev);
	}
	free(nodes);
	return rc;
}
