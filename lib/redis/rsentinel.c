/* rsentinel.c: which server is Redis' master now, as the sentinels say, and a word when that changes.
 *
 * What Redis asks of a Sentinel client (its "sentinel-clients" page): ask the
 * sentinels in turn, the first that answers wins, for the master's address
 * (SENTINEL get-master-addr-by-name), at every (re)connect; check with ROLE
 * that the server is the master (rconn.c does, as part of its set-up); and
 * listen on a sentinel for +switch-master, so that a failover is noticed when
 * it happens, not at the next error (a master SIGSTOPped past the sentinels'
 * down-after-milliseconds has no error to give: its connections just hang).
 *
 * Two connections, each a hiredis async context driven by the helper's own
 * poll(2) loop as rconn.c drives its own: Q asks, one sentinel at a time, and
 * is closed once answered; S subscribes, to one sentinel, for as long as the
 * helper runs, and moves to the next sentinel when its own fails. Neither
 * frees a context inside a hiredis callback: a callback records and asks for
 * a reset, done once hiredis has returned (rconn.c says why).
 */
#define _GNU_SOURCE
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "keepalive.h"
#include "log.h"
#include "rsentinel.h"

enum { Q, S };

/* A sentinel that has not answered the question by then is passed over. */
#define ASK_MS 2000
/* The subscriber's dial, and its wait before the next sentinel. */
#define SUB_MS 5000
#define SUB_RETRY_MS 1000
/* The subscription is PINGed this often and must answer within SUB_MS: a
 * sentinel that hangs (SIGSTOP, a frozen VM) keeps its TCP connection, and
 * the kernel's ACKs keep keepalive quiet, while failovers go by unheard. */
#define SUB_PING_MS 5000

static struct {
	const struct ac_rdv_url		*u;
	const struct ac_rsent_hooks	*h;
	redisAsyncContext	*ac[2];
	int			 want[2][2];	/* [Q|S][read|write] */
	int			 at[2];		/* the sentinel it talks to */
	int			 reset[2];	/* close it at the next safe point */
	long			 deadline[2];	/* ms, or 0 */
	int			 asking;	/* a question is out */
	int			 tried;		/* sentinels asked for it */
	int			 answered;	/* Q answered: close, no failure */
	char			 why[1400];	/* what each sentinel asked said */
	int			 subscribed;	/* S: +switch-master is ours */
	int			 lost;		/* S: was subscribed, then lost */
	long			 sub_at;	/* S: when to dial again */
	long			 ping_at;	/* S: when to PING it next */
	int			 started;
} T;

#define HOOK(name, i, rw, v)						\
	static void name(void *p) { (void)p; T.want[i][rw] = v; }
HOOK(q_add_read, Q, 0, 1) HOOK(q_del_read, Q, 0, 0)
HOOK(q_add_write, Q, 1, 1) HOOK(q_del_write, Q, 1, 0)
HOOK(s_add_read, S, 0, 1) HOOK(s_del_read, S, 0, 0)
HOOK(s_add_write, S, 1, 1) HOOK(s_del_write, S, 1, 0)
static void q_cleanup(void *p) { (void)p; T.want[Q][0] = T.want[Q][1] = 0; }
static void s_cleanup(void *p) { (void)p; T.want[S][0] = T.want[S][1] = 0; }

static int
which(const redisAsyncContext *ac)
{
	return ac == T.ac[Q] ? Q : ac == T.ac[S] ? S : -1;
}

/* "host:port" of sentinel I, for messages. */
static const char *
name_of(int i)
{
	static char buf[300];

	return ac_rdv_hostport(T.u->hosts[i].host, T.u->hosts[i].port, buf,
	    sizeof(buf));
}

/* The question's sentinel failed with WHY: note it; the next one is asked. */
static void
q_failed(const char *why)
{
	size_t k = strlen(T.why);

	if (!T.asking || T.reset[Q])
		return;
	snprintf(T.why + k, sizeof(T.why) - k, "%s%s: %.200s", k ? "; " : "",
	    name_of(T.at[Q]), why);
	T.reset[Q] = 1;
}

static void
s_failed(const char *why)
{
	if (T.reset[S])
		return;
	if (T.subscribed)
		ac_log("rendezvous: sentinel %s: %s; listening to the next one "
		    "for failovers", name_of(T.at[S]), why);
	T.lost |= T.subscribed;
	T.subscribed = 0;
	T.reset[S] = 1;
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
	int i = which(ac);

	(void)status;
	if (i < 0)
		return;
	T.ac[i] = NULL;		/* hiredis frees it when we return */
	if (i == Q && !T.answered)
		q_failed(ac->errstr[0] ? ac->errstr : "connection closed");
	else if (i == S)
		s_failed(ac->errstr[0] ? ac->errstr : "connection closed");
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
	int i = which(ac);

	if (i < 0 || status == 0)
		return;
	T.ac[i] = NULL;		/* hiredis frees it when we return */
	if (i == Q)
		q_failed(ac->errstr[0] ? ac->errstr : "cannot connect");
	else
		s_failed(ac->errstr[0] ? ac->errstr : "cannot connect");
}

