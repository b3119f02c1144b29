/* consumer.c - a data consumer driven line by line from stdin, for the Go
 * tests (consumer_c_test.go). Every command answers one line: "ok ..." or
 * "err <SpmiErrno> <SpmiErrmsg>".
 *
 *   init                  SpmiInit(15)
 *   add <path>            SpmiPathAddSetStat to the one statset
 *   addn <prefix> <from> <to> <stat>  adds <prefix><i>/<stat>, from <= i < to
 *   readsum [newest]      SpmiGetStatSet (Force TRUE; FALSE with newest):
 *                         "ok <values> <sum of val.l>"
 *   read                  SpmiGetStatSet, then per value in the guide's
 *                         order: path val val_change value
 *   hot <cx> <stat>       SpmiAddSetHot to the one hotset
 *   hotread               SpmiGetHotSet, then "peer=value" items
 *   hotitems              the first peer set's items: "name:val:val_change"
 *   newhot                SpmiCreateHotSet, replacing the one hotset
 *   walk                  the guide's traversal from Top: "ok <contexts>
 *                         <statistics>" (at most 2000000 of each)
 *   errors                every bad call: "<label> <SpmiErrno>" each
 *   exit                  SpmiExit
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/Spmidef.h>
#include "answer.h"

static struct SpmiStatSet *ss;
static struct SpmiHotSet *hs;

static void label(const char *what)
{
   printf(" %s=%d", what, SpmiErrno);
}

static void errors(void)
{
   struct SpmiStatSet *s2;
   struct SpmiHotSet *h2;
   struct SpmiStatVals *v, *v2;
   struct SpmiHotVals *hv, *hv2, *hv3;
   struct SpmiCxLink fake = {0};
   SpmiCxHdl cpu, bogus = (SpmiCxHdl)(uintptr_t)0x7fff0;
   float f;
   int i = 0, e, kept;
   char *name;

   printf("ok");
   SpmiPathGetCx("Nope", NULL);
   label("unknown_cx");
   SpmiPathGetCx("CPU/cpu0/idle", NULL);
   label("stat_as_cx");
   SpmiGetCx(bogus);
   label("bad_cx_handle");
   SpmiFirstCx(bogus);
   label("bad_cx_handle_first");
   SpmiGetStat((SpmiStatHdl)(uintptr_t)0x7fff1);
   label("bad_stat_handle");
   SpmiNextCx(&fake);
   label("foreign_link");
   cpu = SpmiPathGetCx("CPU", NULL);
   SpmiInstantiate(cpu);
   label("instantiate_cpu");
   SpmiInstantiate(SpmiPathGetCx("Mem", NULL));
   label("instantiate_mem");
   s2 = SpmiCreateStatSet();
   SpmiPathAddSetStat(s2, "nope", cpu);
   label("unknown_stat");
   SpmiPathAddSetStat(s2, "CPU", NULL);
   label("cx_as_stat");
   v = SpmiPathAddSetStat(s2, "CPU/cpu0/idle", NULL);
   v2 = SpmiPathAddSetStat(s2, "idle", SpmiPathGetCx("CPU/cpu0", NULL));
   printf(" added_twice=%d/%s/%d", SpmiErrno, v && v2 == v ? "same" : "other", v ? v->ref_count : -1);
   f = SpmiGetValue(s2, v);
   printf(" before_read=%d/%s", SpmiErrno, f < -1.0f ? "neg" : "nonneg");
   SpmiAddSetStat(s2, (SpmiStatHdl)(uintptr_t)0x7fff1, cpu);
   label("add_bad_stat_handle");
   SpmiDelSetStat(s2, v);
   /* v is read only if kept: after a fuzzed answer it may be freed. */
   e = SpmiErrno;
   kept = v && SpmiFirstVals(s2) == v;
   printf(" del=%d/%d/%s", e, kept ? v->ref_count : -1, kept ? "kept" : "gone");
   SpmiDelSetStat(s2, v);
   label("del_last");
   SpmiDelSetStat(s2, v);
   label("del_twice");
   SpmiGetStatSet(s2, TRUE);
   label("read_empty");
   SpmiFreeStatSet(s2);
   label("free");
   SpmiFreeStatSet(s2);
   label("free_twice");
   SpmiGetStatSet(s2, TRUE);
   label("read_freed");
   h2 = SpmiCreateHotSet();
   SpmiAddSetHot(h2, "bussy", SpmiPathGetCx("Disk", NULL), 1, 0, 0, SiHotAlways, SiHotNoException, 0, 0);
   label("hot_unknown_stat");
   SpmiAddSetHot(h2, "busy", SpmiPathGetCx("Disk", NULL), 1, 0, 0, 7, SiHotNoException, 0, 0);
   label("hot_bad_feed");
   hv = SpmiAddSetHot(h2, "busy", SpmiPathGetCx("Disk", NULL), 1, 0, 0, SiHotAlways, SiHotNoException, 0, 0);
   hv2 = SpmiAddSetHot(h2, "busy", SpmiPathGetCx("Disk", NULL), 1, 0, 0, SiHotAlways, SiHotNoException, 0, 0);
   hv3 = SpmiAddSetHot(h2, "busy", SpmiPathGetCx("Disk", NULL), 1, 50, 0, SiHotAlways, SiHotNoException, 0, 0);
   printf(" hot_added_twice=%d/%s/%d/%s", SpmiErrno, hv && hv2 == hv ? "same" : "other", hv ? hv->ref_count : -1,
          hv3 && hv3 != hv ? "another" : "same");
   SpmiDelSetHot(h2, hv);
   e = SpmiErrno;
   kept = hv && SpmiFirstHot(h2) == hv;
   printf(" hot_del=%d/%d/%s", e, kept ? hv->ref_count : -1, kept ? "kept" : "gone");
   SpmiDelSetHot(h2, hv);
   printf(" hot_del_last=%d/%s", SpmiErrno, hv && SpmiFirstHot(h2) == hv3 ? "gone" : "kept");
   SpmiNextHotItem(h2, (struct SpmiHotVals *)&fake, &i, &f, &name);
   label("hot_foreign_vals");
   SpmiFreeHotSet(h2);
   label("hot_free");
   SpmiFreeHotSet(h2);
   label("hot_free_twice");
   SpmiInit(5);
   label("init_bad_timeout");
   SpmiExit();
   SpmiPathGetCx("CPU", NULL);
   label("after_exit");
   SpmiInit(15);
   label("init_again");
   SpmiGetCx(cpu);
   label("handle_from_before_exit");
   printf("\n");
}

