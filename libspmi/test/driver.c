/* driver.c - a supplier driven line by line from stdin, for the Go tests.
 * Its tables are the guide's (SpmiSupl.c); "orphan" is a table whose
 * context has no parent. Every command answers one line: "ok ..." or
 * "err <SpmiErrno> <SpmiErrmsg>".
 *
 *   init <file> <size> guide|orphan   add <ix> <asn> <path> [descr]
 *   del <offset>    put <offset> <u_long>    stamp    goaway    check
 *   hdr    exit (SpmiExit)    quit (exit without SpmiExit)
 *   trap (SIGTERM calls SpmiExit, as the guide's SpmiStopMe)
 *   spin <offset>...  a thread adds 1 to the u_long at each offset, all in
 *                     one SpmiDdsBegin/SpmiDdsEnd batch, over and over
 *   stop              ends it: "ok <batches>"
 *   batch             one empty batch: "ok <SiShBatch> <SiShBatchEnd> <SiShMinor>"
 *                     ("ok -" before init)
 *   begin, end        SpmiDdsBegin or SpmiDdsEnd alone, answered as batch
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "spmi_dds.h"
#include "answer.h"

struct dat { u_long a, b, c, d; };
struct inst { float a; u_long b; };

static CONST struct SpmiRawStat PUStats[] = {
   {"gadgets", "Fake counter value", 0, 100, SiCounter, SiLong, 1, SZ_OFF(dat, a, SiULong), NULL},
   {"widgets", "Another fake counter value", 0, 100, SiCounter, SiLong, 2, SZ_OFF(dat, b, SiULong), NULL},
};
static CONST struct SpmiRawStat FakeMemStats[] = {
   {"level", "Fake quantity value", 0, 100, SiQuantity, SiLong, 1, SZ_OFF(dat, c, SiULong), NULL},
   {"queue", "Another fake quantity value", 0, 100, SiQuantity, SiLong, 2, SZ_OFF(dat, d, SiULong), NULL},
};
static CONST cx_create guide[] = {
   {"DDS/IBM", "IBM-defined Dynamic Data-Suppliers", 2, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
   {"DDS/IBM/Test", "Bogus Context Number 1", 220, 0, PUStats, STAT_L(PUStats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
   {"DDS/IBM/Moretest", "Bogus Context Number 2", 221, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
   {"DDS/IBM/Moretest/SubTest", "Bogus Context Number 3", 222, 0, FakeMemStats, STAT_L(FakeMemStats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};
static CONST cx_create orphan[] = {
   {"DDS/IBM", "IBM-defined Dynamic Data-Suppliers", 2, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
   {"DDS/IBM/Nowhere/Test", "No parent", 220, 0, PUStats, STAT_L(PUStats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};
static CONST struct SpmiRawStat InstStats[] = {
   {"problems", "Fake counter value", 0, 100, SiCounter, SiLong, 1, SZ_OFF(inst, a, SiLong), NULL},
   {"solutions", "Another fake counter value", 0, 100, SiCounter, SiLong, 2, SZ_OFF(inst, b, SiLong), NULL},
};
static CONST cx_create inst_table[] = {
   {"DDS/IBM/Moretest/INST1", "Instantiable Context Number 1", 215, 0, InstStats, STAT_L(InstStats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};

static SpmiShare *sh;

/* spin: a writer thread running batches back to back. */
static pthread_t spinner;
static int spinning, nspin;
static long spin_off[8];
static unsigned long spin_batches;

static void *spin(void *arg)
{
   (void)arg;
   while (__atomic_load_n(&spinning, __ATOMIC_RELAXED)) {
      SpmiDdsBegin();
      for (int i = 0; i < nspin; i++) {
         u_long *p = (u_long *)(sh->SiShArea + spin_off[i]);
         __atomic_store_n(p, *p + 1, __ATOMIC_RELAXED);
      }
      SpmiDdsEnd();
      spin_batches++;
   }
   return NULL;
}

static void do_spin(char *args)
{
   int n = 0;

   nspin = 0;
   while (nspin < 8 && sscanf(args, "%ld%n", &spin_off[nspin], &n) == 1) {
      nspin++;
      args += n;
   }
   if (nspin == 0 || spinning) {
      printf("err 0 spin: no offsets, or spinning already\n");
      return;
   }
   spin_batches = 0;
   spinning = 1;
   if (pthread_create(&spinner, NULL, spin, NULL) == 0)
      printf("ok\n");
   else {
      spinning = 0;
      printf("err 0 spin: no thread\n");
   }
}

