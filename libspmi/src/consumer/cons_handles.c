/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_handles.c - the consumer's handle tables: context and statistic
 * handles, and the registry of the listings handed out (for SpmiNextCx
 * and SpmiNextStat). No request to the daemon is made here; traversal
 * (cons_tree.c) and the sets build on it.
 *
 * A context handle names a path kept here (a slot number and the slot's
 * generation, never a pointer the program could forge), so it stays valid
 * while the daemon runs and across its restarts. A statistic handle names
 * a statistic's description, shared by the instances of a context. A link
 * passed back is looked up in the listings before it is used. The tables
 * are bounded: CX_MAX contexts (when it fills, the slots of contexts seen
 * deleted, or never confirmed by the daemon, are reused) and STAT_MAX
 * descriptions.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cons_internal.h"

#define CX_MAX   65536
#define STAT_MAX 65536
#define GEN_BITS 14 /* handles fit 32-bit pointers: 1 tag + 17 slot + 14 gen */

struct cons_stat {
   struct SpmiStat pub;
   char           *key;
};

static struct cons_cx  **cxs;
static int               ncx;
static uint32_t          next_gen;
static struct cons_stat **sts;
static int               nst;
/* Hash tables of slot numbers (-1 empty), open addressing. */
static int *cxh, *sth;
static size_t cxhcap, sthcap;
/* Contexts with a listing, most recent last, for checking links. */
static int *recent_cx, *recent_st;
static int nrecent_cx, nrecent_st;
static int busy = -1;   /* the slot a call works on: never reused under it */

static size_t hash(const char *s)
{
   size_t h = 1469598103934665603u & SIZE_MAX;
   for (; *s; s++)
      h = (h ^ (unsigned char)*s) * (size_t)1099511628211u;
   return h;
}

/* Finds key in table t (keys by slot through keyof); -1 when absent. */
static int ht_find(const int *t, size_t cap, const char *key, const char *(*keyof)(int))
{
   if (!cap)
      return -1;
   for (size_t i = hash(key) & (cap - 1);; i = (i + 1) & (cap - 1)) {
      if (t[i] < 0)
         return -1;
      if (strcmp(keyof(t[i]), key) == 0)
         return t[i];
   }
}

static void ht_put(int *t, size_t cap, const char *key, int slot)
{
   size_t i = hash(key) & (cap - 1);
   while (t[i] >= 0)
      i = (i + 1) & (cap - 1);
   t[i] = slot;
}

static const char *cx_key(int i) { return cxs[i]->path; }
static const char *st_key(int i) { return sts[i]->key; }

/* Rebuilds table *t for n live slots; 0 or -1 (out of memory). */
static int ht_rebuild(int **t, size_t *cap, int n, const char *(*keyof)(int), int (*live)(int))
{
   size_t c = 64;
   int *nt;

   while (c < (size_t)n * 2 + 2)
      c *= 2;
   if (!(nt = malloc(c * sizeof *nt)))
      return -1;
   memset(nt, 0xff, c * sizeof *nt);
   for (int i = 0; i < n; i++)
      if (live(i))
         ht_put(nt, c, keyof(i), i);
   free(*t);
   *t = nt;
   *cap = c;
   return 0;
}

static int cx_live(int i) { return cxs[i]->used; }
static int st_live(int i) { (void)i; return 1; }

SpmiCxHdl cons_slot_hdl(int i)
{
   uintptr_t v = ((uintptr_t)cxs[i]->gen << 17 | (uintptr_t)(i + 1)) << 1;
   return (SpmiCxHdl)v;
}

struct cons_cx *cons_cx(SpmiCxHdl h)
{
   uintptr_t v = (uintptr_t)h;
   uintptr_t i = ((v >> 1) & 0x1ffff) - 1;

   if (!h || (v & 1) || i >= (uintptr_t)ncx || !cxs[i]->used || cxs[i]->gen != (uint32_t)(v >> 18)) {
      spmi_err(SiInvalidCx, "SpmiCxHdl %p is not a context handle of this process (or its context was deleted "
              "and forgotten)", (void *)h);
      return NULL;
   }
   return cxs[i];
}

static void drop_recent(int *r, int *n, int i)
{
   for (int k = 0; k < *n; k++)
      if (r[k] == i) {
         memmove(r + k, r + k + 1, (size_t)(*n - k - 1) * sizeof *r);
         (*n)--;
         return;
      }
}

static void free_slot(int i)
{
   struct cons_cx *c = cxs[i];

   free(c->path);
   free(c->links);
   free(c->slinks);
   drop_recent(recent_cx, &nrecent_cx, i);
   drop_recent(recent_st, &nrecent_st, i);
   *c = (struct cons_cx){.gen = c->gen};
}

/* A free slot: a new one, or one of a context seen deleted; -1 (error
 * set) when the table is full. */