static long ncx, nst;

static void walk(SpmiCxHdl h, int depth)
{
   struct SpmiCxLink *l;
   struct SpmiStatLink *sl;

   for (sl = SpmiFirstStat(h); sl && nst < 2000000; sl = SpmiNextStat(sl)) {
      struct SpmiStat *st = SpmiGetStat(sl->stat);
      char *p = SpmiStatGetPath(h, sl->stat, 0);
      if (st && p)
         nst++;
   }
   for (l = SpmiFirstCx(h); l && ncx < 2000000 && depth < 64; l = SpmiNextCx(l)) {
      struct SpmiCx *c = SpmiGetCx(l->context);
      if (c && SpmiGetCx(c->parent))
         ncx++;
      walk(l->context, depth + 1);
   }
}

int main(void)
{
   char line[4096], a[1024], b[1024];
   int n, from;

   setvbuf(stdout, NULL, _IOLBF, 0);
   while (fgets(line, sizeof line, stdin)) {
      line[strcspn(line, "\n")] = 0;
      if (strcmp(line, "init") == 0) {
         answer(SpmiInit(15) == 0 && (ss = SpmiCreateStatSet()) != NULL);
      } else if (sscanf(line, "addn %1023s %d %d %1023s", a, &from, &n, b) == 4) {
         char path[2100];
         int k;
         for (k = from; k < n; k++) {
            snprintf(path, sizeof path, "%s%d/%s", a, k, b);
            if (!SpmiPathAddSetStat(ss, path, NULL))
               break;
         }
         answer(k >= n);
      } else if (sscanf(line, "add %1023s", a) == 1) {
         answer(SpmiPathAddSetStat(ss, a, NULL) != NULL);
      } else if (strcmp(line, "readsum") == 0 || strcmp(line, "readsum newest") == 0) {
         struct SpmiStatVals *v;
         long count = 0, sum = 0;
         if (SpmiGetStatSet(ss, strcmp(line, "readsum") == 0) != 0) {
            fail();
            continue;
         }
         for (v = SpmiFirstVals(ss); v; v = SpmiNextVals(ss, v))
            if (v->error == SiSuccess) {
               count++;
               sum += v->val.l;
            }
         printf("ok %ld %ld\n", count, sum);
      } else if (strcmp(line, "read") == 0) {
         struct SpmiStatVals *v = NULL;
         float x;
         if (SpmiGetStatSet(ss, TRUE) != 0) {
            fail();
            continue;
         }
         printf("ok %ld.%06ld", (long)ss->time_change.tv_sec, (long)ss->time_change.tv_usec);
         while ((v = SpmiNextValue(ss, v, &x)) != NULL) {
            struct SpmiStat *st = SpmiGetStat(v->stat);
            char *p = SpmiStatGetPath(v->context, v->stat, 0);
            if (st->data_type == SiFloat)
               printf(" %s:%g:%g:%.9g:%d", p, v->val.f, v->val_change.f, x, v->error);
            else
               printf(" %s:%ld:%ld:%.9g:%d", p, v->val.l, v->val_change.l, x, v->error);
         }
         printf("\n");
      } else if (sscanf(line, "hot %1023s %1023s", a, b) == 2) {
         answer((hs || (hs = SpmiCreateHotSet())) &&
                SpmiAddSetHot(hs, b, SpmiPathGetCx(a, NULL), 100, 0, 0, SiHotAlways, SiHotNoException, 0, 0));
      } else if (strcmp(line, "newhot") == 0) {
         answer((hs = SpmiCreateHotSet()) != NULL);
      } else if (strcmp(line, "hotitems") == 0) {
         struct SpmiHotVals *v = hs ? SpmiFirstHot(hs) : NULL;
         if (!v) {
            fail();
            continue;
         }
         printf("ok");
         for (int k = 0; k < v->count; k++)
            printf(" %s:%ld:%ld", v->items[k].name, v->items[k].val.l, v->items[k].val_change.l);
         printf("\n");
      } else if (strcmp(line, "hotread") == 0) {
         struct SpmiHotVals *v = NULL;
         int i = 0;
         float x;
         char *name;
         if (SpmiGetHotSet(hs, TRUE) != 0) {
            fail();
            continue;
         }
         printf("ok");
         while ((v = SpmiNextHotItem(hs, v, &i, &x, &name)) != NULL)
            printf(" %s/%s=%g", v->path, name, x);
         printf("\n");
      } else if (strcmp(line, "walk") == 0) {
         SpmiCxHdl top = SpmiPathGetCx(NULL, NULL);
         ncx = nst = 0;
         if (!top) {
            fail();
            continue;
         }
         walk(top, 0);
         printf("ok %ld %ld\n", ncx, nst);
      } else if (strcmp(line, "errors") == 0) {
         errors();
      } else if (strcmp(line, "exit") == 0) {
         SpmiExit();
         printf("ok\n");
      } else {
         printf("err 0 unknown command %s\n", line);
      }
   }
   return 0;
}
