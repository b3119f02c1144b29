/* SPDX-License-Identifier: Apache-2.0 */
/* map.c - the shared file's mapping as batches see it. Batches take no
 * lock, and the guide calls SpmiExit from signal handlers, which may
 * interrupt one: SpmiExit unmaps only when no batch is open, and a
 * mapping a batch holds waits for a SpmiDdsInit that finds none open. */
#define _GNU_SOURCE
#include <sys/mman.h>
#include "dds_internal.h"

/* The mapping batches count on; NULL when unregistered. */
static SpmiShare *current;

/* Outermost batches open in all threads. A batch counts itself before it
 * loads current; retire clears current before it reads holders: either
 * the batch saw NULL or retire sees it (sequentially consistent). */
static unsigned long holders;

/* Retired mappings a batch held, not yet unmapped. When full, a retired
 * mapping is left for the process's life: never a crash. */
#define LEFTOVERS 16
static struct {
   SpmiShare *hdr;
   size_t     len;
} leftover[LEFTOVERS];

SpmiShare *dds_map_hold(void)
{
   __atomic_fetch_add(&holders, 1, __ATOMIC_SEQ_CST);
   return __atomic_load_n(&current, __ATOMIC_SEQ_CST);
}

void dds_map_release(void)
{
   __atomic_fetch_sub(&holders, 1, __ATOMIC_SEQ_CST);
}

/* Unmaps the retired mappings when no batch is open: a batch begun since
 * they were retired loaded another mapping or none. Under spmi_mu. */
static void reap(void)
{
   if (__atomic_load_n(&holders, __ATOMIC_SEQ_CST) != 0)
      return;
   for (int i = 0; i < LEFTOVERS; i++) {
      if (leftover[i].hdr)
         munmap(leftover[i].hdr, leftover[i].len);
      leftover[i].hdr = NULL;
   }
}

void dds_map_publish(SpmiShare *h)
{
   reap();
   __atomic_store_n(&current, h, __ATOMIC_SEQ_CST);
}

/* Only atomics and munmap: SpmiExit may run in a signal handler. */
void dds_map_retire(SpmiShare *h, size_t len)
{
   __atomic_store_n(&current, NULL, __ATOMIC_SEQ_CST);
   if (__atomic_load_n(&holders, __ATOMIC_SEQ_CST) == 0) {
      munmap(h, len);
      return;
   }
   for (int i = 0; i < LEFTOVERS; i++) {
      if (!leftover[i].hdr) {
         leftover[i].hdr = h;
         leftover[i].len = len;
         return;
      }
   }
}