static int new_slot(void)
{
   if (ncx < CX_MAX) {
      struct cons_cx **n = realloc(cxs, (size_t)(ncx + 1) * sizeof *n);
      int *r1 = realloc(recent_cx, (size_t)(ncx + 1) * sizeof *r1);
      if (r1)
         recent_cx = r1;
      int *r2 = realloc(recent_st, (size_t)(ncx + 1) * sizeof *r2);
      if (r2)
         recent_st = r2;
      if (n)
         cxs = n;
      if (!n || !r1 || !r2 || !(cxs[ncx] = calloc(1, sizeof **cxs))) {
         spmi_err(SiCallocFailed, "out of memory");
         return -1;
      }
      return ncx++;
   }
   for (int i = 0; i < ncx; i++)
      if (cxs[i]->used && (cxs[i]->pub.deleted || !cxs[i]->info) && i > 0 && i != busy)
         free_slot(i);
   if (ht_rebuild(&cxh, &cxhcap, ncx, cx_key, cx_live) < 0) {
      spmi_err(SiCallocFailed, "out of memory");
      return -1;
   }
   for (int i = 0; i < ncx; i++)
      if (!cxs[i]->used)
         return i;
   spmi_err(SiCallocFailed, "this process holds handles of %d contexts, the most the library keeps", CX_MAX);
   return -1;
}

int cons_slot(const char *path)
{
   int i = ht_find(cxh, cxhcap, path, cx_key);
   const char *sl;

   if (i >= 0)
      return i;
   if ((i = new_slot()) < 0)
      return -1;
   if (!(cxs[i]->path = strdup(path))) {
      spmi_err(SiCallocFailed, "out of memory");
      return -1;
   }
   next_gen = (next_gen + 1) & ((1u << GEN_BITS) - 1);
   if (!next_gen)
      next_gen = 1;
   cxs[i]->gen = next_gen;
   cxs[i]->used = 1;
   sl = strrchr(path, '/');
   snprintf(cxs[i]->pub.name, sizeof cxs[i]->pub.name, "%s", *path ? (sl ? sl + 1 : path) : "Top");
   if (!*path) {
      snprintf(cxs[i]->pub.description, sizeof cxs[i]->pub.description, "Top of the data hierarchy");
      cxs[i]->info = 1;
   }
   if ((size_t)ncx * 2 + 2 > cxhcap) {
      if (ht_rebuild(&cxh, &cxhcap, ncx, cx_key, cx_live) < 0) {
         free_slot(i);
         spmi_err(SiCallocFailed, "out of memory");
         return -1;
      }
   } else {
      ht_put(cxh, cxhcap, path, i);
   }
   if (*path) { /* the parent: Top for top-level contexts */
      char pp[CONS_MAX_PATH];
      int p;
      snprintf(pp, sizeof pp, "%.*s", sl ? (int)(sl - path) : 0, path);
      if ((p = cons_slot(pp)) < 0)
         return -1;
      cxs[i]->pub.parent = cons_slot_hdl(p);
   }
   return i;
}

SpmiCxHdl cons_cx_at(const char *path)
{
   int i = cons_slot(path);
   return i < 0 ? NULL : cons_slot_hdl(i);
}

int cons_join(char *out, size_t n, const char *a, const char *b)
{
   int l;

   while (*b == '/')
      b++;
   l = *a ? snprintf(out, n, "%s/%s", a, b) : snprintf(out, n, "%s", b);
   if (l < 0 || (size_t)l >= n) {
      spmi_err(SiBadArgument, "path %s/%s is longer than %zu bytes", a, b, n - 1);
      return SiBadArgument;
   }
   while (l > 0 && out[l - 1] == '/')
      out[--l] = 0;
   if (strstr(out, "//")) {
      spmi_err(SiBadArgument, "path %s has an empty part", out);
      return SiBadArgument;
   }
   return 0;
}

/* ---- statistic descriptions ---- */

