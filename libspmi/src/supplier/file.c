/* SPDX-License-Identifier: Apache-2.0 */
/* file.c - the shared file: created, sized, mapped and given its header
 * (docs/DDS.md §1), its generation published last, removed at exit (its
 * mapping retired as map.c says). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include "dds_internal.h"

/* Field 22 of /proc/self/stat (start time in clock ticks), 0 if unknown:
 * the daemon compares it with the peer's to catch a reused PID. */
static uint64_t start_time(void)
{
   char buf[1024], *p;
   FILE *f = fopen("/proc/self/stat", "re");
   size_t n;
   unsigned long long v = 0;

   if (!f)
      return 0;
   n = fread(buf, 1, sizeof buf - 1, f);
   fclose(f);
   buf[n] = '\0';
   p = strrchr(buf, ')');
   if (!p)
      return 0;
   /* ") 3 4 ...": the space before field f is the (f-2)th after ")". */
   for (int field = 3; field <= 22 && p; field++)
      p = strchr(p + 1, ' ');
   if (!p || sscanf(p + 1, "%llu", &v) != 1)
      return 0;
   return v;
}

static int own_regular(const struct stat *st)
{
   return S_ISREG(st->st_mode) && st->st_uid == geteuid();
}

/* A stale file of ours is unlinked so a new layout is a new inode; a
 * daemon still mapping the old one keeps reading valid memory. If the
 * directory is not writable but our file is, it is rewritten in place. */
static int open_file(const char *path)
{
   struct stat st;
   int fd;

   if (lstat(path, &st) == 0 && own_regular(&st))
      unlink(path);
   fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
   if (fd >= 0 || (errno != EACCES && errno != EEXIST && errno != EPERM)) {
      if (fd < 0)
         spmi_err(SiShmemFailed, "shared file %s: %s", path, strerror(errno));
      return fd;
   }
   int e = errno;
   fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
   if (fd >= 0 && fstat(fd, &st) == 0 && own_regular(&st) && ftruncate(fd, 0) == 0) {
      dds_st.in_place = 1;
      return fd;
   }
   if (fd >= 0)
      close(fd);
   spmi_err(SiShmemFailed, "shared file %s: %s", path, strerror(e));
   return -1;
}

int dds_file_create(const char *path, uint32_t area_len, uint32_t perm_len)
{
   size_t len = sizeof(SpmiShare) + area_len;
   struct stat st;
   SpmiShare *h;
   int fd;

   dds_st.in_place = 0;
   fd = open_file(path);
   if (fd < 0)
      return SiShmemFailed;
   dds_st.fd = fd;
   if (ftruncate(fd, (off_t)len) < 0 || fstat(fd, &st) < 0) {
      spmi_err(SiShmemFailed, "shared file %s: %s", path, strerror(errno));
      return SiShmemFailed;
   }
   dds_st.dev = st.st_dev;
   dds_st.ino = st.st_ino;
   h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
   if (h == MAP_FAILED) {
      spmi_err(SiShmemFailed, "mmap %s: %s", path, strerror(errno));
      return SiShmemFailed;
   }
   dds_st.hdr = h;
   dds_st.maplen = len;
   memcpy(h->SiShMagic, "SPMIDDS", 8);
   h->SiShMajor = 1;
   h->SiShMinor = 1; /* batch counters (SpmiDdsBegin) */
   h->SiShHdrLen = sizeof(SpmiShare);
   h->SiShAllocLen = (uint32_t)len;
   h->SiShAreaOff = sizeof(SpmiShare);
   h->SiShAreaLen = area_len;
   h->SiShPermLen = perm_len;
   h->SiShPid = (int32_t)getpid();
   h->SiShStart = start_time();
   h->SiShAreaAddr = 0;
   h->SiShArea = (char *)h + sizeof(SpmiShare);
   snprintf(h->SiShName, sizeof h->SiShName, "%s", path);
   gettimeofday(&h->SiShT, NULL);
   dds_map_publish(h);
   return 0;
}

/* A fresh random nonzero generation, different from old, stored last with
 * a release store: it publishes everything written before it. */
uint64_t dds_new_gen(uint64_t old)
{
   uint64_t g = 0;

   while (g == 0 || g == old) {
      if (getrandom(&g, sizeof g, 0) != sizeof g) {
         struct timespec ts;
         clock_gettime(CLOCK_MONOTONIC, &ts);
         g ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_sec;
      }
   }
   __atomic_store_n(&dds_st.hdr->SiShGen, g, __ATOMIC_RELEASE);
   return g;
}

void dds_file_close(void)
{
   struct stat st;

   if (dds_st.hdr)
      dds_map_retire(dds_st.hdr, dds_st.maplen);
   dds_st.hdr = NULL;
   if (!dds_st.in_place && dds_st.path &&
       lstat(dds_st.path, &st) == 0 && st.st_dev == dds_st.dev && st.st_ino == dds_st.ino)
      unlink(dds_st.path);
   if (dds_st.fd >= 0)
      close(dds_st.fd);
   dds_st.fd = -1;
}
