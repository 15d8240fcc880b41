/* parent.h: noticing, without polling, that the process that started us exited. */
#ifndef ACCELCTL_PARENT_H
#define ACCELCTL_PARENT_H

/* Remember our parent; call first thing in main(). */
void ac_parent_init(void);

/*
 * A descriptor that poll(2) reports readable once the parent remembered by
 * ac_parent_init() has exited (a pidfd), or -1 where the kernel has none
 * (before 5.3): then look at ac_parent_gone() now and then.
 */
int  ac_parent_fd(void);

/* Has the parent remembered by ac_parent_init() exited? */
int  ac_parent_gone(void);

/* The parent's pid as remembered. */
long ac_parent_pid(void);

#endif
