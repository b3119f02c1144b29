/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_statset.c - statsets.
 *
 * A statset is a list of statistic paths kept here: SpmiGetStatSet is one
 * `get` of all of them, asking for a snapshot newer than the previous
 * read's (`after`), so counters come with their change and, through
 * SpmiGetValue, their rate per second over the time between the two
 * snapshots, as `subagent get --interval` computes them. Statsets survive
 * daemon restarts as they are.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cons_internal.h"

/* The daemon's bounds for one get (control.MaxPaths). */
#define SET_MAX_STATS 100000 /* control.MaxStatSetPaths */
#define SET_ADD_PATHS 1000   /* control.MaxPaths: one statset.add */
#define ADD_BYTES     (48u << 10) /* a statset.add's paths, under control.MaxRequest */

struct sval {
   struct SpmiStatVals pub;
   char      *path;
   struct cons_raw prev, cur;
   double     change; /* counters, since the previous read */
};

struct sset {
   struct SpmiStatSet pub;
   struct sval **v;
   int           n, cap;
   char          after[64]; /* the previous read's snapshot time, as sent */
   int64_t       sec;       /* and parsed */
   long          nsec;
   int           read;      /* SpmiGetStatSet succeeded once */
   double        elapsed;
   int           cursor;    /* SpmiNextValue's */
   /* The daemon's copy (statset.*): made on connection gen, holding the
    * first synced paths; made again after a restart or a delete. */
   int           srv_id;
   unsigned      srv_gen;
   int           synced;
   int           dirty;
};

static struct sset **ssets;
static int nssets;

static struct sset *sset_of(const struct SpmiStatSet *p)
{
   for (int i = 0; i < nssets; i++)
      if ((uintptr_t)&ssets[i]->pub == (uintptr_t)p)
         return ssets[i];
   spmi_err(SiInvalidCx, "%p is not a statset of this process (created by SpmiCreateStatSet and not freed)",
           (const void *)p);
   return NULL;
}

static int sval_index(const struct sset *s, const struct SpmiStatVals *p)
{
   if (s->cursor >= 0 && s->cursor < s->n && (uintptr_t)&s->v[s->cursor]->pub == (uintptr_t)p)
      return s->cursor;
   for (int i = 0; i < s->n; i++)
      if ((uintptr_t)&s->v[i]->pub == (uintptr_t)p)
         return i;
   spmi_err(SiNotFound, "%p is not a value of this statset", (const void *)p);
   return -1;
}

struct SpmiStatSet *SpmiCreateStatSet(void)
{
   struct sset *s = NULL, **n;

   if (cons_lock())
      return NULL;
   if (nssets >= MAX_SETS) {
      spmi_err(SiCallocFailed, "this process has %d statsets, the most the library keeps", MAX_SETS);
   } else if (!(n = realloc(ssets, (size_t)(nssets + 1) * sizeof *n)) || !(ssets = n, s = calloc(1, sizeof *s))) {
      spmi_err(SiCallocFailed, "out of memory");
   } else {
      s->cursor = -1;
      ssets[nssets++] = s;
   }
   cons_unlock();
   return s ? &s->pub : NULL;
}

static void free_sval(struct sval *v)
{
   free(v->path);
   free(v);
}

/* Checks the statistic at path with the daemon (one get) and adds it. */
static struct SpmiStatVals *add_path(struct sset *s, const char *path)
{
   const struct jdoc *d = &cons_st.doc;
   struct spmi_buf w = {0};
   struct sval *v;
   int smp, items, it, e, code;
   const char *msg;
   char cx[CONS_MAX_PATH], *sl;
   SpmiStatHdl sh;
   SpmiCxHdl ch;

