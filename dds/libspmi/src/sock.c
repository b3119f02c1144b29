/* SPDX-License-Identifier: Apache-2.0 */
/* sock.c - finding and reaching the daemon's registration socket, the
 * same way as the Go library (client/ddsclient SocketPath). */
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

static int is_socket(const char *dir, const char *name)
{
   char p[4096];
   struct stat st;

   snprintf(p, sizeof p, "%s/%s", dir, name);
   return stat(p, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* trusted is trustdir.Check (Go) for the directory of socket path p: not
 * a symlink, not writable by group or others, and owned by root or us, or
 * inside a parent owned by root and closed to group and others; whoever
 * can replace dds.sock would get the shared file. 1 when trusted or
 * missing (connect then fails with ENOENT), else 0 with why filled (naming
 * the directory) and errno EACCES. */
static int trusted(const char *p, char *why, size_t n)
{
   char d[4096], up[4096];
   struct stat st, ps;
   size_t l = strnlen(p, sizeof d - 1);

   memcpy(d, p, l);
   d[l] = 0;
   for (int i = 0; i < 2; i++) { /* d = dirname(p), then up = dirname(d) */
      char *t = i ? up : d, *sl;

      if (i)
         memcpy(up, d, sizeof up);
      l = strlen(t);
      while (l > 1 && t[l - 1] == '/')
         t[--l] = 0;
      sl = strrchr(t, '/');
      if (!sl)
         strcpy(t, ".");
      else if (sl == t)
         t[1] = 0; /* "/x" is in "/" */
      else
         *sl = 0;
   }
   if (lstat(d, &st) != 0)
      return 1;
   if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
      snprintf(why, n, "directory %.1024s is not trusted: it is a symbolic link or not a directory", d);
   else if (st.st_mode & 022)
      snprintf(why, n, "directory %.1024s is not trusted: mode %04o is writable by group or others",
               d, (unsigned)(st.st_mode & 07777));
   else if (st.st_uid != 0 && st.st_uid != geteuid() &&
            (stat(up, &ps) != 0 || ps.st_uid != 0 || (ps.st_mode & 022)))
      snprintf(why, n, "directory %.1024s is not trusted: owned by uid %u, not root or uid %u, "
               "and its parent is not owned by root and closed to group and others",
               d, (unsigned)st.st_uid, (unsigned)geteuid());
   else
      return 1;
   errno = EACCES;
   return 0;
}

/* dds_run_socket finds the daemon's socket called name in the order of
 * client/rundir (one order for the daemon, the CLI and every library):
 * $SUBAGENT_RUN_DIR alone; else this user's default run directory
 * (/run/subagent for root, $XDG_RUNTIME_DIR/subagent for others), then
 * the system daemon's /run/subagent; the first holding the socket in a
 * trusted directory, else the first. Never a fixed name in /tmp, which
 * another user could make first. */
void dds_run_socket(const char *name, char *out, size_t n)
{
   const char *e = getenv("SUBAGENT_RUN_DIR");
   const char *dirs[2];
   char xdg[4096], why[1536];
   int nd = 0;

   if (e && *e) {
      snprintf(out, n, "%s/%s", e, name);
      return;
   }
   e = getenv("XDG_RUNTIME_DIR");
   if (geteuid() != 0 && e && e[0] == '/') {
      snprintf(xdg, sizeof xdg, "%s/subagent", e);
      dirs[nd++] = xdg;
   }
   dirs[nd++] = "/run/subagent";
   for (int i = 0; i < nd; i++) {
      snprintf(out, n, "%s/%s", dirs[i], name);
      if (is_socket(dirs[i], name) && trusted(out, why, sizeof why))
         return;
   }
   snprintf(out, n, "%s/%s", dirs[0], name);
}

/* $SUBAGENT_DDS_SOCKET, else dds.sock in the run directory. */
void dds_socket_path(char *out, size_t n)
{
   const char *e = getenv("SUBAGENT_DDS_SOCKET");

   if (e && *e) {
      snprintf(out, n, "%s", e);
      return;
   }
   dds_run_socket("dds.sock", out, n);
}

/* dds_dial connects to the daemon's socket at path, after the trust check
 * of its directory, with send and receive timeouts; it returns the socket,
 * or -1 with SpmiErrno SiInitFailed and the reason. */
int dds_dial(const char *path)
{
   char why[1536];
   struct sockaddr_un a = {.sun_family = AF_UNIX};
   struct timeval tv = {.tv_sec = IO_TIMEOUT_SEC};
   int s;

   if (strlen(path) >= sizeof a.sun_path) {
      dds_err(SiInitFailed, "daemon socket path %s is longer than %zu bytes",
              path, sizeof a.sun_path - 1);
      return -1;
   }
   memcpy(a.sun_path, path, strlen(path) + 1);
   if (!trusted(path, why, sizeof why)) {
      dds_err(SiInitFailed, "not connecting to %s: %s", path, why);
      return -1;
   }
   s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
   if (s < 0) {
      dds_err(SiInitFailed, "socket: %s", strerror(errno));
      return -1;
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
      return -1;
   }
   return s;
}

int dds_connect(void)
{
   char path[4096];
   int s;

   dds_socket_path(path, sizeof path);
   snprintf(dds_st.sockpath, sizeof dds_st.sockpath, "%s", path);
   if ((s = dds_dial(path)) < 0)
      return SiInitFailed;
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
