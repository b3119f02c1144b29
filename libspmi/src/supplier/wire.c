/* SPDX-License-Identifier: Apache-2.0 */
/* wire.c - the supplier's connection to dds.sock and the frames of the
 * registration protocol (docs/DDS.md §2): an 8-byte head (u32 body
 * length, u16 type, u16 0), little-endian integers, strings as a u16
 * length and the bytes. The process's one registration (dds_st) lives
 * here, at the bottom of the supplier half. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "dds_internal.h"
#include "rundir.h"

struct dds_state dds_st = {.fd = -1, .sock = -1};

void dds_frame_begin(struct spmi_buf *w)
{
   w->len = 0;
   spmi_put64(w, 0); /* the head, filled by dds_frame_end */
}

int dds_frame_end(struct spmi_buf *w, uint16_t type)
{
   uint32_t n;

   if (w->oom) {
      spmi_err(SiCallocFailed, "out of memory building a message");
      return SiCallocFailed;
   }
   n = (uint32_t)(w->len - DDS_FRAME_HEAD);
   for (int i = 0; i < 4; i++)
      w->b[i] = (uint8_t)(n >> (8 * i));
   w->b[4] = (uint8_t)type;
   w->b[5] = (uint8_t)(type >> 8);
   w->b[6] = w->b[7] = 0;
   return 0;
}

static uint32_t le32(const uint8_t *p)
{
   return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The descriptor rides on the sendmsg that carries the frame's first
 * byte; MSG_NOSIGNAL: a vanished daemon must not kill the supplier. */
static int send_all(int s, const uint8_t *b, size_t len, int fd)
{
   size_t done = 0;

   while (done < len) {
      struct iovec iov = {.iov_base = (void *)(b + done), .iov_len = len - done};
      union {
         struct cmsghdr h;
         char buf[CMSG_SPACE(sizeof(int))];
      } ctl;
      struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
      ssize_t n;

      if (fd >= 0 && done == 0) {
         memset(&ctl, 0, sizeof ctl);
         m.msg_control = ctl.buf;
         m.msg_controllen = sizeof ctl.buf;
         struct cmsghdr *c = CMSG_FIRSTHDR(&m);
         c->cmsg_level = SOL_SOCKET;
         c->cmsg_type = SCM_RIGHTS;
         c->cmsg_len = CMSG_LEN(sizeof(int));
         memcpy(CMSG_DATA(c), &fd, sizeof(int));
      }
      n = sendmsg(s, &m, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
         continue;
      if (n <= 0)
         return -1;
      done += (size_t)n;
   }
   return 0;
}

static int recv_all(int s, uint8_t *b, size_t len)
{
   size_t done = 0;

   while (done < len) {
      ssize_t n = recv(s, b + done, len - done, 0);
      if (n < 0 && errno == EINTR)
         continue;
      if (n <= 0) {
         if (n == 0)
            errno = ECONNRESET;
         return -1;
      }
      done += (size_t)n;
   }
   return 0;
}

static const char *msg_name(int t)
{
   static const char *names[] = {"?", "Init", "AddCx", "DelCx", "Exit"};
   return t >= 1 && t <= 4 ? names[t] : "?";
}

/* Largest reply body: errno, reserved, value, errmsg. */
#define MAX_REPLY (4 + 4 + 8 + 2 + DDS_MAX_ERRMSG)

static int lost_conn(int *lost, int t, const char *what)
{
   int e = errno;

   dds_disconnect();
   *lost = 1;
   spmi_err(SiInitFailed, "%s: connection to the daemon at %s lost: %s: %s",
           msg_name(t), dds_st.sockpath, what, strerror(e));
   return SiInitFailed;
}

int dds_round_trip(const uint8_t *frame, size_t len, int fd, uint64_t *value, int *lost)
{
   uint8_t head[DDS_FRAME_HEAD], body[MAX_REPLY];
   int t = frame[4];
   uint32_t n, code, mlen;

   *lost = 0;
   if (send_all(dds_st.sock, frame, len, fd) < 0)
      return lost_conn(lost, t, "send");
   if (recv_all(dds_st.sock, head, sizeof head) < 0)
      return lost_conn(lost, t, "reading the reply");
   n = le32(head);
   if ((head[4] | head[5] << 8) != (t | DDS_REPLY_BIT) || head[6] || head[7] ||
       n < 18 || n > MAX_REPLY) {
      errno = EPROTO;
      return lost_conn(lost, t, "malformed reply head");
   }
   if (recv_all(dds_st.sock, body, n) < 0)
      return lost_conn(lost, t, "reading the reply");
   mlen = (uint32_t)body[16] | (uint32_t)body[17] << 8;
   if (mlen != n - 18) {
      errno = EPROTO;
      return lost_conn(lost, t, "malformed reply body");
   }
   code = le32(body);
   *value = (uint64_t)le32(body + 8) | (uint64_t)le32(body + 12) << 32;
   if (code == SiSuccess)
      return 0;
   memcpy(SpmiErrmsg, body + 18, mlen);
   SpmiErrmsg[mlen] = '\0';
   SpmiErrno = (int)code;
   return (int)code;
}

/* Dials $SUBAGENT_DDS_SOCKET, else dds.sock in the run directory. */
int dds_connect(void)
{
   const char *e = getenv("SUBAGENT_DDS_SOCKET");
   int s;

   if (e && *e)
      snprintf(dds_st.sockpath, sizeof dds_st.sockpath, "%s", e);
   else
      sa_find_socket("dds.sock", dds_st.sockpath, sizeof dds_st.sockpath);
   if ((s = spmi_dial(dds_st.sockpath)) < 0)
      return SiInitFailed;
   dds_st.sock = s;
   return 0;
}

void dds_disconnect(void)
{
   if (dds_st.sock >= 0)
      close(dds_st.sock);
   dds_st.sock = -1;
}
