/* SPDX-License-Identifier: Apache-2.0 */
/* SpmiVolatile.c - a supplier that adds and deletes a volatile context
 * while it runs, as the guide's SpmiDdsAddCx and SpmiDdsDelCx pages
 * describe. The guide's SpmiSupl.c does it by the time of day; this one
 * does it on signals so that it can be driven: SIGUSR1 adds
 * DDS/IBM/Moretest/Bingo, SIGUSR2 deletes it. The tables are SpmiSupl.c's,
 * with the source type of its float field declared SiFloat (the guide's
 * SiLong made the daemon read the float's bits as an integer).
 * It waits up to 10 s for a daemon started with it.
 * Usage: SpmiVolatile [shared-file], default /tmp/SpmiVolatile_hook. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include "spmi_dds.h"

struct dat
{
   u_long      a;
   u_long      b;
   u_long      c;
   u_long      d;
};
static CONST struct SpmiRawStat PUStats[] = {
{ "gadgets", "Fake counter value", 0, 100, SiCounter, SiLong, 1, SZ_OFF(dat, a, SiULong), NULL},
{ "widgets", "Another fake counter value", 0, 100, SiCounter, SiLong, 2, SZ_OFF(dat, b, SiULong), NULL},
};
static CONST struct SpmiRawStat FakeMemStats[] = {
{ "level", "Fake quantity value", 0, 100, SiQuantity, SiLong, 1, SZ_OFF(dat, c, SiULong), NULL},
{ "queue", "Another fake quantity value", 0, 100, SiQuantity, SiLong, 2, SZ_OFF(dat, d, SiULong), NULL},
};
static CONST cx_create cx_table[] = {
{"DDS/IBM", "IBM-defined Dynamic Data-Suppliers", 2, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
{"DDS/IBM/Test", "Bogus Context Number 1", 220, 0, PUStats, STAT_L(PUStats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
{"DDS/IBM/Moretest", "Bogus Context Number 2", 221, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
{"DDS/IBM/Moretest/SubTest", "Bogus Context Number 3", 222, 0, FakeMemStats, STAT_L(FakeMemStats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};
struct inst
{
   float   a;
   u_long  b;
};
static CONST struct SpmiRawStat InstStats[] = {
{ "problems", "Fake counter value", 0, 100, SiCounter, SiLong, 1, SZ_OFF(inst, a, SiFloat), NULL},
{ "solutions", "Another fake counter value", 0, 100, SiCounter, SiLong, 2, SZ_OFF(inst, b, SiULong), NULL},
};
static CONST cx_create inst_table[] = {
{"DDS/IBM/Moretest/INST1", "Instantiable Context Number 1", 215, 0, InstStats, STAT_L(InstStats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};

static SpmiShare *dataarea = NULL;
static volatile sig_atomic_t want_add, want_del, stop;

static void on_signal(int sig)
{
   if (sig == SIGUSR1)
      want_add = 1;
   else if (sig == SIGUSR2)
      want_del = 1;
   else
      stop = 1;
}

int main(int argc, char **argv)
{
   const char *file = argc > 1 ? argv[1] : "/tmp/SpmiVolatile_hook";
   struct dat *d;
   struct inst *pt1 = NULL;
   int tries;

   for (tries = 0; !(dataarea = SpmiDdsInit(cx_table, CX_L(cx_table), inst_table, CX_L(inst_table), file, 4096)); tries++)
   {
      if (tries == 50)
      {
         fprintf(stderr, "%s\n", SpmiErrmsg);
         exit(1);
      }
      usleep(200000);
   }
   d = (struct dat *)&dataarea->SiShArea[0];
   signal(SIGUSR1, on_signal);
   signal(SIGUSR2, on_signal);
   signal(SIGTERM, on_signal);
   signal(SIGINT, on_signal);
   signal(SIGHUP, on_signal);

   while (!dataarea->SiShGoAway && !stop)
   {
      gettimeofday(&dataarea->SiShT, NULL);
      d->a = 22;
      d->b = 42;
      d->c = 28;
      d->d = 62;
      if (want_add && !pt1)
      {
         if (!(pt1 = (struct inst *)SpmiDdsAddCx(0, "DDS/IBM/Moretest/Bingo", "Dynamically added", 1)))
            fprintf(stderr, "Add failed: \"%s\"\n", SpmiErrmsg);
         want_add = 0;
      }
      if (want_del && pt1)
      {
         if (SpmiDdsDelCx((char *)pt1))
            fprintf(stderr, "Delete failed: \"%s\"\n", SpmiErrmsg);
         else
            pt1 = NULL;
         want_del = 0;
      }
      if (pt1)
      {
         pt1->a = 5;
         pt1->b = 6;
      }
      /* A restarted daemon gets the registration again. */
      if (SpmiDdsCheck() == SiAssumedDead)
         break;
      if (dataarea->SiShSubscrib && dataarea->SiShInterval > 0 && dataarea->SiShInterval < 1000)
         usleep(dataarea->SiShInterval * 1000);
      else
         usleep(200000);
   }
   SpmiExit();
   return 0;
}
