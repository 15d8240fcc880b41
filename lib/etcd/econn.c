/* econn.c: the helper's HTTP connection to etcd's JSON gateway, on libcurl's multi socket interface.
 *
 * libcurl never owns a loop here: CURLMOPT_SOCKETFUNCTION tells us which
 * descriptors it wants watched for what, CURLMOPT_TIMERFUNCTION its one next
 * deadline, and the helper's poll(2) loop hands back what happened through
 * curl_multi_socket_action() (fds(), events(), timer() below). No thread of
 * ours, no blocking call, no polling: a reply or a watch event wakes the loop.
 * (A host name is resolved on a short-lived thread of libcurl's own: Debian
 * builds libcurl with its threaded resolver, and getaddrinfo() in our loop
 * would block it; a numeric address needs no resolving at all.)
 *
 * Nothing is acted on inside a libcurl callback: the write callback only
 * appends to the request's buffer; finished transfers and whole lines of the
 * watch stream are handled once curl_multi_socket_action() has returned, so a
 * handler may add or remove transfers freely.
 *
 * Failures are of two kinds (DESIGN.md §4). Transient (refused, reset, a
 * timeout, an endpoint that stalls, "leader changed", an expired token, the
 * watch stream ending): every transfer is dropped, the next endpoint of the
 * list is tried (at once while some have not been tried since the last
 * success, then after a capped back-off), the token is asked for again, and
 * the ready hook posts everything again. Final (a refused password, a denied
 * permission, a request over etcd's size limit, a full database): down for
 * good, in etcd's own words. A request sent as large (a result's value)
 * that etcd finds too large is refused alone: its caller says so to the
 * other nodes, and the connection stays up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "econn.h"
#include "etcdso.h"
#include "log.h"

#define REQUEST_MS	5000	/* a unary request; etcd's own request timeout is 7 s */
#define CONNECT_MS	2000
#define BACKOFF_MIN_MS	50
#define BACKOFF_MAX_MS	1000
#define MAX_SOCKS	64
#define WATCH_LINE_MAX	(64 << 20)

struct req {
	struct req		*next;
	CURL			*e;
	struct curl_slist	*hdrs;
	char			*buf;		/* the reply so far */
	size_t			 len, cap;
	size_t			 scanned;	/* watch: bytes handled as lines */
	int			 watch;
	int			 auth;		/* the authenticate call itself */
	int			 large;		/* its callback handles "too large" */
	ac_econn_cb		*cb;
	void			*priv;
	char			 err[CURL_ERROR_SIZE];
};

static struct {
	struct ac_etcd_url	 u;
	const struct ac_econn_hooks *h;
	CURLM			*m;
	struct { curl_socket_t fd; int what; } socks[MAX_SOCKS];
	int			 nsocks;
	long			 curl_due;	/* ms, or -1 */
	struct req		*reqs;
	struct req		*watch;
	int			 cur;		/* the endpoint in use */
	int			 tried;		/* endpoints failed since the last success */
	int			 up;		/* authenticated: requests may go */
	int			 connecting;	/* the authenticate call is out */
	long			 next_try;	/* ms: connect again, or -1 */
	long			 backoff;
	char			 token[512];
	char			 refusal[512];	/* a large request's, during its callback */
	char			 down[1024];	/* "" while healthy */
	int			 final;
	unsigned long		 nreq;
	unsigned long		 answers;	/* answers and watch messages handed over */
	int			 started;
} E;

long long
ac_json_i64(const json_t *obj, const char *field)
{
	json_t *v = obj != NULL ? json_object_get(obj, field) : NULL;

	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	return 0;
}

static int
on_socket(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
	(void)e;
	(void)userp;
	(void)socketp;
	for (int i = 0; i < E.nsocks; i++)
		if (E.socks[i].fd == fd) {
			if (what == CURL_POLL_REMOVE)
				E.socks[i] = E.socks[--E.nsocks];
			else
				E.socks[i].what = what;
			return 0;
		}
	if (what != CURL_POLL_REMOVE && E.nsocks < MAX_SOCKS) {
		E.socks[E.nsocks].fd = fd;
		E.socks[E.nsocks++].what = what;
	}
	return 0;
}

static int
on_timer(CURLM *m, long ms, void *userp)
{
	(void)m;
	(void)userp;
	E.curl_due = ms < 0 ? -1 : ac_now_ms() + ms;
	return 0;
}

