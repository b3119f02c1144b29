/* SPDX-License-Identifier: Apache-2.0 */
/* buf.c - a growing little-endian buffer, for the supplier's frames and
 * the consumer's request lines alike. */
#include <string.h>
#include "spmi_internal.h"

static void grow(struct spmi_buf *w, size_t n)
{
   size_t cap;
   uint8_t *b;

   if (w->oom || w->len + n <= w->cap)
      return;
   cap = w->cap ? w->cap : 256;
   while (cap < w->len + n)
      cap *= 2;
   b = realloc(w->b, cap);
   if (!b) {
      w->oom = 1;
      return;
   }
   w->b = b;
   w->cap = cap;
}

static void put(struct spmi_buf *w, uint64_t v, int n)
{
   grow(w, (size_t)n);
   if (w->oom)
      return;
   for (int i = 0; i < n; i++)
      w->b[w->len++] = (uint8_t)(v >> (8 * i));
}

void spmi_put8(struct spmi_buf *w, uint8_t v)   { put(w, v, 1); }
void spmi_put16(struct spmi_buf *w, uint16_t v) { put(w, v, 2); }
void spmi_put32(struct spmi_buf *w, uint32_t v) { put(w, v, 4); }
void spmi_put64(struct spmi_buf *w, uint64_t v) { put(w, v, 8); }

/* Callers have checked n against the field's maximum. */
void spmi_putstr(struct spmi_buf *w, const char *s, size_t n)
{
   spmi_put16(w, (uint16_t)n);
   grow(w, n);
   if (w->oom)
      return;
   memcpy(w->b + w->len, s, n);
   w->len += n;
}
