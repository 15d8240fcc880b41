/* test_parsers.c: unit tests of the number, Slurm list and option parsers. */
#include <limits.h>

#include "args.h"
#include "check.h"
#include "num.h"
#include "slurm.h"

static void
test_uint(void)
{
	const char *why = NULL;
	long v = -5;

	CHECK(ac_parse_uint("0", 10, &v, &why) == 0 && v == 0);
	CHECK(ac_parse_uint("007", 10, &v, &why) == 0 && v == 7);
	CHECK(ac_parse_uint("10", 10, &v, &why) == 0 && v == 10);
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

int
main(void)
{
	test_uint();
	test_shorten();
	test_slurm();
	test_args();
	return CHECK_DONE();
}