static size_t
on_write(char *p, size_t size, size_t n, void *userp)
{
	struct req *r = userp;
	size_t add = size * n;

	if (r->len + add + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *b;

		while (cap < r->len + add + 1)
			cap *= 2;
		if (cap > WATCH_LINE_MAX + (size_t)(16 << 20) ||
		    (b = realloc(r->buf, cap)) == NULL)
			return 0;	/* CURLE_WRITE_ERROR: a transient failure */
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, p, add);
	r->len += add;
	r->buf[r->len] = '\0';
	return add;
}

static void
free_req(struct req *r)
{
	if (r->e != NULL) {
		curl_multi_remove_handle(E.m, r->e);
		curl_easy_cleanup(r->e);
	}
	curl_slist_free_all(r->hdrs);
	free(r->buf);
	free(r);
}

static void
unlink_req(struct req *r)
{
	for (struct req **p = &E.reqs; *p != NULL; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	if (E.watch == r)
		E.watch = NULL;
}

/* Say once per outage what went wrong; a final reason stays. */
static void
set_down(const char *why)
{
	if (E.final)
		return;
	char now[sizeof(E.down)];

	snprintf(now, sizeof(now), "%s: %s", E.u.where[E.cur], why);
	if (strcmp(now, E.down) != 0)
		ac_log("rendezvous %s", now);
	memcpy(E.down, now, sizeof(E.down));
}

/* Drop every transfer; callers get NULL (and cannot send: we are down). */
static void
drop_all(void)
{
	struct req *list = E.reqs;

	E.reqs = NULL;
	E.watch = NULL;
	E.up = 0;
	E.connecting = 0;
	while (list != NULL) {
		struct req *r = list;

		list = r->next;
		if (r->cb != NULL)
			r->cb(NULL, r->priv);
		free_req(r);
	}
}

void
ac_econn_reset(const char *why)
{
	if (E.final || !E.started)
		return;
	set_down(why);
	drop_all();
	E.token[0] = '\0';
	/* The next endpoint at once, until every one failed; then back off. */
	E.cur = (E.cur + 1) % E.u.n;
	if (++E.tried < E.u.n)
		E.next_try = ac_now_ms() + 10;
	else {
		E.next_try = ac_now_ms() + E.backoff + rand() % (E.backoff / 2 + 1);
		E.backoff = E.backoff * 2 < BACKOFF_MAX_MS ? E.backoff * 2 :
		    BACKOFF_MAX_MS;
	}
}

void
ac_econn_fail(const char *why)
{
	if (E.final)
		return;
	snprintf(E.down, sizeof(E.down), "%s: %s", E.u.where[E.cur], why);
	ac_log("rendezvous %s: %s (final)", E.u.where[E.cur], why);
	E.final = 1;
	E.next_try = -1;
	drop_all();
}

/* etcd's words for a refusal: a grpc-gateway error, {"error": "...",
 * "code": N, "message": "..."}, or a stream's {"error": {...}}. */
static long long
refusal_text(long http, const char *body, char *why, size_t len)
{
	json_t *j = body != NULL ? json_loads(body, 0, NULL) : NULL;
	json_t *err = json_is_object(j) ? json_object_get(j, "error") : NULL;
	const char *msg = NULL;
	long long code = j != NULL ? ac_json_i64(j, "code") : 0;

	if (json_is_object(err)) {	/* a stream's error */
		code = ac_json_i64(err, "grpc_code");
		msg = json_string_value(json_object_get(err, "message"));
	}
	if (msg == NULL && j != NULL)
		msg = json_string_value(json_object_get(j, "message"));
	if (msg == NULL && j != NULL)
		msg = json_string_value(err);
	snprintf(why, len, "%s", msg != NULL ? msg : "");
	if (why[0] == '\0')
		snprintf(why, len, "HTTP status %ld", http);
	json_decref(j);
	return code;
}

static int
too_large(const char *why)
{
	return strstr(why, "request is too large") != NULL;
}

/*
 * etcd refused a request. Waiting cannot help a refused password, a denied
 * permission, a request over etcd's size limit or a full database (an alarm
 * only an operator clears); a lost lease is granted again; anything else (no
 * leader, a leader change, an expired token, too many requests) is tried
 * again.
 */
static void
refused(long http, const char *body)
{
	char why[256], text[384];
	long long code = refusal_text(http, body, why, sizeof(why));

	if (strstr(why, "invalid auth token") != NULL ||
	    strstr(why, "auth: revision in header is old") != NULL)
		ac_econn_reset(why);	/* authenticate again */
	else if (strstr(why, "lease not found") != NULL) {
		if (E.h->lease_lost != NULL)
			E.h->lease_lost();
		ac_econn_reset(why);
	} else if (too_large(why)) {
		snprintf(text, sizeof(text), "etcd refused a request as larger "
		    "than its limit (its --max-request-bytes): %s", why);
		ac_econn_fail(text);
	} else if (strstr(why, "database space exceeded") != NULL) {
		snprintf(text, sizeof(text), "etcd's database is full (its NOSPACE "
		    "alarm; an operator must compact, defragment and disarm it): "
		    "%s", why);
		ac_econn_fail(text);
	} else if (code == 7 || code == 16 || strstr(why, "authentication failed") ||
	    strstr(why, "permission denied") || strstr(why, "user name is empty") ||
	    strstr(why, "user name not found") || http == 404)
		ac_econn_fail(why);
	else
		ac_econn_reset(why);
}

static void on_authenticated(json_t *reply, void *priv);

/*
 * BODY as text: one JSON object, or for a watch an array of WatchRequests,
 * one object a line: the gateway reads a stream's body as a sequence of
 * requests, so several watches share one stream (and one connection).
 */
static char *
body_text(json_t *body, int watch)
{
	char *text, *one, *more;
	json_t *w;
	size_t i;

	if (!watch || !json_is_array(body))
		return json_dumps(body, JSON_COMPACT);
	text = strdup("");
	json_array_foreach(body, i, w) {
		if (text == NULL || (one = json_dumps(w, JSON_COMPACT)) == NULL)
			break;
		more = malloc(strlen(text) + strlen(one) + 2);
		if (more != NULL)
			sprintf(more, "%s%s\n", text, one);
		free(text);
		free(one);
		text = more;
	}
	if (text != NULL && i < json_array_size(body)) {
		free(text);
		text = NULL;
	}
	return text;
}

static struct req *
send_req(const char *path, json_t *body, ac_econn_cb *cb, void *priv, int watch)
{
	struct req *r = calloc(1, sizeof(*r));
	char url[700], hdr[600];
	char *text = body_text(body, watch);

	json_decref(body);
	if (r == NULL || text == NULL || (r->e = curl_easy_init()) == NULL) {
		free(text);
		if (r != NULL)
			free_req(r);
		return NULL;
	}
	r->watch = watch;
	r->cb = cb;
	r->priv = priv;
	snprintf(url, sizeof(url), "%s://%s%s", E.u.tls ? "https" : "http",
	    E.u.where[E.cur], path);
	r->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	/* A large body would otherwise wait a second for "100 Continue". */
	r->hdrs = curl_slist_append(r->hdrs, "Expect:");
	/* A member that loses its leader (a partition) ends our watch with
	 * "no leader" instead of keeping it open and silent (etcd's own
	 * clients ask the same with WithRequireLeader). */
	if (watch)
		r->hdrs = curl_slist_append(r->hdrs, "Grpc-Metadata-hasleader: true");
	if (E.token[0] != '\0') {
		snprintf(hdr, sizeof(hdr), "Authorization: %s", E.token);
		r->hdrs = curl_slist_append(r->hdrs, hdr);
	}
	curl_easy_setopt(r->e, CURLOPT_URL, url);
	curl_easy_setopt(r->e, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(r->e, CURLOPT_COPYPOSTFIELDS, text);
	curl_easy_setopt(r->e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(r->e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(r->e, CURLOPT_ERRORBUFFER, r->err);
	curl_easy_setopt(r->e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->e, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_MS);
	/* A watch lasts as long as the job; keepalive finds a dead peer. */
	curl_easy_setopt(r->e, CURLOPT_TIMEOUT_MS, watch ? 0L : (long)REQUEST_MS);
	curl_easy_setopt(r->e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(r->e, CURLOPT_TCP_KEEPIDLE, 5L);
	curl_easy_setopt(r->e, CURLOPT_TCP_KEEPINTVL, 5L);
	curl_easy_setopt(r->e, CURLOPT_PROTOCOLS_STR, "http,https");
	if (E.u.tls) {
		curl_easy_setopt(r->e, CURLOPT_CAINFO, E.u.cacert);
		if (E.u.cert[0] != '\0') {
			curl_easy_setopt(r->e, CURLOPT_SSLCERT, E.u.cert);
			curl_easy_setopt(r->e, CURLOPT_SSLKEY, E.u.key);
		}
	}
	free(text);
	if (curl_multi_add_handle(E.m, r->e) != CURLM_OK) {
		free_req(r);
		return NULL;
	}
	r->next = E.reqs;
	E.reqs = r;
	E.nreq++;
	return r;
}

/* Dial the endpoint in use: authenticate first when there is a user. */
static void
connect_now(void)
{
	E.next_try = -1;
	if (E.u.user[0] == '\0') {
		E.up = 1;
		E.h->ready();
		return;
	}
	struct req *r = send_req("/v3/auth/authenticate", json_pack("{s:s, s:s}",
	    "name", E.u.user, "password", E.u.password), on_authenticated, NULL, 0);

	if (r == NULL) {
		ac_econn_reset("out of memory");
		return;
	}
	r->auth = 1;
	E.connecting = 1;
}

static void
on_authenticated(json_t *reply, void *priv)
{
	const char *tok;

	(void)priv;
	E.connecting = 0;
	if (reply == NULL)
		return;		/* reset (or failed) already */
	tok = json_string_value(json_object_get(reply, "token"));
	snprintf(E.token, sizeof(E.token), "%s", tok != NULL ? tok : "");
	E.up = 1;
	E.h->ready();
}

/* A transfer is over: its reply, or why not. */
static void
finished(struct req *r, CURLcode rc)
{
	long http = 0;
	char why[CURL_ERROR_SIZE + 64];

	unlink_req(r);
	curl_easy_getinfo(r->e, CURLINFO_RESPONSE_CODE, &http);
	if (r->watch) {
		/* A watch never ends while all is well: etcd went away. */
		if (rc != CURLE_OK)
			snprintf(why, sizeof(why), "watch: %s", r->err[0] ? r->err :
			    curl_easy_strerror(rc));
		else if (http != 200) {
			free_req(r);
			refused(http, NULL);
			return;
		} else
			snprintf(why, sizeof(why), "watch closed by the server");
		free_req(r);
		ac_econn_reset(why);
		return;
	}
	if (rc != CURLE_OK) {
		snprintf(why, sizeof(why), "%s", r->err[0] ? r->err :
		    curl_easy_strerror(rc));
		if (r->cb != NULL)
			r->cb(NULL, r->priv);
		free_req(r);
		ac_econn_reset(why);
		return;
	}
	if (http != 200) {
		/* Not authenticating: "authentication is not enabled" is fine. */
		if (r->auth && r->buf != NULL &&
		    strstr(r->buf, "authentication is not enabled") != NULL) {
			json_t *none = json_object();

			r->cb(none, r->priv);
			json_decref(none);
			free_req(r);
			return;
		}
		/* A result too large for one request: its caller says so to
		 * every node; the connection is fine. */
		if (r->large && r->cb != NULL) {
			refusal_text(http, r->buf, E.refusal, sizeof(E.refusal));
			if (too_large(E.refusal)) {
				r->cb(NULL, r->priv);
				E.refusal[0] = '\0';
				free_req(r);
				return;
			}
			E.refusal[0] = '\0';
		}
		if (r->cb != NULL)
			r->cb(NULL, r->priv);
		refused(http, r->buf);
		free_req(r);
		return;
	}
	json_t *j = r->buf != NULL ? json_loadb(r->buf, r->len, 0, NULL) : NULL;

	if (j == NULL) {
		if (r->cb != NULL)
			r->cb(NULL, r->priv);
		free_req(r);
		ac_econn_reset("a reply that is not JSON (not etcd's gateway?)");
		return;
	}
	if (r->cb != NULL)
		r->cb(j, r->priv);
	json_decref(j);
	free_req(r);
}

/* Whole lines of the watch stream, one JSON message each. */
static void
watch_lines(void)
{
	struct req *r = E.watch;

	while (r != NULL && r == E.watch && r->scanned < r->len) {
		char *start = r->buf + r->scanned;
		char *nl = memchr(start, '\n', r->len - r->scanned);
		json_t *msg;

		if (nl == NULL)
			break;
		r->scanned = (size_t)(nl + 1 - r->buf);
		if (nl == start)
			continue;
		if ((msg = json_loadb(start, (size_t)(nl - start), 0, NULL)) == NULL) {
			ac_econn_reset("watch: a line that is not JSON");
			return;
		}
		if (json_object_get(msg, "error") != NULL) {
			char *text = json_dumps(msg, JSON_COMPACT);

			json_decref(msg);
			refused(200, text);
			free(text);
			return;
		}
		E.answers++;
		E.h->watch(msg);
		json_decref(msg);
	}
	/* Keep the buffer small: drop what was handled. */
	if (r != NULL && r == E.watch && r->scanned > 0) {
		memmove(r->buf, r->buf + r->scanned, r->len - r->scanned);
		r->len -= r->scanned;
		r->scanned = 0;
		if (r->buf != NULL)
			r->buf[r->len] = '\0';
	}
}

/* After curl_multi_socket_action(): what it finished, what the watch got. */
static void
drain(void)
{
	CURLMsg *msg;
	int left;

	watch_lines();
	while ((msg = curl_multi_info_read(E.m, &left)) != NULL) {
		struct req *r = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (r != NULL) {
			CURLcode rc = msg->data.result;

			if (r == E.watch)
				watch_lines();
			/* A reset in watch_lines() freed it already. */
			for (struct req *q = E.reqs; q != NULL; q = q->next)
				if (q == r) {
					E.answers++;
					finished(r, rc);
					break;
				}
		}
	}
}

void
ac_econn_start(const struct ac_etcd_url *u, const struct ac_econn_hooks *h)
{
	char why[600];

	memset(&E, 0, sizeof(E));
	E.u = *u;
	E.h = h;
	E.curl_due = -1;
	E.backoff = BACKOFF_MIN_MS;
	snprintf(E.down, sizeof(E.down), "%s: connecting", E.u.where[0]);
	if (ac_etcdso_load(why, sizeof(why)) == -1) {
		E.started = 1;
		ac_econn_fail(why);
		return;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (E.m = curl_multi_init()) == NULL) {
		E.started = 1;
		ac_econn_fail("cannot initialise libcurl");
		return;
	}
	curl_multi_setopt(E.m, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(E.m, CURLMOPT_TIMERFUNCTION, on_timer);
	/*
	 * Idle connections kept for reuse: two. A burst (everything posted
	 * again after a lost lease, a member change) opens one connection per
	 * request in flight, and libcurl's default cache (four per handle it
	 * has seen) kept them all, open and idle: a helper went from 19
	 * descriptors to 127 under the chaos suite. A barrier needs one or two
	 * requests at a time, besides the watch, which is not idle.
	 */
	curl_multi_setopt(E.m, CURLMOPT_MAXCONNECTS, 2L);
	E.started = 1;
	E.next_try = ac_now_ms();
}

int
ac_econn_fds(struct pollfd *pfd, int room)
{
	int n = 0;

	for (int i = 0; i < E.nsocks && n < room; i++, n++) {
		pfd[n].fd = E.socks[i].fd;
		pfd[n].events = (short)((E.socks[i].what & CURL_POLL_IN ? POLLIN : 0) |
		    (E.socks[i].what & CURL_POLL_OUT ? POLLOUT : 0));
		pfd[n].revents = 0;
	}
	return n;
}

void
ac_econn_events(const struct pollfd *pfd, int n)
{
	int running;

	if (E.m == NULL)
		return;
	for (int i = 0; i < n; i++) {
		int flags = 0;

		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].revents & (POLLIN | POLLHUP))
			flags |= CURL_CSELECT_IN;
		if (pfd[i].revents & POLLOUT)
			flags |= CURL_CSELECT_OUT;
		if (pfd[i].revents & (POLLERR | POLLNVAL))
			flags |= CURL_CSELECT_ERR;
		curl_multi_socket_action(E.m, pfd[i].fd, flags, &running);
		drain();
	}
}

long
ac_econn_timer(long now)
{
	long next = -1;
	int running;

	if (E.m == NULL)
		return -1;
	if (E.curl_due >= 0 && now >= E.curl_due) {
		E.curl_due = -1;
		curl_multi_socket_action(E.m, CURL_SOCKET_TIMEOUT, 0, &running);
		drain();
	}
	if (E.next_try >= 0 && now >= E.next_try)
		connect_now();
	if (E.curl_due >= 0)
		next = E.curl_due - now > 0 ? E.curl_due - now : 0;
	if (E.next_try >= 0 && (next < 0 || E.next_try - now < next))
		next = E.next_try - now > 0 ? E.next_try - now : 0;
	return next;
}

unsigned long
ac_econn_answers(void)
{
	return E.answers;
}

void
ac_econn_stop(void)
{
	struct req *list = E.reqs;

	E.reqs = NULL;
	while (list != NULL) {
		struct req *r = list;

		list = r->next;
		free_req(r);
	}
	if (E.m != NULL)
		curl_multi_cleanup(E.m);
	E.m = NULL;
	explicit_bzero(E.u.password, sizeof(E.u.password));
	explicit_bzero(E.token, sizeof(E.token));
}

int
ac_econn_up(void)
{
	return E.up && !E.final;
}

void
ac_econn_healthy(void)
{
	if (E.final)
		return;
	if (E.down[0] != '\0' && strstr(E.down, ": connecting") == NULL)
		ac_log("rendezvous %s: up", E.u.where[E.cur]);
	E.down[0] = '\0';
	E.tried = 0;
	E.backoff = BACKOFF_MIN_MS;
}

const char *
ac_econn_down(int *final)
{
	*final = E.final;
	return E.down[0] != '\0' ? E.down : NULL;
}

const char *
ac_econn_where(void)
{
	return E.u.where[E.cur];
}

int
ac_econn_call(const char *path, json_t *body, ac_econn_cb *cb, void *priv)
{
	if (!ac_econn_up() || body == NULL) {
		json_decref(body);
		return -1;
	}
	if (send_req(path, body, cb, priv, 0) == NULL) {
		ac_econn_reset("out of memory");
		return -1;
	}
	return 0;
}

int
ac_econn_call_large(const char *path, json_t *body, ac_econn_cb *cb, void *priv)
{
	struct req *r;

	if (!ac_econn_up() || body == NULL) {
		json_decref(body);
		return -1;
	}
	if ((r = send_req(path, body, cb, priv, 0)) == NULL) {
		ac_econn_reset("out of memory");
		return -1;
	}
	r->large = 1;
	return 0;
}

const char *
ac_econn_refusal(void)
{
	return E.refusal[0] != '\0' ? E.refusal : NULL;
}

int
ac_econn_watch(json_t *body)
{
	struct req *old = E.watch;

	if (!ac_econn_up() || body == NULL) {
		json_decref(body);
		return -1;
	}
	if (old != NULL) {
		unlink_req(old);
		free_req(old);
	}
	if ((E.watch = send_req("/v3/watch", body, NULL, NULL, 1)) == NULL) {
		ac_econn_reset("out of memory");
		return -1;
	}
	return 0;
}

unsigned long
ac_econn_requests(void)
{
	return E.nreq;
}

int
ac_econn_sync(const char *path, json_t *body, long timeout_ms, json_t **reply)
{
	struct req *r;
	long http = 0;
	int rc;

	if (reply != NULL)
		*reply = NULL;
	if (!ac_econn_up() || E.m == NULL) {
		json_decref(body);
		return -1;
	}
	if ((r = send_req(path, body, NULL, NULL, 0)) == NULL)
		return -1;
	/* Off the multi handle: performed here, blocking, bounded. */
	unlink_req(r);
	curl_multi_remove_handle(E.m, r->e);
	curl_easy_setopt(r->e, CURLOPT_TIMEOUT_MS, timeout_ms);
	rc = curl_easy_perform(r->e) == CURLE_OK &&
	    curl_easy_getinfo(r->e, CURLINFO_RESPONSE_CODE, &http) == CURLE_OK &&
	    http == 200 ? 0 : -1;
	if (rc == 0 && reply != NULL && r->buf != NULL)
		*reply = json_loadb(r->buf, r->len, 0, NULL);
	curl_easy_cleanup(r->e);
	r->e = NULL;
	free_req(r);
	return rc;
}
