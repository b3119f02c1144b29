/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_sets.c - statsets and hotsets.
 *
 * A statset is a list of statistic paths kept here: SpmiGetStatSet is one
 * `get` of all of them, asking for a snapshot newer than the previous
 * read's (`after`), so counters come with their change and, through
 * SpmiGetValue, their rate per second over the time between the two
 * snapshots, as `subagent get --interval` computes them. Statsets survive
 * daemon restarts as they are.
 *
 * A hotset lives in the daemon, in the session of this connection
 * (hotset.create, hotset.add, hotset.get, ...); the library keeps its peer
 * sets and makes it again, with them, on a new connection after a daemon
 * restart, as the supplier side replays its registration.
 *
 * Set pointers and value pointers passed back are looked up among the
 * library's own before they are used: a freed or foreign one is an error
 * (SiInvalidCx for a set, SiBadArgument or SiNotFound for a value), never
 * a crash.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "cons_internal.h"

/* The daemon's bounds for one get (control.MaxPaths) and hotsets. */
#define SET_MAX_STATS 100000 /* control.MaxStatSetPaths */
#define SET_ADD_PATHS 1000   /* control.MaxPaths: one statset.add */
#define MAX_SETS      4096
#define HOT_MAX_PEERS 256    /* control.MaxHotsetPeerSets */
#define ADD_BYTES     (48u << 10) /* a statset.add's paths, under control.MaxRequest */

/* A reading of a value, as the daemon sent it. */
struct raw {
   int      kind; /* 0 none, 'u', 'i', 'f' */
   uint64_t u;
   int64_t  i;
   double   f;
};

struct sval {
   struct SpmiStatVals pub;
   char      *path;
   struct raw prev, cur;
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

static struct sset **ssets;
static int nssets;
static struct hset **hsets;
static int nhsets;

/* ---- time ---- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
   y -= m <= 2;
   int64_t era = (y >= 0 ? y : y - 399) / 400;
   unsigned yoe = (unsigned)(y - era * 400);
   unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
   unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
   return era * 146097 + (int64_t)doe - 719468;
}

static int num(const char **p, int n, int *v)
{
   *v = 0;
   for (int i = 0; i < n; i++, (*p)++) {
      if (**p < '0' || **p > '9')
         return 0;
      *v = *v * 10 + (**p - '0');
   }
   return 1;
}

/* RFC 3339 time as Go writes it (2026-01-02T15:04:05.999999999Z07:00). */
static int parse_time(const char *s, int64_t *sec, long *nsec)
{
   int y, mo, d, h, mi, se, oh = 0, om = 0, sign = 0;
   long ns = 0;

   if (!num(&s, 4, &y) || *s++ != '-' || !num(&s, 2, &mo) || *s++ != '-' || !num(&s, 2, &d) ||
       (*s != 'T' && *s != 't') || !++s || !num(&s, 2, &h) || *s++ != ':' || !num(&s, 2, &mi) ||
       *s++ != ':' || !num(&s, 2, &se))
      return -1;
   if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
      return -1;
   if (*s == '.') {
      int k = 0;
      s++;
      while (*s >= '0' && *s <= '9') {
         if (k++ < 9)
            ns = ns * 10 + (*s - '0');
         s++;
      }
      if (k == 0)
         return -1;
      for (; k < 9; k++)
         ns *= 10;
   }
   if (*s == 'Z' || *s == 'z') {
      s++;
   } else if (*s == '+' || *s == '-') {
      sign = *s++ == '-' ? -1 : 1;
      if (!num(&s, 2, &oh) || *s++ != ':' || !num(&s, 2, &om) || oh > 23 || om > 59)
         return -1;
   } else {
      return -1;
   }
   if (*s)
      return -1;
   *sec = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se -
          sign * (oh * 3600 + om * 60);
   *nsec = ns;
   return 0;
}

static void to_timeval(struct timeval *tv, int64_t sec, long nsec)
{
   tv->tv_sec = (time_t)sec;
   tv->tv_usec = (suseconds_t)(nsec / 1000);
}

static void elapsed_tv(struct timeval *tv, double e) /* 0 <= e <= 1e9 */
{
   int64_t s = (int64_t)e;
   to_timeval(tv, s, (long)((e - (double)s) * 1e9));
}

/* Rounded to the nearest (no libm: the samples link without -lm). */
static double round_half(double x) { return x >= 0 ? x + 0.5 : x - 0.5; }

/* ---- statsets ---- */

static struct sset *sset_of(const struct SpmiStatSet *p)
{
   for (int i = 0; i < nssets; i++)
      if ((uintptr_t)&ssets[i]->pub == (uintptr_t)p)
         return ssets[i];
   dds_err(SiInvalidCx, "%p is not a statset of this process (created by SpmiCreateStatSet and not freed)",
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
   dds_err(SiNotFound, "%p is not a value of this statset", (const void *)p);
   return -1;
}

struct SpmiStatSet *SpmiCreateStatSet(void)
{
   struct sset *s = NULL, **n;