SpmiStatHdl cons_stat_of(const struct jdoc *d, int s)
{
   const char *name, *descr;
   int64_t mn, mx;
   int asn, val, data, i;
   char key[SI_MAXNAME + SI_MAXLNAME + 128];
   struct cons_stat *st = NULL;

   if (!json_str(d, json_get(d, s, "Name"), &name) || !json_str(d, json_get(d, s, "Descr"), &descr) ||
       !json_int(d, json_get(d, s, "ASN"), &asn) || !json_i64(d, json_get(d, s, "Min"), &mn) ||
       !json_i64(d, json_get(d, s, "Max"), &mx) || !json_int(d, json_get(d, s, "Val"), &val) ||
       !json_int(d, json_get(d, s, "Data"), &data) || val < 0 || val > 1 || data < 0 || data > 2 ||
       !*name || strlen(name) >= SI_MAXNAME || strlen(descr) >= SI_MAXLNAME || asn < 0) {
      spmi_err(SiOtherErr, "the daemon described a statistic in a way this library does not read");
      return NULL;
   }
   snprintf(key, sizeof key, "%s\x1f%s\x1f%d\x1f%lld\x1f%lld\x1f%d\x1f%d", name, descr, asn,
            (long long)mn, (long long)mx, val, data);
   if ((i = ht_find(sth, sthcap, key, st_key)) >= 0)
      return (SpmiStatHdl)(((uintptr_t)(i + 1) << 1) | 1);
   if (nst >= STAT_MAX) {
      spmi_err(SiCallocFailed, "this process holds %d statistic descriptions, the most the library keeps", STAT_MAX);
      return NULL;
   }
   struct cons_stat **n = realloc(sts, (size_t)(nst + 1) * sizeof *n);
   if (n)
      sts = n;
   if (!n || !(st = calloc(1, sizeof *st)) || !(st->key = strdup(key))) {
      free(st);
      spmi_err(SiCallocFailed, "out of memory");
      return NULL;
   }
   snprintf(st->pub.name, sizeof st->pub.name, "%s", name);
   snprintf(st->pub.description, sizeof st->pub.description, "%s", descr);
   st->pub.min = (long)(mn < LONG_MIN ? LONG_MIN : mn > LONG_MAX ? LONG_MAX : mn);
   st->pub.max = (long)(mx < LONG_MIN ? LONG_MIN : mx > LONG_MAX ? LONG_MAX : mx);
   st->pub.value_type = val == 0 ? SiCounter : SiQuantity;
   st->pub.data_type = data == 0 ? SiLong : data == 1 ? SiFloat : SiChar;
   st->pub.asnno = (unsigned short)(asn > 65535 ? 65535 : asn);
   sts[nst++] = st;
   if ((size_t)nst * 2 + 2 > sthcap) {
      if (ht_rebuild(&sth, &sthcap, nst, st_key, st_live) < 0) {
         nst--;
         free(st->key);
         free(st);
         spmi_err(SiCallocFailed, "out of memory");
         return NULL;
      }
   } else {
      ht_put(sth, sthcap, st->key, nst - 1);
   }
   return (SpmiStatHdl)(((uintptr_t)nst << 1) | 1);
}

struct SpmiStat *cons_stat(SpmiStatHdl h)
{
   uintptr_t v = (uintptr_t)h;

   if (!(v & 1) || (v >> 1) == 0 || (v >> 1) > (uintptr_t)nst) {
      spmi_err(SiBadArgument, "SpmiStatHdl %p is not a statistic handle of this process", (void *)h);
      return NULL;
   }
   return &sts[(v >> 1) - 1]->pub;
}

/* Found by address among the library's listings, most recent first. */
void *cons_next_link(const void *link, int stat)
{
   uintptr_t v = (uintptr_t)link;
   int *r = stat ? recent_st : recent_cx, n = stat ? nrecent_st : nrecent_cx;
   size_t sz = stat ? sizeof(struct SpmiStatLink) : sizeof(struct SpmiCxLink);

   for (int k = n - 1; k >= 0; k--) {
      struct cons_cx *c = cxs[r[k]];
      uintptr_t base = stat ? (uintptr_t)c->slinks : (uintptr_t)c->links;
      int cnt = stat ? c->nslinks : c->nlinks;
      if (cnt > 0 && v >= base && v < base + (uintptr_t)cnt * sz && (v - base) % sz == 0) {
         size_t i = (v - base) / sz + 1;
         if (i >= (size_t)cnt)
            return NULL;
         return stat ? (void *)&c->slinks[i] : (void *)&c->links[i];
      }
   }
   spmi_err(SiBadArgument, "%p is not a link that %s returned (or a later call for the same context "
           "replaced its listing)", link, stat ? "SpmiFirstStat" : "SpmiFirstCx");
   return NULL;
}

/* ---- for the traversal (cons_tree.c) ---- */

int cons_nslots(void) { return ncx; }
struct cons_cx *cons_slot_cx(int i) { return cxs[i]; }
void cons_busy(int i) { busy = i; }

int cons_slot_of(const struct cons_cx *c)
{
   for (int i = 0; i < ncx; i++)
      if (cxs[i] == c)
         return i;
   return -1;
}

/* Slot i's listing of subcontexts (or, with stat, statistics) is the
 * newest: SpmiNextCx and SpmiNextStat look there first. */
void cons_listed(int i, int stat)
{
   int *r = stat ? recent_st : recent_cx, *n = stat ? &nrecent_st : &nrecent_cx;

   drop_recent(r, n, i);
   r[(*n)++] = i;
}

void cons_handles_free(void)
{
   for (int i = 0; i < ncx; i++) {
      free_slot(i);
      free(cxs[i]);
   }
   for (int i = 0; i < nst; i++) {
      free(sts[i]->key);
      free(sts[i]);
   }
   free(cxs);
   free(sts);
   free(cxh);
   free(sth);
   free(recent_cx);
   free(recent_st);
   cxs = NULL;
   sts = NULL;
   cxh = sth = recent_cx = recent_st = NULL;
   ncx = nst = nrecent_cx = nrecent_st = 0;
   cxhcap = sthcap = 0;
   /* next_gen goes on, so a handle from before SpmiExit stays invalid. */
}
