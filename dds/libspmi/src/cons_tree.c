/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_tree.c - traversal: context and statistic handles, SpmiPathGetCx,
 * SpmiFirstCx/SpmiNextCx, SpmiFirstStat/SpmiNextStat, SpmiGetCx,
 * SpmiGetStat, SpmiStatGetPath and SpmiInstantiate.
 *
 * A context handle names a path kept here (a slot number and the slot's
 * generation, never a pointer the program could forge), so it stays valid
 * while the daemon runs and across its restarts: every listing asks the
 * daemon afresh (`peek`), which is also what instantiates. A statistic
 * handle names a statistic's description, shared by the instances of a
 * context (so SpmiStatGetPath takes the context). Listings are the
 * library's arrays; a link passed back is looked up in them before it is
 * used. The tables are bounded: CX_MAX contexts (when it fills, the slots
 * of contexts seen deleted, or never confirmed by the daemon, are reused)
 * and STAT_MAX descriptions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cons_internal.h"

#define CX_MAX   65536
#define STAT_MAX 65536
#define GEN_BITS 14 /* handles fit 32-bit pointers: 1 tag + 17 slot + 14 gen */

struct cons_cx {
   struct SpmiCx        pub;
   char                *path;   /* "" for Top, "CPU/cpu0" */
   uint32_t             gen;
   int                  used, info, seen;
   struct SpmiCxLink   *links;  /* the last SpmiFirstCx listing */
   int                  nlinks;
   struct SpmiStatLink *slinks; /* the last SpmiFirstStat listing */
   int                  nslinks;
};

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
static char *stat_path; /* SpmiStatGetPath's answer */
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

static SpmiCxHdl cx_handle(int i)
{
   uintptr_t v = ((uintptr_t)cxs[i]->gen << 17 | (uintptr_t)(i + 1)) << 1;
   return (SpmiCxHdl)v;
}

SpmiCxHdl cons_cx_hdl(const struct cons_cx *c)
{
   for (int i = 0; i < ncx; i++)
      if (cxs[i] == c)
         return cx_handle(i);
   return NULL;
}

const char *cons_cx_path(const struct cons_cx *c) { return c->path; }

struct cons_cx *cons_cx(SpmiCxHdl h)
{
   uintptr_t v = (uintptr_t)h;
   uintptr_t i = ((v >> 1) & 0x1ffff) - 1;

   if (!h || (v & 1) || i >= (uintptr_t)ncx || !cxs[i]->used || cxs[i]->gen != (uint32_t)(v >> 18)) {
      dds_err(SiInvalidCx, "SpmiCxHdl %p is not a context handle of this process (or its context was deleted "
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
         dds_err(SiCallocFailed, "out of memory");
         return -1;
      }
      return ncx++;
   }
   for (int i = 0; i < ncx; i++)
      if (cxs[i]->used && (cxs[i]->pub.deleted || !cxs[i]->info) && i > 0 && i != busy)
         free_slot(i);
   if (ht_rebuild(&cxh, &cxhcap, ncx, cx_key, cx_live) < 0) {
      dds_err(SiCallocFailed, "out of memory");
      return -1;
   }
   for (int i = 0; i < ncx; i++)
      if (!cxs[i]->used)
         return i;
   dds_err(SiCallocFailed, "this process holds handles of %d contexts, the most the library keeps", CX_MAX);
   return -1;
}

static int slot_at(const char *path);

/* The slot of path, made when new; -1 with the error set. */
static int slot_at(const char *path)
{
   int i = ht_find(cxh, cxhcap, path, cx_key);
   const char *sl;

   if (i >= 0)
      return i;
   if ((i = new_slot()) < 0)
      return -1;
   if (!(cxs[i]->path = strdup(path))) {
      dds_err(SiCallocFailed, "out of memory");
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
         dds_err(SiCallocFailed, "out of memory");
         return -1;
      }
   } else {
      ht_put(cxh, cxhcap, path, i);
   }
   if (*path) { /* the parent: Top for top-level contexts */
      char pp[CONS_MAX_PATH];
      int p;
      snprintf(pp, sizeof pp, "%.*s", sl ? (int)(sl - path) : 0, path);
      if ((p = slot_at(pp)) < 0)
         return -1;
      cxs[i]->pub.parent = cx_handle(p);
   }
   return i;
}

