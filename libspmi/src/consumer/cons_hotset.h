/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_hotset.h - a hotset as the library keeps it: defined by
 * cons_hotset.c, read by cons_hotread.c. Not installed.
 */
#ifndef CONS_HOTSET_H
#define CONS_HOTSET_H

#include "cons_internal.h"

#pragma GCC visibility push(hidden)

struct hval {
   struct SpmiHotVals pub;
   char               stat[CONS_MAX_PATH + 4]; /* "CPU/ * /idle" for the daemon */
   char               feed[16], excp[16];
   double            *rates;  /* per item: the value the daemon compared */
   int                nitems_cap;
   struct hval      **pseudo; /* further groups of peers (FS/vg/...) */
   int                npseudo, npseudo_used;
};

struct hset {
   struct SpmiHotSet pub;
   int               id;      /* in the daemon's session */
   unsigned          gen;     /* connection it was made on */
   struct hval     **v;
   int               n;
   char              after[64];
};

/* The library's hotset at p, or NULL with SiInvalidCx. */
struct hset *cons_hset_of(const struct SpmiHotSet *p);
/* Makes h on the current connection, with its peer sets, when it was made
 * on an earlier one (a daemon restart); 0 or an SPMI code. */
int cons_hot_ensure(struct hset *h);

#pragma GCC visibility pop

#endif /* CONS_HOTSET_H */
