/* exitrace.c - batches against SpmiExit from a signal handler: writer
 * threads run nested batches storing into the area while SIGUSR1's handler
 * calls SpmiExit, landing in a writer (odd cycles) or in the main thread;
 * then SpmiDdsInit again. At the end, with no batch open, one more
 * SpmiDdsInit has unmapped every retired mapping (msync fails on each).
 * TestBatchesSurviveExitFromSignalHandler runs it under ASan and TSan.
 *   exitrace <file> <cycles>   "ok <cycles> <batches>", or "fail ..." and 1
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include "spmi_dds.h"

#define WRITERS 3
#define CYCLES 16 /* at most: the retired mappings the library keeps */

struct dat { u_long a; };
static CONST struct SpmiRawStat stats[] = {
   {"a", "counted", 0, 100, SiCounter, SiLong, 1, SZ_OFF(dat, a, SiULong), NULL},
};
static CONST cx_create table[] = {
   {"DDS/IBM", "IBM-defined Dynamic Data-Suppliers", 2, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
   {"DDS/IBM/Race", "Batches against SpmiExit", 230, 0, stats, STAT_L(stats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};

static struct dat *area; /* what the writers store into; NULL: nothing */
static unsigned long batches, exits, running = 1;

/* The area is given up before SpmiExit: a batch begun since stores
 * nothing, and one that loaded the area holds its mapping. */
static void on_usr1(int sig)
{
   (void)sig;
   __atomic_store_n(&area, NULL, __ATOMIC_SEQ_CST);
   SpmiExit();
   __atomic_fetch_add(&exits, 1, __ATOMIC_SEQ_CST);
}

static void *writer(void *arg)
{
   for (struct dat *d; __atomic_load_n(&running, __ATOMIC_SEQ_CST); __atomic_fetch_add(&batches, 1, __ATOMIC_SEQ_CST)) {
      SpmiDdsBegin();
      SpmiDdsBegin();
      if ((d = __atomic_load_n(&area, __ATOMIC_SEQ_CST)) != NULL)
         __atomic_fetch_add(&d->a, 1, __ATOMIC_RELAXED);
      SpmiDdsEnd();
      SpmiDdsEnd();
   }
   return arg;
}

static int fail(const char *why, int cycle)
{
   printf("fail cycle %d: %s (SpmiErrno %d: %s)\n", cycle, why, SpmiErrno, SpmiErrmsg);
   return 1;
}

/* Waits, at most 20 s, until *counter is past from. */
static int passed(unsigned long *counter, unsigned long from)
{
   struct timespec ts = {0, 100000};

   for (int i = 0; __atomic_load_n(counter, __ATOMIC_SEQ_CST) <= from; i++)
      if (i > 200000 || (nanosleep(&ts, NULL) < 0 && errno != EINTR))
         return 0;
   return 1;
}

int main(int argc, char **argv)
{
   pthread_t w[WRITERS];
   SpmiShare *seen[CYCLES], *sh;
   struct stat st;
   int c, cycles = argc == 3 ? atoi(argv[2]) : 0;

   if (cycles <= 0 || cycles > CYCLES)
      return fail("usage: exitrace <file> <cycles>", 0);
   signal(SIGUSR1, on_usr1);
   for (int i = 0; i < WRITERS; i++)
      pthread_create(&w[i], NULL, writer, NULL);
   for (c = 1; c <= cycles; c++) {
      unsigned long e = __atomic_load_n(&exits, __ATOMIC_SEQ_CST);
      if (!(sh = seen[c - 1] = SpmiDdsInit(table, CX_L(table), NULL, 0, argv[1], sizeof(struct dat))))
         return fail("SpmiDdsInit", c);
      __atomic_store_n(&area, (struct dat *)sh->SiShArea, __ATOMIC_SEQ_CST);
      if (!passed(&batches, __atomic_load_n(&batches, __ATOMIC_SEQ_CST) + 2000))
         return fail("the writers stopped", c);
      if (c % 2 ? pthread_kill(w[c / 2 % WRITERS], SIGUSR1) : raise(SIGUSR1))
         return fail("no signal sent", c);
      if (!passed(&exits, e))
         return fail("the handler's SpmiExit did not return", c);
      if (stat(argv[1], &st) == 0 || errno != ENOENT)
         return fail("the shared file is still there after SpmiExit", c);
      if (!passed(&batches, __atomic_load_n(&batches, __ATOMIC_SEQ_CST) + 2000))
         return fail("the writers stopped after SpmiExit", c);
   }
   __atomic_store_n(&running, 0, __ATOMIC_SEQ_CST);
   for (int i = 0; i < WRITERS; i++)
      pthread_join(w[i], NULL);
   if (!(sh = SpmiDdsInit(table, CX_L(table), NULL, 0, argv[1], sizeof(struct dat))))
      return fail("SpmiDdsInit after the writers stopped", c);
   SpmiExit();
   for (int i = 0; i < cycles; i++)
      if (seen[i] != sh && msync(seen[i], 1, MS_ASYNC) == 0)
         return fail("a retired mapping is still mapped after SpmiDdsInit with no batch open", i + 1);
   printf("ok %d %lu\n", cycles, batches);
   return 0;
}
