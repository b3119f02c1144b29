/* SPDX-License-Identifier: Apache-2.0 */
/* batch.c - SpmiDdsBegin and SpmiDdsEnd: a batch of updates the daemon
 * serves whole (docs/DDS.md §1, Batches). SiShBatch counts batches begun,
 * SiShBatchEnd batches ended; the daemon copies values only when the two
 * are equal and SiShBatch did not move during the copy. No lock, so any
 * number of threads may run batches at once, and SpmiExit in a signal
 * handler cannot deadlock with one (map.c keeps what they touch mapped). */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>
#include "dds_internal.h"

/* An odd SiShReading that outlasted the hold-off (a daemon that died while
 * copying): not waited for again until it changes. 0 (even) for none. */
static uint32_t ignored;

/* This thread's open batches and the mapping the outermost one holds
 * (map.c), so nested batches and a batch spanning SpmiExit or SpmiDdsInit
 * pair up, and a stray SpmiDdsEnd cannot leave SiShBatchEnd ahead (every
 * read would then find a batch open). */
static _Thread_local unsigned depth;
static _Thread_local SpmiShare *batch_hdr;

static uint64_t now_ns(void)
{
   struct timespec ts;

   clock_gettime(CLOCK_MONOTONIC, &ts);
   return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Lets the daemon's copy end before a new batch begins: a thread running
 * batches back to back would otherwise keep every copy from being
 * consistent. At most DDS_HOLD_OFF_NS. */
static void hold_off(SpmiShare *h, uint32_t r)
{
   uint64_t end = now_ns() + DDS_HOLD_OFF_NS;

   while (__atomic_load_n(&h->SiShReading, __ATOMIC_ACQUIRE) == r) {
      if (now_ns() > end) {
         __atomic_store_n(&ignored, r, __ATOMIC_RELAXED);
         return;
      }
      sched_yield();
   }
}

void SpmiDdsBegin(void)
{
   SpmiShare *h;
   uint32_t r;

   if (depth++ > 0)
      h = batch_hdr;
   else
      h = batch_hdr = dds_map_hold();
   if (!h)
      return;
   r = __atomic_load_n(&h->SiShReading, __ATOMIC_ACQUIRE);
   if ((r & 1) && r != __atomic_load_n(&ignored, __ATOMIC_RELAXED))
      hold_off(h, r);
   /* Sequentially consistent: the batch's stores stay after it. */
   __atomic_fetch_add(&h->SiShBatch, 1, __ATOMIC_SEQ_CST);
}

void SpmiDdsEnd(void)
{
   SpmiShare *h = batch_hdr;

   if (depth == 0)
      return; /* no batch open in this thread */
   /* Held, so mapped, even after SpmiExit. */
   if (h)
      __atomic_fetch_add(&h->SiShBatchEnd, 1, __ATOMIC_SEQ_CST);
   if (--depth == 0) {
      batch_hdr = NULL;
      dds_map_release();
   }
}
