/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c - a small, strict JSON reader for the daemon's control answers.
 *
 * Hand-written because libSpmi has no dependencies but libc (docs/DDS.md
 * §4): it reads exactly RFC 8259 (objects, arrays, strings with every
 * escape, numbers, true, false, null) and nothing more, with bounds on
 * everything: the input length (the caller caps answers at
 * CONS_MAX_ANSWER), the nesting depth (JSON_MAX_DEPTH), and memory, which
 * is at most a small multiple of the input. Its one departure: a string
 * may not contain NUL (\u0000), since everything the library reads is a
 * C string. Lone surrogates decode to U+FFFD, as Go's decoder does.
 * Numbers keep their text, so 64-bit counters are read exactly.
 * FuzzJSON (libspmi/consumer_fuzz_test.go) checks it against Go's
 * encoding/json.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cons_internal.h"

struct jp {
   struct jdoc *d;
   const char  *p, *end, *start;
};

static int fail(struct jp *j, const char *why)
{
   snprintf(j->d->err, sizeof j->d->err, "%s at byte %zu", why, (size_t)(j->p - j->start));
   return -1;
}

static void ws(struct jp *j)
{
   while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
      j->p++;
}

static int node(struct jp *j, enum jtype t)
{
   struct jdoc *d = j->d;

   if (d->nn == d->cap) {
      int nc = d->cap ? d->cap * 2 : 64;
      struct jnode *n;
      if (nc > (1 << 21) || !(n = realloc(d->n, (size_t)nc * sizeof *n)))
         return fail(j, "out of memory");
      d->n = n;
      d->cap = nc;
   }
   d->n[d->nn] = (struct jnode){.type = t, .first = -1, .next = -1};
   return d->nn++;
}

/* Reserves n bytes in the string area; returns the offset or -1. */
static long reserve(struct jp *j, size_t n)
{
   struct jdoc *d = j->d;

   if (d->scap - d->slen < n) {
      size_t nc = d->scap ? d->scap : 4096;
      char *s;
      while (nc - d->slen < n) {
         if (nc > ((size_t)1 << 30))
            return fail(j, "out of memory");
         nc *= 2;
      }
      if (!(s = realloc(d->strs, nc)))
         return fail(j, "out of memory");
      d->strs = s;
      d->scap = nc;
   }
   return (long)d->slen;
}

static int hex4(const char *p, unsigned *v)
{
   *v = 0;
   for (int i = 0; i < 4; i++) {
      unsigned c = (unsigned char)p[i], x;
      if (c >= '0' && c <= '9')
         x = c - '0';
      else if (c >= 'a' && c <= 'f')
         x = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
         x = c - 'A' + 10;
      else
         return 0;
      *v = *v << 4 | x;
   }
   return 1;
}

/* c in UTF-8 at o; its length. */
static size_t utf8(char *o, unsigned c)
{
   static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
   size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

   if (n == 1) {
      o[0] = (char)c;
      return 1;
   }
   for (size_t i = n - 1; i > 0; i--, c >>= 6)
      o[i] = (char)(0x80 | (c & 0x3f));
   o[0] = (char)(lead[n] | c);
   return n;
}

/* A string at j->p (the opening quote): decoded into the string area; its
 * offset in *off and length in *len. A decoded string is never longer
 * than its source text, so one reservation covers it. */
