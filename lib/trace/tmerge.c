/* tmerge.c: "accelctl trace merge": the nodes' trace files of one job into one, their clocks aligned by the releases they share.
 *
 * Each node's helper wrote its own monotonic clock (trace.c), which means
 * nothing on another host. But a barrier across nodes is released on every
 * node at about the same moment (the store's one answer reaches them all
 * within a round trip), so for each node the median, over the barriers it
 * shares with the lowest node, of the difference between the two releases
 * is its offset: a clock aligned to a few milliseconds without a clock
 * protocol, and the spread of those differences says how well. A broadcast,
 * --wait or main-first is no such moment (a node that comes after its source
 * is released at its own arrival): used only by a node that shares no
 * barrier. A node that shares no release at all (a job that never met
 * across nodes) is placed by the wall clocks its records carry, and says
 * so. The files are read as trace.c writes them (an event a line, its
 * fields in one order), and a line is taken only when it is one whole JSON
 * value: merge is for accelctl's own traces, but its output must stay JSON
 * whatever the directory holds.
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
#include "proto.h"
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
 * --- a strict check of one line as JSON (RFC 8259) ---
 *
 * The merge copies a node file's lines as they are, so a line that is not
 * one complete JSON value would make the whole merged file invalid: one
 * torn by a full disk, or with garbage in its middle (a file written by
 * something else, or damaged), which the fields read below do not notice.
 * Strings must be UTF-8 (Python's json.load and XML both refuse the rest);
 * nesting is bounded, so a line of brackets cannot exhaust the stack.
 */
#define JS_DEPTH 32

struct js {
	const unsigned char	*p, *end;
	int			 depth;
};

static int js_value(struct js *s);

static void
js_space(struct js *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
	    *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int
js_word(struct js *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return -1;
	s->p += n;
	return 0;
}

/* One UTF-8 character of two to four bytes at S (no overlong form, no
 * surrogate, nothing past U+10FFFF). */
static int
js_utf8(struct js *s)
{
	unsigned c = *s->p, lo = 0x80, hi = 0xbf;
	int more;

	if (c >= 0xc2 && c <= 0xdf)
		more = 1;
	else if (c >= 0xe0 && c <= 0xef) {
		more = 2;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		more = 3;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	} else
		return -1;
	if (s->end - s->p <= more)
		return -1;
	for (int i = 1; i <= more; i++, lo = 0x80, hi = 0xbf)
		if (s->p[i] < lo || s->p[i] > hi)
			return -1;
	s->p += more + 1;
	return 0;
}

static int
js_string(struct js *s)
{
	if (js_word(s, "\"") == -1)
		return -1;
	while (s->p < s->end && *s->p != '"') {
		if (*s->p < 0x20)
			return -1;
		if (*s->p >= 0x80) {
			if (js_utf8(s) == -1)
				return -1;
			continue;
		}
		if (*s->p++ != '\\')
			continue;
		if (s->p < s->end && strchr("\"\\/bfnrt", *s->p) != NULL &&
		    *s->p != '\0') {
			s->p++;
			continue;
		}
		if (js_word(s, "u") == -1 || s->end - s->p < 4)
			return -1;
		for (int i = 0; i < 4; i++, s->p++)
			if (strchr("0123456789abcdefABCDEF", *s->p) == NULL ||
			    *s->p == '\0')
				return -1;
	}
	return js_word(s, "\"");
}

/* S's run of digits: how many. */
static int
js_digits(struct js *s)
{
	int n = 0;

	for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++)
		n++;
	return n;
}

static int
js_number(struct js *s)
{
	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (js_digits(s) == 0)
		return -1;
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (js_digits(s) == 0)
			return -1;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (js_digits(s) == 0)
			return -1;
	}
	return 0;
}

/* S's next character is C: taken. */
static int
js_at(struct js *s, char c)
{
	js_space(s);
	if (s->p == s->end || *s->p != (unsigned char)c)
		return 0;
	s->p++;
	return 1;
}

/* An array or object, its opening bracket at S: values (with their names,
 * in an object) apart by commas, up to CLOSE. */
static int
js_list(struct js *s, int object, char close)
{
	int rc = 0;

	if (++s->depth > JS_DEPTH)
		return -1;
	s->p++;
	if (js_at(s, close)) {
		s->depth--;
		return 0;
	}
	do {
		js_space(s);
		if ((object && (js_string(s) == -1 || !js_at(s, ':'))) ||
		    js_value(s) == -1) {
			rc = -1;
			break;
		}
	} while (js_at(s, ','));
	if (rc == 0 && !js_at(s, close))
		rc = -1;
	s->depth--;
	return rc;
}

