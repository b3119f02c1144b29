/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_hotset.c - hotsets.
 *
 * A hotset lives in the daemon, in the session of this connection
 * (hotset.create, hotset.add, hotset.get, ...); the library keeps its peer
 * sets and makes it again, with them, on a new connection after a daemon
 * restart, as the supplier side replays its registration.
 *
 * Set pointers and value pointers passed back are looked up among the
 * library's own before they are used: a freed or foreign one is an error
 * (SiInvalidCx for a set, SiBadArgument for a peer set), never a crash.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cons_internal.h"

#define HOT_MAX_PEERS 256    /* control.MaxHotsetPeerSets */

struct hval {
   struct SpmiHotVals pub;
   struct hval       *owner;  /* the peer set of a pseudo SpmiHotVals */
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

static struct hset **hsets;
static int nhsets;

static struct hset *hset_of(const struct SpmiHotSet *p)
{
   for (int i = 0; i < nhsets; i++)
      if ((uintptr_t)&hsets[i]->pub == (uintptr_t)p)
         return hsets[i];
   dds_err(SiInvalidCx, "%p is not a hotset of this process (created by SpmiCreateHotSet and not freed)",
           (const void *)p);
   return NULL;
}

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
   dds_err(SiBadArgument, "%p is not a peer set of this hotset", (const void *)p);
   return -1;
}

static void hot_def(struct dds_buf *w, const struct hval *v)
{
   char b[160];

   json_put_raw(w, "{\"stat\":");
   json_put_str(w, v->stat);
   snprintf(b, sizeof b, ",\"maxresp\":%d,\"threshold\":%d,\"frequency\":%d,\"severity\":%d,\"trap_no\":%d,",
            v->pub.max_responses, v->pub.threshold, v->pub.frequency, v->pub.severity, v->pub.trap_no);
   json_put_raw(w, b);
   json_put_raw(w, "\"feed_type\":");
   json_put_str(w, v->feed);
   json_put_raw(w, ",\"excp_type\":");
   json_put_str(w, v->excp);
   dds_put8(w, '}');
}

static int hot_call(const char *op, int id, int index, const struct hval *def, int *answer)
{
   struct dds_buf w = {0};
   char b[96];

   snprintf(b, sizeof b, "{\"op\":\"%s\",\"id\":%d,\"index\":%d", op, id, index);
   json_put_raw(&w, b);
   if (def) {
      json_put_raw(&w, ",\"hot\":");
      hot_def(&w, def);
   }
   dds_put8(&w, '}');
   if (cons_call(&w, 0))
      return SpmiErrno;
   if (answer) {
      *answer = 0;
      int k = json_get(&cons_st.doc, 0, "id");
      if (k >= 0 && !json_int(&cons_st.doc, k, answer)) {
         dds_err(SiOtherErr, "the daemon's answer to %s has a bad id", op);
         return SiOtherErr;
      }
   }
   return 0;
}

/* Makes h on the current connection, with its peer sets, when it was made
 * on an earlier one: after a daemon restart. */
static int ensure(struct hset *h)
{
   int rc, id, ix;

   if ((rc = cons_ready()))
      return rc;
   if (h->gen == cons_st.gen)
      return 0;
   if ((rc = hot_call("hotset.create", 0, 0, NULL, &id)))
      return rc;
   for (int i = 0; i < h->n; i++)
      if ((rc = hot_call("hotset.add", id, 0, h->v[i], &ix)))
         return rc;
   h->id = id;
   h->gen = cons_st.gen;
   h->after[0] = 0; /* the new daemon's engine has no previous reading */
   return 0;
}

struct SpmiHotSet *SpmiCreateHotSet(void)
{
   struct hset *h = NULL, **n;

   if (cons_lock())
      return NULL;
   if (nhsets >= MAX_SETS) {
      dds_err(SiCallocFailed, "this process has %d hotsets, the most the library keeps", MAX_SETS);
   } else if (!(n = realloc(hsets, (size_t)(nhsets + 1) * sizeof *n)) || !(hsets = n, h = calloc(1, sizeof *h))) {
      dds_err(SiCallocFailed, "out of memory");
   } else {
      /* Made in the daemon by the first add or read (ensure), as after a
       * restart: created while the daemon is down, it works once it is up. */
      hsets[nhsets++] = h;
   }
   cons_unlock();
   return h ? &h->pub : NULL;
}

