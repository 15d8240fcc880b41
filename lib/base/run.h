/* run.h: running the user's CMD, with the shell's exit codes when that fails. */
#ifndef ACCELCTL_RUN_H
#define ACCELCTL_RUN_H

/*
 * Replace this process with ARGV (looked up in PATH), so that the launcher's
 * signals reach CMD and no accelctl process stays behind. Returns only on
 * failure, after printing why: 127 when CMD was not found, else 126.
 */
int ac_exec(char **argv);

/* The exit code a shell reports for a wait(2) STATUS: the code, or 128+N. */
int ac_exit_code(int status);

#endif
