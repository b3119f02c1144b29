/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_conn.c - the consumer side's connection to the daemon: SpmiInit,
 * the control socket (subagent.sock in the run directory, found and
 * checked as the supplier side finds dds.sock), and one JSON line each
 * way per call (package control): the lowest layer of the consumer
 * half, below the handles, the traversal and the sets. SpmiExit ends it
 * through cons_exit.c.
 *
 * Daemon restarts: before each request the library peeks at the socket
 * without blocking; a connection the daemon closed (restart, idle
 * timeout) is dialled again first, so a restart usually costs no call at
 * all, and at most the one call that was under way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "cons_internal.h"
#include "rundir.h"

#define CONTROL_SOCKET "subagent.sock"
/* The daemon refuses longer request lines (control.MaxRequest). */
#define MAX_REQUEST (64 << 10) /* control.MaxRequest */

struct cons_state cons_st = {.sock = -1};

int cons_lock(void)
{
   if (pthread_mutex_lock(&spmi_mu) == EDEADLK) {
      /* A signal handler interrupted this thread inside a call. */
      spmi_err(SiLocked, "another SPMI call of this thread is under way (called from a signal handler?); retry");
      return SiLocked;
   }
   spmi_clear_err();
   if (!cons_st.inited) {
      spmi_err(SiNotInit, "the SPMI consumer interface is not initialized: call SpmiInit first");
      pthread_mutex_unlock(&spmi_mu);
      return SiNotInit;
   }
   return 0;
}

void cons_unlock(void) { pthread_mutex_unlock(&spmi_mu); }

static void disconnect(void)
{
   if (cons_st.sock >= 0)
      close(cons_st.sock);
   cons_st.sock = -1;
   cons_st.rlen = 0;
}

static int dial(void)
{
   int s;

   sa_find_socket(CONTROL_SOCKET, cons_st.path, sizeof cons_st.path);
   if ((s = spmi_dial(cons_st.path)) < 0)
      return SiInitFailed;
   cons_st.sock = s;
   cons_st.rlen = 0;
   cons_st.gen++;
   return 0;
}

int cons_ready(void)
{
   if (cons_st.sock >= 0 && cons_st.rlen == 0 && spmi_peer_closed(cons_st.sock))
      disconnect();
   if (cons_st.sock < 0)
      return dial();
   return 0;
}

static int lost(const char *what, int err)
{
   spmi_err(SiInitFailed, "lost the connection to the daemon at %s (%s: %s); the next call connects again",
           cons_st.path, what, err ? strerror(err) : "closed");
   disconnect();
   return SiInitFailed;
}

/* Writes the request and reads one answer line into rbuf; its length
 * (without the newline) in *n. *none is set when nothing was read (the
 * daemon had closed the connection before it saw the request). */
static int exchange(const struct spmi_buf *w, size_t *n, int *none)
{
   size_t off = 0;
   char *nl;

   *none = 1;
   while (off < w->len) {
      ssize_t k = send(cons_st.sock, w->b + off, w->len - off, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR)
         continue;
      if (k <= 0)
         return lost("sending", k < 0 ? errno : 0);
      off += (size_t)k;
   }
   while (!(nl = cons_st.rlen ? memchr(cons_st.rbuf, '\n', cons_st.rlen) : NULL)) {
      ssize_t k;
      if (cons_st.rlen > CONS_MAX_ANSWER) {
         spmi_err(SiOtherErr, "the daemon at %s answered more than %u bytes; ask for less (a smaller path)",
                 cons_st.path, CONS_MAX_ANSWER);
         disconnect();
         return SiOtherErr;
      }
      if (cons_st.rcap - cons_st.rlen < 65536) {
         size_t nc = cons_st.rcap ? cons_st.rcap * 2 : 131072;
         char *b = realloc(cons_st.rbuf, nc);
         if (!b) {
            spmi_err(SiCallocFailed, "out of memory reading the daemon's answer");
            disconnect();
            return SiCallocFailed;
         }
         cons_st.rbuf = b;
         cons_st.rcap = nc;
      }
      k = recv(cons_st.sock, cons_st.rbuf + cons_st.rlen, cons_st.rcap - cons_st.rlen, 0);
      if (k < 0 && errno == EINTR)
         continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
         *none = 0; /* it may have seen the request: never sent twice */
         return lost("no answer in time", errno);
      }
      if (k <= 0)
         return lost("reading", k < 0 ? errno : 0);
      *none = 0;
      cons_st.rlen += (size_t)k;
   }
   *n = (size_t)(nl - cons_st.rbuf);
   return 0;
}

