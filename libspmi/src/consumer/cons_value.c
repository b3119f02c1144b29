/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_value.c - the daemon's times and values as the guide's structures
 * hold them, for statsets and hotsets alike: RFC 3339 times, the readings
 * ({"u":..}, {"i":..}, {"f":..}), a counter's change, and the clamps into
 * long and float.
 */
#define _GNU_SOURCE
#include <limits.h>
#include "cons_internal.h"

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
int cons_parse_time(const char *s, int64_t *sec, long *nsec)
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

void cons_to_timeval(struct timeval *tv, int64_t sec, long nsec)
{
   tv->tv_sec = (time_t)sec;
   tv->tv_usec = (suseconds_t)(nsec / 1000);
}

void cons_elapsed_tv(struct timeval *tv, double e) /* 0 <= e <= 1e9 */
{
   int64_t s = (int64_t)e;
   cons_to_timeval(tv, s, (long)((e - (double)s) * 1e9));
}

int cons_read_value(const struct jdoc *d, int j, struct cons_raw *r)
{
   int k;

   *r = (struct cons_raw){0};
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
static uint64_t raw_u64(const struct cons_raw *r)
{
   switch (r->kind) {
   case 'u': return r->u;
   case 'i': return r->i < 0 ? 0 : (uint64_t)r->i;
   case 'f': return !(r->f > 0) ? 0 : r->f >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)r->f;
   }
   return 0;
}

double cons_raw_f64(const struct cons_raw *r)
{
   switch (r->kind) {
   case 'u': return (double)r->u;
   case 'i': return (double)r->i;
   case 'f': return r->f;
   }
   return 0;
}

long cons_to_long(double x)
{
   if (!(x == x))
      return 0;
   if (x >= (double)LONG_MAX)
      return LONG_MAX;
   if (x <= (double)LONG_MIN)
      return LONG_MIN;
   return (long)x;
}

float cons_to_float(double x)
{
   if (x > 3.4e38)
      return 3.4e38f;
   if (x < -3.4e38)
      return -3.4e38f;
   return (float)x;
}

/* spmi's counterChange: a counter that went back (a restart) changed 0. */
double cons_counter_change(const struct cons_raw *a, const struct cons_raw *b)
{
   if (a->kind == 'f' || b->kind == 'f') {
      double x = cons_raw_f64(b) - cons_raw_f64(a);
      return x < 0 ? 0 : x;
   }
   uint64_t x = raw_u64(a), y = raw_u64(b);
   return y < x ? 0 : (double)(y - x);
}

void cons_put_value(union Value *u, enum DataType t, const struct cons_raw *r, double change, int is_change)
{
   if (t == SiFloat)
      u->f = cons_to_float(is_change ? change : cons_raw_f64(r));
   else if (is_change)
      u->l = cons_to_long(change);
   else if (r->kind == 'u')
      u->l = r->u > (uint64_t)LONG_MAX ? (long)(r->u & (uint64_t)LONG_MAX) : (long)r->u;
   else if (r->kind == 'i')
      u->l = r->i > LONG_MAX ? LONG_MAX : r->i < LONG_MIN ? LONG_MIN : (long)r->i;
   else
      u->l = cons_to_long(cons_raw_f64(r));
}
