/* record.c: the table that writes a job's events down: the journal's records and the history's. */
#include "coll.h"
#include "history.h"
#include "journal.h"
#include "record.h"

/* coll.c tells these as they happen and includes neither the journal nor
 * the history (coll.h, struct ac_coll_rec): one table, so that the helper
 * and the tests that replay a journal write the same records. */
const struct ac_coll_rec ac_record = {
	.shape = ac_journal_shape,
	.hello = ac_journal_hello,
	.arrive = ac_journal_arrive,
	.finish = ac_journal_finish,
	.lost = ac_journal_lost,
	.remote = ac_journal_remote,
	.withdraw = ac_journal_withdraw,
	.abort = ac_journal_abort,
	.arrived = ac_history_arrived,
	.released = ac_history_released,
	.collected = ac_history_add,
};
