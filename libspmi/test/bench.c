/* bench.c - the cost of one value update: a store into the mapped data
 * area, with no library call and no system call. Usage: bench FILE N.
 * Prints "store <ns/op>" and "stamped <ns/op>" (a store and the guide's
 * gettimeofday stamp of SiShT, which the vDSO serves without a syscall). */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include "spmi_dds.h"

struct dat { u_long a; };

static CONST struct SpmiRawStat Stats[] = {
   {"gadgets", "Fake counter value", 0, 100, SiCounter, SiLong, 1, SZ_OFF(dat, a, SiULong), NULL},
};
static CONST cx_create cx_table[] = {
   {"DDS/IBM", "IBM-defined Dynamic Data-Suppliers", 2, 0, NULL, 0, NULL, 0, NULL, SiNoInst, 0, NULL, 0},
   {"DDS/IBM/Bench", "Benchmark", 230, 0, Stats, STAT_L(Stats), NULL, 0, NULL, SiNoInst, 0, NULL, 0},
};

static double now(void)
{
   struct timespec ts;
   clock_gettime(CLOCK_MONOTONIC, &ts);
   return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
   SpmiShare *sh;
   struct dat *d;
   long n;
   double t0;

   if (argc != 3 || (n = atol(argv[2])) <= 0) {
      fprintf(stderr, "usage: bench FILE N\n");
      return 2;
   }
   sh = SpmiDdsInit(cx_table, CX_L(cx_table), NULL, 0, argv[1], 0);
   if (!sh) {
      fprintf(stderr, "SpmiDdsInit: %d %s\n", SpmiErrno, SpmiErrmsg);
      return 1;
   }
   d = (struct dat *)sh->SiShArea;
   t0 = now();
   for (long i = 0; i < n; i++) {
      d->a = (u_long)i;
      __asm__ volatile("" ::: "memory"); /* keep every store, add no instruction */
   }
   printf("store %.3f\n", (now() - t0) / (double)n);
   t0 = now();
   for (long i = 0; i < n; i++) {
      d->a = (u_long)i;
      gettimeofday(&sh->SiShT, NULL);
   }
   printf("stamped %.3f\n", (now() - t0) / (double)n);
   printf("value %lu\n", d->a);
   SpmiExit();
   return 0;
}
