/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's run directory, in client/rundir's order, and
 * client/trustdir's check of it: one C source (rundir.c) that libSpmi and
 * libarm both compile, its names hidden in both. */
#ifndef SA_RUNDIR_H
#define SA_RUNDIR_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

#define SA_RUN_DIRS 2     /* at most: this user's default, the system's */
#define SA_PATH     4096

/* sa_run_dirs fills dirs with the candidate run directories in order:
 * $SUBAGENT_RUN_DIR alone when set; else this user's default
 * (/run/subagent for root, $XDG_RUNTIME_DIR/subagent for others), then
 * the system daemon's /run/subagent. It returns how many. */
int sa_run_dirs(char dirs[SA_RUN_DIRS][SA_PATH]);

/* sa_trusted checks the directory of socket path p as trustdir.Check
 * does: not a symbolic link, not writable by group or others, owned by
 * root or us, or inside a parent owned by root and closed to group and
 * others. 1 when trusted or missing (a connect then fails with ENOENT),
 * else 0 with why (naming the directory, at most n bytes) and errno
 * EACCES. */
int sa_trusted(const char *p, char *why, size_t n);

/* sa_find_socket writes to out the socket called name in the first
 * candidate where it is a socket in a trusted directory, else in the
 * first candidate. */
void sa_find_socket(const char *name, char *out, size_t n);

#pragma GCC visibility pop

#endif
