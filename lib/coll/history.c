/* history.c: the helper's record of the collectives released on this node, a bounded ring, and its text and JSON.
 *
 * A barrier is where a slow node shows, and once it passed nothing said who
 * held everyone up. So each collective that leaves the helper complete
 * leaves a record: every local rank's arrival (this node's monotonic clock),
 * when the node posted it to the others and when its result came, the
 * source's CMD, and, across nodes, the rank and node whose arrival completed
 * it as the transport's result says. Times are never compared between hosts:
 * what this node waited for the others is its own post to its own release.
 *
 * The ring keeps the last AC_HISTORY_MAX records, grown as they come (a job
 * of ten barriers holds ten), about 145 bytes and 8 per local rank each:
 * 2.1 MB for 8 local ranks when full, and the allocator's own per block
 * (tests/c/test_history.c measures 1.8 MB for 4). A helper that is replaced
 * (killed, restarted) starts an empty ring; the collectives it replays from
 * the journal were not seen live and leave no record.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll.h"
#include "duration.h"
#include "history.h"
#include "kind.h"
#include "trace.h"

struct rec {
	char	*key;			/* "b:NAME" */
	int64_t	 gen, source, status;
	int	 op, scope, lost;
	long	 lsize;
	int64_t	*at;			/* [lsize] arrivals (µs), 0: not seen */
	int64_t	 posted, finished, released;
	int64_t	 wall_ms;		/* the wall clock at the release */
	int64_t	 last_rank, last_node;	/* across nodes, -1: not known */
	int64_t	 across, across_sum;	/* ac_ctime's across_us, -1: not known */
	long	 first_node;
	long	 src_l;			/* the local source rank, -1 none */
};

static struct {
	struct rec	*r;
	size_t		 cap, n, start;	/* start: the oldest, once full */
	size_t		 bytes;		/* what the records point to */
	unsigned long	 total;		/* records ever added */
} H;

void
ac_history_arrived(const struct ac_job *j, struct ac_coll *c, long lrank)
{
	if (lrank < 0 || lrank >= j->lsize)
		return;
	if (c->t.at == NULL && (c->t.at = calloc((size_t)j->lsize,
	    sizeof(*c->t.at))) == NULL)
		return;		/* no record of it: nothing else is lost */
	/* A retry (a lost ACK, a reconnect) is the same arrival. */
	if (c->t.at[lrank] == 0)
		c->t.at[lrank] = ac_now_us();
}

int64_t
ac_history_last_rank(const struct ac_job *j, const struct ac_coll *c)
{
	int64_t last = 0;
	long l_last = -1;

	for (long l = 0; c->t.at != NULL && l < j->lsize; l++)
		if (c->t.at[l] != 0 && c->t.at[l] >= last) {
			last = c->t.at[l];
			l_last = l;
		}
	return l_last >= 0 ? j->rank_of[l_last] : -1;
}

static void
rec_free(struct rec *r)
{
	if (r->key != NULL)
		H.bytes -= strlen(r->key) + 1 + (size_t)r->lsize * sizeof(*r->at);
	free(r->key);
	free(r->at);
	memset(r, 0, sizeof(*r));
}

/* The index in H.r of the I-th oldest record. */
static size_t
idx(size_t i)
{
	return (H.start + i) % (H.n == AC_HISTORY_MAX ? AC_HISTORY_MAX :
	    (H.n > 0 ? H.n : 1));
}

/* The slot for a new record: a new one while the ring grows, else the
 * oldest's, freed. NULL on no memory. */
static struct rec *
slot(void)
{
	struct rec *r;

	if (H.n == AC_HISTORY_MAX) {
		r = &H.r[H.start];
		H.start = (H.start + 1) % AC_HISTORY_MAX;
		rec_free(r);
		return r;
	}
	if (H.n == H.cap) {
		size_t cap = H.cap == 0 ? 64 : H.cap * 2;

		if (cap > AC_HISTORY_MAX)
			cap = AC_HISTORY_MAX;
		if ((r = realloc(H.r, cap * sizeof(*r))) == NULL)
			return NULL;
		H.r = r;
		H.cap = cap;
	}
	r = &H.r[H.n++];
	memset(r, 0, sizeof(*r));
	return r;
}

