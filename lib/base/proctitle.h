/* proctitle.h: what ps(1) shows for the helper, which is a fork of some client. */
#ifndef ACCELCTL_PROCTITLE_H
#define ACCELCTL_PROCTITLE_H

/* Remember main()'s argument area, the only memory ps reads the command line from. */
void ac_proctitle_init(int argc, char **argv);

/*
 * Rewrite the command line as TITLE, cut to the original length. Without this
 * a helper started by "accelctl barrier x" shows as that barrier for as long as
 * it lives, and "pkill -f 'accelctl barrier'" in a job script kills it too.
 */
void ac_proctitle_set(const char *title);

#endif