static void free_hval(struct hval *v)
{
   for (int i = 0; i < v->npseudo; i++)
      free_hval(v->pseudo[i]);
   free(v->pseudo);
   free(v->rates);
   free(v->pub.items);
   free(v->pub.path);
   free(v);
}

/* The description of the statistic name in some peer below path. */
static SpmiStatHdl peer_stat(const char *path, const char *name)
{
   const struct jdoc *d = &cons_st.doc;
   struct dds_buf w = {0};
   int a;
   const char *nm;

   json_put_raw(&w, "{\"op\":\"peek\",\"path\":");
   json_put_str(&w, path);
   dds_put8(&w, '}');
   if (cons_call(&w, 1))
      return NULL;
   a = json_get(d, 0, "peek");
   for (int e = json_len(d, a) > 0 ? d->n[a].first : -1; e >= 0; e = d->n[e].next) {
      int st = json_get(d, e, "stat");
      if (st >= 0 && json_str(d, json_get(d, st, "Name"), &nm) && strcmp(nm, name) == 0)
         return cons_stat_of(d, st);
   }
   dds_err(SiNotFound, "no statistic %s in the subcontexts of %s", name, path);
   return NULL;
}

static const char *const feeds[] = {"none", "threshold", "always"};
static const char *const excps[] = {"none", "exception", "trap", "both"};

struct SpmiHotVals *SpmiAddSetHot(struct SpmiHotSet *HotSet, CONST char *StatName, SpmiCxHdl GrandParent,
                                  int maxresp, int threshold, int frequency, int feed_type,
                                  int excp_type, int severity, int trap_no)
{
   struct hset *h;
   struct cons_cx *c;
   struct hval *v = NULL, **n;
   int ix;

   if (cons_lock())
      return NULL;
   if (!(h = hset_of(HotSet)) || !(c = cons_cx(GrandParent)))
      goto out;
   if (!StatName || !*StatName || strchr(StatName, '/') || !*cons_cx_path(c)) {
      dds_err(SiBadArgument, "SpmiAddSetHot: a statistic name (no path) and a grandparent other than Top are needed");
      goto out;
   }
   if (h->n >= HOT_MAX_PEERS) {
      dds_err(SiCallocFailed, "the hotset has %d peer sets, the most the daemon keeps", HOT_MAX_PEERS);
      goto out;
   }
   if (maxresp < SHRT_MIN || maxresp > SHRT_MAX || frequency < SHRT_MIN || frequency > SHRT_MAX ||
       severity < SHRT_MIN || severity > SHRT_MAX || trap_no < SHRT_MIN || trap_no > SHRT_MAX) {
      dds_err(SiBadArgument, "SpmiAddSetHot: maxresp, frequency, severity and trap_no must fit in a short");
      goto out;
   }
   if (!(n = realloc(h->v, (size_t)(h->n + 1) * sizeof *n)) || !(h->v = n, v = calloc(1, sizeof *v))) {
      dds_err(SiCallocFailed, "out of memory");
      goto out;
   }
   {
      char gp[CONS_MAX_PATH];
      if (cons_join(gp, sizeof gp, cons_cx_path(c), "*") || cons_join(v->stat, sizeof v->stat, gp, StatName))
         goto bad;
      if (!(v->pub.path = strdup(cons_cx_path(c)))) {
         dds_err(SiCallocFailed, "out of memory");
         goto bad;
      }
   }
   /* Names for the daemon; a value out of range goes as a number, for the
    * daemon's own SiBadArgument. */
   if (feed_type >= 0 && feed_type <= 2)
      snprintf(v->feed, sizeof v->feed, "%s", feeds[feed_type]);
   else
      snprintf(v->feed, sizeof v->feed, "%d", feed_type);
   if (excp_type >= 0 && excp_type <= 3)
      snprintf(v->excp, sizeof v->excp, "%s", excps[excp_type]);
   else
      snprintf(v->excp, sizeof v->excp, "%d", excp_type);
   v->pub.grandpa = GrandParent;
   v->pub.ref_count = 1;
   v->pub.error = SiNoValue;
   v->pub.except_type = (enum HotExcept)(excp_type >= 0 && excp_type <= 3 ? excp_type : 0);
   v->pub.feed_type = (enum HotFeed)(feed_type >= 0 && feed_type <= 2 ? feed_type : 0);
   v->pub.threshold = threshold;
   v->pub.frequency = (short)frequency;
   v->pub.max_responses = (short)maxresp;
   v->pub.severity = (short)severity;
   v->pub.trap_no = (short)trap_no;
   /* The same peer set again (same statistic, grandparent and settings)
    * is counted, as the guide's ref_count; other settings make another. */
   for (int k = 0; k < h->n; k++) {
      struct hval *o = h->v[k];
      if (strcmp(o->stat, v->stat) == 0 && strcmp(o->feed, v->feed) == 0 && strcmp(o->excp, v->excp) == 0 &&
          o->pub.grandpa == v->pub.grandpa && o->pub.threshold == threshold && o->pub.frequency == frequency &&
          o->pub.max_responses == maxresp && o->pub.severity == severity && o->pub.trap_no == trap_no &&
          o->pub.ref_count < INT_MAX) {
         o->pub.ref_count++;
         free_hval(v);
         cons_unlock();
         return &o->pub;
      }
   }
   if (ensure(h) || hot_call("hotset.add", h->id, 0, v, &ix))
      goto bad;
   if (ix != h->n) {
      dds_err(SiOtherErr, "the daemon put the peer set at %d, not %d", ix, h->n);
      goto bad;
   }
   h->v[h->n++] = v;
   if (!(v->pub.stat = peer_stat(v->pub.path, StatName)))
      dds_clear_err(); /* added: its description comes with a peer */
   cons_unlock();
   return &v->pub;
bad:
   free_hval(v);
   v = NULL;
out:
   cons_unlock();
   return NULL;
}