SpmiCxHdl cons_cx_at(const char *path)
{
   int i = slot_at(path);
   return i < 0 ? NULL : cx_handle(i);
}

int cons_join(char *out, size_t n, const char *a, const char *b)
{
   int l;

   while (*b == '/')
      b++;
   l = *a ? snprintf(out, n, "%s/%s", a, b) : snprintf(out, n, "%s", b);
   if (l < 0 || (size_t)l >= n) {
      dds_err(SiBadArgument, "path %s/%s is longer than %zu bytes", a, b, n - 1);
      return SiBadArgument;
   }
   while (l > 0 && out[l - 1] == '/')
      out[--l] = 0;
   if (strstr(out, "//")) {
      dds_err(SiBadArgument, "path %s has an empty part", out);
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
   struct cons_stat *st;

   if (!json_str(d, json_get(d, s, "Name"), &name) || !json_str(d, json_get(d, s, "Descr"), &descr) ||
       !json_int(d, json_get(d, s, "ASN"), &asn) || !json_i64(d, json_get(d, s, "Min"), &mn) ||
       !json_i64(d, json_get(d, s, "Max"), &mx) || !json_int(d, json_get(d, s, "Val"), &val) ||
       !json_int(d, json_get(d, s, "Data"), &data) || val < 0 || val > 1 || data < 0 || data > 2 ||
       !*name || strlen(name) >= SI_MAXNAME || strlen(descr) >= SI_MAXLNAME || asn < 0) {
      dds_err(SiOtherErr, "the daemon described a statistic in a way this library does not read");
      return NULL;
   }
   snprintf(key, sizeof key, "%s\x1f%s\x1f%d\x1f%lld\x1f%lld\x1f%d\x1f%d", name, descr, asn,
            (long long)mn, (long long)mx, val, data);
   if ((i = ht_find(sth, sthcap, key, st_key)) >= 0)
      return (SpmiStatHdl)(((uintptr_t)(i + 1) << 1) | 1);
   if (nst >= STAT_MAX) {
      dds_err(SiCallocFailed, "this process holds %d statistic descriptions, the most the library keeps", STAT_MAX);
      return NULL;
   }
   struct cons_stat **n = realloc(sts, (size_t)(nst + 1) * sizeof *n);
   if (n)
      sts = n;
   if (!n || !(st = calloc(1, sizeof *st))) {
      dds_err(SiCallocFailed, "out of memory");
      return NULL;
   }
   if (!(st->key = strdup(key))) {
      free(st);
      dds_err(SiCallocFailed, "out of memory");
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
         dds_err(SiCallocFailed, "out of memory");
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
      dds_err(SiBadArgument, "SpmiStatHdl %p is not a statistic handle of this process", (void *)h);
      return NULL;
   }
   return &sts[(v >> 1) - 1]->pub;
}

/* ---- listings ---- */

static enum SiInstFreq inst_of(const char *s)
{
   if (strcmp(s, "continuously instantiable") == 0)
      return SiContInst;
   if (strcmp(s, "instantiable at configuration time") == 0)
      return SiCfgInst;
   return SiNoInst;
}

/* Fills c from a peek entry of a context. */
static void describe(struct cons_cx *c, const struct jdoc *d, int e)
{
   const char *descr = "", *inst = "", *rel = "", *dot;

   json_str(d, json_get(d, e, "descr"), &descr);
   json_str(d, json_get(d, e, "inst"), &inst);
   json_str(d, json_get(d, e, "rel"), &rel);
   snprintf(c->pub.description, sizeof c->pub.description, "%s", descr);
   c->pub.inst_freq = inst_of(inst);
   dot = strrchr(rel, '.');
   c->pub.asnno = (unsigned short)strtoul(dot ? dot + 1 : rel, NULL, 10);
   c->pub.deleted = 0;
   c->info = 1;
}

/* An entry's path without its trailing slash, and whether it is a
 * context; 0 when it has none or it is too long. */
static int entry_path(const struct jdoc *d, int e, char *out, size_t n, int *is_cx)
{
   const char *p;
   size_t l;

   if (!json_str(d, json_get(d, e, "path"), &p) || (l = strlen(p)) == 0 || l >= n)
      return 0;
   *is_cx = json_get(d, e, "stat") < 0;
   memcpy(out, p, l + 1);
   while (l > 0 && out[l - 1] == '/')
      out[--l] = 0;
   return 1;
}

/* Asks the daemon for a page of the context at c's path and one level
 * below it: from the node itself (from "") or the entries after the
 * relative id from, at most limit (PEEK_PAGE when 0), so that a context
 * of 20,000 processes costs pages of a bounded size, never the subtree;
 * *more says entries remain. Returns the index of the entries array (-2
 * when there are none) or -1 with the error set (SiDeleted when it is
 * gone). */
#define PEEK_PAGE 1000 /* about 300 bytes an entry: 0.3 MB a page */
static int peek_page(struct cons_cx *c, const char *from, int limit, int *more)
{
   struct dds_buf w = {0};
   char b[64];
   int rc, a, m;

   *more = 0;
   dds_put8(&w, '{');
   json_put_raw(&w, "\"op\":\"peek\",\"path\":");
   json_put_str(&w, c->path);
   snprintf(b, sizeof b, ",\"depth\":1,\"limit\":%d", limit > 0 ? limit : PEEK_PAGE);
   json_put_raw(&w, b);
   if (from && *from) {
      json_put_raw(&w, ",\"from\":");
      json_put_str(&w, from);
   }
   dds_put8(&w, '}');
   if ((rc = cons_call(&w, 1)) != 0) {
      if (rc == SiNotFound && *c->path && c->info) {
         c->pub.deleted = 1;
         dds_err(SiDeleted, "context %s has been deleted (the daemon no longer serves it)", c->path);
      }
      return -1;
   }
   if ((m = json_get(&cons_st.doc, 0, "more")) >= 0 && cons_st.doc.n[m].type == J_TRUE)
      *more = 1;
   a = json_get(&cons_st.doc, 0, "peek");
   if (a < 0)
      return -2;
   if (json_len(&cons_st.doc, a) < 0) {
      dds_err(SiOtherErr, "the daemon's peek answer is not a list");
      return -1;
   }
   return a;
}

/* The context at c's path (the first entry) and at most one below it. */
static int peek(struct cons_cx *c)
{
   int more;
   return peek_page(c, NULL, 1, &more);
}

/* Lists c: its own description, its subcontexts (made or updated; those
 * no longer there marked deleted) and, when cxl or stl is given, the new
 * listing of subcontexts or statistics. 0 or an SPMI code. */
static int list(struct cons_cx *c, int want_cx, int want_st)
{
   const struct jdoc *d = &cons_st.doc;
   char p[CONS_MAX_PATH], from[CONS_MAX_PATH] = "";
   int a, is_cx, ci = -1, nl = 0, ns = 0, cap = 0, scap = 0, more = 0;
   struct SpmiCxLink *links = NULL;
   struct SpmiStatLink *slinks = NULL;
   size_t plen = strlen(c->path);

   for (int i = 0; i < ncx; i++)
      if (cxs[i] == c)
         ci = i;
   busy = ci;
   for (int i = 0; i < ncx; i++)
      cxs[i]->seen = 0;
   for (;;) { /* a page at a time, from the last entry's relative id */
      char prev[sizeof from];
      memcpy(prev, from, sizeof prev);
      if ((a = peek_page(c, from, 0, &more)) == -1)
         goto fail;
      for (int e = a >= 0 ? d->n[a].first : -1; e >= 0; e = d->n[e].next) {
         const char *rest, *rel;
         if (json_str(d, json_get(d, e, "rel"), &rel) && strlen(rel) < sizeof from)
            snprintf(from, sizeof from, "%s", rel);
         if (!entry_path(d, e, p, sizeof p, &is_cx))
            continue;
         if (strcmp(p, c->path) == 0) {
            if (is_cx && *c->path)
               describe(c, d, e);
            continue;
         }
         if (plen && (strncmp(p, c->path, plen) != 0 || p[plen] != '/'))
            continue; /* not below c: a daemon's mistake, ignored */
         rest = p + (plen ? plen + 1 : 0);
         if (strchr(rest, '/'))
            continue; /* deeper */
         if (is_cx) {
            int k = slot_at(p);
            if (k < 0)
               goto fail;
            describe(cxs[k], d, e);
            cxs[k]->seen = 1;
            if (want_cx) {
               if (nl == cap) {
                  struct SpmiCxLink *n = realloc(links, (size_t)(cap = cap ? cap * 2 : 16) * sizeof *n);
                  if (!n)
                     goto oom;
                  links = n;
               }
               links[nl++] = (struct SpmiCxLink){NULL, cx_handle(k)};
            }
         } else if (want_st) {
            SpmiStatHdl h = cons_stat_of(d, json_get(d, e, "stat"));
            if (!h)
               goto fail;
            if (ns == scap) {
               struct SpmiStatLink *n = realloc(slinks, (size_t)(scap = scap ? scap * 2 : 16) * sizeof *n);
               if (!n)
                  goto oom;
               slinks = n;
            }
            slinks[ns++] = (struct SpmiStatLink){NULL, h};
         }
      }
      if (!more || a < 0)
         break;
      if (strcmp(prev, from) == 0) { /* a page that does not advance: never loop */
         dds_err(SiOtherErr, "the daemon's listing of %s does not advance past %s", *c->path ? c->path : "Top", from);
         goto fail;
      }
   }
   for (int i = 0; i < ncx; i++) { /* subcontexts gone since */
      struct cons_cx *k = cxs[i];
      if (k->used && !k->seen && k != c && *k->path && cx_live(i)) {
         const char *sl = strrchr(k->path, '/');
         size_t kl = sl ? (size_t)(sl - k->path) : 0;
         if (kl == plen && strncmp(k->path, c->path, plen) == 0)
            k->pub.deleted = 1;
      }
   }
   /* slot_at may have moved nothing (slots are pointers), but c's index
    * is needed for the listings' registry. */
   if (want_cx) {
      free(c->links);
      c->links = links;
      c->nlinks = nl;
      drop_recent(recent_cx, &nrecent_cx, ci);
      recent_cx[nrecent_cx++] = ci;
   }
   if (want_st) {
      free(c->slinks);
      c->slinks = slinks;
      c->nslinks = ns;
      drop_recent(recent_st, &nrecent_st, ci);
      recent_st[nrecent_st++] = ci;
   }
   return 0;
oom:
   dds_err(SiCallocFailed, "out of memory");
fail:
   free(links);
   free(slinks);
   return SpmiErrno;
}

SpmiCxHdl SpmiPathGetCx(CONST char *CxPath, SpmiCxHdl Parent)
{
   char p[CONS_MAX_PATH];
   struct cons_cx *par = NULL, *c;
   SpmiCxHdl h = NULL;
   int a, is_cx;

   if (cons_lock())
      return NULL;
   if (Parent && !(par = cons_cx(Parent)))
      goto out;
   if (cons_join(p, sizeof p, par ? par->path : "", CxPath ? CxPath : ""))
      goto out;
   if (!*p) { /* Top, or the parent itself */
      h = cons_cx_at(p);
      goto out;
   }
   {
      int i = slot_at(p);
      if (i < 0)
         goto out;
      c = cxs[i];
      busy = i;
      if ((a = peek(c)) < 0) {
         if (a == -2)
            dds_err(SiNotFound, "no context %s", p);
         goto out;
      }
      int e = cons_st.doc.n[a].first;
      char ep[CONS_MAX_PATH];
      if (e < 0 || !entry_path(&cons_st.doc, e, ep, sizeof ep, &is_cx) || strcmp(ep, p) != 0) {
         dds_err(SiOtherErr, "the daemon's answer for %s does not start with it", p);
         goto out;
      }
      if (!is_cx) {
         dds_err(SiBadArgument, "%s is a statistic, not a context", p);
         goto out;
      }
      describe(c, &cons_st.doc, e);
      h = cx_handle(i);
   }
out:
   cons_unlock();
   return h;
}

struct SpmiCxLink *SpmiFirstCx(SpmiCxHdl CxHandle)
{
   struct cons_cx *c;
   struct SpmiCxLink *r = NULL;

   if (cons_lock())
      return NULL;
   if ((c = cons_cx(CxHandle)) && list(c, 1, 0) == 0 && c->nlinks > 0)
      r = &c->links[0];
   cons_unlock();
   return r;
}

struct SpmiStatLink *SpmiFirstStat(SpmiCxHdl CxHandle)
{
   struct cons_cx *c;
   struct SpmiStatLink *r = NULL;

   if (cons_lock())
      return NULL;
   if ((c = cons_cx(CxHandle)) && list(c, 0, 1) == 0 && c->nslinks > 0)
      r = &c->slinks[0];
   cons_unlock();
   return r;
}

/* The element after link in the listing that holds it, found by address
 * among the library's listings (most recent first); NULL at the end, or
 * with SiBadArgument when link is none of them. */
static void *next_in(const void *link, int stat)
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
   dds_err(SiBadArgument, "%p is not a link that %s returned (or a later call for the same context "
           "replaced its listing)", link, stat ? "SpmiFirstStat" : "SpmiFirstCx");
   return NULL;
}

