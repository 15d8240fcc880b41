/* rdvquery.h: one short exchange with a rendezvous server: AUTH, then PING or INFO. */
#ifndef ACCELCTL_RDVQUERY_H
#define ACCELCTL_RDVQUERY_H

#include <stddef.h>

/*
 * Connect to HOST:PORT within TIMEOUT_MS, AUTH as USER with PASSWORD, send
 * CMD (one word: "PING", "INFO") and copy its reply (a status or bulk
 * string) into OUT. Returns 0; 1 when nothing listens there (yet); -1 for
 * any other failure (a refused AUTH, an error reply), with the server's
 * words in ERR, which never hold the password.
 */
int ac_rdv_query(const char *host, int port, const char *user,
    const char *password, int timeout_ms, const char *cmd, char *out,
    size_t outlen, char *err, size_t errlen);

#endif
