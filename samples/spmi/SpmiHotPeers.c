/* SPDX-License-Identifier: Apache-2.0 */
/* A hotset sample: the peers of a statistic below a context, read every
 * second (the guide's SpmiCreateHotSet, SpmiAddSetHot, SpmiGetHotSet and
 * SpmiNextHotItem), e.g.
 *
 *    SpmiHotPeers CPU idle 3      # CPU/ * /idle, three readings
 *    SpmiHotPeers Disk busy 0     # until interrupted
 *
 * Counters are compared as rates per second, so the first reading has no
 * values for them. Each line: reading, grandparent path, peer, value.
 * Link with libSpmi. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/Spmidef.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
   (void)sig;
   stop = 1;
}

int main(int argc, char **argv)
{
   const char *gp = argc > 1 ? argv[1] : "CPU", *stat = argc > 2 ? argv[2] : "idle";
   int reads = argc > 3 ? atoi(argv[3]) : 3;
   struct SpmiHotSet *hs;
   struct SpmiHotVals *hv;
   SpmiCxHdl cx;

   if (SpmiInit(15) != 0) {
      fprintf(stderr, "SpmiInit: %s\n", SpmiErrmsg);
      return 1;
   }
   signal(SIGINT, on_signal);
   signal(SIGTERM, on_signal);
   if (!(cx = SpmiPathGetCx(gp, NULL)) || !(hs = SpmiCreateHotSet()) ||
       !SpmiAddSetHot(hs, stat, cx, 32767, 0, 0, SiHotAlways, SiHotNoException, 0, 0)) {
      fprintf(stderr, "%s/*/%s: %d %s\n", gp, stat, SpmiErrno, SpmiErrmsg);
      SpmiExit();
      return 1;
   }
   for (int n = 1; !stop && (reads == 0 || n <= reads); n++) {
      int i = 0;
      float value;
      char *name;

      if (SpmiGetHotSet(hs, TRUE) != 0) {
         /* e.g. the daemon restarting: the next reading tries again */
         printf("%d error %d %s\n", n, SpmiErrno, SpmiErrmsg);
      } else {
         printf("%d reading after %ld.%06lds\n", n, (long)hs->time_change.tv_sec, (long)hs->time_change.tv_usec);
         hv = NULL;
         while ((hv = SpmiNextHotItem(hs, hv, &i, &value, &name)) != NULL)
            printf("%d %s %s %.2f\n", n, hv->path, name, value);
      }
      fflush(stdout);
      if (reads == 0 || n < reads)
         sleep(1);
   }
   SpmiFreeHotSet(hs);
   SpmiExit();
   return 0;
}