static int
js_value(struct js *s)
{
	js_space(s);
	if (s->p == s->end)
		return -1;
	switch (*s->p) {
	case '{': return js_list(s, 1, '}');
	case '[': return js_list(s, 0, ']');
	case '"': return js_string(s);
	case 't': return js_word(s, "true");
	case 'f': return js_word(s, "false");
	case 'n': return js_word(s, "null");
	default: return js_number(s);
	}
}

/* Is LINE (LEN bytes) one JSON value, and nothing else? */
static int
json_whole(const char *line, size_t len)
{
	struct js s = { (const unsigned char *)line,
	    (const unsigned char *)line + len, 0 };

	if (js_value(&s) == -1)
		return 0;
	js_space(&s);
	return s.p == s.end;
}

/*
 * One line as trace.c writes it: 0, or -1 (not an event: skipped). E's
 * line and key are set by the caller. A line must be one whole JSON value:
 * one torn by a full disk is not, nor one with garbage in its middle, and
 * its text in the merge would make the whole file invalid JSON.
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
	if (!json_whole(line, len) ||
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

/*
 * Is E's collective a barrier across nodes, released on every node at about
 * the moment its last arrival came? A broadcast, --wait or main-first
 * releases a node that comes after its source finished at that node's own
 * arrival, and a node's own collective (main-first --local, on-local-*)
 * when that node's source is done: not moments the nodes share.
 */
static int
shared_release(const struct ac_tev *e)
{
	const struct ac_kind *k = ac_kind_of(e->key);

	return !e->local && k != NULL && k->op == AC_OP_BARRIER;
}

/* ND's releases, sorted by collective: how many, into *OUT. BARRIERS:
 * only those of barriers across nodes (shared_release), else those of every
 * collective but a node's own. */
