/* SPDX-License-Identifier: Apache-2.0 */
/* errors.c - the guide's SpmiErrno and SpmiErrmsg, process globals as the
 * guide's API has them, and the one lock of both halves' calls. */
#define _GNU_SOURCE
#include <stdio.h>
#include "spmi_internal.h"

int  SpmiErrno;
char SpmiErrmsg[SI_MAXERRMSG];

/* Error-checking: the guide's samples call SpmiExit from a signal handler,
 * which may interrupt this thread inside another call (SpmiExit sees
 * EDEADLK instead of deadlocking). */
pthread_mutex_t spmi_mu = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;

void spmi_clear_err(void)
{
   SpmiErrno = SiSuccess;
   SpmiErrmsg[0] = '\0';
}

void spmi_err(int code, const char *fmt, ...)
{
   va_list ap;

   va_start(ap, fmt);
   vsnprintf(SpmiErrmsg, sizeof SpmiErrmsg, fmt, ap);
   va_end(ap);
   SpmiErrno = code;
}
