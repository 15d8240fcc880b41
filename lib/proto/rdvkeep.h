/* rdvkeep.h: the results this node published, kept to write again should the store lose them (one policy for every store). */
#ifndef ACCELCTL_RDVKEEP_H
#define ACCELCTL_RDVKEEP_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"

/* At most this many bytes of results (with their bookkeeping) are kept, the
 * oldest dropped first: not by age (a node may read a result any time
 * later, and a store that loses its keys loses the old ones too). */
#define AC_KEEP_MAX	(16u << 20)
/* A pass has at most this many of a store's requests out at once. */
#define AC_KEEP_BUSY	64

struct ac_kept {
	struct ac_kept	*next, *prev;	/* newest first */
	char		 key[AC_KEY_MAX];
	int64_t		 gen;
	char		*v;
	size_t		 len;
	int		 refs;		/* a pass's requests out for it */
	int		 dead;		/* dropped: freed when the last returns */
	uintptr_t	 epoch;		/* the pass that sent it */
};

void ac_rdvkeep_init(struct ac_job *j, int (*elsewhere)(const char *key));
void ac_rdvkeep_stop(void);
/* Keep a copy of V (LEN bytes) as KEY's generation GEN, unless that one or
 * a later one of KEY is kept already (the name's counter says so, without a
 * walk: a replay of 20,000 results was their square). ANY_ORDER: a store
 * whose writes of one name end in any order (etcd's uploads, some in
 * parts) and which keeps none twice itself: kept whatever was kept before
 * (a later generation written first left the earlier one unkept, and a
 * lost lease lost it: review of issue 19). */
void ac_rdvkeep_add(const char *key, int64_t gen, const void *v, size_t len,
    int any_order);
int  ac_rdvkeep_any(void);
/*
 * A pass over every kept result, newest first: EACH(k) at most AC_KEEP_BUSY
 * at a time, each answered with ac_rdvkeep_answered(k, down), from which
 * the next is sent. A new pass starts over (an old reply stops no new one);
 * one under way is ac_rdvkeep_passing(). Results of names another
 * transport carries (ac_rdvproto_elsewhere) are skipped.
 */
void ac_rdvkeep_pass(void (*each)(struct ac_kept *));
int  ac_rdvkeep_passing(void);
/* K's request was answered (DOWN: not: the pass stops, the next sweep
 * starts one). K may have been dropped meanwhile: freed here then. */
void ac_rdvkeep_answered(struct ac_kept *k, int down);
/* Go on with a pass that a request freed while the store was away left
 * waiting (the sweep's, once back). */
void ac_rdvkeep_resume(void);
/* K needs keeping no more (every node has read it): dropped. */
void ac_rdvkeep_forget(struct ac_kept *k);

#endif