/* AUTH with the sentinels' password: a refusal is the sentinel's answer. */
static void
on_auth(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	int i = which(ac);

	(void)priv;
	if (reply == NULL || reply->type != REDIS_REPLY_ERROR || i < 0)
		return;
	if (i == Q)
		q_failed(reply->str);
	else
		s_failed(reply->str);
}

/* SENTINEL get-master-addr-by-name's answer: {host, port}, or nil. */
static void
on_answer(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	char host[256];
	long port;

	(void)ac;
	(void)priv;
	if (reply == NULL || !T.asking || T.reset[Q])
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		q_failed(reply->str);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[1]->type != REDIS_REPLY_STRING ||
	    reply->element[0]->len == 0 ||
	    reply->element[0]->len >= sizeof(host) ||
	    (port = strtol(reply->element[1]->str, NULL, 10)) <= 0 ||
	    port > 65535) {
		char why[200];

		snprintf(why, sizeof(why), "does not know master '%.100s'",
		    T.u->master);
		q_failed(why);
		return;
	}
	memcpy(host, reply->element[0]->str, reply->element[0]->len + 1);
	T.answered = 1;
	T.asking = 0;
	T.reset[Q] = 1;
	T.h->found(host, (int)port);
}

/* A reply on the subscription: 0 to read it; -1 when it is closed or an
 * error (which fails the subscription: the next sentinel is tried). */
static int
s_reply(const redisReply *reply)
{
	if (reply == NULL || T.reset[S])
		return -1;
	if (reply->type == REDIS_REPLY_ERROR) {
		s_failed(reply->str);
		return -1;
	}
	return 0;
}

/*
 * The subscription's messages: {"subscribe", channel, n} once, then
 * {"message", "+switch-master", "NAME OLDIP OLDPORT NEWIP NEWPORT"}.
 */
static void
on_message(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;
	char name[128], host[256];
	int port;

	(void)ac;
	(void)priv;
	if (s_reply(reply) == -1)
		return;
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
	    reply->element[0]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(reply->element[0]->str, "subscribe") == 0) {
		T.subscribed = 1;
		T.deadline[S] = 0;
		T.ping_at = ac_now_ms() + SUB_PING_MS;
		if (T.lost) {
			T.lost = 0;
			T.h->switched(NULL, 0);
		}
		return;
	}
	if (strcmp(reply->element[0]->str, "message") != 0 ||
	    reply->element[2]->type != REDIS_REPLY_STRING ||
	    sscanf(reply->element[2]->str, "%127s %*s %*s %255s %d", name, host,
	    &port) != 3 || strcmp(name, T.u->master) != 0 || port <= 0 ||
	    port > 65535)
		return;
	T.h->switched(host, port);
}

/* The subscription's PING answered ({"pong", ""} in subscribed mode). */
static void
on_pong(redisAsyncContext *ac, void *r, void *priv)
{
	redisReply *reply = r;

	(void)ac;
	(void)priv;
	if (s_reply(reply) == -1)
		return;
	T.deadline[S] = 0;
	T.ping_at = ac_now_ms() + SUB_PING_MS;
}

/* Connection I to sentinel AT, with AUTH first when the sentinels have a password. */
static int
dial(int i, int at, long now)
{
	const struct ac_rdv_host *h = &T.u->hosts[at];
	redisAsyncContext *ac = redisAsyncConnect(h->host, h->port);

	T.at[i] = at;
	T.deadline[i] = now + (i == Q ? ASK_MS : SUB_MS);
	if (ac == NULL || ac->err) {
		if (i == Q)
			q_failed(ac != NULL ? ac->errstr : "out of memory");
		else
			s_failed(ac != NULL ? ac->errstr : "out of memory");
		if (ac != NULL)
			redisAsyncFree(ac);
		return -1;
	}
	if (ac->c.fd >= 0)
		ac_keepalive(ac->c.fd);
	ac->ev.data = NULL;
	ac->ev.addRead = i == Q ? q_add_read : s_add_read;
	ac->ev.delRead = i == Q ? q_del_read : s_del_read;
	ac->ev.addWrite = i == Q ? q_add_write : s_add_write;
	ac->ev.delWrite = i == Q ? q_del_write : s_del_write;
	ac->ev.cleanup = i == Q ? q_cleanup : s_cleanup;
	T.want[i][1] = 1;
	T.ac[i] = ac;
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	if (T.u->spassword[0])
		redisAsyncCommand(ac, on_auth, NULL, "AUTH %s", T.u->spassword);
	if (i == Q)
		redisAsyncCommand(ac, on_answer, NULL,
		    "SENTINEL get-master-addr-by-name %s", T.u->master);
	else
		redisAsyncCommand(ac, on_message, NULL, "SUBSCRIBE +switch-master");
	return 0;
}