void
ac_history_released(struct ac_job *j, const struct ac_coll *c)
{
	/* Only a barrier's release is a moment every node shares: a node
	 * that reaches a broadcast, --wait or main-first after its source
	 * finished is released at its own arrival, and counting from that
	 * made a late node's interval as short as the others' (review of
	 * issue 22). A node-scoped one is this node's alone; one replayed
	 * or lost is not a moment every node shared either. */
	if (c->op != AC_OP_BARRIER || c->scope != AC_SCOPE_JOB ||
	    !ac_coll_cross(j, c))
		return;
	j->last_release = c->t.replayed || c->src == AC_SRC_LOST ? 0 :
	    c->t.released;
}

int64_t
ac_history_since(const struct ac_job *j, const struct ac_coll *c)
{
	if (c->scope != AC_SCOPE_JOB || c->t.replayed || j->last_release == 0 ||
	    c->t.posted < j->last_release)
		return -1;
	return (c->t.posted - j->last_release) / 1000;
}

void
ac_history_add(const struct ac_job *j, const struct ac_coll *c)
{
	struct rec *r;
	struct timespec ts;
	int64_t now = ac_now_us();

	char *key;
	int64_t *at;

	/* Replayed from the journal, even in part: not seen live. A record
	 * of it would time the arrivals from their reconnection and name
	 * this node's last to reconnect as last (review of issue 22). */
	if (c->t.at == NULL || c->t.replayed)
		return;
	key = strdup(c->key);
	at = malloc((size_t)j->lsize * sizeof(*at));
	if (key == NULL || at == NULL || (r = slot()) == NULL) {
		free(key);
		free(at);
		return;
	}
	r->lsize = j->lsize;
	r->key = key;
	r->at = at;
	H.bytes += strlen(r->key) + 1 + (size_t)r->lsize * sizeof(*r->at);
	memcpy(r->at, c->t.at, (size_t)j->lsize * sizeof(*r->at));
	r->gen = c->gen;
	/* Global, as every rank this prints: a node-scoped one is local. */
	r->source = c->op != AC_OP_RESULT ? -1 : c->scope == AC_SCOPE_NODE ?
	    (c->source >= 0 && c->source < j->lsize ? j->rank_of[c->source] :
	    -1) : c->source;
	r->src_l = c->op == AC_OP_RESULT ? ac_coll_source_lrank(j, c) : -1;
	r->op = c->op;
	r->scope = c->scope;
	r->lost = c->src == AC_SRC_LOST;
	r->status = c->result;
	r->posted = c->t.posted;
	r->finished = c->t.finished;
	r->released = c->t.released != 0 ? c->t.released : now;
	r->last_rank = c->t.last_rank;
	r->last_node = c->t.last_node;
	r->across = c->t.across_us;
	r->across_sum = c->t.across_sum_us;
	r->first_node = c->t.first_node;
	clock_gettime(CLOCK_REALTIME, &ts);
	r->wall_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 -
	    (now - r->released) / 1000;
	H.total++;
	ac_trace_add(j, c, r->wall_ms, ac_history_last_rank(j, c));
	/* Kept in the order of release: the helper collects what completed
	 * newest first, so two released since its last pass came reversed. */
	for (size_t i = H.n - 1; i > 0 && H.n - i < 64; i--) {
		struct rec *a = &H.r[idx(i - 1)], *b = &H.r[idx(i)], t;

		if (a->released <= b->released)
			break;
		t = *a;
		*a = *b;
		*b = t;
	}
}

void
ac_history_free(void)
{
	for (size_t i = 0; i < H.n; i++)
		rec_free(&H.r[i]);
	free(H.r);
	memset(&H, 0, sizeof(H));
}

size_t
ac_history_count(void)
{
	return H.n;
}

size_t
ac_history_bytes(void)
{
	return H.cap * sizeof(struct rec) + H.bytes;
}

/* --- what a record adds up to --- */

/* A record's figures, from its arrivals. */
struct sums {
	int64_t	 first, last;	/* earliest and latest arrival here */
	long	 last_l;	/* the local rank that came last, -1 none */
	long	 src_l;		/* the local source rank, -1 none */
	int64_t	 waited;	/* µs, summed over the ranks that waited */
	int64_t	 cmd;		/* the local source's CMD, -1 none */
};

