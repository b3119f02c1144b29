/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_tree.c - traversal: SpmiPathGetCx, SpmiFirstCx/SpmiNextCx,
 * SpmiFirstStat/SpmiNextStat, SpmiGetCx, SpmiGetStat, SpmiStatGetPath and
 * SpmiInstantiate, over the handles of cons_handles.c.
 *
 * Every listing asks the daemon afresh (`peek`), a page at a time, which
 * is also what instantiates; listings are the library's arrays.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "cons_internal.h"

static char *stat_path; /* SpmiStatGetPath's answer */

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
   struct spmi_buf w = {0};
   int rc, a, m;

   *more = 0;
   json_putf(&w, "{\"op\":\"peek\",\"path\":");
   json_put_str(&w, c->path);
   json_putf(&w, ",\"depth\":1,\"limit\":%d", limit > 0 ? limit : PEEK_PAGE);
   if (from && *from) {
      json_putf(&w, ",\"from\":");
      json_put_str(&w, from);
   }
   json_putf(&w, "}");
   if ((rc = cons_call(&w, 1)) != 0) {
      if (rc == SiNotFound && *c->path && c->info) {
         c->pub.deleted = 1;
         spmi_err(SiDeleted, "context %s has been deleted (the daemon no longer serves it)", c->path);
      }
      return -1;
   }
   if ((m = json_get(&cons_st.doc, 0, "more")) >= 0 && cons_st.doc.n[m].type == J_TRUE)
      *more = 1;
   a = json_get(&cons_st.doc, 0, "peek");
   if (a < 0)
      return -2;
   if (json_len(&cons_st.doc, a) < 0) {
      spmi_err(SiOtherErr, "the daemon's peek answer is not a list");
      return -1;
   }
   return a;
}

/* Peeks at c itself (the first entry, and at most one below it): the
 * index of its entry, *is_cx set, or -1 with the error set (SiNotFound
 * when there is none). */
static int peek_self(struct cons_cx *c, int *is_cx)
{
   char ep[CONS_MAX_PATH];
   int more, e, a = peek_page(c, NULL, 1, &more);

   if (a < 0) {
      if (a == -2)
         spmi_err(SiNotFound, "no context %s", c->path);
      return -1;
   }
   e = cons_st.doc.n[a].first;
   if (e < 0 || !entry_path(&cons_st.doc, e, ep, sizeof ep, is_cx) || strcmp(ep, c->path) != 0) {
      spmi_err(SiOtherErr, "the daemon's answer for %s does not start with it", c->path);
      return -1;
   }
   return e;
}

/* Lists c: its own description, its subcontexts (made or updated; those
 * no longer there marked deleted) and, with want_cx or want_st, the new
 * listing of subcontexts or statistics. 0 or an SPMI code. */
static int list(struct cons_cx *c, int want_cx, int want_st)
{
   const struct jdoc *d = &cons_st.doc;
   char p[CONS_MAX_PATH], from[CONS_MAX_PATH] = "";
   int a, is_cx, ci = cons_slot_of(c), nl = 0, ns = 0, cap = 0, scap = 0, more = 0;
   struct SpmiCxLink *links = NULL;
   struct SpmiStatLink *slinks = NULL;
   size_t plen = strlen(c->path);

   cons_busy(ci);
   for (int i = 0; i < cons_nslots(); i++)
      cons_slot_cx(i)->seen = 0;
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
            int k = cons_slot(p);
            if (k < 0)
               goto fail;
            describe(cons_slot_cx(k), d, e);
            cons_slot_cx(k)->seen = 1;
            if (want_cx) {
               if (nl == cap) {
                  struct SpmiCxLink *n = realloc(links, (size_t)(cap = cap ? cap * 2 : 16) * sizeof *n);
                  if (!n)
                     goto oom;
                  links = n;
               }
               links[nl++] = (struct SpmiCxLink){NULL, cons_slot_hdl(k)};
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
         spmi_err(SiOtherErr, "the daemon's listing of %s does not advance past %s", *c->path ? c->path : "Top", from);
         goto fail;
      }
   }
   for (int i = 0; i < cons_nslots(); i++) { /* subcontexts gone since */
      struct cons_cx *k = cons_slot_cx(i);
      if (k->used && !k->seen && k != c && *k->path) {
         const char *sl = strrchr(k->path, '/');
         size_t kl = sl ? (size_t)(sl - k->path) : 0;
         if (kl == plen && strncmp(k->path, c->path, plen) == 0)
            k->pub.deleted = 1;
      }
   }
   /* cons_slot may have moved nothing (slots are pointers), but c's index
    * is needed for the listings' registry. */
   if (want_cx) {
      free(c->links);
      c->links = links;
      c->nlinks = nl;
      cons_listed(ci, 0);
   }
   if (want_st) {
      free(c->slinks);
      c->slinks = slinks;
      c->nslinks = ns;
      cons_listed(ci, 1);
   }
   return 0;