struct SpmiCxLink *SpmiNextCx(struct SpmiCxLink *CxLink)
{
   struct SpmiCxLink *r;

   if (cons_lock())
      return NULL;
   r = next_in(CxLink, 0);
   cons_unlock();
   return r;
}

struct SpmiStatLink *SpmiNextStat(struct SpmiStatLink *StatLink)
{
   struct SpmiStatLink *r;

   if (cons_lock())
      return NULL;
   r = next_in(StatLink, 1);
   cons_unlock();
   return r;
}

struct SpmiCx *SpmiGetCx(SpmiCxHdl CxHandle)
{
   struct cons_cx *c;
   struct SpmiCx *r = NULL;

   if (cons_lock())
      return NULL;
   if ((c = cons_cx(CxHandle))) {
      int a, is_cx;
      char ep[CONS_MAX_PATH];
      if (!c->info && (a = peek(c)) >= 0) { /* known by its path only */
         int e = cons_st.doc.n[a].first;
         if (e >= 0 && entry_path(&cons_st.doc, e, ep, sizeof ep, &is_cx) && is_cx && strcmp(ep, c->path) == 0)
            describe(c, &cons_st.doc, e);
      }
      dds_clear_err(); /* the handle is good: its structure, as known */
      r = &c->pub;
   }
   cons_unlock();
   return r;
}

