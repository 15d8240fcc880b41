/* log.h: the helper's log: one line per event, with a timestamp and the pid. */
#ifndef ACCELCTL_LOG_H
#define ACCELCTL_LOG_H

/*
 * Write one line to standard error, which the helper points at its log file
 * (helper.c) and a foreground helper leaves on the terminal. A leaf: every
 * layer may log (the loop, the protocol, the stores, the connection layers)
 * without depending on the helper, as tmux's log.c is used everywhere.
 */
void ac_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