int SpmiDelSetHot(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVal)
{
   struct hset *h;
   int rc, i = -1;

   if ((rc = cons_lock()))
      return rc;
   if (!(h = hset_of(HotSet))) {
      rc = SiInvalidCx;
      goto out;
   }
   for (int k = 0; k < h->n; k++)
      if ((uintptr_t)&h->v[k]->pub == (uintptr_t)HotVal)
         i = k;
   if (i < 0) {
      dds_err(SiBadArgument, "%p is not a peer set SpmiAddSetHot added to this hotset", (void *)HotVal);
      rc = SiBadArgument;
      goto out;
   }
   if (h->v[i]->pub.ref_count > 1) {
      h->v[i]->pub.ref_count--; /* still in the set for its other adds */
      goto out;
   }
   if ((rc = ensure(h)) || (rc = hot_call("hotset.del", h->id, i, NULL, NULL)))
      goto out;
   free_hval(h->v[i]);
   memmove(h->v + i, h->v + i + 1, (size_t)(h->n - i - 1) * sizeof *h->v);
   h->n--;
out:
   cons_unlock();
   return rc;
}

static void free_hset(struct hset *h)
{
   for (int i = 0; i < h->n; i++)
      free_hval(h->v[i]);
   free(h->v);
   free(h);
}

int SpmiFreeHotSet(struct SpmiHotSet *HotSet)
{
   struct hset *h;
   int rc;

   if ((rc = cons_lock()))
      return rc;
   if (!(h = hset_of(HotSet))) {
      rc = SiInvalidCx;
   } else {
      /* Made on this connection: free it in the daemon too (on an older
       * one it went with that connection). */
      if (cons_ready() == 0 && h->gen == cons_st.gen)
         rc = hot_call("hotset.free", h->id, 0, NULL, NULL);
      if (rc == SiInitFailed) /* the connection is gone, and the hotset with it */
         rc = 0;
      dds_clear_err();
      for (int i = 0; i < nhsets; i++)
         if (hsets[i] == h) {
            hsets[i] = hsets[--nhsets];
            break;
         }
      free_hset(h);
      rc = 0;
   }
   cons_unlock();
   return rc;
}