struct SpmiStat *SpmiGetStat(SpmiStatHdl StatHandle)
{
   struct SpmiStat *r;

   if (cons_lock())
      return NULL;
   r = cons_stat(StatHandle);
   cons_unlock();
   return r;
}

char *SpmiStatGetPath(SpmiCxHdl Parent, SpmiStatHdl StatHandle, int MaxLevels)
{
   struct cons_cx *c;
   struct SpmiStat *s;
   char p[CONS_MAX_PATH], *r = NULL, *start;

   if (cons_lock())
      return NULL;
   if (MaxLevels < 0) {
      dds_err(SiBadArgument, "SpmiStatGetPath: MaxLevels %d is negative", MaxLevels);
      goto out;
   }
   if (!(c = cons_cx(Parent)) || !(s = cons_stat(StatHandle)) || cons_join(p, sizeof p, c->path, s->name))
      goto out;
   start = p;
   if (MaxLevels > 0) { /* the last MaxLevels parts */
      int parts = 1;
      for (char *q = p + strlen(p); q > p; q--)
         if (q[-1] == '/' && ++parts > MaxLevels) {
            start = q;
            break;
         }
   }
   free(stat_path);
   if (!(stat_path = strdup(start)))
      dds_err(SiCallocFailed, "out of memory");
   r = stat_path;
out:
   cons_unlock();
   return r;
}

int SpmiInstantiate(SpmiCxHdl CxHandle)
{
   struct cons_cx *c;
   int rc;

   if ((rc = cons_lock()))
      return rc;
   if (!(c = cons_cx(CxHandle))) {
      rc = SiInvalidCx;
   } else if ((rc = list(c, 0, 0)) == 0 && c->pub.inst_freq == SiNoInst) {
      dds_err(SiNotInst, "context %s is not instantiable", *c->path ? c->path : "Top");
      rc = SiNotInst;
   }
   cons_unlock();
   return rc;
}

void cons_tree_free(void)
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
   free(stat_path);
   cxs = NULL;
   sts = NULL;
   cxh = sth = recent_cx = recent_st = NULL;
   ncx = nst = nrecent_cx = nrecent_st = 0;
   cxhcap = sthcap = 0;
   stat_path = NULL;
   /* next_gen goes on, so a handle from before SpmiExit stays invalid. */
}
