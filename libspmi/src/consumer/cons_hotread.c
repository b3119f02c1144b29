/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_hotread.c - reading hotsets: SpmiGetHotSet (one hotset.get, its
 * peer sets and their pseudo groups filled in) and the walks over the
 * result, SpmiFirstHot, SpmiNextHot and SpmiNextHotItem. Above
 * cons_hotset.c, which defines the sets.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cons_hotset.h"

/* Peer sets in reading order: each, then its pseudo ones. */
static struct hval *hot_at(struct hset *h, int k)
{
   for (int i = 0; i < h->n; i++) {
      if (k == 0)
         return h->v[i];
      k--;
      if (k < h->v[i]->npseudo_used)
         return h->v[i]->pseudo[k];
      k -= h->v[i]->npseudo_used;
   }
   return NULL;
}

static int hot_index(struct hset *h, const struct SpmiHotVals *p)
{
   struct hval *v;

   for (int k = 0; (v = hot_at(h, k)); k++)
      if ((uintptr_t)&v->pub == (uintptr_t)p)
         return k;
   spmi_err(SiBadArgument, "%p is not a peer set of this hotset", (const void *)p);
   return -1;
}

/* x into the guide's union: a float, or a long rounded to the nearest
 * (no libm: the samples link without -lm). */
static void put(union Value *u, int is_float, double x)
{
   if (is_float)
      u->f = cons_to_float(x);
   else
      u->l = cons_to_long(x >= 0 ? x + 0.5 : x - 0.5);
}

/* Fills v from a group of the daemon's answer. */
static int fill_group(struct hval *v, const struct jdoc *d, int g, double elapsed, int pseudo)
{
   int items = json_get(d, g, "items"), n = json_len(d, items), avail = 0, k = 0;
   const char *parent;
   struct SpmiStat *desc = v->pub.stat ? cons_stat(v->pub.stat) : NULL;
   int fl = desc && desc->data_type == SiFloat;

   spmi_clear_err();
   if (n < 0 || n > SHRT_MAX || !json_int(d, json_get(d, g, "avail"), &avail))
      return -1;
   if (pseudo && json_str(d, json_get(d, g, "parent"), &parent)) {
      char *p = strdup(parent);
      if (!p)
         return -1;
      free(v->pub.path);
      v->pub.path = p;
      while (*p && p[strlen(p) - 1] == '/')
         p[strlen(p) - 1] = 0;
   }
   if (n > v->nitems_cap) {
      struct SpmiHotItems *it = realloc(v->pub.items, (size_t)n * sizeof *it);
      if (it)
         v->pub.items = it;
      double *r = realloc(v->rates, (size_t)n * sizeof *r);
      if (r)
         v->rates = r;
      if (!it || !r)
         return -1;
      v->nitems_cap = n;
   }
   for (int e = n ? d->n[items].first : -1; e >= 0; e = d->n[e].next, k++) {
      struct SpmiHotItems *it = &v->pub.items[k];
      const char *name = "";
      double x = 0, raw = 0;
      if (!json_str(d, json_get(d, e, "name"), &name) || !json_f64(d, json_get(d, e, "value"), &x))
         return -1;
      if (!json_f64(d, json_get(d, e, "raw"), &raw))
         raw = x; /* a daemon before raw: its level */
      memset(it, 0, sizeof *it);
      snprintf(it->name, sizeof it->name, "%s", name);
      v->rates[k] = x;
      if (desc && desc->value_type == SiCounter) {
         /* The guide: val the counter, val_change its change since the
          * previous read (0 on a first read: no_rate). */
         put(&it->val, fl, raw);
         put(&it->val_change, fl, x * elapsed);
      } else {
         put(&it->val, fl, x);
      }
   }
   v->pub.count = (short)n;
   v->pub.avail_resp = (short)(avail > SHRT_MAX ? SHRT_MAX : avail < 0 ? 0 : avail);
   v->pub.error = SiSuccess;
   return 0;
}

static struct hval *pseudo_of(struct hval *v, int k)
{
   if (k >= v->npseudo) {
      struct hval **n = realloc(v->pseudo, (size_t)(k + 1) * sizeof *n);
      if (!n)
         return NULL;
      v->pseudo = n;
      if (!(n[k] = calloc(1, sizeof **n)))
         return NULL;
      v->npseudo = k + 1;
   }
   /* v's settings; its own path and items (the reading: fill_group). */
   struct hval *p = v->pseudo[k];
   struct SpmiHotVals own = p->pub;
   p->pub = v->pub;
   p->pub.path = own.path;
   p->pub.items = own.items;
   p->pub.ref_count = 1;
   return p;
}

