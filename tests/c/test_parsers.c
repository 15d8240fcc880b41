/* test_parsers.c: unit tests of the number, Slurm list, option and rendezvous
 * URL parsers (Redis and etcd), of the SHA-256 behind the rendezvous server's ACL user, and
 * of a barrier's failing ranks' text (fails.c). */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "args.h"
#include "check.h"
#include "etcdurl.h"
#include "fails.h"
#include "num.h"
#include "rcluster.h"
#include "ttl.h"
#include "rdvurl.h"
#include "sha256.h"
#include "slurm.h"

static void
test_uint(void)
{
	const char *why = NULL;
	long v = -5;

	CHECK(ac_parse_uint("0", 10, &v, &why) == 0 && v == 0);
	CHECK(ac_parse_uint("007", 10, &v, &why) == 0 && v == 7);
	CHECK(ac_parse_uint("10", 10, &v, &why) == 0 && v == 10);
	CHECK(ac_parse_uint("5", 3, &v, &why) == -1);
	CHECK(ac_parse_uint("3", 3, &v, &why) == 0 && v == 3);
	CHECK(ac_parse_uint("2", 1, &v, &why) == -1);
	CHECK(ac_parse_uint("11", 10, &v, &why) == -1);
	CHECK_STR(why, "too large");
	CHECK(ac_parse_uint("99999999999999999999", LONG_MAX, &v, &why) == -1);
	CHECK_STR(why, "too large");
	CHECK(ac_parse_uint("9223372036854775807", LONG_MAX, &v, &why) == 0 &&
	    v == LONG_MAX);
	CHECK(ac_parse_uint("9223372036854775808", LONG_MAX, &v, &why) == -1);
	const char *bad[] = { "", "-1", "+1", " 1", "1 ", "1x", "0x10", "1.0",
	    "abc", "１", NULL };
	for (int i = 0; bad[i] != NULL; i++) {
		v = 42;
		CHECK(ac_parse_uint(bad[i], 100, &v, &why) == -1 && v == 42);
	}
	CHECK(ac_parse_uint(NULL, 1, &v, &why) == -1);
}

