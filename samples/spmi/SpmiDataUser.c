/* The guide's "Example of an SPMI Data User Program", with the typesetting
 * damage repaired and nothing else changed: string literals that the
 * typesetting broke over two lines are joined, and "Spmivalue" is the
 * spmivalue the program declares. It keeps its K&R-era C (an implicit-int
 * main, unprototyped signal handlers): the Makefile compiles it as gnu89.
 * <sys/Spmidef.h> is libspmi/include/sys/Spmidef.h; link with libSpmi. */
/*  The following statistics are added by the SpmiPathAddSetStat
 *  subroutine to form a set of statistics:
 *     CPU/cpu0/kern
 *     CPU/cpu0/idle
 *     Mem/Real/%free
 *     PagSp/%free
 *     Proc/runque
 *     Proc/swpque
 *  These statistics are then retrieved every 2 seconds and their
 *  value is displayed to the user.
 */
#include <sys/types.h>

#include <sys/errno.h>

#include <signal.h>

#include <stdio.h>

#include <sys/Spmidef.h>
#define TIME_DELAY 2            /* time between samplings */
extern char   SpmiErrmsg[];     /* Spmi Error message array */
extern int    SpmiErrno;        /* Spmi Error indicator */
struct SpmiStatSet *statset;    /* statistics set */
/*====================== must_exit() ==========================*/
/* This subroutine is called when the program is ready to exit.
 * It frees any statsets that were defined and exits the
 * interface.
 */
/*=============================================================*/
void must_exit()
{
    /* free statsets */
    if (statset)
    if (SpmiFreeStatSet(statset))
       if (SpmiErrno)
       printf("%s", SpmiErrmsg);
    /* exit SPMI */
    SpmiExit();
    if (SpmiErrno)
       printf("%s", SpmiErrmsg);
    exit(0);
}
/*======================== getstats() =========================*/
/* getstats() traverses the set of statistics and outputs the
 * statistics values.
 */
/*=============================================================*/
void getstats()
{
    int                  counter=20;    /* every 20 lines output
                                         * the header
                                         */
    struct SpmiStatVals   *statval1;
    float                 spmivalue;
    /* loop until a stop signal is received. */
    while (1)
    {
       if(counter == 20)
       {
          /* output header info */
          /* The statistics are displayed in reverse order of how
           * they were entered into the set of statistics.
           */
          printf("\nCPU/cpu0   CPU/cpu0  Mem/Real   PagSp     ");
          printf("Proc       Proc\n");
          printf("    kern       idle    %%free     %%free    ");
          printf("runque     swpque\n");
          printf("============================================");
          printf("===============\n");
          counter=0;
       }
       /* retrieve set of statistics */
       if (SpmiGetStatSet(statset, TRUE) != 0)
       {
          printf("SpmiGetStatSet failed.\n");
          if (SpmiErrno)
             printf("%s", SpmiErrmsg);
          must_exit();
       }
       /* retrieve first statistic */
       statval1 = SpmiFirstVals(statset);
       if (statval1 == NULL)
       {
          printf("SpmiFirstVals Failed\n");
          if (SpmiErrno)
             printf("%s", SpmiErrmsg);
          must_exit();
       }
       /* traverse the set of statistics */
       while (statval1 != NULL)
       {
          /* value to be displayed */
          spmivalue = SpmiGetValue(statset, statval1);
          if (spmivalue < 0.0)
          {
             printf("SpmiGetValue Failed\n");
             if (SpmiErrno)
                printf("%s", SpmiErrmsg);
             must_exit();
          }
          printf("  %6.2f   ",spmivalue);
          statval1 = SpmiNextVals(statset, statval1);
       }  /* end while (statval1) */
       printf("\n");

       counter++;
       sleep(TIME_DELAY);
    }
    return;
}
/*======================== addstats() =========================*/
/* addstats() adds statistics to the statistics set. */
/* addstats() also takes advantage of the different ways a
 * statistic may be added to the set.
 */
/*=============================================================*/
void addstats()
{
    SpmiCxHdl   cxhdl, parenthdl;
    /* initialize the statistics set */
    statset = SpmiCreateStatSet();
    if (statset == NULL)
    {
       printf("SpmiCreateStatSet Failed\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    /* Pass SpmiPathGetCx the fully qualified path name of the
     * context
     */
    if (!(cxhdl = SpmiPathGetCx("Proc", NULL)))
    {
       printf("SpmiPathGetCx failed for Proc context.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    /* Pass SpmiPathAddSetStat the name of the statistic */
    /* & the handle of the parent */
    if (!SpmiPathAddSetStat(statset,"swpque", cxhdl))
    {
       printf("SpmiPathAddSetStat failed for Proc/swpque statistic.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    if (!SpmiPathAddSetStat(statset,"runque", cxhdl))
    {
       printf("SpmiPathAddSetStat failed for Proc/runque statistic.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    /* Pass SpmiPathAddSetStat the fully qualified name of the
     * statistic
     */
    if (!SpmiPathAddSetStat(statset,"PagSp/%free", NULL))
    {
       printf("SpmiPathAddSetStat failed for PagSp/%%free statistic.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    if (!(parenthdl = SpmiPathGetCx("Mem", NULL)))
    {
       printf("SpmiPathGetCx failed for Mem context.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    /* Pass SpmiPathGetCx the name of the context */
    /* & the handle of the parent context */
    if (!(cxhdl = SpmiPathGetCx("Real", parenthdl)))
    {
       printf("SpmiPathGetCx failed for Mem/Real context.\n");
       if (SpmiErrmsg)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    if (!SpmiPathAddSetStat(statset,"%free", cxhdl))
    {
       printf("SpmiPathAddSetStat failed for Mem/Real/%%free statistic.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    /* Pass SpmiPathGetCx the fully qualified path name of the
     * context
     */
    if (!(cxhdl = SpmiPathGetCx("CPU/cpu0", NULL)))
    {
       printf("SpmiPathGetCx failed for CPU/cpu0 context.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    if (!SpmiPathAddSetStat(statset,"idle", cxhdl))
    {
       printf("SpmiPathAddSetStat failed for CPU/cpu0/idle statistic.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    if (!SpmiPathAddSetStat(statset,"kern", cxhdl))
    {
       printf("SpmiPathAddSetStat failed for CPU/cpu0/kern statistic.\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       must_exit();
    }
    return;
}
/*=============================================================*/
main(int argc, char **argv)
{
    int   spmierr=0;
    /* Initialize SPMI */
    if ((spmierr = SpmiInit(15)) != 0)
    {
       printf("Unable to initialize SPMI interface\n");
       if (SpmiErrno)
          printf("%s", SpmiErrmsg);
       exit(-98);
    }
    /* set up interrupt signals */
    signal(SIGINT,must_exit);
    signal(SIGTERM,must_exit);
    signal(SIGSEGV,must_exit);
    signal(SIGQUIT,must_exit);

    /* Go to statistics routines. */
    addstats();
    getstats();

    /* Exit SPMI */
    must_exit();
}
