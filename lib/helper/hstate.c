/* hstate.c: the per-node helper's one state (hstate.h): a helper is one per process. */
#include "hstate.h"

struct ac_helper ac_hs;
