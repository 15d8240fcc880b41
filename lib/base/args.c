/* args.c: option parsing for subcommands, stopping at "--" (the child's argv). */
#include <stdio.h>
#include <string.h>

#include "args.h"

static int
find(const struct ac_optdef *defs, const char *lng, size_t lnglen, int shrt)
{
	for (int i = 0; defs != NULL && defs[i].lng != NULL; i++) {
		if (shrt != 0 && defs[i].shrt == shrt)
			return i;
		if (lng != NULL && strlen(defs[i].lng) == lnglen &&
		    strncmp(defs[i].lng, lng, lnglen) == 0)
			return i;
	}
	return -1;
}

static int
dashdash_after(int argc, char **argv, int i)
{
	for (int k = i + 1; k < argc; k++)
		if (strcmp(argv[k], "--") == 0)
			return 1;
	return 0;
}

int
ac_args_parse(const struct ac_optdef *defs, int argc, char **argv, char **pos,
    struct ac_args *a, char *err, size_t errlen)
{
	return ac_args_parse_upto(defs, -1, argc, argv, pos, a, err, errlen);
}

int
ac_args_parse_upto(const struct ac_optdef *defs, int maxpos, int argc,
    char **argv, char **pos, struct ac_args *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->pos = pos;
	for (int i = 0; i < argc; i++) {
		char *w = argv[i], *eq = NULL;
		int o;

		if (strcmp(w, "--") == 0) {
			a->dashdash = 1;
			a->child = argv + i + 1;
			a->nchild = argc - i - 1;
			return 0;
		}
		if (w[0] != '-' || w[1] == '\0' || (w[1] >= '0' && w[1] <= '9')) {
			/* A word past the positionals begins CMD, unless a
			 * "--" follows: then it is one positional too many. */
			if (maxpos >= 0 && a->npos == maxpos &&
			    !dashdash_after(argc, argv, i)) {
				a->stray = w;
				return 0;
			}
			a->pos[a->npos++] = w;
			continue;
		}
		if (strcmp(w, "-h") == 0 || strcmp(w, "--help") == 0) {
			a->help = 1;
			continue;
		}
		if (w[1] == '-') {
			eq = strchr(w + 2, '=');
			o = find(defs, w + 2, eq ? (size_t)(eq - w - 2) :
			    strlen(w + 2), 0);
		} else
			o = find(defs, NULL, 0, (unsigned char)w[1]);
		if (o == -1) {
			snprintf(err, errlen, "unknown option '%.40s'", w);
			return -1;
		}
		a->seen[o]++;
		if (defs[o].argname == NULL) {
			if (eq != NULL || (w[1] != '-' && w[2] != '\0')) {
				snprintf(err, errlen,
				    "option '--%s' takes no value", defs[o].lng);
				return -1;
			}
			continue;
		}
		if (eq != NULL)
			a->val[o] = eq + 1;
		else if (w[1] != '-' && w[2] != '\0')
			a->val[o] = w + 2;	/* -n4 */
		else if (i + 1 < argc)
			a->val[o] = argv[++i];
		else {
			snprintf(err, errlen, "option '--%s' needs a value %s",
			    defs[o].lng, defs[o].argname);
			return -1;
		}
	}
	return 0;
}
