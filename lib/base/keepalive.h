/* keepalive.h: TCP keepalive and a user timeout on a connection to a rendezvous server. */
#ifndef ACCELCTL_KEEPALIVE_H
#define ACCELCTL_KEEPALIVE_H

/* On FD: a peer host that vanishes without a reset is noticed in about 30 s. */
void ac_keepalive(int fd);

#endif