static int string(struct jp *j, size_t *off, size_t *len)
{
   const char *q = j->p + 1;
   long at;
   char *o;

   while (q < j->end && *q != '"') { /* find the end: escapes skip a byte */
      if (*q == '\\' && j->end - q < 2) {
         q = j->end;
         break;
      }
      q += (*q == '\\') ? 2 : 1;
   }
   if (q >= j->end)
      return fail(j, "unterminated string");
   if ((at = reserve(j, (size_t)(q - j->p) + 1)) < 0)
      return -1;
   o = j->d->strs + at;
   j->p++;
   while (*j->p != '"') {
      unsigned char c = (unsigned char)*j->p;
      if (c < 0x20)
         return fail(j, "control character in string");
      if (c != '\\') {
         *o++ = (char)c;
         j->p++;
         continue;
      }
      j->p++; /* j->p < q: the scan above stepped over this escape */
      switch (*j->p) {
      case '"': *o++ = '"'; break;
      case '\\': *o++ = '\\'; break;
      case '/': *o++ = '/'; break;
      case 'b': *o++ = '\b'; break;
      case 'f': *o++ = '\f'; break;
      case 'n': *o++ = '\n'; break;
      case 'r': *o++ = '\r'; break;
      case 't': *o++ = '\t'; break;
      case 'u': {
         unsigned u, lo;
         if (q - j->p < 5 || !hex4(j->p + 1, &u))
            return fail(j, "bad \\u escape");
         j->p += 4;
         if (u == 0)
            return fail(j, "NUL in string");
         if (u >= 0xd800 && u < 0xdc00 && q - j->p >= 7 && j->p[1] == '\\' && j->p[2] == 'u' &&
             hex4(j->p + 3, &lo) && lo >= 0xdc00 && lo < 0xe000) {
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            j->p += 6;
         } else if (u >= 0xd800 && u < 0xe000) {
            u = 0xfffd; /* lone surrogate */
         }
         o += utf8(o, u);
         break;
      }
      default:
         return fail(j, "bad escape");
      }
      j->p++;
   }
   j->p++;
   *o++ = 0;
   *off = (size_t)at;
   *len = (size_t)(o - (j->d->strs + at)) - 1;
   j->d->slen = (size_t)(o - j->d->strs);
   return 0;
}

static int digits(struct jp *j)
{
   const char *s = j->p;

   while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
      j->p++;
   return j->p > s;
}

/* Strings are stored by offset while parsing (the area moves when it
 * grows); json_parse turns offsets into pointers at the end. */
static int value(struct jp *j, int depth)
{
   int i, prev = -1;
   size_t off, len;

   ws(j);
   if (j->p >= j->end)
      return fail(j, "unexpected end");
   if (depth > JSON_MAX_DEPTH)
      return fail(j, "nested too deep");
   switch (*j->p) {
   case '{':
   case '[': {
      int obj = *j->p == '{';
      if ((i = node(j, obj ? J_OBJ : J_ARR)) < 0)
         return -1;
      j->p++;
      ws(j);
      if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
         j->p++;
         return i;
      }
      for (;;) {
         size_t koff = 0, klen = 0;
         int c;
         if (obj) {
            ws(j);
            if (j->p >= j->end || *j->p != '"')
               return fail(j, "expected a member name");
            if (string(j, &koff, &klen) < 0)
               return -1;
            ws(j);
            if (j->p >= j->end || *j->p != ':')
               return fail(j, "expected ':'");
            j->p++;
         }
         if ((c = value(j, depth + 1)) < 0)
            return -1;
         if (obj)
            j->d->n[c].key = (const char *)(uintptr_t)(koff + 1); /* 0 stays "no key" */
         if (prev < 0)
            j->d->n[i].first = c;
         else
            j->d->n[prev].next = c;
         prev = c;
         ws(j);
         if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
         }
         if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
            j->p++;
            return i;
         }
         return fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
      }
   }
   case '"':
      if ((i = node(j, J_STR)) < 0 || string(j, &off, &len) < 0)
         return -1;
      j->d->n[i].s = (const char *)(uintptr_t)(off + 1);
      j->d->n[i].len = len;
      return i;
   case 't':
   case 'f':
   case 'n': {
      static const char *const lit[] = {"true", "false", "null"};
      static const enum jtype typ[] = {J_TRUE, J_FALSE, J_NULL};
      int k = *j->p == 't' ? 0 : *j->p == 'f' ? 1 : 2;
      size_t l = strlen(lit[k]);
      if ((size_t)(j->end - j->p) < l || memcmp(j->p, lit[k], l) != 0)
         return fail(j, "bad literal");
      j->p += l;
      return node(j, typ[k]);
   }
   default: {
      const char *s = j->p;
      if (*j->p == '-')
         j->p++;
      if (j->p < j->end && *j->p == '0')
         j->p++;
      else if (!digits(j))
         return fail(j, "unexpected character");
      if (j->p < j->end && *j->p == '.') {
         j->p++;
         if (!digits(j))
            return fail(j, "digits expected after '.'");
      }
      if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
         j->p++;
         if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
         if (!digits(j))
            return fail(j, "digits expected in exponent");
      }
      if ((i = node(j, J_NUM)) < 0)
         return -1;
      j->d->n[i].s = s;
      j->d->n[i].len = (size_t)(j->p - s);
      return i;
   }
   }
}