/* The guide's SpmiStopMe. */
static void stop_me(int sig)
{
   (void)sig;
   SpmiExit();
   _exit(0);
}

static void do_init(char *args)
{
   char file[4096], table[32];
   int size;

   if (sscanf(args, "%4095s %d %31s", file, &size, table) != 3) {
      printf("err 0 usage\n");
      return;
   }
   if (strcmp(table, "orphan") == 0)
      sh = SpmiDdsInit(orphan, CX_L(orphan), NULL, 0, file, size);
   else
      sh = SpmiDdsInit(guide, CX_L(guide), inst_table, CX_L(inst_table), file, size);
   if (sh)
      printf("ok %d\n", SpmiErrno);
   else
      fail();
}

static void do_add(char *args)
{
   unsigned ix;
   int asn, n = 0;
   char path[256];
   char *p;

   if (sscanf(args, "%u %d %255s %n", &ix, &asn, path, &n) < 3) {
      printf("err 0 usage\n");
      return;
   }
   p = SpmiDdsAddCx((unsigned short)ix, path, args + n, asn);
   if (p)
      printf("ok %ld\n", (long)(p - sh->SiShArea));
   else
      fail();
}

int main(void)
{
   char line[8192];

   setvbuf(stdout, NULL, _IOLBF, 0);
   while (fgets(line, sizeof line, stdin)) {
      char cmd[16] = "", *args;
      long off;
      unsigned long v;

      line[strcspn(line, "\n")] = '\0';
      sscanf(line, "%15s", cmd);
      args = line + strlen(cmd);
      args += strspn(args, " ");
      if (strcmp(cmd, "init") == 0)
         do_init(args);
      else if (strcmp(cmd, "add") == 0)
         do_add(args);
      else if (strcmp(cmd, "del") == 0 && sscanf(args, "%ld", &off) == 1)
         answer(SpmiDdsDelCx(sh->SiShArea + off) == 0);
      else if (strcmp(cmd, "put") == 0 && sscanf(args, "%ld %lu", &off, &v) == 2) {
         *(u_long *)(sh->SiShArea + off) = v;
         printf("ok\n");
      } else if (strcmp(cmd, "stamp") == 0) {
         gettimeofday(&sh->SiShT, NULL);
         printf("ok\n");
      } else if (strcmp(cmd, "goaway") == 0)
         printf("ok %u\n", (unsigned)sh->SiShGoAway);
      else if (strcmp(cmd, "check") == 0)
         answer(SpmiDdsCheck() == 0);
      else if (strcmp(cmd, "hdr") == 0)
         printf("ok %u %u %u %d\n", sh->SiShAreaLen, sh->SiShPermLen, sh->SiShAllocLen, (int)sh->SiShPid);
      else if (strcmp(cmd, "exit") == 0) {
         SpmiExit();
         printf("ok %d\n", SpmiErrno);
      } else if (strcmp(cmd, "trap") == 0) {
         signal(SIGTERM, stop_me);
         printf("ok\n");
      } else if (strcmp(cmd, "batch") == 0 || strcmp(cmd, "begin") == 0 || strcmp(cmd, "end") == 0) {
         if (cmd[0] != 'e')
            SpmiDdsBegin();
         if (cmd[0] != 'b' || cmd[1] == 'a')
            SpmiDdsEnd();
         if (sh)
            printf("ok %u %u %d\n", sh->SiShBatch, sh->SiShBatchEnd, (int)sh->SiShMinor);
         else
            printf("ok -\n");
      } else if (strcmp(cmd, "spin") == 0)
         do_spin(args);
      else if (strcmp(cmd, "stop") == 0 && spinning) {
         __atomic_store_n(&spinning, 0, __ATOMIC_RELAXED);
         pthread_join(spinner, NULL);
         printf("ok %lu\n", spin_batches);
      } else if (strcmp(cmd, "quit") == 0)
         return 0;
      else
         printf("err 0 unknown command %s\n", line);
   }
   return 0;
}
