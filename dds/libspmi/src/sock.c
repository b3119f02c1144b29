/* sock.c - finding and reaching the daemon's registration socket, the
 * same way as the Go library (dds/client SocketPath). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "spmi_internal.h"

/* Replies come within the daemon's I/O timeout (5 s by default); a daemon
 * that hangs longer must not hang the supplier forever. */
#define IO_TIMEOUT_SEC 15

static int is_socket(const char *dir)
{
   char p[4096];
   struct stat st;

   snprintf(p, sizeof p, "%s/dds.sock", dir);
   return stat(p, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* $SUBAGENT_DDS_SOCKET, else $SUBAGENT_RUN_DIR/dds.sock, else an existing
 * socket among the daemon's default run directories (/run/subagent,
 * $XDG_RUNTIME_DIR/subagent, /tmp/subagent-<uid>), else the default for
 * our own uid: a supplier cannot know the daemon's uid. */
void dds_socket_path(char *out, size_t n)
{
   const char *e = getenv("SUBAGENT_DDS_SOCKET");
   const char *dirs[3];
   char xdg[4096], tmp[64];
   int nd = 0, def;

   if (e && *e) {
      snprintf(out, n, "%s", e);
      return;
   }
   e = getenv("SUBAGENT_RUN_DIR");
   if (e && *e) {
      snprintf(out, n, "%s/dds.sock", e);
      return;
   }
   dirs[nd++] = "/run/subagent";
   e = getenv("XDG_RUNTIME_DIR");
   if (e && e[0] == '/') {
      snprintf(xdg, sizeof xdg, "%s/subagent", e);
      dirs[nd++] = xdg;
   }
   snprintf(tmp, sizeof tmp, "/tmp/subagent-%u", (unsigned)geteuid());
   dirs[nd++] = tmp;
   for (int i = 0; i < nd; i++) {
      if (is_socket(dirs[i])) {
         snprintf(out, n, "%s/dds.sock", dirs[i]);
         return;
      }
   }
   def = nd - 1;
   if (geteuid() == 0)
      def = 0;
   else if (nd == 3)
      def = 1;
   snprintf(out, n, "%s/dds.sock", dirs[def]);
}

int dds_connect(void)
{
   char path[4096];
   struct sockaddr_un a = {.sun_family = AF_UNIX};
   struct timeval tv = {.tv_sec = IO_TIMEOUT_SEC};
   int s;

   dds_socket_path(path, sizeof path);
   snprintf(dds_st.sockpath, sizeof dds_st.sockpath, "%s", path);
   if (strlen(path) >= sizeof a.sun_path) {
      dds_err(SiInitFailed, "daemon socket path %s is longer than %zu bytes",
              path, sizeof a.sun_path - 1);
      return SiInitFailed;
   }
   memcpy(a.sun_path, path, strlen(path) + 1);
   s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
   if (s < 0) {
      dds_err(SiInitFailed, "socket: %s", strerror(errno));
      return SiInitFailed;
   }
   setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
   setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
   while (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
      if (errno == EINTR)
         continue;
      dds_err(SiInitFailed, "cannot reach the daemon at %s: %s "
              "(is subagent running? SUBAGENT_RUN_DIR selects its run directory)",
              path, strerror(errno));
      close(s);
      return SiInitFailed;
   }
   dds_st.sock = s;
   return 0;
}

/* The daemon never sends anything unasked, so a readable byte or EOF
 * between requests means it has closed the connection. */
int dds_peer_closed(int sock)
{
   char b;
   ssize_t n = recv(sock, &b, 1, MSG_PEEK | MSG_DONTWAIT);

   return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void dds_disconnect(void)
{
   if (dds_st.sock >= 0)
      close(dds_st.sock);
   dds_st.sock = -1;
}