   for (int i = 0; i < s->n; i++) {
      if (strcmp(s->v[i]->path, path) == 0) {
         /* The guide counts the times a statistic is in the set. */
         if (s->v[i]->pub.ref_count == INT_MAX) {
            spmi_err(SiCallocFailed, "%s is in the statset %d times, the most ref_count counts", path, INT_MAX);
            return NULL;
         }
         s->v[i]->pub.ref_count++;
         return &s->v[i]->pub;
      }
   }
   if (s->n >= SET_MAX_STATS) {
      spmi_err(SiCallocFailed, "the statset holds %d statistics, the most one statset may (its read is one answer of the daemon)", s->n);
      return NULL;
   }
   json_putf(&w, "{\"op\":\"get\",\"paths\":[");
   json_put_str(&w, path);
   json_putf(&w, "]}");
   if (cons_call(&w, 1))
      return NULL;
   smp = json_get(d, 0, "sample");
   items = json_get(d, smp, "Items");
   if (json_len(d, items) != 1) {
      spmi_err(SiOtherErr, "the daemon answered get without the value of %s", path);
      return NULL;
   }
   it = d->n[items].first;
   /* One that has no value now may have later. */
   if ((e = json_get(d, it, "err")) >= 0 && (code = cons_err_code(d, e, &msg)) != SiNoValue) {
      spmi_err(code, "%s", msg);
      return NULL;
   }
   if (json_get(d, it, "stat") < 0) {
      spmi_err(SiNotFound, "%s is not a statistic the daemon serves", path);
      return NULL;
   }
   if (!(sh = cons_stat_of(d, json_get(d, it, "stat"))))
      return NULL;
   snprintf(cx, sizeof cx, "%s", path);
   sl = strrchr(cx, '/');
   *(sl ? sl : cx) = 0;
   if (!(ch = cons_cx_at(cx)))
      return NULL;
   if (s->n == s->cap) {
      int nc = s->cap ? s->cap * 2 : 8;
      struct sval **n = realloc(s->v, (size_t)nc * sizeof *n);
      if (!n) {
         spmi_err(SiCallocFailed, "out of memory");
         return NULL;
      }
      s->v = n;
      s->cap = nc;
   }
   if (!(v = calloc(1, sizeof *v)) || !(v->path = strdup(path))) {
      free(v);
      spmi_err(SiCallocFailed, "out of memory");
      return NULL;
   }
   v->pub.stat = sh;
   v->pub.context = ch;
   v->pub.ref_count = 1;
   v->pub.error = SiNoValue; /* until the next SpmiGetStatSet */
   s->v[s->n++] = v;
   return &v->pub;
}

struct SpmiStatVals *SpmiPathAddSetStat(struct SpmiStatSet *StatSet, CONST char *StatName, SpmiCxHdl Parent)
{
   struct sset *s;
   struct cons_cx *c = NULL;
   struct SpmiStatVals *r = NULL;
   char p[CONS_MAX_PATH];

   if (cons_lock())
      return NULL;
   if (!(s = sset_of(StatSet)) || (Parent && !(c = cons_cx(Parent))))
      goto out;
   if (!StatName || !*StatName) {
      spmi_err(SiBadArgument, "SpmiPathAddSetStat: no statistic name");
      goto out;
   }
   if (cons_join(p, sizeof p, c ? c->path : "", StatName) == 0)
      r = add_path(s, p);
out:
   cons_unlock();
   return r;
}

struct SpmiStatVals *SpmiAddSetStat(struct SpmiStatSet *StatSet, SpmiStatHdl StatHandle, SpmiCxHdl CxHandle)
{
   struct sset *s;
   struct cons_cx *c;
   struct SpmiStat *st;
   struct SpmiStatVals *r = NULL;
   char p[CONS_MAX_PATH];

   if (cons_lock())
      return NULL;
   if ((s = sset_of(StatSet)) && (c = cons_cx(CxHandle)) && (st = cons_stat(StatHandle)) &&
       cons_join(p, sizeof p, c->path, st->name) == 0)
      r = add_path(s, p);
   cons_unlock();
   return r;
}

int SpmiDelSetStat(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal)
{
   struct sset *s;
   int i, rc;

   if ((rc = cons_lock()))
      return rc;
   if (!(s = sset_of(StatSet)) || (i = sval_index(s, StatVal)) < 0) {
      rc = SpmiErrno;
   } else if (s->v[i]->pub.ref_count > 1) {
      s->v[i]->pub.ref_count--; /* still in the set for its other adds */
   } else {
      free_sval(s->v[i]);
      memmove(s->v + i, s->v + i + 1, (size_t)(s->n - i - 1) * sizeof *s->v);
      s->n--;
      s->cursor = -1;
      if (i < s->synced)
         s->dirty = 1; /* the daemon's copy has it: made again at the next read */
   }
   cons_unlock();
   return rc;
}

/* Frees the daemon's copy of s; 0 or an SPMI code. */
static int free_srv(const struct sset *s)
{
   struct spmi_buf w = {0};

   json_putf(&w, "{\"op\":\"statset.free\",\"id\":%d}", s->srv_id);
   return cons_call(&w, 0);
}

static void free_sset(struct sset *s)
{
   for (int i = 0; i < s->n; i++)
      free_sval(s->v[i]);
   free(s->v);
   free(s);
}