int cons_call(struct spmi_buf *w, int retry)
{
   struct jdoc *d = &cons_st.doc;
   size_t n;
   int rc, none, e, code;
   const char *msg;

   spmi_put8(w, '\n');
   if (w->oom) {
      free(w->b);
      spmi_err(SiCallocFailed, "out of memory");
      return SiCallocFailed;
   }
   if (w->len > MAX_REQUEST) {
      free(w->b);
      spmi_err(SiBadArgument, "a request of %zu bytes is over the control socket's %d; use fewer statistics",
              w->len, MAX_REQUEST);
      return SiBadArgument;
   }
   for (int tries = 0;; tries++) {
      unsigned gen = cons_st.gen;
      if ((rc = cons_ready()) != 0)
         break;
      rc = exchange(w, &n, &none);
      if (rc == SiInitFailed && retry && none && tries == 0 && cons_st.gen == gen)
         continue; /* the old connection was gone: once more on a new one */
      break;
   }
   free(w->b);
   if (rc)
      return rc;
   e = json_parse(d, cons_st.rbuf, n);
   cons_st.rlen -= n + 1;
   memmove(cons_st.rbuf, cons_st.rbuf + n + 1, cons_st.rlen);
   if (e < 0 || d->n[0].type != J_OBJ) {
      spmi_err(SiOtherErr, "the daemon at %s sent a malformed answer: %s", cons_st.path,
              e < 0 ? d->err : "not an object");
      disconnect();
      return SiOtherErr;
   }
   if ((e = json_get(d, 0, "err")) >= 0) {
      code = cons_err_code(d, e, &msg);
      spmi_err(code, "%s", msg);
      return code;
   }
   return 0;
}

int cons_err_code(const struct jdoc *d, int e, const char **msg)
{
   int code;

   if (!json_int(d, json_get(d, e, "code"), &code) || code <= 0)
      code = SiOtherErr;
   if (msg && !json_str(d, json_get(d, e, "msg"), msg))
      *msg = "(no message)";
   return code;
}

int SpmiInit(int TimeOut)
{
   int rc;

   if (pthread_mutex_lock(&spmi_mu) == EDEADLK) {
      spmi_err(SiLocked, "another SPMI call of this thread is under way; retry");
      return SiLocked;
   }
   spmi_clear_err();
   if (TimeOut != 0 && (TimeOut < 15 || TimeOut > 600)) {
      spmi_err(SiBadArgument, "SpmiInit: TimeOut %d is neither 0 nor from 15 to 600 seconds", TimeOut);
      rc = SiBadArgument;
   } else if (cons_st.inited) {
      rc = 0; /* the guide: successive calls are ignored */
   } else if ((rc = dial()) == 0) {
      cons_st.inited = 1;
   }
   pthread_mutex_unlock(&spmi_mu);
   return rc;
}

/* Closes the connection (the daemon drops the session's hotsets with it)
 * and frees what it read; cons_exit calls it under the lock. */
void cons_close(void)
{
   disconnect();
   json_free(&cons_st.doc);
   free(cons_st.rbuf);
   cons_st = (struct cons_state){.sock = -1, .gen = cons_st.gen};
}