int json_parse(struct jdoc *d, const char *text, size_t len)
{
   struct jp j = {.d = d, .p = text, .end = text + len, .start = text};

   d->nn = 0;
   d->slen = 0;
   d->err[0] = 0;
   if (value(&j, 0) < 0)
      return -1;
   ws(&j);
   if (j.p != j.end)
      return fail(&j, "text after the value");
   for (int i = 0; i < d->nn; i++) { /* offsets (+1) become pointers */
      if (d->n[i].key)
         d->n[i].key = d->strs + ((uintptr_t)d->n[i].key - 1);
      if (d->n[i].type == J_STR)
         d->n[i].s = d->strs + ((uintptr_t)d->n[i].s - 1);
   }
   return 0;
}

void json_free(struct jdoc *d)
{
   free(d->n);
   free(d->strs);
   *d = (struct jdoc){0};
}

int json_get(const struct jdoc *d, int o, const char *key)
{
   if (o < 0 || o >= d->nn || d->n[o].type != J_OBJ)
      return -1;
   for (int c = d->n[o].first; c >= 0; c = d->n[c].next)
      if (strcmp(d->n[c].key, key) == 0)
         return c;
   return -1;
}

int json_len(const struct jdoc *d, int i)
{
   int n = 0;

   if (i < 0 || i >= d->nn || d->n[i].type != J_ARR)
      return -1;
   for (int c = d->n[i].first; c >= 0; c = d->n[c].next)
      n++;
   return n;
}

int json_str(const struct jdoc *d, int i, const char **s)
{
   if (i < 0 || i >= d->nn || d->n[i].type != J_STR)
      return 0;
   *s = d->n[i].s;
   return 1;
}

/* The number's text as a C string, or 0 when it is not a number or too
 * long to be one we read. */
static int numtext(const struct jdoc *d, int i, char *b, size_t n)
{
   if (i < 0 || i >= d->nn || d->n[i].type != J_NUM || d->n[i].len >= n)
      return 0;
   memcpy(b, d->n[i].s, d->n[i].len);
   b[d->n[i].len] = 0;
   return 1;
}

/* The number at i as an integer (sign: a signed one), whole and in
 * range; *u or *s is set only then. */
static int integer(const struct jdoc *d, int i, int sign, uint64_t *u, int64_t *s)
{
   char b[32], *e;
   unsigned long long xu = 0;
   long long xs = 0;

   if (!numtext(d, i, b, sizeof b) || (!sign && b[0] == '-'))
      return 0;
   errno = 0;
   if (sign)
      xs = strtoll(b, &e, 10);
   else
      xu = strtoull(b, &e, 10);
   if (errno || *e)
      return 0;
   if (sign)
      *s = xs;
   else
      *u = xu;
   return 1;
}

int json_u64(const struct jdoc *d, int i, uint64_t *v) { return integer(d, i, 0, v, NULL); }
int json_i64(const struct jdoc *d, int i, int64_t *v) { return integer(d, i, 1, NULL, v); }

int json_int(const struct jdoc *d, int i, int *v)
{
   int64_t x;

   if (!json_i64(d, i, &x) || x < -2147483647 - 1 || x > 2147483647)
      return 0;
   *v = (int)x;
   return 1;
}

/* strtod in the C locale, whatever the program set with setlocale. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

int json_f64(const struct jdoc *d, int i, double *v)
{
   char b[400], *e;
   double x;

   if (!numtext(d, i, b, sizeof b))
      return 0;
   pthread_once(&c_locale_once, make_c_locale);
   if (!c_locale)
      return 0;
   x = strtod_l(b, &e, c_locale);
   if (*e)
      return 0;
   *v = x; /* out of range: ±HUGE_VAL or 0, as Go's decoder would refuse */
   return 1;
}

void json_put_str(struct spmi_buf *w, const char *s)
{
   spmi_put8(w, '"');
   for (; *s; s++) {
      unsigned char c = (unsigned char)*s;
      if (c == '"' || c == '\\') {
         spmi_put8(w, '\\');
         spmi_put8(w, c);
      } else if (c < 0x20) {
         json_putf(w, "\\u%04x", c);
      } else {
         spmi_put8(w, c);
      }
   }
   spmi_put8(w, '"');
}

void json_putf(struct spmi_buf *w, const char *fmt, ...)
{
   va_list ap;
   char *s;
   int n;

   va_start(ap, fmt);
   n = vasprintf(&s, fmt, ap);
   va_end(ap);
   if (n < 0) {
      w->oom = 1;
      return;
   }
   for (int i = 0; i < n; i++)
      spmi_put8(w, (uint8_t)s[i]);
   free(s);
}