static size_t
releases(const struct node *nd, struct rel **out, int barriers)
{
	struct rel *r = calloc(nd->n + 1, sizeof(*r));
	size_t n = 0, w = 0;

	*out = r;
	if (r == NULL)
		return 0;
	for (size_t i = 0; i < nd->n; i++) {
		const struct ac_tev *e = &nd->ev[i];
		const char *wl;

		if (e->ph != 'X' || e->local || (barriers && !shared_release(e)))
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

/* The reference node's releases: its barriers' (what aligns), all of them
 * (when a node shares no barrier with it) and its wall clock (when a node
 * shares no release). */
struct refs {
	long		 node;
	struct rel	*bar, *all;
	size_t		 nbar, nall;
	int64_t		 wall;
};

/* The differences REF's release minus ND's of the collectives both have
 * among R (ND's, N of them, sorted) and REF: how many, into D (room for N). */
static size_t
diffs(const struct rel *r, size_t n, const struct rel *ref, size_t nref,
    int64_t *d)
{
	size_t a = 0, i = 0, k = 0;

	while (a < n && i < nref) {
		int c = rel_cmp(&r[a], &ref[i]);

		if (c == 0)
			d[k++] = ref[i++].at - r[a++].at;
		else if (c < 0)
			a++;
		else
			i++;
	}
	return k;
}

/*
 * ND's offset from the K differences D: their median (one late wake-up of a
 * busy node's helper must not move the whole node), printed with the largest
 * difference left. WHAT names the releases used.
 */
static void
offset_of(struct node *nd, int64_t *d, size_t k, const char *what,
    long refnode)
{
	int64_t lo, hi;

	nd->offset = median(d, k);
	lo = d[0] - nd->offset;
	hi = d[k - 1] - nd->offset;
	fprintf(stderr, "accelctl: trace: node %ld: %+.3f ms (the median of "
	    "%zu %s shared with node %ld; they differ by %.3f ms from it at "
	    "most)\n", nd->node, (double)nd->offset / 1e3, k, what, refnode,
	    (double)(hi > -lo ? hi : -lo) / 1e3);
}

/* Set ND's offset against the reference: by the barriers they share, else
 * by the releases they share (a job of broadcasts alone, say), else by the
 * wall clocks. */
static void
align(struct node *nd, const struct refs *ref)
{
	struct rel *bar, *all;
	size_t nbar = releases(nd, &bar, 1), nall = releases(nd, &all, 0), k;
	int64_t *d = malloc((nall + 1) * sizeof(*d)), w;

	if (d == NULL || bar == NULL || all == NULL)
		fprintf(stderr, "accelctl: trace: node %ld: not aligned (out of "
		    "memory)\n", nd->node);
	else if ((k = diffs(bar, nbar, ref->bar, ref->nbar, d)) > 0)
		offset_of(nd, d, k, "barrier releases", ref->node);
	else if ((k = diffs(all, nall, ref->all, ref->nall, d)) > 0)
		offset_of(nd, d, k, "releases (no barrier) of collectives",
		    ref->node);
	else if ((w = wall_of(all, nall)) != INT64_MIN && ref->wall != INT64_MIN) {
		nd->offset = w - ref->wall;
		fprintf(stderr, "accelctl: trace: node %ld: %+.3f ms (by the wall "
		    "clocks: it shares no release with the first node)\n",
		    nd->node, (double)nd->offset / 1e3);
	} else
		fprintf(stderr, "accelctl: trace: node %ld: not aligned (no "
		    "release shared, no wall clock)\n", nd->node);
	free(d);
	free(bar);
	free(all);
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

/* "-": standard output, as for every tool that writes a file (a file
 * named "-" is "./-"). */
static int
is_stdout(const char *path)
{
	return strcmp(path, "-") == 0;
}

/*
 * May PATH be replaced by an output? A new name, or a regular file: a
 * rename over anything else replaces it (as root, --output /dev/null made
 * /dev/null a regular file), and over a link it replaces the link, not the
 * file the user meant. -1 with a message when not; a name that cannot be
 * looked at is left to the write, which says why.
 */
static int
replaceable(const char *path)
{
	struct stat st;

	if (is_stdout(path) || lstat(path, &st) == -1 || S_ISREG(st.st_mode))
		return 0;
	ac_warnx("'%s': %s: not an output (a regular file or a new name)", path,
	    S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ?
	    "a directory" : "not a regular file");
	return -1;
}

/*
 * Write through a temporary file, renamed: a reader never sees half. 0; -1
 * when it could not be written (said); -2 when PATH is refused (said). PATH
 * is looked at again just before the rename: what appeared there meanwhile
 * is refused too (only what changes it between those two calls is not).
 */
static int
write_file(const char *path, const struct ac_tev *ev, size_t n, const char *job,
    const struct node *nodes, long nn, int svg)
{
	char *tmp;
	FILE *f;
	int rc, fd;

	if (is_stdout(path)) {
		rc = svg ? ac_tsvg_write(stdout, ev, n, job) :
		    write_merged(stdout, ev, n, job, nodes, nn);
		if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
			rc = -1;
		if (rc == -1)
			ac_warn("standard output");
		return rc;
	}
	if (replaceable(path) == -1)
		return -2;
	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) == -1) {
		ac_warnx("out of memory");
		return -1;
	}
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
	if (rc == 0 && replaceable(path) == -1)
		rc = -2;
	else if (rc == 0 && rename(tmp, path) == -1)
		rc = -1;
	if (rc == -1)
		ac_warn("%s", path);
	if (rc != 0)
		unlink(tmp);
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

/* Outputs that would destroy the input, each other, or what is not a
 * file: 0, or 2 (said). */
static int
outputs_refused(const char *out, const char *svg)
{
	char jb[256];
	long nb;

	if (out != NULL && parse_name(base_of(out), jb, sizeof(jb), &nb)) {
		ac_warnx("'%s': a node's trace file: not an output", out);
		return 2;
	}
	if (svg != NULL && parse_name(base_of(svg), jb, sizeof(jb), &nb)) {
		ac_warnx("'%s': a node's trace file: not an output", svg);
		return 2;
	}
	if (out != NULL && svg != NULL && is_stdout(out) && is_stdout(svg)) {
		ac_warnx("--output and --svg are both standard output");
		return 2;
	}
	if (out != NULL && svg != NULL && same_file(out, svg)) {
		ac_warnx("--output and --svg are the same file: '%s'", svg);
		return 2;
	}
	if ((out != NULL && replaceable(out) == -1) ||
	    (svg != NULL && replaceable(svg) == -1))
		return 2;
	return 0;
}

/* Every node's offset against the reference, the lowest node with a
 * release (one whose file holds only its names would align nobody): 0, or
 * -1 when no node has one. */
static int
set_offsets(struct node *nodes, long nn)
{
	struct refs ref = { 0 };
	long refi;

	for (refi = 0; refi < nn; refi++) {
		free(ref.all);
		if ((ref.nall = releases(&nodes[refi], &ref.all, 0)) > 0)
			break;
	}
	if (refi == nn) {
		free(ref.all);
		return -1;
	}
	ref.nbar = releases(&nodes[refi], &ref.bar, 1);
	ref.wall = wall_of(ref.all, ref.nall);
	ref.node = nodes[refi].node;
	nodes[refi].offset = 0;
	fprintf(stderr, "accelctl: trace: node %ld: +0.000 ms (the reference)\n",
	    ref.node);
	for (long i = 0; i < nn; i++)
		if (i != refi)
			align(&nodes[i], &ref);
	free(ref.all);
	free(ref.bar);
	return 0;
}

/*
 * The nodes' events in one array (*ALL, how many returned), on the merged
 * timeline from 0, sorted by track and time; metadata once per track (a
 * replaced helper wrote it again), looked for among the metadata kept: a
 * few per rank. -1 on no memory.
 */
static ssize_t
combine(const struct node *nodes, long nn, struct ac_tev **all)
{
	size_t n = 0, total = 0, nmeta = 0, *meta;
	int64_t base = INT64_MAX;
	struct ac_tev *v;

	for (long i = 0; i < nn; i++)
		total += nodes[i].n;
	v = malloc((total + 1) * sizeof(*v));
	meta = malloc((total + 1) * sizeof(*meta));
	if ((*all = v) == NULL || meta == NULL) {
		free(meta);
		return -1;
	}
	for (long i = 0; i < nn; i++)
		for (size_t k = 0; k < nodes[i].n; k++) {
			struct ac_tev e = nodes[i].ev[k];
			int dup = 0;

			if (e.ph == 'M') {
				for (size_t m = 0; m < nmeta && !dup; m++)
					dup = v[meta[m]].pid == e.pid &&
					    v[meta[m]].tid == e.tid &&
					    strcmp(v[meta[m]].line + v[meta[m]].ts_end,
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
			v[n++] = e;
		}
	free(meta);
	for (size_t k = 0; k < n; k++)
		if (v[k].ph == 'X')
			v[k].ts -= base;
	qsort(v, n, sizeof(*v), ev_cmp);
	return (ssize_t)n;
}

/*
 * The node numbers below the highest read that have no trace (a file
 * missing, or one that could not be read), for the summary line:
 * " (no trace of node 2)", "" when none. NODES are sorted.
 */
static void
gaps(const struct node *nodes, long nn, char *buf, size_t len)
{
	char list[128] = "";	/* 8 numbers under MAX_NODES */
	size_t at = 0;
	long next = 0, missing = 0;

	for (long i = 0; i < nn; next = nodes[i++].node + 1)
		for (long m = next; m < nodes[i].node; m++)
			if (missing++ < 8)
				at += (size_t)snprintf(list + at, sizeof(list) - at,
				    "%s%ld", at > 0 ? ", " : "", m);
	buf[0] = '\0';
	if (missing == 1)
		snprintf(buf, len, " (no trace of node %s)", list);
	else if (missing > 8)
		snprintf(buf, len, " (no trace of nodes %s and %ld more)", list,
		    missing - 8);
	else if (missing > 1)
		snprintf(buf, len, " (no trace of nodes %s)", list);
}

/* The merged file at OUT (or DIR/accelctl.JOB.json) and the SVG at SVG
 * (unless NULL), then the summary: an exit code. */
static int
write_outputs(const char *dir, const char *job, const char *out,
    const char *svg, const struct ac_tev *all, size_t n,
    const struct node *nodes, long nn)
{
	char *path = NULL, gap[200];
	int rc;

	if (out == NULL && asprintf(&path, "%s/accelctl.%s.json", dir, job) == -1) {
		ac_warnx("out of memory");
		return 125;
	}
	if ((rc = write_file(out != NULL ? out : path, all, n, job, nodes, nn,
	    0)) == 0 && svg != NULL)
		rc = write_file(svg, all, n, job, nodes, nn, 1);
	if (rc == 0) {
		costliest(all, n, 5);
		gaps(nodes, nn, gap, sizeof(gap));
		fprintf(stderr, "accelctl: trace: %ld node%s%s, %zu events: "
		    "%s%s%s\n", nn, nn == 1 ? "" : "s", gap, n, out == NULL ?
		    path : is_stdout(out) ? "standard output" : out,
		    svg != NULL ? " and " : "", svg == NULL ? "" :
		    is_stdout(svg) ? "standard output" : svg);
	}
	free(path);
	return rc == 0 ? 0 : rc == -2 ? 2 : 125;
}

int
ac_trace_merge(const char *dir, const char *job, const char *out,
    const char *svg)
{
	int dirfd, rc = 1;
	char jbuf[256] = "";
	struct node *nodes = NULL;
	struct ac_tev *all = NULL;
	ssize_t n;
	long nn;

	if ((rc = outputs_refused(out, svg)) != 0)
		return rc;
	rc = 1;
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		ac_warn("%s", dir);
		return 1;
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
	if (set_offsets(nodes, nn) == -1) {
		ac_warnx("no collective in the traces of job %s in %s: nothing "
		    "to merge", job, dir);
		goto out;
	}
	if ((n = combine(nodes, nn, &all)) == -1) {
		ac_warnx("out of memory");
		rc = 125;
		goto out;
	}
	rc = write_outputs(dir, job, out, svg, all, (size_t)n, nodes, nn);
out:
	free(all);
	for (long i = 0; i < (nn > 0 ? nn : 0); i++) {
		for (size_t k = 0; k < nodes[i].n; k++)
			free(nodes[i].ev[k].line);
		free(nodes[i].ev);
	}
	free(nodes);
	return rc;
}