/* The store's lifetime: seconds or a duration, 1 s to 10 years (issue 18). */
static void
test_ttl(void)
{
	static const char *const bad[] = { "abc", "0", "0s", "-5", "1.5", "1x",
	    "1ms", " 1", "1 ", "3651d", "99999999999999999999", "d" };
	const char *why;
	long v;

	CHECK(ac_ttl_parse(NULL, &v, &why) == 0 && v == AC_TTL_DEFAULT);
	CHECK(ac_ttl_parse("", &v, &why) == 0 && v == AC_TTL_DEFAULT);
	CHECK(ac_ttl_parse("3", &v, &why) == 0 && v == 3);
	CHECK(ac_ttl_parse("90s", &v, &why) == 0 && v == 90);
	CHECK(ac_ttl_parse("30m", &v, &why) == 0 && v == 1800);
	CHECK(ac_ttl_parse("12h", &v, &why) == 0 && v == 43200);
	CHECK(ac_ttl_parse("1d", &v, &why) == 0 && v == 86400);
	CHECK(ac_ttl_parse("3650d", &v, &why) == 0 && v == 315360000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(ac_ttl_parse(bad[i], &v, &why) == -1 && why != NULL);
}

static void
test_node_timeout(void)
{
	static const char *const bad[] = { "abc", "0", "2", "2s", "1.5", "1ms",
	    "2d", "25h", "86401", " 5", "99999999999999999999" };
	const char *why;
	long v;

	CHECK(ac_node_timeout_parse(NULL, &v, &why) == 0 &&
	    v == AC_NODE_TIMEOUT_DEFAULT);
	CHECK(ac_node_timeout_parse("", &v, &why) == 0 && v == 30);
	CHECK(ac_node_timeout_parse("3", &v, &why) == 0 && v == 3);
	CHECK(ac_node_timeout_parse("45s", &v, &why) == 0 && v == 45);
	CHECK(ac_node_timeout_parse("5m", &v, &why) == 0 && v == 300);
	CHECK(ac_node_timeout_parse("24h", &v, &why) == 0 && v == 86400);
	CHECK(ac_node_timeout_parse("1d", &v, &why) == 0 && v == 86400);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(ac_node_timeout_parse(bad[i], &v, &why) == -1 && why != NULL &&
		    v == AC_NODE_TIMEOUT_DEFAULT);
}

static void
test_shorten(void)
{
	char buf[48], big[100001];

	CHECK_STR(ac_shorten("abc", buf, sizeof(buf)), "abc");
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(strlen(ac_shorten(big, buf, sizeof(buf))) == 43);
	CHECK(strcmp(buf + 40, "...") == 0);
}

static void
test_slurm(void)
{
	long c, nn, nt;
	const char *why;

	CHECK(ac_slurm_tasks_on_node("2(x3),1", 0, &c, &nn, &nt, &why) == 0 &&
	    c == 2 && nn == 4 && nt == 7);
	CHECK(ac_slurm_tasks_on_node("2(x3),1", 2, &c, &nn, &nt, &why) == 0 &&
	    c == 2);
	CHECK(ac_slurm_tasks_on_node("2(x3),1", 3, &c, &nn, &nt, &why) == 0 &&
	    c == 1);
	CHECK(ac_slurm_tasks_on_node("2(x3),1", 4, &c, &nn, &nt, &why) == -1);
	CHECK_STR(why, "lists fewer nodes than the node id");
	CHECK(ac_slurm_tasks_on_node("5,1(x3)", 3, &c, &nn, &nt, &why) == 0 &&
	    c == 1 && nn == 4 && nt == 8);
	CHECK(ac_slurm_tasks_on_node("4", 0, &c, &nn, &nt, &why) == 0 && c == 4);
	const char *bad[] = { "", "garbage", "2(x3", "2(3)", "2(x)", "2(x0)",
	    "2,", ",2", "2,,1", "2(x3)1", "-1", "2(x99999999999)",
	    "99999999999", "1(x1000000),1(x1000000)", NULL };
	for (int i = 0; bad[i] != NULL; i++) {
		why = NULL;
		CHECK(ac_slurm_tasks_on_node(bad[i], 0, &c, &nn, &nt, &why) == -1);
		CHECK(why != NULL);
	}
}

static void
test_args(void)
{
	static const struct ac_optdef defs[] = {
		{ "nproc", 'n', "K", "" },
		{ "tag", 'l', NULL, "" },
		{ NULL, 0, NULL, NULL }
	};
	char *argv1[] = { "-n4", "x", "--tag", "-1", "--", "cmd", "--tag", NULL };
	char *argv2[] = { "--nproc=8", "-n", "9", NULL };
	char *argv3[] = { "--bogus", NULL };
	char *argv4[] = { "-n", NULL };
	char *argv5[] = { "--tag=1", NULL };
	char *argv6[] = { "-h", NULL };
	char *pos[8], err[128];
	struct ac_args a;

	CHECK(ac_args_parse(defs, 7, argv1, pos, &a, err, sizeof(err)) == 0);
	CHECK_STR(a.val[0], "4");
	CHECK(a.seen[1] == 1 && a.npos == 2 && a.dashdash && a.nchild == 2);
	CHECK_STR(a.pos[1], "-1");
	CHECK_STR(a.child[1], "--tag");
	CHECK(ac_args_parse(defs, 3, argv2, pos, &a, err, sizeof(err)) == 0);
	CHECK_STR(a.val[0], "9");
	CHECK(a.seen[0] == 2 && !a.dashdash);
	CHECK(ac_args_parse(defs, 1, argv3, pos, &a, err, sizeof(err)) == -1);
	CHECK_STR(err, "unknown option '--bogus'");
	CHECK(ac_args_parse(defs, 1, argv4, pos, &a, err, sizeof(err)) == -1);
	CHECK_STR(err, "option '--nproc' needs a value K");
	CHECK(ac_args_parse(defs, 1, argv5, pos, &a, err, sizeof(err)) == -1);
	CHECK(ac_args_parse(defs, 1, argv6, pos, &a, err, sizeof(err)) == 0 &&
	    a.help);
}

static void
test_rdvurl(void)
{
	struct ac_rdv_url u;
	char err[512], file[] = "/tmp/test_parsers.XXXXXX";
	int fd = mkstemp(file);

	CHECK(fd != -1 && write(fd, "from-file\n", 10) == 10);
	close(fd);
	CHECK(ac_rdv_parse("redis://u:pw@h:1/2", NULL, &u, err, sizeof(err)) == 0);
	CHECK_STR(u.user, "u");
	CHECK_STR(u.password, "pw");
	CHECK(u.port == 1 && u.db == 2);
	/* One word before '@': the password, as before... */
	CHECK(ac_rdv_parse("redis://word@h:1", NULL, &u, err, sizeof(err)) == 0);
	CHECK_STR(u.user, "");
	CHECK_STR(u.password, "word");
	CHECK(ac_rdv_parse("redis://word@h:1", "", &u, err, sizeof(err)) == 0);
	CHECK_STR(u.password, "word");
	/* ...but the user when the password comes from a file (what
	 * "accelctl rendezvous start" prints). */
	CHECK(ac_rdv_parse("redis://accelctl@10.0.0.1:6379", file, &u, err,
	    sizeof(err)) == 0);
	CHECK_STR(u.user, "accelctl");
	CHECK_STR(u.password, "from-file");
	CHECK_STR(u.where, "10.0.0.1:6379");
	CHECK(ac_rdv_parse("redis://u:url-pw@h:1", file, &u, err, sizeof(err)) == 0);
	CHECK_STR(u.user, "u");
	CHECK_STR(u.password, "from-file");
	CHECK(ac_rdv_parse("redis://[::1]:7", file, &u, err, sizeof(err)) == 0);
	CHECK_STR(u.host, "::1");
	CHECK_STR(u.user, "");
	CHECK(ac_rdv_parse("redis://x@h:1", "/nonexistent/pw", &u, err,
	    sizeof(err)) == -1);
	unlink(file);
}

/* redis-sentinel:// (issue 20): the sentinels, their default port, the
 * master's name, Redis' password; bad forms refused without the password. */
static void
test_sentinelurl(void)
{
	struct ac_rdv_url u;
	char err[512], url[] = "redis-sentinel://u:s3cret@h1:5,[::1]:6#m";
	static const char *const bad[] = {
		"redis-sentinel://h1:5",		/* no master */
		"redis-sentinel://h1:5#",		/* an empty one */
		"redis-sentinel://h1:5#a b",		/* a space in it */
		"redis-sentinel://h1:5#m\001x",		/* a control byte in it */
		"redis-sentinel://h1:5#m\303\251",	/* not ASCII */
		"redis-sentinel://#m",			/* no sentinel */
		"redis-sentinel://h1,#m",		/* an empty one */
		"redis-sentinel://h1:0#m",		/* port 0 */
		"redis-sentinel://h1:x#m",		/* not a port */
		"redis-sentinel://h1/x#m",		/* not a database */
		"redis-sentinel://pw@[::1#m",		/* [IPv6 not closed */
		"redis-sentinel://a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q#m",	/* 17 */
	};

	CHECK(ac_rdv_parse("redis-sentinel://a,b:7,c/3#mymaster", NULL, &u, err,
	    sizeof(err)) == 0);
	CHECK(u.nhosts == 3 && u.db == 3);
	CHECK_STR(u.hosts[0].host, "a");
	CHECK(u.hosts[0].port == 26379 && u.hosts[1].port == 7 &&
	    u.hosts[2].port == 26379);
	CHECK_STR(u.master, "mymaster");
	CHECK_STR(u.where, "master 'mymaster' (sentinels a:26379,b:7,c:26379)");
	CHECK(ac_rdv_parse(url, NULL, &u, err, sizeof(err)) == 0);
	CHECK_STR(u.user, "u");
	CHECK_STR(u.password, "s3cret");
	CHECK_STR(u.hosts[1].host, "::1");
	CHECK(u.hosts[1].port == 6 && u.db == 0);
	CHECK_STR(u.master, "m");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(ac_rdv_parse(bad[i], NULL, &u, err, sizeof(err)) == -1);
		CHECK(strncmp(err, "invalid rendezvous: ", 20) == 0);
		CHECK(strstr(err, "pw") == NULL);
	}
	/* The password is hidden on the command line; the master's name stays. */
	ac_rdv_scrub(url);
	CHECK_STR(url, "redis-sentinel://u:******@h1:5,[::1]:6#m");
	/* The user part ends at the last '@': a password with '#' or '/' is
	 * the password, hidden on the command line, never a master's name. */
	CHECK(ac_rdv_parse("redis-sentinel://u:p#s/w@h1#m", NULL, &u, err,
	    sizeof(err)) == 0);
	CHECK_STR(u.password, "p#s/w");
	CHECK_STR(u.master, "m");
	CHECK(u.nhosts == 1 && u.db == 0);
	strcpy(url, "redis-sentinel://u:p#ss@h1:5#m");
	ac_rdv_scrub(url);
	CHECK_STR(url, "redis-sentinel://u:****@h1:5#m");
	CHECK(ac_rdv_parse("redis-sentinel://s3cr#tpass@127.0.0.1:1", NULL, &u,
	    err, sizeof(err)) == -1);
	CHECK(strstr(err, "tpass") == NULL && strstr(err, "s3cr") == NULL);
	CHECK(ac_rdv_parse("redis-sentinel://h#m#n", NULL, &u, err,
	    sizeof(err)) == -1);
	/* A password file that cannot be read (a directory) is an error. */
	setenv("ACCELCTL_SENTINEL_PASSWORD_FILE", "/tmp", 1);
	CHECK(ac_rdv_parse("redis-sentinel://h1#m", NULL, &u, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "ACCELCTL_SENTINEL_PASSWORD_FILE") != NULL);
	unsetenv("ACCELCTL_SENTINEL_PASSWORD_FILE");
}