   if (cons_lock())
      return NULL;
   if (nssets >= MAX_SETS) {
      dds_err(SiCallocFailed, "this process has %d statsets, the most the library keeps", MAX_SETS);
   } else if (!(n = realloc(ssets, (size_t)(nssets + 1) * sizeof *n)) || !(ssets = n, s = calloc(1, sizeof *s))) {
      dds_err(SiCallocFailed, "out of memory");
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
   struct dds_buf w = {0};
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
            dds_err(SiCallocFailed, "%s is in the statset %d times, the most ref_count counts", path, INT_MAX);
            return NULL;
         }
         s->v[i]->pub.ref_count++;
         return &s->v[i]->pub;
      }
   }
   if (s->n >= SET_MAX_STATS) {
      dds_err(SiCallocFailed, "the statset holds %d statistics, the most one statset may (its read is one answer of the daemon)", s->n);
      return NULL;
   }
   json_put_raw(&w, "{\"op\":\"get\",\"paths\":[");
   json_put_str(&w, path);
   json_put_raw(&w, "]}");
   if (cons_call(&w, 1))
      return NULL;
   smp = json_get(d, 0, "sample");
   items = json_get(d, smp, "Items");
   if (json_len(d, items) != 1) {
      dds_err(SiOtherErr, "the daemon answered get without the value of %s", path);
      return NULL;
   }
   it = d->n[items].first;
   if ((e = json_get(d, it, "err")) >= 0) {
      if (!json_int(d, json_get(d, e, "code"), &code) || code <= 0)
         code = SiOtherErr;
      if (code != SiNoValue) { /* one that has no value now may have later */
         if (!json_str(d, json_get(d, e, "msg"), &msg))
            msg = "(no message)";
         dds_err(code, "%s", msg);
         return NULL;
      }
   }
   if (json_get(d, it, "stat") < 0) {
      dds_err(SiNotFound, "%s is not a statistic the daemon serves", path);
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
         dds_err(SiCallocFailed, "out of memory");
         return NULL;
      }
      s->v = n;
      s->cap = nc;
   }
   if (!(v = calloc(1, sizeof *v)) || !(v->path = strdup(path))) {
      free(v);
      dds_err(SiCallocFailed, "out of memory");
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
      dds_err(SiBadArgument, "SpmiPathAddSetStat: no statistic name");
      goto out;
   }
   if (cons_join(p, sizeof p, c ? cons_cx_path(c) : "", StatName) == 0)
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
       cons_join(p, sizeof p, cons_cx_path(c), st->name) == 0)
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
      if (s->srv_id && cons_ready() == 0 && s->srv_gen == cons_st.gen) {
         struct dds_buf f = {0};
         char b[64];
         snprintf(b, sizeof b, "{\"op\":\"statset.free\",\"id\":%d}", s->srv_id);
         json_put_raw(&f, b);
         cons_call(&f, 0);
      }
      dds_clear_err();
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