int SpmiFreeStatSet(struct SpmiStatSet *StatSet)
{
   struct sset *s;
   int rc;

   if ((rc = cons_lock()))
      return rc;
   if (!(s = sset_of(StatSet))) {
      rc = SiInvalidCx;
   } else {
      /* Its copy in the daemon goes too (one on an older connection
       * went with it). */
      if (s->srv_id && cons_ready() == 0 && s->srv_gen == cons_st.gen)
         free_srv(s);
      spmi_clear_err();
      for (int i = 0; i < nssets; i++)
         if (ssets[i] == s) {
            ssets[i] = ssets[--nssets];
            break;
         }
      free_sset(s);
   }
   cons_unlock();
   return rc;
}

/* sync_sset makes the daemon's copy of s hold its paths: made on this
 * connection (again after a restart or a delete, as hotsets are), then
 * the paths added since, SET_ADD_PATHS at a time. Paths the daemon no
 * longer serves are kept ("keep"): their values carry the error. */
static int sync_sset(struct sset *s)
{
   const struct jdoc *d = &cons_st.doc;
   int rc, id;

   if ((rc = cons_ready()))
      return rc;
   if (s->srv_gen != cons_st.gen || s->dirty) {
      /* After a delete the old copy goes first. */
      if (s->srv_gen == cons_st.gen && (rc = free_srv(s)) && rc != SiInvalidCx)
         return rc;
      struct spmi_buf w = {0};
      json_putf(&w, "{\"op\":\"statset.create\"}");
      if ((rc = cons_call(&w, 0)))
         return rc;
      if (!json_int(d, json_get(d, 0, "id"), &id) || id <= 0) {
         spmi_err(SiOtherErr, "the daemon's answer to statset.create has no id");
         return SiOtherErr;
      }
      s->srv_id = id;
      s->srv_gen = cons_st.gen;
      s->synced = 0;
      s->dirty = 0;
   }
   while (s->synced < s->n) {
      struct spmi_buf w = {0};
      int k = s->synced, end = s->synced;
      size_t len = 0;
      json_putf(&w, "{\"op\":\"statset.add\",\"id\":%d,\"keep\":true,\"paths\":[", s->srv_id);
      /* Within the request bound: paths escaped take at most 6 bytes a byte. */
      while (end < s->n && end - k < SET_ADD_PATHS && len + strlen(s->v[end]->path) * 6 + 3 < ADD_BYTES)
         len += strlen(s->v[end++]->path) * 6 + 3;
      for (int i = k; i < end; i++) {
         if (i > k)
            spmi_put8(&w, ',');
         json_put_str(&w, s->v[i]->path);
      }
      json_putf(&w, "]}");
      if ((rc = cons_call(&w, 0)))
         return rc;
      s->synced = end;
   }
   return 0;
}

static int read_sset(struct sset *s, int force)
{
   const struct jdoc *d = &cons_st.doc;
   struct spmi_buf w = {0};
   int smp, items, it, k = 0, e;
   const char *t;
   int64_t sec;
   long nsec;

   if (s->n == 0) {
      spmi_err(SiBadArgument, "the statset is empty");
      return SiBadArgument;
   }
   if (sync_sset(s))
      return SpmiErrno;
   json_putf(&w, "{\"op\":\"statset.get\",\"id\":%d", s->srv_id);
   if (force && s->read) { /* a snapshot newer than the previous read's */
      json_putf(&w, ",\"after\":");
      json_put_str(&w, s->after);
   }
   json_putf(&w, "}");
   if (cons_call(&w, 0))
      return SpmiErrno;
   smp = json_get(d, 0, "sample");
   items = json_get(d, smp, "Items");
   if (!json_str(d, json_get(d, smp, "Time"), &t) || strlen(t) >= sizeof s->after ||
       cons_parse_time(t, &sec, &nsec) < 0 || json_len(d, items) != s->n) {
      spmi_err(SiOtherErr, "the daemon's answer to statset.get is not a sample of %d values with its time", s->n);
      return SiOtherErr;
   }
   /* Check every item before changing anything. */
   for (it = d->n[items].first; it >= 0; it = d->n[it].next) {
      struct cons_raw r;
      if (d->n[it].type != J_OBJ || cons_read_value(d, json_get(d, it, "value"), &r) < 0) {
         spmi_err(SiOtherErr, "the daemon sent a value this library does not read");
         return SiOtherErr;
      }
   }
   s->elapsed = s->read ? (double)(sec - s->sec) + (double)(nsec - s->nsec) / 1e9 : 0;
   if (s->elapsed < 0)
      s->elapsed = 0;
   cons_to_timeval(&s->pub.time, sec, nsec);
   cons_elapsed_tv(&s->pub.time_change, s->elapsed);
   for (it = d->n[items].first; it >= 0; it = d->n[it].next, k++) {
      struct sval *v = s->v[k];
      int st = json_get(d, it, "stat");
      struct SpmiStat *desc;
      SpmiStatHdl h;

      v->prev = v->cur;
      cons_read_value(d, json_get(d, it, "value"), &v->cur);
      v->change = 0;
      v->pub.error = SiSuccess;
      if (st >= 0 && (h = cons_stat_of(d, st)) != NULL)
         v->pub.stat = h; /* its description may change with the daemon */
      spmi_clear_err();
      desc = cons_stat(v->pub.stat);
      if ((e = json_get(d, it, "err")) >= 0)
         v->pub.error = (enum Error)cons_err_code(d, e, NULL);
      else if (v->cur.kind == 0 || v->cur.kind == 's' || !desc)
         v->pub.error = SiNoValue;
      if (v->pub.error != SiSuccess) {
         v->cur.kind = 0;
         v->pub.val.l = 0;
         v->pub.val_change.l = 0;
         continue;
      }
      if (desc->value_type == SiCounter && v->prev.kind && v->prev.kind != 's')
         v->change = cons_counter_change(&v->prev, &v->cur);
      cons_put_value(&v->pub.val, desc->data_type, &v->cur, 0, 0);
      if (desc->value_type == SiCounter)
         cons_put_value(&v->pub.val_change, desc->data_type, &v->cur, v->change, 1);
      else
         memset(&v->pub.val_change, 0, sizeof v->pub.val_change);
   }
   snprintf(s->after, sizeof s->after, "%s", t);
   s->sec = sec;
   s->nsec = nsec;
   s->read = 1;
   s->cursor = -1;
   return 0;
}

