/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_hotset.c - hotsets.
 *
 * A hotset lives in the daemon, in the session of this connection
 * (hotset.create, hotset.add, hotset.get, ...); the library keeps its peer
 * sets and makes it again, with them, on a new connection after a daemon
 * restart, as the supplier side replays its registration. Reading them
 * is cons_hotread.c's.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cons_hotset.h"

#define HOT_MAX_PEERS 256    /* control.MaxHotsetPeerSets */

static struct hset **hsets;
static int nhsets;

struct hset *cons_hset_of(const struct SpmiHotSet *p)
{
   for (int i = 0; i < nhsets; i++)
      if ((uintptr_t)&hsets[i]->pub == (uintptr_t)p)
         return hsets[i];
   spmi_err(SiInvalidCx, "%p is not a hotset of this process (created by SpmiCreateHotSet and not freed)",
           (const void *)p);
   return NULL;
}

static void hot_def(struct spmi_buf *w, const struct hval *v)
{
   json_putf(w, "{\"stat\":");
   json_put_str(w, v->stat);
   json_putf(w, ",\"maxresp\":%d,\"threshold\":%d,\"frequency\":%d,\"severity\":%d,\"trap_no\":%d,\"feed_type\":",
             v->pub.max_responses, v->pub.threshold, v->pub.frequency, v->pub.severity, v->pub.trap_no);
   json_put_str(w, v->feed);
   json_putf(w, ",\"excp_type\":");
   json_put_str(w, v->excp);
   json_putf(w, "}");
}

static int hot_call(const char *op, int id, int index, const struct hval *def, int *answer)
{
   struct spmi_buf w = {0};

   json_putf(&w, "{\"op\":\"%s\",\"id\":%d,\"index\":%d", op, id, index);
   if (def) {
      json_putf(&w, ",\"hot\":");
      hot_def(&w, def);
   }
   json_putf(&w, "}");
   if (cons_call(&w, 0))
      return SpmiErrno;
   if (answer) {
      *answer = 0;
      int k = json_get(&cons_st.doc, 0, "id");
      if (k >= 0 && !json_int(&cons_st.doc, k, answer)) {
         spmi_err(SiOtherErr, "the daemon's answer to %s has a bad id", op);
         return SiOtherErr;
      }
   }
   return 0;
}

int cons_hot_ensure(struct hset *h)
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
      spmi_err(SiCallocFailed, "this process has %d hotsets, the most the library keeps", MAX_SETS);
   } else if (!(n = realloc(hsets, (size_t)(nhsets + 1) * sizeof *n)) || !(hsets = n, h = calloc(1, sizeof *h))) {
      spmi_err(SiCallocFailed, "out of memory");
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
   struct spmi_buf w = {0};
   int a;
   const char *nm;

   json_putf(&w, "{\"op\":\"peek\",\"path\":");
   json_put_str(&w, path);
   json_putf(&w, "}");
   if (cons_call(&w, 1))
      return NULL;
   a = json_get(d, 0, "peek");
   for (int e = json_len(d, a) > 0 ? d->n[a].first : -1; e >= 0; e = d->n[e].next) {
      int st = json_get(d, e, "stat");
      if (st >= 0 && json_str(d, json_get(d, st, "Name"), &nm) && strcmp(nm, name) == 0)
         return cons_stat_of(d, st);
   }
   spmi_err(SiNotFound, "no statistic %s in the subcontexts of %s", name, path);
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
   char gp[CONS_MAX_PATH];
   int ix;

   if (cons_lock())
      return NULL;
   if (!(h = cons_hset_of(HotSet)) || !(c = cons_cx(GrandParent)))
      goto out;
   if (!StatName || !*StatName || strchr(StatName, '/') || !*c->path) {
      spmi_err(SiBadArgument, "SpmiAddSetHot: a statistic name (no path) and a grandparent other than Top are needed");
      goto out;
   }
   if (h->n >= HOT_MAX_PEERS) {
      spmi_err(SiCallocFailed, "the hotset has %d peer sets, the most the daemon keeps", HOT_MAX_PEERS);
      goto out;
   }
   if (maxresp < SHRT_MIN || maxresp > SHRT_MAX || frequency < SHRT_MIN || frequency > SHRT_MAX ||
       severity < SHRT_MIN || severity > SHRT_MAX || trap_no < SHRT_MIN || trap_no > SHRT_MAX) {
      spmi_err(SiBadArgument, "SpmiAddSetHot: maxresp, frequency, severity and trap_no must fit in a short");
      goto out;
   }
   if (!(n = realloc(h->v, (size_t)(h->n + 1) * sizeof *n)) || !(h->v = n, v = calloc(1, sizeof *v))) {
      spmi_err(SiCallocFailed, "out of memory");
      goto out;
   }
   if (cons_join(gp, sizeof gp, c->path, "*") || cons_join(v->stat, sizeof v->stat, gp, StatName))
      goto bad;
   if (!(v->pub.path = strdup(c->path))) {
      spmi_err(SiCallocFailed, "out of memory");
      goto bad;
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
   if (cons_hot_ensure(h) || hot_call("hotset.add", h->id, 0, v, &ix))
      goto bad;
   if (ix != h->n) {
      spmi_err(SiOtherErr, "the daemon put the peer set at %d, not %d", ix, h->n);
      goto bad;
   }
   h->v[h->n++] = v;
   if (!(v->pub.stat = peer_stat(v->pub.path, StatName)))
      spmi_clear_err(); /* added: its description comes with a peer */
   cons_unlock();
   return &v->pub;
bad:
   free_hval(v);
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
   if (!(h = cons_hset_of(HotSet))) {
      rc = SiInvalidCx;
      goto out;
   }
   for (int k = 0; k < h->n; k++)
      if ((uintptr_t)&h->v[k]->pub == (uintptr_t)HotVal)
         i = k;
   if (i < 0) {
      spmi_err(SiBadArgument, "%p is not a peer set SpmiAddSetHot added to this hotset", (void *)HotVal);
      rc = SiBadArgument;
      goto out;
   }
   if (h->v[i]->pub.ref_count > 1) {
      h->v[i]->pub.ref_count--; /* still in the set for its other adds */
      goto out;
   }
   if ((rc = cons_hot_ensure(h)) || (rc = hot_call("hotset.del", h->id, i, NULL, NULL)))
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
   if (!(h = cons_hset_of(HotSet))) {
      rc = SiInvalidCx;
   } else {
      /* Made on this connection: free it in the daemon too (on an older
       * or a lost one it went with that connection). */
      if (cons_ready() == 0 && h->gen == cons_st.gen)
         hot_call("hotset.free", h->id, 0, NULL, NULL);
      spmi_clear_err();
      for (int i = 0; i < nhsets; i++)
         if (hsets[i] == h) {
            hsets[i] = hsets[--nhsets];
            break;
         }
      free_hset(h);
   }
   cons_unlock();
   return rc;
}

void cons_hotsets_free(void)
{
   for (int i = 0; i < nhsets; i++)
      free_hset(hsets[i]);
   free(hsets);
   hsets = NULL;
   nhsets = 0;
}
