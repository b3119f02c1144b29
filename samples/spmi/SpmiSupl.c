/* The guide's volatile-extension sample (SpmiSupl.c), assembled from its
 * fragments onto SpmiSupl1.c, with "spmi_dds.h" in place of <sys/Spmidef.h>
 * and the non-AIX sixth argument of SpmiDdsInit; struct inst is declared
 * before the table that uses it, and the source type of its float field is
 * SiFloat (the guide's SiLong reads the float's bits as an integer). */
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
static CONST struct SpmiRawStat PUStats[] = {
{ "gadgets", "Fake counter value", 0, 100, SiCounter,
   SiLong, 1, SZ_OFF(dat, a, SiULong), NULL},
{ "widgets", "Another fake counter value", 0, 100,
SiCounter,
   SiLong, 2, SZ_OFF(dat, b, SiULong), NULL},
};
static CONST struct SpmiRawStat FakeMemStats[] = {
{ "level", "Fake quantity value", 0, 100, SiQuantity,
   SiLong, 1, SZ_OFF(dat, c, SiULong)},
{ "queue", "Another fake quantity value", 0, 100,
SiQuantity,
   SiLong, 2, SZ_OFF(dat, d, SiULong)},
};
static CONST cx_create cx_table[] = {
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
struct inst
{
   float  a;
   u_long  b;
};

static CONST struct SpmiRawStat InstStats[] = {
{ "problems", "Fake counter value", 0, 100, SiCounter,
   SiLong, 1, SZ_OFF(inst, a, SiFloat)},
{ "solutions", "Another fake counter value", 0, 100,
SiCounter,
   SiLong, 2, SZ_OFF(inst, b, SiLong)} };
static CONST cx_create inst_table[] = {
{"DDS/IBM/Moretest/INST1", "Instantiable Context Number 1",
215, 0,
   InstStats, STAT_L(InstStats), NULL, 0, NULL, SiNoInst}
};
int   InstCount = CX_L(inst_table); /* Count of contexts defined */
struct inst *pt1 = NULL;           /* Pointer to stats data area */
static int  CxCount = CX_L(cx_table); /* Count of contexts defined */
static SpmiShare *dataarea = NULL;    /* Shared memory pointer  */
static struct dat *d = NULL;          /* Pointer to stats data area */
void SpmiStopMe()
{
   dataarea = NULL;
   SpmiExit();
   exit(0);
}

int main()
{
   int i;

   dataarea = SpmiDdsInit(cx_table, CxCount, inst_table, InstCount,
"/etc/SpmiSupl_hook", 65536);
   if (!dataarea)
   {
      fprintf(stderr, "%s\n", SpmiErrmsg);
      exit(-1);
   }
   d = (struct dat *)&dataarea->SiShArea[0];
   signal(SIGTERM, SpmiStopMe);
   signal(SIGHUP, SpmiStopMe);
   signal(SIGINT, SpmiStopMe);
   signal(SIGSEGV, SpmiStopMe);

while(!dataarea->SiShGoAway)
{
   if (dataarea->SiShSubscrib)
      usleep(dataarea->SiShInterval * 1000);
   else
      sleep(5);
   gettimeofday(&dataarea->SiShT, NULL);
   d->a = 1;
   d->b = 2;
   d->c = 3;
   d->d = 4;
   if (((dataarea->SiShT.tv_sec % 59) == 0) && (!pt1))
   {
      if (!(pt1 = (struct inst *)SpmiDdsAddCx(0,
"DDS/IBM/Moretest/Bingo",
           "Dynamically added", 1)))
         fprintf(stderr, "Add failed: \"%s\"\n",
SpmiErrmsg);
   }
   if (((dataarea->SiShT.tv_sec % 120) == 0) && (pt1))
   {
      if ((i = SpmiDdsDelCx((char *)pt1)))
         fprintf(stderr, "Delete failed: \"%s\"\n",
SpmiErrmsg);
      else
         pt1 = NULL;
   }
   if (pt1)
   {
      pt1->a = 5;
      pt1->b = 6;
   }
}
SpmiStopMe();
return 0;
}
