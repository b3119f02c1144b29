/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spmi_internal.h - what both halves of libSpmi use: the errors, the one
 * lock, a growing buffer and the way to the daemon's sockets. The
 * supplier half (supplier/, dds_internal.h) and the consumer half
 * (consumer/, cons_internal.h) build on it; nothing here calls either.
 * Not installed: programs include only spmi_dds.h and sys/Spmidef.h.
 */
#ifndef SPMI_INTERNAL_H
#define SPMI_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "spmi_dds.h"

/* Only the guide's API leaves the shared library. */
#pragma GCC visibility push(hidden)

/* One lock for every call of either half (errors.c). */
extern pthread_mutex_t spmi_mu;

/* Errors: set SpmiErrno and SpmiErrmsg; return NULL-ish callers' value. */
void spmi_clear_err(void);
void spmi_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growing little-endian buffer (buf.c). */
struct spmi_buf {
   uint8_t *b;
   size_t   len, cap;
   int      oom;
};
void spmi_put8(struct spmi_buf *w, uint8_t v);
void spmi_put16(struct spmi_buf *w, uint16_t v);
void spmi_put32(struct spmi_buf *w, uint32_t v);
void spmi_put64(struct spmi_buf *w, uint64_t v);
void spmi_putstr(struct spmi_buf *w, const char *s, size_t n);

/* Sockets (sock.c; a socket's path in the run directory is
 * sa_find_socket's, cshared/rundir.h): connect after the trust check, and
 * the non-blocking "is it over". */
int  spmi_dial(const char *path);
int  spmi_peer_closed(int sock);

/* SpmiExit's two parts (exit.c): each half ends its own role. */
void dds_exit(void);  /* supplier/init.c */
void cons_exit(void); /* consumer/cons_exit.c */

#pragma GCC visibility pop

#endif /* SPMI_INTERNAL_H */
