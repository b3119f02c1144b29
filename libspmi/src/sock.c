/* SPDX-License-Identifier: Apache-2.0 */
/* sock.c - reaching a socket of the daemon (the supplier's dds.sock, the
 * consumer's subagent.sock), as the Go library does (client/ddsclient):
 * the run directory's order and its trust check are cshared/rundir.c's
 * (sa_find_socket, sa_trusted), which libarm compiles too. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "spmi_internal.h"
#include "rundir.h"

/* Replies come within the daemon's I/O timeout (5 s by default); a daemon
 * that hangs longer must not hang the supplier forever. */
#define IO_TIMEOUT_SEC 15

/* spmi_dial connects to the daemon's socket at path, after the trust check
 * of its directory, with send and receive timeouts; it returns the socket,
 * or -1 with SpmiErrno SiInitFailed and the reason. */
int spmi_dial(const char *path)
{
   char why[1536];
   struct sockaddr_un a = {.sun_family = AF_UNIX};
   struct timeval tv = {.tv_sec = IO_TIMEOUT_SEC};
   int s;

   if (strlen(path) >= sizeof a.sun_path) {
      spmi_err(SiInitFailed, "daemon socket path %s is longer than %zu bytes",
              path, sizeof a.sun_path - 1);
      return -1;
   }
   memcpy(a.sun_path, path, strlen(path) + 1);
   if (!sa_trusted(path, why, sizeof why)) {
      spmi_err(SiInitFailed, "not connecting to %s: %s", path, why);
      return -1;
   }
   s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
   if (s < 0) {
      spmi_err(SiInitFailed, "socket: %s", strerror(errno));
      return -1;
   }
   setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
   setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
   while (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
      if (errno == EINTR)
         continue;
      spmi_err(SiInitFailed, "cannot reach the daemon at %s: %s "
              "(is subagent running? SUBAGENT_RUN_DIR selects its run directory)",
              path, strerror(errno));
      close(s);
      return -1;
   }
   return s;
}

/* The daemon never sends anything unasked, so a readable byte or EOF
 * between requests means it has closed the connection. */
int spmi_peer_closed(int sock)
{
   char b;
   ssize_t n = recv(sock, &b, 1, MSG_PEEK | MSG_DONTWAIT);

   return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}