static void
add_up(const struct rec *r, struct sums *s)
{
	memset(s, 0, sizeof(*s));
	s->last_l = -1;
	s->cmd = -1;
	s->src_l = r->src_l;
	for (long l = 0; l < r->lsize; l++) {
		int64_t at = r->at[l];

		if (at == 0)
			continue;
		if (s->first == 0 || at < s->first)
			s->first = at;
		if (at >= s->last) {
			s->last = at;
			s->last_l = l;
		}
		/* The source runs CMD: it waits for nobody. */
		if (l != s->src_l && r->released > at)
			s->waited += r->released - at;
	}
	/* A CMD's (--wait, main-first), not a broadcast's value. */
	if (s->src_l >= 0 && r->finished != 0 && r->at[s->src_l] != 0 &&
	    !ac_kind_of(r->key)->streamed)
		s->cmd = r->finished - r->at[s->src_l];
}

/* --- the text and the JSON --- */

struct out {
	char	*p;
	size_t	 len, cap, max;
	int	 full, err;
};

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->err || o->full)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->err = 1;
			return;
		}
		if ((size_t)n < o->cap - o->len)
			break;
		if (o->cap >= o->max) {
			o->full = 1;
			o->p[o->len] = '\0';
			return;
		}
		{
			size_t cap = o->cap * 2 > o->max ? o->max : o->cap * 2;
			char *p = realloc(o->p, cap);

			if (p == NULL) {
				o->err = 1;
				return;
			}
			o->p = p;
			o->cap = cap;
		}
	}
	o->len += (size_t)n;
}

