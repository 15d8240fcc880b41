/* rdvaddr.h: the address and port a job-scoped rendezvous server listens on. */
#ifndef ACCELCTL_RDVADDR_H
#define ACCELCTL_RDVADDR_H

#include <stddef.h>

/*
 * The numeric address the job's other nodes reach this host on: the first
 * address of the host name that is not loopback (IPv4 first); where the name
 * resolves to loopback only (Debian's "127.0.1.1 host" line) or not at all,
 * the first address of an interface that is up and not loopback; last,
 * 127.0.0.1 (one host only). FROM says which, for the log. Returns 0, or -1
 * with a reason in ERR.
 */
int ac_rdv_host_addr(char *addr, size_t len, const char **from, char *err,
    size_t errlen);

/* NAME (a numeric address or a host name, as --bind takes) as a numeric
 * address in ADDR. Returns 0, or -1 with a reason in ERR. */
int ac_rdv_resolve(const char *name, char *addr, size_t len, char *err,
    size_t errlen);

/* 1 when ADDR is a wildcard address (0.0.0.0, ::). */
int ac_rdv_is_any(const char *addr);

/* WANT if nothing listens on it at ADDR; for WANT 0, a port nothing listens
 * on (the kernel's choice). Returns the port, or -1 with a reason in ERR. */
int ac_rdv_try_port(const char *addr, int want, char *err, size_t errlen);

#endif
