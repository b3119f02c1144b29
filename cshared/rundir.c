/* SPDX-License-Identifier: Apache-2.0 */
/* rundir.c - see rundir.h. Compiled into libSpmi and libarm. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir.h"

int sa_run_dirs(char dirs[SA_RUN_DIRS][SA_PATH])
{
   const char *e = getenv("SUBAGENT_RUN_DIR");
   int n = 0;

   if (e && *e) {
      snprintf(dirs[n++], SA_PATH, "%s", e);
      return n;
   }
   e = getenv("XDG_RUNTIME_DIR");
   if (geteuid() != 0 && e && e[0] == '/')
      snprintf(dirs[n++], SA_PATH, "%s/subagent", e);
   snprintf(dirs[n++], SA_PATH, "/run/subagent");
   return n;
}

/* dirname of t in place: "/x" is in "/", "x" in ".". */
static void up_one(char *t)
{
   size_t l = strlen(t);
   char *sl;

   while (l > 1 && t[l - 1] == '/')
      t[--l] = 0;
   sl = strrchr(t, '/');
   if (!sl)
      strcpy(t, ".");
   else if (sl == t)
      t[1] = 0;
   else
      *sl = 0;
}

int sa_trusted(const char *p, char *why, size_t n)
{
   char d[SA_PATH], up[SA_PATH];
   struct stat st, ps;

   snprintf(d, sizeof d, "%s", p);
   up_one(d);
   memcpy(up, d, sizeof up);
   up_one(up);
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
               "and its parent %.1024s is not owned by root and closed to group and others",
               d, (unsigned)st.st_uid, (unsigned)geteuid(), up);
   else
      return 1;
   errno = EACCES;
   return 0;
}

void sa_find_socket(const char *name, char *out, size_t n)
{
   char dirs[SA_RUN_DIRS][SA_PATH], why[2048];
   struct stat st;
   int nd = sa_run_dirs(dirs);

   for (int i = 0; i < nd; i++) {
      snprintf(out, n, "%s/%s", dirs[i], name);
      if (stat(out, &st) == 0 && S_ISSOCK(st.st_mode) && sa_trusted(out, why, sizeof why))
         return;
   }
   snprintf(out, n, "%s/%s", dirs[0], name);
}