/* US as "340us", "12.3ms", "4.25s", "9m02s", "2h05m". */
static const char *
dur(int64_t us, char *buf, size_t len)
{
	if (us < 1000)
		snprintf(buf, len, "%lldus", (long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "%.1fms", (double)us / 1e3);
	else if (us < 60000000)
		snprintf(buf, len, "%.2fs", (double)us / 1e6);
	else if (us < 3600000000LL)
		snprintf(buf, len, "%lldm%02llds", (long long)(us / 60000000),
		    (long long)(us / 1000000 % 60));
	else
		snprintf(buf, len, "%lldh%02lldm", (long long)(us / 3600000000LL),
		    (long long)(us / 60000000 % 60));
	return buf;
}

/* "rank 5 (node 1)", or a local rank whose global rank is not known;
 * NODE -1: on another node, which one not known. */
static const char *
who(int64_t rank, long node, long lrank, char *buf, size_t len)
{
	if (rank >= 0 && node >= 0)
		snprintf(buf, len, "rank %lld (node %ld)", (long long)rank, node);
	else if (rank >= 0)
		snprintf(buf, len, "rank %lld (another node)", (long long)rank);
	else if (lrank >= 0)
		snprintf(buf, len, "local rank %ld (node %ld)", lrank, node);
	else
		snprintf(buf, len, "node %ld", node);
	return buf;
}

/*
 * Who everyone waited for at R: a result op's source (its CMD or value);
 * else the job-wide last arrival, the transport's, or this node's when the
 * collective stayed here. 0 when not known (a transport that does not say).
 */
static int
last_of(const struct ac_job *j, const struct rec *r, const struct sums *s,
    int64_t *rank, long *node, long *lrank)
{
	*lrank = -1;
	if (r->op == AC_OP_RESULT) {
		*rank = r->source;
		*lrank = s->src_l;
		*node = s->src_l >= 0 ? j->node : -1;
		return r->source >= 0 || s->src_l >= 0;
	}
	if (r->posted != 0 && r->last_node >= 0 && r->last_node != j->node) {
		*rank = r->last_rank;
		*node = (long)r->last_node;
		return 1;
	}
	if (s->last_l < 0 || (r->posted != 0 && r->last_node < 0))
		return 0;
	*lrank = s->last_l;
	*rank = j->rank_of[s->last_l];
	*node = j->node;
	return 1;
}

/* One text row's fields. */
struct row {
	char	 t[32], gen[24], last[96], spread[24], waited[24], across[24],
		 cost[24], cmd[24], st[24];
	const char *kind, *name;
};

/* R's release on the wall clock, with its milliseconds: local "HH:MM:SS.mmm"
 * for the text, UTC "YYYY-MM-DDTHH:MM:SS.mmmZ" for the JSON. */
static void
released_at(const struct rec *r, int utc, char *buf, size_t len)
{
	time_t secs = (time_t)(r->wall_ms / 1000);
	struct tm tm;
	char t[24];	/* "YYYY-MM-DDTHH:MM:SS" */

	if (utc)
		gmtime_r(&secs, &tm);
	else
		localtime_r(&secs, &tm);
	strftime(t, sizeof(t), utc ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03d%s", t, (int)(r->wall_ms % 1000), utc ? "Z" : "");
}

static void
row_of(const struct ac_job *j, const struct rec *r, struct row *w)
{
	struct sums s;
	int64_t rank;
	long node, lrank;

	add_up(r, &s);
	released_at(r, 0, w->t, sizeof(w->t));
	w->kind = ac_kind_of(r->key)->name;
	w->name = ac_kind_label(r->key);
	snprintf(w->gen, sizeof(w->gen), "%lld", (long long)r->gen);
	if (last_of(j, r, &s, &rank, &node, &lrank)) {
		who(rank, node, lrank, w->last, sizeof(w->last));
		if (r->op == AC_OP_RESULT)
			snprintf(w->last + strlen(w->last), sizeof(w->last) -
			    strlen(w->last), ", source");
	} else
		snprintf(w->last, sizeof(w->last), "?");
	dur(s.last - s.first, w->spread, sizeof(w->spread));
	/* WAITED: this node for the others; ACROSS: the first node's post to
	 * the last's, from every node's own interval (?: a node could not
	 * say, as after a replaced helper, or over NCCL). */
	if (r->posted != 0)
		dur(r->released > r->posted ? r->released - r->posted : 0,
		    w->waited, sizeof(w->waited));
	else
		snprintf(w->waited, sizeof(w->waited), "-");
	if (r->posted == 0)
		snprintf(w->across, sizeof(w->across), "-");
	else if (r->across >= 0)
		dur(r->across, w->across, sizeof(w->across));
	else
		snprintf(w->across, sizeof(w->across), "?");
	snprintf(w->cost, sizeof(w->cost), "%.3f", (double)s.waited / 1e6);
	if (s.cmd >= 0)
		dur(s.cmd, w->cmd, sizeof(w->cmd));
	else
		snprintf(w->cmd, sizeof(w->cmd), "-");
	if (r->lost)
		snprintf(w->st, sizeof(w->st), "died");
	else
		snprintf(w->st, sizeof(w->st), "%lld", (long long)r->status);
}

/* Column widths: the header's, or the widest value shown. */
struct widths {
	int	 name, gen, last;
};

static void
text_row(struct out *o, const struct ac_job *j, const struct rec *r,
    const struct widths *w)
{
	struct row f;

	row_of(j, r, &f);
	put(o, "%-12s  %-10s %-*s %*s  %-*s %8s %8s %8s %12s %8s  %s\n", f.t,
	    f.kind, w->name, f.name, w->gen, f.gen, w->last, f.last, f.spread,
	    f.waited, f.across, f.cost, f.cmd, f.st);
}

static void
json_secs(struct out *o, const char *name, int64_t us, int known)
{
	if (known)
		put(o, ",\"%s\":%.6f", name, (double)us / 1e6);
	else
		put(o, ",\"%s\":null", name);
}

static void
json_row(struct out *o, const struct ac_job *j, const struct rec *r, int first)
{
	struct sums s;
	char t[48];
	int64_t rank;
	long node, lrank;

	add_up(r, &s);
	released_at(r, 1, t, sizeof(t));
	/* Names are A-Z a-z 0-9 . _ : - (ac_key_valid): nothing to escape. */
	put(o, "%s\n{\"kind\":\"%s\",\"name\":\"%s\",\"generation\":%lld,"
	    "\"released\":\"%s\",\"released_unix_ms\":%lld,\"status\":%lld,"
	    "\"died\":%s", first ? "" : ",", ac_kind_of(r->key)->name,
	    ac_kind_label(r->key), (long long)r->gen, t,
	    (long long)r->wall_ms, (long long)r->status, r->lost ? "true" : "false");
	if (r->op == AC_OP_RESULT)
		put(o, ",\"source\":%lld", (long long)r->source);
	put(o, ",\"last\":");
	if (!last_of(j, r, &s, &rank, &node, &lrank))
		put(o, "null");
	else {
		put(o, rank >= 0 ? "{\"rank\":%lld" : "{\"rank\":null",
		    (long long)rank);
		put(o, node >= 0 ? ",\"node\":%ld" : ",\"node\":null", node);
		put(o, ",\"source\":%s}", r->op == AC_OP_RESULT ? "true" : "false");
	}
	json_secs(o, "spread_here_s", s.last - s.first, s.last_l >= 0);
	json_secs(o, "waited_across_s", r->released > r->posted ? r->released -
	    r->posted : 0, r->posted != 0);
	/* Across nodes: the spread of the nodes' posts, who posted first (and
	 * so waited the longest), the sum of the nodes' waits. */
	json_secs(o, "spread_across_s", r->across, r->posted != 0 && r->across >= 0);
	if (r->posted != 0 && r->across >= 0)
		put(o, ",\"first_node\":%ld", r->first_node);
	else
		put(o, ",\"first_node\":null");
	json_secs(o, "node_seconds_waited", r->across_sum, r->posted != 0 &&
	    r->across >= 0);
	json_secs(o, "rank_seconds_waited", s.waited, 1);
	json_secs(o, "cmd_s", s.cmd, s.cmd >= 0);
	put(o, ",\"ranks\":[");
	for (long l = 0; l < r->lsize; l++) {
		put(o, "%s{\"local_rank\":%ld", l ? "," : "", l);
		put(o, j->rank_of[l] >= 0 ? ",\"rank\":%lld" : ",\"rank\":null",
		    (long long)j->rank_of[l]);
		json_secs(o, "arrived_s", r->at[l] - s.first, r->at[l] != 0);
		json_secs(o, "waited_s", r->released > r->at[l] ? r->released -
		    r->at[l] : 0, r->at[l] != 0 && l != s.src_l);
		put(o, "}");
	}
	put(o, "]}");
}

/* The I-th oldest record. */
static const struct rec *
nth(size_t i)
{
	return &H.r[idx(i)];
}

/* A row's size at most, but for its name (history_format's check). */
static size_t
row_bound(const struct rec *r, int json)
{
	return json ? 600 + (size_t)r->lsize * 110 : 220;
}

char *
ac_history_format(const struct ac_job *j, long n, int json, size_t max)
{
	struct out o = { .cap = 4096, .max = max };
	size_t want = n <= 0 || (size_t)n > H.n ? H.n : (size_t)n, from, shown;
	size_t bound = 1024;
	struct widths w = { 4, 3, 4 };	/* NAME, GEN, LAST */
	char kb[24];

	if (max < 4096 || (o.p = malloc(o.cap)) == NULL)
		return NULL;
	o.p[0] = '\0';
	from = H.n - want;
	shown = want;
	for (size_t i = from; i < H.n; i++) {
		const struct rec *r = nth(i);

		bound += row_bound(r, json) + 2 * strlen(r->key);
		if (!json) {
			struct row f;
			int k;

			row_of(j, r, &f);
			if ((k = (int)strlen(f.name)) > w.name)
				w.name = k;
			if ((k = (int)strlen(f.gen)) > w.gen)
				w.gen = k;
			if ((k = (int)strlen(f.last)) > w.last)
				w.last = k;
		}
	}
	/* The newest WANT, oldest first, as many as fit in MAX with room for
	 * the closing line: past that the rest are left out, and said so.
	 * Measured from the newest back only when they might not fit: the
	 * helper serves nobody else meanwhile. */
	for (size_t i = H.n, sum = 1024; bound > max && i > from; i--) {
		struct out m = { .cap = 4096, .max = max };

		if ((m.p = malloc(m.cap)) == NULL) {
			o.err = 1;
			break;
		}
		if (json)
			json_row(&m, j, nth(i - 1), 0);
		else
			text_row(&m, j, nth(i - 1), &w);
		sum += m.len;
		free(m.p);
		if (m.full || m.err || sum > max) {
			shown = H.n - i;
			from = i;
			break;
		}
	}
	snprintf(kb, sizeof(kb), "%.1f KiB", (double)ac_history_bytes() / 1024);
	if (json)
		put(&o, "{\"job\":\"%s\",\"helper\":true,\"node\":%ld,\"nodes\":%ld,"
		    "\"local_ranks\":%ld,\"released_here\":%lu,\"kept\":%zu,"
		    "\"kept_at_most\":%d,\"bytes\":%zu,\"left_out\":%zu,"
		    "\"collectives\":[", j->id, j->node, j->nnodes, j->lsize,
		    H.total, H.n, AC_HISTORY_MAX, ac_history_bytes(), want - shown);
	else {
		put(&o, "job %s, node %ld: the last %zu of %lu collectives "
		    "released here (%zu kept, at most %d, in %s)\n", j->id, j->node,
		    want, H.total, H.n, AC_HISTORY_MAX, kb);
		if (shown < want)
			put(&o, "(the %zu oldest of them left out: the text would "
			    "exceed %zu bytes)\n", want - shown, max);
		if (want > 0)
			put(&o, "%-12s  %-10s %-*s %*s  %-*s %8s %8s %8s %12s %8s  "
			    "%s\n", "RELEASED", "KIND", w.name, "NAME", w.gen, "GEN",
			    w.last, "LAST", "SPREAD", "WAITED", "ACROSS",
			    "RANK-SECONDS", "CMD", "STATUS");
	}
	for (size_t i = from; i < H.n; i++) {
		if (json)
			json_row(&o, j, nth(i), i == from);
		else
			text_row(&o, j, nth(i), &w);
	}
	if (json)
		put(&o, "%s]}\n", shown > 0 ? "\n" : "");
	if (o.err || o.full) {
		free(o.p);
		return NULL;
	}
	return o.p;
}

int
ac_history_note(const struct ac_job *j, const struct ac_coll *c, long lrank,
    char *buf, size_t len)
{
	int64_t now = ac_now_us(), mine, last = 0;
	long last_l = -1;
	char d1[24], d2[24], w[80];

	if (c->t.at == NULL || c->t.replayed || lrank < 0 || lrank >= j->lsize ||
	    (mine = c->t.at[lrank]) == 0 || now - mine <= AC_HISTORY_NOTE_MS * 1000LL)
		return -1;
	for (long l = 0; l < j->lsize; l++)
		if (c->t.at[l] >= last) {
			last = c->t.at[l];
			last_l = l;
		}
	dur(now - mine, d1, sizeof(d1));
	if (c->op == AC_OP_RESULT) {
		long sl = ac_coll_source_lrank(j, c);

		int64_t src = c->scope == AC_SCOPE_NODE ? (sl >= 0 ?
		    j->rank_of[sl] : -1) : c->source;

		if (sl >= 0 && c->t.finished != 0 && c->t.at[sl] != 0 &&
		    !ac_kind_of(c->key)->streamed)
			snprintf(buf, len, "after %s: rank %lld's CMD ran %s", d1,
			    (long long)src, dur(c->t.finished - c->t.at[sl], d2,
			    sizeof(d2)));
		else
			snprintf(buf, len, "after %s, waiting for rank %lld (the "
			    "source)", d1, (long long)src);
		return 0;
	}
	if (c->t.posted != 0 && c->t.last_node >= 0 && c->t.last_node != j->node)
		snprintf(buf, len, "after %s: the last to arrive was %s, "
		    "%s after this node's ranks were all here", d1,
		    who(c->t.last_rank, (long)c->t.last_node, -1, w, sizeof(w)),
		    dur(c->t.released > c->t.posted ? c->t.released - c->t.posted :
		    0, d2, sizeof(d2)));
	else if (c->t.posted != 0 && c->t.last_node < 0)
		snprintf(buf, len, "after %s: this node's ranks were all here "
		    "%s before the other nodes'", d1, dur(c->t.released >
		    c->t.posted ? c->t.released - c->t.posted : 0, d2, sizeof(d2)));
	else
		snprintf(buf, len, "after %s: the last to arrive was %s, %s "
		    "after rank %lld", d1, who(j->rank_of[last_l], j->node,
		    last_l, w, sizeof(w)), dur(last - mine, d2, sizeof(d2)),
		    (long long)j->rank_of[lrank]);
	return 0;
}