/* A value from the daemon ({"u":..}, {"i":..}, {"f":..}, {"s":..}, null). */
static int read_value(const struct jdoc *d, int j, struct raw *r)
{
   int k;

   *r = (struct raw){0};
   if (j < 0 || d->n[j].type == J_NULL)
      return 0;
   if ((k = json_get(d, j, "u")) >= 0 && json_u64(d, k, &r->u))
      r->kind = 'u';
   else if ((k = json_get(d, j, "i")) >= 0 && json_i64(d, k, &r->i))
      r->kind = 'i';
   else if ((k = json_get(d, j, "f")) >= 0 && json_f64(d, k, &r->f))
      r->kind = 'f';
   else if (json_get(d, j, "s") >= 0)
      r->kind = 's';
   else
      return -1;
   return 0;
}

/* As spmi.Value's Uint64 and Float64. */
static uint64_t raw_u64(const struct raw *r)
{
   switch (r->kind) {
   case 'u': return r->u;
   case 'i': return r->i < 0 ? 0 : (uint64_t)r->i;
   case 'f': return !(r->f > 0) ? 0 : r->f >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)r->f;
   }
   return 0;
}

static double raw_f64(const struct raw *r)
{
   switch (r->kind) {
   case 'u': return (double)r->u;
   case 'i': return (double)r->i;
   case 'f': return r->f;
   }
   return 0;
}

static long to_long(double x)
{
   if (!(x == x))
      return 0;
   if (x >= (double)LONG_MAX)
      return LONG_MAX;
   if (x <= (double)LONG_MIN)
      return LONG_MIN;
   return (long)x;
}

static float to_float(double x)
{
   if (x > 3.4e38)
      return 3.4e38f;
   if (x < -3.4e38)
      return -3.4e38f;
   return (float)x;
}

/* spmi's counterChange: a counter that went back (a restart) changed 0. */
static double counter_change(const struct raw *a, const struct raw *b)
{
   if (a->kind == 'f' || b->kind == 'f') {
      double x = raw_f64(b) - raw_f64(a);
      return x < 0 ? 0 : x;
   }
   uint64_t x = raw_u64(a), y = raw_u64(b);
   return y < x ? 0 : (double)(y - x);
}

static void put_value(union Value *u, enum DataType t, const struct raw *r, double change, int is_change)
{
   if (t == SiFloat)
      u->f = to_float(is_change ? change : raw_f64(r));
   else if (is_change)
      u->l = to_long(change);
   else if (r->kind == 'u')
      u->l = r->u > (uint64_t)LONG_MAX ? (long)(r->u & (uint64_t)LONG_MAX) : (long)r->u;
   else if (r->kind == 'i')
      u->l = r->i > LONG_MAX ? LONG_MAX : r->i < LONG_MIN ? LONG_MIN : (long)r->i;
   else
      u->l = to_long(raw_f64(r));
}

/* sync_sset makes the daemon's copy of s hold its paths: made on this
 * connection (again after a restart or a delete, as hotsets are), then
 * the paths added since, SET_ADD_PATHS at a time. Paths the daemon no
 * longer serves are kept ("keep"): their values carry the error. */
static int sync_sset(struct sset *s)
{
   const struct jdoc *d = &cons_st.doc;
   char b[96];
   int rc, id;

   if ((rc = cons_ready()))
      return rc;
   if (s->srv_gen != cons_st.gen || s->dirty) {
      if (s->srv_gen == cons_st.gen) { /* a delete: the old copy goes */
         struct dds_buf f = {0};
         snprintf(b, sizeof b, "{\"op\":\"statset.free\",\"id\":%d}", s->srv_id);
         json_put_raw(&f, b);
         if ((rc = cons_call(&f, 0)) && rc != SiInvalidCx)
            return rc;
      }
      struct dds_buf w = {0};
      json_put_raw(&w, "{\"op\":\"statset.create\"}");
      if ((rc = cons_call(&w, 0)))
         return rc;
      if (!json_int(d, json_get(d, 0, "id"), &id) || id <= 0) {
         dds_err(SiOtherErr, "the daemon's answer to statset.create has no id");
         return SiOtherErr;
      }
      s->srv_id = id;
      s->srv_gen = cons_st.gen;
      s->synced = 0;
      s->dirty = 0;
   }
   while (s->synced < s->n) {
      struct dds_buf w = {0};
      int k = s->synced, end = s->synced;
      size_t len = 0;
      snprintf(b, sizeof b, "{\"op\":\"statset.add\",\"id\":%d,\"keep\":true,\"paths\":[", s->srv_id);
      json_put_raw(&w, b);
      /* Within the request bound: paths escaped take at most 6 bytes a byte. */
      while (end < s->n && end - k < SET_ADD_PATHS && len + strlen(s->v[end]->path) * 6 + 3 < ADD_BYTES)
         len += strlen(s->v[end++]->path) * 6 + 3;
      for (int i = k; i < end; i++) {
         if (i > k)
            dds_put8(&w, ',');
         json_put_str(&w, s->v[i]->path);
      }
      json_put_raw(&w, "]}");
      if ((rc = cons_call(&w, 0)))
         return rc;
      s->synced = end;
   }
   return 0;
}