static int read_hset(struct hset *h)
{
   const struct jdoc *d = &cons_st.doc;
   struct spmi_buf w = {0};
   int hot, ps, k = 0, rc;
   const char *t;
   int64_t sec;
   long nsec;
   double el = 0;

   if ((rc = cons_hot_ensure(h)))
      return rc;
   json_putf(&w, "{\"op\":\"hotset.get\",\"id\":%d", h->id);
   if (h->after[0]) {
      json_putf(&w, ",\"after\":");
      json_put_str(&w, h->after);
   }
   json_putf(&w, "}");
   if ((rc = cons_call(&w, 0)))
      return rc;
   hot = json_get(d, 0, "hot");
   ps = json_get(d, hot, "peer_sets");
   if (!json_str(d, json_get(d, hot, "time"), &t) || strlen(t) >= sizeof h->after ||
       cons_parse_time(t, &sec, &nsec) < 0 || !json_f64(d, json_get(d, hot, "elapsed"), &el) || !(el >= 0) ||
       el > 1e9 || (h->n > 0 && json_len(d, ps) != h->n)) {
      spmi_err(SiOtherErr, "the daemon's hotset reading is not one of %d peer sets with its time", h->n);
      return SiOtherErr;
   }
   cons_to_timeval(&h->pub.time, sec, nsec);
   cons_elapsed_tv(&h->pub.time_change, el);
   snprintf(h->after, sizeof h->after, "%s", t);
   for (int e = h->n ? d->n[ps].first : -1; e >= 0; e = d->n[e].next, k++) {
      struct hval *v = h->v[k];
      int err = json_get(d, e, "err"), groups = json_get(d, e, "groups"), g, np = 0;
      v->pub.count = 0;
      v->pub.avail_resp = 0;
      v->npseudo_used = 0;
      if (err >= 0) {
         v->pub.error = (enum Error)cons_err_code(d, err, NULL);
         continue;
      }
      if (json_len(d, groups) <= 0) {
         v->pub.error = SiSuccess;
         continue;
      }
      g = d->n[groups].first;
      if (fill_group(v, d, g, el, 0) < 0)
         goto bad;
      for (g = d->n[g].next; g >= 0; g = d->n[g].next) {
         struct hval *p = pseudo_of(v, np);
         if (!p || fill_group(p, d, g, el, 1) < 0)
            goto bad;
         v->npseudo_used = ++np;
      }
   }
   return 0;
bad:
   spmi_err(SiOtherErr, "the daemon's hotset reading has a group this library does not read");
   return SiOtherErr;
}

int SpmiGetHotSet(struct SpmiHotSet *HotSet, int Force)
{
   struct hset *h;
   int rc;

   (void)Force; /* every read is of a snapshot newer than the previous */
   if ((rc = cons_lock()))
      return rc;
   rc = (h = cons_hset_of(HotSet)) ? read_hset(h) : SiInvalidCx;
   cons_unlock();
   return rc;
}

/* SpmiFirstHot (first) and SpmiNextHot: the peer set after HotVals. */
static struct SpmiHotVals *next_hot(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVals, int first)
{
   struct hset *h;
   struct hval *v = NULL;
   int k = -1;

   if (cons_lock())
      return NULL;
   if ((h = cons_hset_of(HotSet)) && (first || (k = hot_index(h, HotVals)) >= 0))
      v = hot_at(h, k + 1);
   cons_unlock();
   return v ? &v->pub : NULL;
}

struct SpmiHotVals *SpmiFirstHot(struct SpmiHotSet *HotSet) { return next_hot(HotSet, NULL, 1); }

struct SpmiHotVals *SpmiNextHot(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVals)
{
   return next_hot(HotSet, HotVals, 0);
}

struct SpmiHotVals *SpmiNextHotItem(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVals,
                                    int *index, float *value, char **name)
{
   struct hset *h;
   struct hval *v = NULL;
   int k = 0, i = 0;

   if (cons_lock())
      return NULL;
   if (!index || !value || !name) {
      spmi_err(SiBadArgument, "SpmiNextHotItem: index, value and name are needed");
      goto out;
   }
   if (!(h = cons_hset_of(HotSet)))
      goto out;
   if (HotVals) {
      if ((k = hot_index(h, HotVals)) < 0)
         goto out;
      i = *index;
   }
   for (v = hot_at(h, k); v && (i < 0 || i >= v->pub.count); v = hot_at(h, ++k))
      i = 0;
   if (v) {
      *value = cons_to_float(v->rates[i]);
      *name = v->pub.items[i].name;
      *index = i + 1;
   }
out:
   cons_unlock();
   return v ? &v->pub : NULL;
}