oom:
   spmi_err(SiCallocFailed, "out of memory");
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
   int i, e, is_cx;

   if (cons_lock())
      return NULL;
   if ((Parent && !(par = cons_cx(Parent))) || cons_join(p, sizeof p, par ? par->path : "", CxPath ? CxPath : "") ||
       (i = cons_slot(p)) < 0)
      goto out;
   if (!*p) { /* Top, or the parent itself */
      h = cons_slot_hdl(i);
      goto out;
   }
   c = cons_slot_cx(i);
   cons_busy(i);
   if ((e = peek_self(c, &is_cx)) < 0)
      goto out;
   if (!is_cx) {
      spmi_err(SiBadArgument, "%s is a statistic, not a context", p);
      goto out;
   }
   describe(c, &cons_st.doc, e);
   h = cons_slot_hdl(i);
out:
   cons_unlock();
   return h;
}

/* SpmiFirstCx, and with stat SpmiFirstStat: a new listing of h. */
static void *first_link(SpmiCxHdl h, int stat)
{
   struct cons_cx *c;
   void *r = NULL;

   if (cons_lock())
      return NULL;
   if ((c = cons_cx(h)) && list(c, !stat, stat) == 0 && (stat ? c->nslinks : c->nlinks) > 0)
      r = stat ? (void *)c->slinks : (void *)c->links;
   cons_unlock();
   return r;
}

/* SpmiNextCx, and with stat SpmiNextStat. */
static void *next_link(const void *link, int stat)
{
   void *r;

   if (cons_lock())
      return NULL;
   r = cons_next_link(link, stat);
   cons_unlock();
   return r;
}

struct SpmiCxLink *SpmiFirstCx(SpmiCxHdl CxHandle) { return first_link(CxHandle, 0); }
struct SpmiStatLink *SpmiFirstStat(SpmiCxHdl CxHandle) { return first_link(CxHandle, 1); }
struct SpmiCxLink *SpmiNextCx(struct SpmiCxLink *CxLink) { return next_link(CxLink, 0); }
struct SpmiStatLink *SpmiNextStat(struct SpmiStatLink *StatLink) { return next_link(StatLink, 1); }

struct SpmiCx *SpmiGetCx(SpmiCxHdl CxHandle)
{
   struct cons_cx *c;
   struct SpmiCx *r = NULL;

   if (cons_lock())
      return NULL;
   if ((c = cons_cx(CxHandle))) {
      int e, is_cx;
      if (!c->info && (e = peek_self(c, &is_cx)) >= 0 && is_cx) /* known by its path only */
         describe(c, &cons_st.doc, e);
      spmi_clear_err(); /* the handle is good: its structure, as known */
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
      spmi_err(SiBadArgument, "SpmiStatGetPath: MaxLevels %d is negative", MaxLevels);
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
      spmi_err(SiCallocFailed, "out of memory");
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
      spmi_err(SiNotInst, "context %s is not instantiable", *c->path ? c->path : "Top");
      rc = SiNotInst;
   }
   cons_unlock();
   return rc;
}

void cons_tree_free(void)
{
   free(stat_path);
   stat_path = NULL;
}
