/* The guide's "Entire Program" for permanent extensions (SpmiSupl1.c), with
 * the typesetting damage repaired, <sys/Spmidef.h> replaced by "spmi_dds.h"
 * and the non-AIX sixth argument of SpmiDdsInit. Compiled by layout_test.go
 * to show the header accepts a supplier written to the guide. */
#include <stdio.h>
#include <sys/signal.h>
#include <sys/types.h>
#include <netinet/in.h>
#include "spmi_dds.h"
extern char  SpmiErrmsg[];
struct dat
{
   u_long      a;
   u_long      b;
   u_long      c;
   u_long      d;
};
static const struct SpmiRawStat PUStats[] = {
{ "gadgets", "Fake counter value", 0, 100, SiCounter,
   SiLong, 1, SZ_OFF(dat, a, SiULong)},
{ "widgets", "Another fake counter value", 0, 100,
SiCounter,
   SiLong, 2, SZ_OFF(dat, b, SiULong)},
};
static const struct SpmiRawStat FakeMemStats[] = {
{ "level", "Fake quantity value", 0, 100, SiQuantity,
   SiLong, 1, SZ_OFF(dat, c, SiULong)},
{ "queue", "Another fake quantity value", 0, 100,
SiQuantity,
   SiLong, 2, SZ_OFF(dat, d, SiULong)},
};
static const cx_create cx_table[] = {
{"DDS/IBM", "IBM-defined Dynamic Data-Suppliers", 2, 0,
   NULL, 0, NULL, 0, NULL, SiNoInst},
{"DDS/IBM/Test", "Bogus Context Number 1", 220, 0,
   PUStats, STAT_L(PUStats), NULL, 0, NULL, SiNoInst},
{"DDS/IBM/Moretest", "Bogus Context Number 2", 221, 0,
   NULL, 0, NULL, 0, NULL, SiNoInst},
{"DDS/IBM/Moretest/SubTest", "Bogus Context Number 3", 222,
0,
   FakeMemStats, STAT_L(FakeMemStats), NULL, 0, NULL, SiNoInst},
};
static int  CxCount = CX_L(cx_table); /* Count of contexts defined */
static SpmiShare *dataarea = NULL;    /* Shared memory pointer  */
static struct dat *d = NULL;          /* Pointer to stats data area */
void SpmiStopMe()
{
   dataarea = NULL;
   SpmiExit();
   exit(0);
}

void main()
{
   dataarea = SpmiDdsInit(cx_table, CxCount, NULL, 0,
"/etc/SpmiSul1SHM", 4096);
   if (!dataarea)
   {
      printf("%s", SpmiErrmsg);
      exit(-1);
   }

   d = (struct dat *)&dataarea->SiShArea[0];
   signal(SIGTERM, SpmiStopMe);
   signal(SIGHUP, SpmiStopMe);
   signal(SIGINT, SpmiStopMe);
   signal(SIGSEGV, SpmiStopMe);

   gettimeofday(&dataarea->SiShT, NULL);
   d->a = 22;
   d->b = 42;
   d->c = 28;
   d->d = 62;


while(!dataarea->SiShGoAway)
{
   usleep(499000);
   gettimeofday(&dataarea->SiShT, NULL);
   d->a += dataarea->SiShT.tv_sec & 0xff;
   d->b += dataarea->SiShT.tv_sec & 0xf;
   d->c += (dataarea->SiShT.tv_sec & 0x20f) & 0xffff;
   d->d += (dataarea->SiShT.tv_sec & 0x7f) & 0xffff;
 }
 SpmiStopMe();
}
