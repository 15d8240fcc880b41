/* kind.c: the kinds of collective, one table: key letter, name, op, how results combine.
 *
 * A collective's key starts with its kind's letter ("b:data-ready"); the
 * helper, the journal, status and every transport read the kind from here,
 * so a new kind of collective is one row.
 */
#include <string.h>

#include "kind.h"
#include "proto.h"

static const struct ac_kind kinds[] = {
	{ 'b', "barrier", AC_OP_BARRIER, AC_COMBINE_LOWEST_FAILING, 1 },
	{ 'c', "broadcast", AC_OP_RESULT, AC_COMBINE_SOURCE, 1 },
	{ 'w', "wait", AC_OP_RESULT, AC_COMBINE_SOURCE, 0 },
	{ 'm', "main-first", AC_OP_RESULT, AC_COMBINE_SOURCE, 0 },
	/* accelctl check: its barriers, and the exchange of its communicator's id. */
	{ 'k', "check", AC_OP_BARRIER, AC_COMBINE_LOWEST_FAILING, 1 },
	{ 'K', "check", AC_OP_RESULT, AC_COMBINE_SOURCE, 0 },
};

const struct ac_kind *
ac_kind_of(const char *key)
{
	if (key == NULL || key[0] == '\0' || key[1] != ':' || key[2] == '\0')
		return NULL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].letter == key[0])
			return &kinds[i];
	return NULL;
}

const char *
ac_kind_label(const char *key)
{
	const char *colon = key != NULL ? strchr(key, ':') : NULL;

	return colon != NULL ? colon + 1 : "";
}