/* redis-cluster:// (issue 20): seed nodes, 6379 by default, no database. */
static void
test_clusterurl(void)
{
	struct ac_rdv_url u;
	char err[512], url[] = "redis-cluster://u:p/w#d@h1,h2:7";

	CHECK(ac_rdv_parse(url, NULL, &u, err, sizeof(err)) == 0);
	CHECK(u.cluster && u.nhosts == 2 && u.hosts[0].port == 6379 &&
	    u.hosts[1].port == 7);
	CHECK_STR(u.password, "p/w#d");
	CHECK_STR(u.host, "h1");
	CHECK_STR(u.where, "cluster h1:6379,h2:7");
	ac_rdv_scrub(url);
	CHECK_STR(url, "redis-cluster://u:*****@h1,h2:7");
	CHECK(ac_rdv_parse("redis-cluster://h1:7/1", NULL, &u, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "no databases") != NULL);
	CHECK(ac_rdv_parse("redis-cluster://", NULL, &u, err, sizeof(err)) == -1);
	CHECK(ac_rdv_parse("redis-cluster://h1,", NULL, &u, err, sizeof(err)) == -1);
}

static void
test_etcdurl(void)
{
	struct ac_etcd_url u;
	char err[512];

	/* The user part ends at the last '@': a password may hold '/', '?', '@'. */
	CHECK(ac_etcd_parse("etcd://u:a/b?c@d@h:1,k:2", NULL, NULL, NULL, NULL, &u,
	    err, sizeof(err)) == 0);
	CHECK_STR(u.user, "u");
	CHECK_STR(u.password, "a/b?c@d");
	CHECK(u.n == 2 && u.port[0] == 1 && u.port[1] == 2);
	CHECK_STR(u.where[1], "k:2");
	CHECK(ac_etcd_parse("etcd://pw/x@h:1", NULL, NULL, NULL, NULL, &u, err,
	    sizeof(err)) == 0);
	CHECK_STR(u.user, "root");
	CHECK_STR(u.password, "pw/x");
	/* A path after the endpoints is still refused. */
	CHECK(ac_etcd_parse("etcd://u:p@h:1/v3", NULL, NULL, NULL, NULL, &u, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "no path after the endpoints") != NULL);
	CHECK(ac_etcd_parse("etcd://h:1?x", NULL, NULL, NULL, NULL, &u, err,
	    sizeof(err)) == -1);
	/* Nothing before '@' says so, not "user 'root' without a password". */
	CHECK(ac_etcd_parse("etcd://@h:1", NULL, NULL, NULL, NULL, &u, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "nothing between '//' and '@'") != NULL);
	CHECK(strstr(err, "root") == NULL);
	CHECK(ac_etcd_parse("etcd://:@h:1", NULL, NULL, NULL, NULL, &u, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "nothing between '//' and '@'") != NULL);
	CHECK(ac_etcd_parse("etcd://u:@h:1", NULL, NULL, NULL, NULL, &u, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "user 'u' without a password") != NULL);
	/* No message holds the password. */
	CHECK(ac_etcd_parse("etcd://u:se/cret@h:0", NULL, NULL, NULL, NULL, &u, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "se/cret") == NULL);
}