int SpmiGetStatSet(struct SpmiStatSet *StatSet, int Force)
{
   struct sset *s;
   int rc;

   if ((rc = cons_lock()))
      return rc;
   rc = (s = sset_of(StatSet)) ? read_sset(s, Force) : SiInvalidCx;
   cons_unlock();
   return rc;
}

static struct SpmiStatVals *vals_at(struct sset *s, int i)
{
   if (i < 0 || i >= s->n)
      return NULL;
   s->cursor = i;
   return &s->v[i]->pub;
}

/* The decoded value: a quantity's level, a counter's rate per second
 * between the last two reads (0 after the first). */
static int decode(struct sset *s, int i, float *out)
{
   struct sval *v = s->v[i];
   struct SpmiStat *desc = cons_stat(v->pub.stat);

   if (!s->read) {
      spmi_err(SiNoValue, "no value yet: call SpmiGetStatSet first");
      return SiNoValue;
   }
   if (v->pub.error != SiSuccess || !desc) {
      spmi_err(desc ? (int)v->pub.error : SiNoValue, "no value for %s in the last read", v->path);
      return SpmiErrno;
   }
   if (desc->value_type == SiQuantity)
      *out = cons_to_float(cons_raw_f64(&v->cur));
   else
      *out = s->elapsed > 0 ? cons_to_float(v->change / s->elapsed) : 0;
   return 0;
}

float SpmiGetValue(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal)
{
   struct sset *s;
   float r = -1.1f;
   int i;

   if (cons_lock())
      return r;
   if ((s = sset_of(StatSet)) && (i = sval_index(s, StatVal)) >= 0 && decode(s, i, &r) != 0)
      r = -1.1f;
   cons_unlock();
   return r;
}

/* The value after StatVal in the guide's order, last added first (with
 * first, the first value); with value, its decoded value there (-1.1
 * when it has none: the structure is returned, its error says why). */
static struct SpmiStatVals *step(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal, int first, float *value)
{
   struct sset *s;
   struct SpmiStatVals *r = NULL;
   int i;

   if (cons_lock())
      return NULL;
   if ((s = sset_of(StatSet)) && (i = first ? s->n : sval_index(s, StatVal)) >= 0 && (r = vals_at(s, i - 1)) &&
       value && decode(s, i - 1, value) != 0)
      *value = -1.1f;
   cons_unlock();
   return r;
}

struct SpmiStatVals *SpmiFirstVals(struct SpmiStatSet *StatSet) { return step(StatSet, NULL, 1, NULL); }

struct SpmiStatVals *SpmiNextVals(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal)
{
   return step(StatSet, StatVal, 0, NULL);
}

struct SpmiStatVals *SpmiNextValue(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal, float *value)
{
   if (value)
      return step(StatSet, StatVal, !StatVal, value);
   if (cons_lock() == 0) { /* the error, as every call's, under the lock */
      spmi_err(SiBadArgument, "SpmiNextValue: no place for the value");
      cons_unlock();
   }
   return NULL;
}

void cons_statsets_free(void)
{
   for (int i = 0; i < nssets; i++)
      free_sset(ssets[i]);
   free(ssets);
   ssets = NULL;
   nssets = 0;
}