/* Fills v from a group of the daemon's answer. */
static int fill_group(struct hval *v, const struct jdoc *d, int g, double elapsed, int pseudo)
{
   int items = json_get(d, g, "items"), n = json_len(d, items), avail = 0, k = 0;
   const char *parent;
   struct SpmiStat *desc = v->pub.stat ? cons_stat(v->pub.stat) : NULL;

   dds_clear_err();
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
         double ch = x * elapsed;
         if (desc->data_type == SiFloat) {
            it->val.f = cons_to_float(raw);
            it->val_change.f = cons_to_float(ch);
         } else {
            it->val.l = cons_to_long(cons_round(raw));
            it->val_change.l = cons_to_long(cons_round(ch));
         }
      } else if (desc && desc->data_type == SiFloat) {
         it->val.f = cons_to_float(x);
      } else {
         it->val.l = cons_to_long(cons_round(x));
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
   struct hval *p = v->pseudo[k];
   p->owner = v;
   p->pub.stat = v->pub.stat;
   p->pub.grandpa = v->pub.grandpa;
   p->pub.ref_count = 1;
   p->pub.except_type = v->pub.except_type;
   p->pub.feed_type = v->pub.feed_type;
   p->pub.threshold = v->pub.threshold;
   p->pub.frequency = v->pub.frequency;
   p->pub.max_responses = v->pub.max_responses;
   p->pub.severity = v->pub.severity;
   p->pub.trap_no = v->pub.trap_no;
   return p;
}

static int read_hset(struct hset *h)
{
   const struct jdoc *d = &cons_st.doc;
   struct dds_buf w = {0};
   char b[64];
   int hot, ps, k = 0, rc;
   const char *t;
   int64_t sec;
   long nsec;
   double el = 0;

   if ((rc = ensure(h)))
      return rc;
   snprintf(b, sizeof b, "{\"op\":\"hotset.get\",\"id\":%d", h->id);
   json_put_raw(&w, b);
   if (h->after[0]) {
      json_put_raw(&w, ",\"after\":");
      json_put_str(&w, h->after);
   }
   dds_put8(&w, '}');
   if ((rc = cons_call(&w, 0)))
      return rc;
   hot = json_get(d, 0, "hot");
   ps = json_get(d, hot, "peer_sets");
   if (!json_str(d, json_get(d, hot, "time"), &t) || strlen(t) >= sizeof h->after ||
       cons_parse_time(t, &sec, &nsec) < 0 || !json_f64(d, json_get(d, hot, "elapsed"), &el) || !(el >= 0) ||
       el > 1e9 || (h->n > 0 && json_len(d, ps) != h->n)) {
      dds_err(SiOtherErr, "the daemon's hotset reading is not one of %d peer sets with its time", h->n);
      return SiOtherErr;
   }
   cons_to_timeval(&h->pub.time, sec, nsec);
   cons_elapsed_tv(&h->pub.time_change, el);
   snprintf(h->after, sizeof h->after, "%s", t);
   for (int e = h->n ? d->n[ps].first : -1; e >= 0; e = d->n[e].next, k++) {
      struct hval *v = h->v[k];
      int err = json_get(d, e, "err"), groups = json_get(d, e, "groups"), g, np = 0, code;
      v->pub.count = 0;
      v->pub.avail_resp = 0;
      v->npseudo_used = 0;
      if (err >= 0) {
         if (!json_int(d, json_get(d, err, "code"), &code) || code <= 0)
            code = SiOtherErr;
         v->pub.error = (enum Error)code;
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
   dds_err(SiOtherErr, "the daemon's hotset reading has a group this library does not read");
   return SiOtherErr;
}

int SpmiGetHotSet(struct SpmiHotSet *HotSet, int Force)
{
   struct hset *h;
   int rc;

   (void)Force; /* every read is of a snapshot newer than the previous */
   if ((rc = cons_lock()))
      return rc;
   rc = (h = hset_of(HotSet)) ? read_hset(h) : SiInvalidCx;
   cons_unlock();
   return rc;
}

struct SpmiHotVals *SpmiFirstHot(struct SpmiHotSet *HotSet)
{
   struct hset *h;
   struct hval *v = NULL;

   if (cons_lock())
      return NULL;
   if ((h = hset_of(HotSet)))
      v = hot_at(h, 0);
   cons_unlock();
   return v ? &v->pub : NULL;
}

struct SpmiHotVals *SpmiNextHot(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVals)
{
   struct hset *h;
   struct hval *v = NULL;
   int k;

   if (cons_lock())
      return NULL;
   if ((h = hset_of(HotSet)) && (k = hot_index(h, HotVals)) >= 0)
      v = hot_at(h, k + 1);
   cons_unlock();
   return v ? &v->pub : NULL;
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
      dds_err(SiBadArgument, "SpmiNextHotItem: index, value and name are needed");
      goto out;
   }
   if (!(h = hset_of(HotSet)))
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

void cons_hotsets_free(void)
{
   for (int i = 0; i < nhsets; i++)
      free_hset(hsets[i]);
   free(hsets);
   hsets = NULL;
   nhsets = 0;
}