static void
test_sha256(void)
{
	char hex[65], big[1000];

	/* FIPS 180-4 examples, and lengths around the padding's edges. */
	ac_sha256_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ac_sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	ac_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(big, 'a', sizeof(big));
	ac_sha256_hex(big, sizeof(big), hex);
	CHECK_STR(hex, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

/* The rule of fails.c, which BARRIER_LUA follows too (t_barrier
 * testManyFailingRanks checks the two agree). */
static void
test_fails(void)
{
	struct ac_fail *f = NULL;
	size_t n = 0, cap = 0, more = 0;
	char buf[512], want[512];
	size_t w = 0;

	CHECK(ac_fails_text(NULL, 0, 0, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "");
	/* Two nodes' arrivals, out of order; a malformed tail is ignored. */
	n = ac_fails_add("5:2 3:9", &f, n, &cap, &more);
	n = ac_fails_add("1:4 x:1", &f, n, &cap, &more);
	n = ac_fails_add(NULL, &f, n, &cap, &more);
	CHECK(n == 3);
	CHECK(ac_fails_text(f, n, 0, buf, sizeof(buf)) == 4);
	CHECK_STR(buf, "1 (exit 4), 3 (exit 9), 5 (exit 2)");
	/* 48 failing: 37 fit in 480 bytes, the rest counted. */
	n = 0;
	for (int r = 47; r >= 0; r--) {
		char one[32];

		snprintf(one, sizeof(one), "%d:1", r);
		n = ac_fails_add(one, &f, n, &cap, &more);
	}
	CHECK(n == 48);
	CHECK(ac_fails_text(f, n, 0, buf, sizeof(buf)) == 1);
	for (int r = 0; r <= 36; r++)
		w += (size_t)snprintf(want + w, sizeof(want) - w, "%s%d (exit 1)",
		    r ? ", " : "", r);
	snprintf(want + w, sizeof(want) - w, ", and 11 more");
	CHECK_STR(buf, want);
	/* 45 short ones: 40 shown whatever room is left. */
	n = 0;
	for (int r = 0; r < 45; r++)
		n = ac_fails_add("7:1", &f, n, &cap, &more);
	(void)ac_fails_text(f, n, 0, buf, sizeof(buf));
	CHECK(strstr(buf, "7 (exit 1), and 5 more") != NULL && strlen(buf) == 490);
	/* The largest numbers still fit with their count. */
	n = 0;
	for (int r = 0; r < 100; r++)
		n = ac_fails_add("9223372036854775807:9223372036854775807", &f, n,
		    &cap, &more);
	(void)ac_fails_text(f, n, 0, buf, sizeof(buf));
	CHECK(strlen(buf) < sizeof(buf) - 1 && strstr(buf, " more") != NULL);
	/* Nodes say their lowest and how many more ("+N"): counted. */
	n = more = 0;
	n = ac_fails_add("4:2 6:2 +300", &f, n, &cap, &more);
	n = ac_fails_add("2:7 +5", &f, n, &cap, &more);
	CHECK(n == 3 && more == 305);
	CHECK(ac_fails_text(f, n, more, buf, sizeof(buf)) == 7);
	CHECK_STR(buf, "2 (exit 7), 4 (exit 2), 6 (exit 2), and 305 more");
	CHECK(ac_fails_text(f, 0, 3, buf, sizeof(buf)) == 1);
	CHECK_STR(buf, "and 3 more");
	free(f);
}

/* MOVED and ASK (issue 20): which, and where; anything else is neither. */
static void
test_redirect(void)
{
	struct ac_rdv_host h;
	static const char *const none[] = { "MOVED", "MOVED 3999", "ASK 3999 ",
	    "ASK 3999 h:0", "ASK 3999 h:x", "MOVED 1 h:70000", "TRYAGAIN x",
	    "ERR MOVED 1 h:1", "ASKING", "" };

	CHECK(ac_rcluster_redirect("MOVED 3999 127.0.0.1:6381", "c", &h) ==
	    AC_REDIRECT_MOVED);
	CHECK_STR(h.host, "127.0.0.1");
	CHECK(h.port == 6381);
	CHECK(ac_rcluster_redirect("ASK 3999 ::1:7002", "c", &h) ==
	    AC_REDIRECT_ASK);
	CHECK_STR(h.host, "::1");
	CHECK(h.port == 7002);
	/* Redis 7's unknown endpoint: the host we asked. */
	CHECK(ac_rcluster_redirect("ASK 1 :7003", "here", &h) == AC_REDIRECT_ASK);
	CHECK_STR(h.host, "here");
	CHECK(ac_rcluster_redirect("ASK 1 h:7003", "c", NULL) == AC_REDIRECT_ASK);
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		CHECK(ac_rcluster_redirect(none[i], "c", &h) == AC_REDIRECT_NONE);
}

int
main(void)
{
	test_uint();
	test_ttl();
	test_node_timeout();
	test_shorten();
	test_slurm();
	test_args();
	test_rdvurl();
	test_sentinelurl();
	test_clusterurl();
	test_redirect();
	test_etcdurl();
	test_sha256();
	test_fails();
	return CHECK_DONE();
}