/* Close what a callback asked to close; ask the next sentinel, or give up. */
static void
settle(long now)
{
	for (int i = 0; i < 2; i++) {
		redisAsyncContext *ac;

		if (!T.reset[i])
			continue;
		T.reset[i] = 0;
		T.deadline[i] = 0;
		if ((ac = T.ac[i]) != NULL) {
			T.ac[i] = NULL;
			redisAsyncFree(ac);	/* pending callbacks get NULL */
		}
		T.want[i][0] = T.want[i][1] = 0;
		if (i == S) {
			T.sub_at = now + SUB_RETRY_MS;
			T.at[S] = (T.at[S] + 1) % T.u->nhosts;
		}
	}
	while (T.asking && T.ac[Q] == NULL) {
		if (++T.tried >= T.u->nhosts) {
			char why[1500];

			T.asking = 0;
			/* The next question starts with the next sentinel. */
			T.at[Q] = (T.at[Q] + 1) % T.u->nhosts;
			snprintf(why, sizeof(why), "no sentinel answered: %s",
			    T.why);
			T.h->failed(why);
			break;
		}
		T.at[Q] = (T.at[Q] + 1) % T.u->nhosts;
		if (dial(Q, T.at[Q], now) == 0)
			break;
		T.reset[Q] = 0;
	}
}

void
ac_rsent_start(const struct ac_rdv_url *u, const struct ac_rsent_hooks *h)
{
	memset(&T, 0, sizeof(T));
	T.u = u;
	T.h = h;
	T.started = 1;
	if (dial(S, 0, ac_now_ms()) == -1)
		settle(ac_now_ms());
}

void
ac_rsent_ask(void)
{
	long now = ac_now_ms();

	if (!T.started || T.asking)
		return;
	T.asking = 1;
	T.answered = 0;
	T.tried = 0;
	T.why[0] = '\0';
	/* The sentinel that answered last is asked first (T.at[Q] stays). */
	if (dial(Q, T.at[Q], now) == -1) {
		T.reset[Q] = 0;
		settle(now);
	}
}

void
ac_rsent_distrust(void)
{
	if (T.started && !T.asking && T.u->nhosts > 1)
		T.at[Q] = (T.at[Q] + 1) % T.u->nhosts;
}

int
ac_rsent_asking(void)
{
	return T.asking;
}

int
ac_rsent_fds(struct pollfd *pfd, int room)
{
	int n = 0;

	for (int i = 0; i < 2 && n < room; i++) {
		if (T.ac[i] == NULL || T.ac[i]->c.fd < 0)
			continue;
		pfd[n].fd = T.ac[i]->c.fd;
		pfd[n].events = (short)((T.want[i][0] ? POLLIN : 0) |
		    (T.want[i][1] ? POLLOUT : 0));
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

void
ac_rsent_events(const struct pollfd *pfd, int n)
{
	for (int k = 0; k < n; k++)
		for (int i = 0; i < 2; i++) {
			/* Looked up again each time: a callback may end it. */
			if (T.ac[i] == NULL || T.ac[i]->c.fd != pfd[k].fd)
				continue;
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				redisAsyncHandleRead(T.ac[i]);
			if (T.ac[i] != NULL && T.ac[i]->c.fd == pfd[k].fd &&
			    (pfd[k].revents & POLLOUT))
				redisAsyncHandleWrite(T.ac[i]);
			break;
		}
	settle(ac_now_ms());
}

long
ac_rsent_timer(long now)
{
	long next = -1;

	if (!T.started)
		return -1;
	for (int i = 0; i < 2; i++)
		if (T.ac[i] != NULL && T.deadline[i] != 0 && now >= T.deadline[i]) {
			if (i == Q)
				q_failed("no answer in time");
			else
				s_failed("no answer in time");
		}
	settle(now);
	if (T.ac[S] == NULL && now >= T.sub_at && dial(S, T.at[S], now) == -1)
		settle(now);
	if (T.ac[S] != NULL && T.subscribed && T.deadline[S] == 0 &&
	    now >= T.ping_at) {
		T.deadline[S] = now + SUB_MS;
		T.ping_at = now + SUB_PING_MS;
		redisAsyncCommand(T.ac[S], on_pong, NULL, "PING");
	}
	for (int i = 0; i < 2; i++)
		if (T.ac[i] != NULL && T.deadline[i] != 0 &&
		    (next < 0 || T.deadline[i] - now < next))
			next = T.deadline[i] - now;
	if (T.ac[S] == NULL && (next < 0 || T.sub_at - now < next))
		next = T.sub_at > now ? T.sub_at - now : 0;
	if (T.ac[S] != NULL && T.subscribed && T.deadline[S] == 0 &&
	    (next < 0 || T.ping_at - now < next))
		next = T.ping_at > now ? T.ping_at - now : 0;
	return next;
}

void
ac_rsent_stop(void)
{
	T.reset[Q] = T.reset[S] = 1;
	T.asking = 0;
	settle(ac_now_ms());
	T.started = 0;
}