static int read_sset(struct sset *s, int force)
{
   const struct jdoc *d = &cons_st.doc;
   struct dds_buf w = {0};
   char b[96];
   int smp, items, it, k = 0, e, code;
   const char *t;
   int64_t sec;
   long nsec;

   if (s->n == 0) {
      dds_err(SiBadArgument, "the statset is empty");
      return SiBadArgument;
   }
   if (sync_sset(s))
      return SpmiErrno;
   snprintf(b, sizeof b, "{\"op\":\"statset.get\",\"id\":%d", s->srv_id);
   json_put_raw(&w, b);
   if (force && s->read) { /* a snapshot newer than the previous read's */
      json_put_raw(&w, ",\"after\":");
      json_put_str(&w, s->after);
   }
   dds_put8(&w, '}');
   if (cons_call(&w, 0))
      return SpmiErrno;
   smp = json_get(d, 0, "sample");
   items = json_get(d, smp, "Items");
   if (!json_str(d, json_get(d, smp, "Time"), &t) || strlen(t) >= sizeof s->after ||
       parse_time(t, &sec, &nsec) < 0 || json_len(d, items) != s->n) {
      dds_err(SiOtherErr, "the daemon's answer to statset.get is not a sample of %d values with its time", s->n);
      return SiOtherErr;
   }
   /* Check every item before changing anything. */
   for (it = d->n[items].first; it >= 0; it = d->n[it].next) {
      struct raw r;
      if (d->n[it].type != J_OBJ || read_value(d, json_get(d, it, "value"), &r) < 0) {
         dds_err(SiOtherErr, "the daemon sent a value this library does not read");
         return SiOtherErr;
      }
   }
   s->elapsed = 0;
   if (s->read) {
      s->elapsed = (double)(sec - s->sec) + (double)(nsec - s->nsec) / 1e9;
      if (s->elapsed < 0)
         s->elapsed = 0;
   }
   to_timeval(&s->pub.time, sec, nsec);
   elapsed_tv(&s->pub.time_change, s->elapsed);
   for (it = d->n[items].first; it >= 0; it = d->n[it].next, k++) {
      struct sval *v = s->v[k];
      int st = json_get(d, it, "stat");
      struct SpmiStat *desc;
      SpmiStatHdl h;

      v->prev = v->cur;
      read_value(d, json_get(d, it, "value"), &v->cur);
      v->change = 0;
      v->pub.error = SiSuccess;
      if (st >= 0 && (h = cons_stat_of(d, st)) != NULL)
         v->pub.stat = h; /* its description may change with the daemon */
      dds_clear_err();
      desc = cons_stat(v->pub.stat);
      if ((e = json_get(d, it, "err")) >= 0) {
         if (!json_int(d, json_get(d, e, "code"), &code) || code <= 0)
            code = SiOtherErr;
         v->pub.error = (enum Error)code;
      } else if (v->cur.kind == 0 || v->cur.kind == 's' || !desc) {
         v->pub.error = SiNoValue;
      }
      if (v->pub.error != SiSuccess) {
         v->cur.kind = 0;
         v->pub.val.l = 0;
         v->pub.val_change.l = 0;
         continue;
      }
      if (desc->value_type == SiCounter && v->prev.kind && v->prev.kind != 's')
         v->change = counter_change(&v->prev, &v->cur);
      put_value(&v->pub.val, desc->data_type, &v->cur, 0, 0);
      if (desc->value_type == SiCounter)
         put_value(&v->pub.val_change, desc->data_type, &v->cur, v->change, 1);
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

/* The guide: values come last added first. */
struct SpmiStatVals *SpmiFirstVals(struct SpmiStatSet *StatSet)
{
   struct sset *s;
   struct SpmiStatVals *r = NULL;

   if (cons_lock())
      return NULL;
   if ((s = sset_of(StatSet)))
      r = vals_at(s, s->n - 1);
   cons_unlock();
   return r;
}

struct SpmiStatVals *SpmiNextVals(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal)
{
   struct sset *s;
   struct SpmiStatVals *r = NULL;
   int i;

   if (cons_lock())
      return NULL;
   if ((s = sset_of(StatSet)) && (i = sval_index(s, StatVal)) >= 0)
      r = vals_at(s, i - 1);
   cons_unlock();
   return r;
}

/* The decoded value: a quantity's level, a counter's rate per second
 * between the last two reads (0 after the first). */
static int decode(struct sset *s, int i, float *out)
{
   struct sval *v = s->v[i];
   struct SpmiStat *desc = cons_stat(v->pub.stat);

   if (!s->read) {
      dds_err(SiNoValue, "no value yet: call SpmiGetStatSet first");
      return SiNoValue;
   }
   if (v->pub.error != SiSuccess || !desc) {
      dds_err(desc ? (int)v->pub.error : SiNoValue, "no value for %s in the last read", v->path);
      return SpmiErrno;
   }
   if (desc->value_type == SiQuantity)
      *out = to_float(raw_f64(&v->cur));
   else
      *out = s->elapsed > 0 ? to_float(v->change / s->elapsed) : 0;
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

struct SpmiStatVals *SpmiNextValue(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal, float *value)
{
   struct sset *s;
   struct SpmiStatVals *r = NULL;
   int i;

   if (cons_lock())
      return NULL;
   if (!value) {
      dds_err(SiBadArgument, "SpmiNextValue: no place for the value");
   } else if ((s = sset_of(StatSet))) {
      i = StatVal ? sval_index(s, StatVal) : s->n;
      if (i >= 0 && (r = vals_at(s, i - 1)) && decode(s, i - 1, value) != 0)
         *value = -1.1f; /* the structure is returned; its error says why */
   }
   cons_unlock();
   return r;
}

/* ---- hotsets ---- */

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
            it->val.f = to_float(raw);
            it->val_change.f = to_float(ch);
         } else {
            it->val.l = to_long(round_half(raw));
            it->val_change.l = to_long(round_half(ch));
         }
      } else if (desc && desc->data_type == SiFloat) {
         it->val.f = to_float(x);
      } else {
         it->val.l = to_long(round_half(x));
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
       parse_time(t, &sec, &nsec) < 0 || !json_f64(d, json_get(d, hot, "elapsed"), &el) || !(el >= 0) ||
       el > 1e9 || (h->n > 0 && json_len(d, ps) != h->n)) {
      dds_err(SiOtherErr, "the daemon's hotset reading is not one of %d peer sets with its time", h->n);
      return SiOtherErr;
   }
   to_timeval(&h->pub.time, sec, nsec);
   elapsed_tv(&h->pub.time_change, el);
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
      *value = to_float(v->rates[i]);
      *name = v->pub.items[i].name;
      *index = i + 1;
   }
out:
   cons_unlock();
   return v ? &v->pub : NULL;
}

void cons_sets_free(void)
{
   for (int i = 0; i < nssets; i++)
      free_sset(ssets[i]);
   for (int i = 0; i < nhsets; i++)
      free_hset(hsets[i]);
   free(ssets);
   free(hsets);
   ssets = NULL;
   hsets = NULL;
   nssets = nhsets = 0;
}
