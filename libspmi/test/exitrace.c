/* exitrace.c - SpmiDdsBegin and SpmiDdsEnd against SpmiExit from a signal
 * handler, as the guide's samples call it. Writer threads run nested
 * batches back to back, each storing into the data area, while SIGUSR1's
 * handler calls SpmiExit: odd cycles send the signal to a writer, so that
 * it lands inside that thread's SpmiDdsBegin, SpmiDdsEnd or stores; even
 * cycles to the main thread while the writers run on. The writers then
 * run batches with no registration before the next SpmiDdsInit. Run by
 * TestBatchesSurviveExitFromSignalHandler under ASan and TSan, against its
 * daemon ($SUBAGENT_RUN_DIR).
 *
 *   exitrace <file> <cycles>  prints "ok <cycles> <batches>", or "fail <why>"
 *                             and exits 1; at most CYCLES cycles
 *
 * At the end, with no batch open, one more SpmiDdsInit must have unmapped
 * every mapping the earlier exits retired (msync fails on each).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "spmi_dds.h"

#define WRITERS 3
#define RUN_ON 2000 /* batches all writers run between steps */
#define CYCLES 16   /* at most: the retired mappings the library keeps */

struct dat { u_long a, b; };
static CONST struct SpmiRawStat stats[] = {
   {"a", "first", 0, 100, SiCounter, SiLong, 1, SZ_OFF(dat, a, SiULong), NULL},
   {"b", "second", 0, 100, SiCounter, SiLong, 2, SZ_OFF(dat, b, SiULong), NULL},
};
static CONST cx_create table[] = {
   {"DDS/IBM", "IBM-defined Dynamic Data-Suppliers", 2, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
   {"DDS/IBM/Race", "Batches against SpmiExit", 230, 0, stats, STAT_L(stats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};

static struct dat *area; /* what the writers store into; NULL: nothing */
static int running = 1;
static unsigned long batches;
static int exits;

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
   (void)arg;
   while (__atomic_load_n(&running, __ATOMIC_SEQ_CST)) {
      SpmiDdsBegin();
      SpmiDdsBegin();
      struct dat *d = __atomic_load_n(&area, __ATOMIC_SEQ_CST);
      if (d) {
         __atomic_fetch_add(&d->a, 1, __ATOMIC_RELAXED);
         __atomic_fetch_add(&d->b, 1, __ATOMIC_RELAXED);
      }
      SpmiDdsEnd();
      SpmiDdsEnd();
      __atomic_fetch_add(&batches, 1, __ATOMIC_SEQ_CST);
   }
   return NULL;
}

static void failf(const char *why, int cycle)
{
   printf("fail cycle %d: %s (SpmiErrno %d: %s)\n", cycle, why, SpmiErrno, SpmiErrmsg);
   exit(1);
}

static void pause_a_little(void)
{
   struct timespec ts = {0, 100000};
   nanosleep(&ts, NULL);
}

/* Waits (at most 20 s) until the writers ran n more batches. */
static void run_on(unsigned long n, int cycle)
{
   unsigned long end = __atomic_load_n(&batches, __ATOMIC_SEQ_CST) + n;

   for (int i = 0; __atomic_load_n(&batches, __ATOMIC_SEQ_CST) < end; i++) {
      if (i > 200000)
         failf("the writers stopped", cycle);
      pause_a_little();
   }
}

int main(int argc, char **argv)
{
   pthread_t w[WRITERS];
   struct sigaction sa;
   struct stat st;
   int cycles;

   SpmiShare *seen[CYCLES], *last;
   long page = sysconf(_SC_PAGESIZE);

   if (argc != 3 || (cycles = atoi(argv[2])) <= 0 || cycles > CYCLES) {
      fprintf(stderr, "usage: exitrace <file> <cycles>\n");
      return 2;
   }
   memset(&sa, 0, sizeof sa);
   sa.sa_handler = on_usr1;
   sigemptyset(&sa.sa_mask);
   sigaction(SIGUSR1, &sa, NULL);
   for (int i = 0; i < WRITERS; i++)
      if (pthread_create(&w[i], NULL, writer, NULL) != 0)
         failf("pthread_create", 0);
   for (int c = 1; c <= cycles; c++) {
      SpmiShare *sh = SpmiDdsInit(table, CX_L(table), NULL, 0, argv[1], sizeof(struct dat));
      int before;
      if (!sh)
         failf("SpmiDdsInit", c);
      seen[c - 1] = sh;
      __atomic_store_n(&area, (struct dat *)sh->SiShArea, __ATOMIC_SEQ_CST);
      run_on(RUN_ON, c);
      before = __atomic_load_n(&exits, __ATOMIC_SEQ_CST);
      if (c % 2)
         pthread_kill(w[c / 2 % WRITERS], SIGUSR1);
      else
         raise(SIGUSR1);
      for (int i = 0; __atomic_load_n(&exits, __ATOMIC_SEQ_CST) == before; i++) {
         if (i > 200000)
            failf("the handler's SpmiExit did not return", c);
         pause_a_little();
      }
      if (stat(argv[1], &st) == 0 || errno != ENOENT)
         failf("the shared file is still there after SpmiExit", c);
      run_on(RUN_ON, c);
   }
   __atomic_store_n(&running, 0, __ATOMIC_SEQ_CST);
   for (int i = 0; i < WRITERS; i++)
      pthread_join(w[i], NULL);
   /* One more registration and a plain SpmiExit: what earlier exits left
    * is unmapped now that no batch is open. */
   if (!(last = SpmiDdsInit(table, CX_L(table), NULL, 0, argv[1], sizeof(struct dat))))
      failf("SpmiDdsInit after the writers stopped", cycles + 1);
   SpmiExit();
   for (int c = 0; c < cycles; c++)
      if (seen[c] != last && msync(seen[c], (size_t)page, MS_ASYNC) == 0)
         failf("a retired mapping is still mapped after SpmiDdsInit with no batch open", c + 1);
   printf("ok %d %lu\n", cycles, batches);
   return 0;
}
