/* jsoncheck.c - the consumer side's JSON reader (src/json.c) on stdin,
 * for FuzzJSON: prints the document again in one canonical form
 * (members in order, numbers as written, strings as the library's writer
 * escapes them), or "err <why>". Linked with the static library, whose
 * internal symbols it reaches through cons_internal.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cons_internal.h"

/* Strings as the library writes them (json_put_str). */
static void str(const char *s)
{
   struct spmi_buf w = {0};

   json_put_str(&w, s);
   if (w.oom)
      exit(2);
   fwrite(w.b, 1, w.len, stdout);
   free(w.b);
}

static void out(const struct jdoc *d, int i)
{
   const struct jnode *n = &d->n[i];

   switch (n->type) {
   case J_NULL: fputs("null", stdout); break;
   case J_FALSE: fputs("false", stdout); break;
   case J_TRUE: fputs("true", stdout); break;
   case J_NUM: fwrite(n->s, 1, n->len, stdout); break;
   case J_STR: str(n->s); break;
   case J_ARR:
   case J_OBJ:
      putchar(n->type == J_ARR ? '[' : '{');
      for (int c = n->first; c >= 0; c = d->n[c].next) {
         if (c != n->first)
            putchar(',');
         if (n->type == J_OBJ) {
            str(d->n[c].key);
            putchar(':');
         }
         out(d, c);
      }
      putchar(n->type == J_ARR ? ']' : '}');
      break;
   }
}

int main(void)
{
   size_t cap = 1 << 16, len = 0, k;
   char *b = malloc(cap);
   struct jdoc d = {0};

   while (b && (k = fread(b + len, 1, cap - len, stdin)) > 0) {
      len += k;
      if (len == cap && !(b = realloc(b, cap *= 2)))
         break;
   }
   if (!b)
      return 2;
   if (json_parse(&d, b, len) < 0) {
      printf("err %s\n", d.err);
   } else {
      out(&d, 0);
      putchar('\n');
   }
   json_free(&d);
   free(b);
   return 0;
}
