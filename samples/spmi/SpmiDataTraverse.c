/* The guide's "Example of an SPMI Data Traversal Program", with the
 * typesetting damage repaired: the lines the typesetting lost are put
 * back (the end of the statistics loop, SpmiNextStat, and lststats'
 * SpmiPathGetCx of Top and call of findstats), the runs of blanks it
 * collapsed are restored, and the AIX idiom of reading the empty string
 * at address 0 (strcmp(subcxt,NULL), strcpy(subcxt,NULL), subcxt[i] =
 * NULL) reads "" instead, since address 0 is not readable on Linux. The
 * rest is as the guide has it, K&R-era C included: the Makefile compiles
 * it as gnu89. <sys/Spmidef.h> is libspmi/include/sys/Spmidef.h (it declares
 * the string functions the program uses); link with libSpmi. */
#include <sys/types.h>

#include <sys/errno.h>

#include <stdio.h>

#include <sys/Spmidef.h>
extern char         SpmiErrmsg[];       /* Error Msg array */
char                stats[256];         /* statistic name info */
char                cxt[256];           /* context name info */
char                subcxt[256];        /* text holder */
char                *blanks="                                        ";  /* blanks for text */
char                *blank2="    ";
int                 instantiable=0;
/*======================= findstats() =========================*/
/* findstats is a function that traverses recursively down a
 * context link.  When the end of the context link is found,
 * findstats traverses down the statistics links and writes the
 * statistic name to stdout.  findstats is originally passed the
 * context handle for the TOP context.
 */
/*============================================================*/
void findstats(SpmiCxHdl cxhdl)
{
   struct SpmiCxLink   *cxlink;
   struct SpmiStatLink *statlink;
   struct SpmiCx       *spmicx, *spmicxparent;
   struct SpmiStat     *spmistat;
   char                *statname;
   char                num_string[30];
   int                 cxtlen1, cxtlen2, descplace;
   /* Get first context */
   if (cxlink = SpmiFirstCx(cxhdl))
   {
      while (cxlink)
      {
         /* output context name */
         spmicx = SpmiGetCx(cxlink->
context);
         /* if the subcxt is a child of another context */
         if (strcmp(subcxt,""))
         {
            strcat(subcxt,"/");
            strcat(subcxt,spmicx->
name);
         }
         else
            strcpy(subcxt,spmicx->
name);
         cxtlen1 = strlen(spmicx->
name);
         cxtlen2 = strlen(subcxt);
         /* determine if the context's parent is instantiable */
         /* because we don't want to have to print stats twice */
         spmicxparent = SpmiGetCx(spmicx->
parent);
         if ( spmicxparent->
inst_freq == SiContInst )
         {
            instantiable++;
         }
         else
            instantiable = 0;
         /* only want to print out the stats for any contexts */
         /* whose parents aren't instantiable.  If the parent */
         /* is instantiable then you only want to print out   */
         /* the stats for the first instance of that parent. */
         if (instantiable <= 1)
         {
            strcpy(cxt,subcxt);
            if (!instantiable)
            {
               if (cxtlen1 == cxtlen2)
                  descplace = 30 - cxtlen2;
               else
                  descplace = 35 - cxtlen2;
               strncat(cxt,blanks,descplace);
               strcat(cxt,spmicx->
description);
            }
            fprintf(stdout,"%s\n",cxt);
            /* Traverse the stats list for the context */
            if (statlink = SpmiFirstStat(cxlink->
context))
            {
               while (statlink)
               {
                  spmistat = SpmiGetStat(statlink->
stat);
                  statname = SpmiStatGetPath(cxlink->
context,
                  statlink->
stat, 10);
                  /* output statistic name */
                  strcpy(stats,statname);
                  descplace = strlen(stats);
                  descplace = 40 - descplace;
                  strncat(stats,blanks,descplace);
                  strcat(stats,spmistat->
description);
                  fprintf(stdout, "%s\n",stats);
                  /* output stat info */
                  strcpy(stats,"Data Type(");
                  if (spmistat->
data_type == SiLong)
                     strcat(stats,"Long) ");
                  else
                     strcat(stats,"Float)");
                  strcat(stats,"  Value Type(");
                  if (spmistat->
value_type == SiCounter)
                     strcat(stats,"Counter)");
                  else
                     strcat(stats,"Quantity)");
                  fprintf(stdout, "%s%s\n",blank2,stats);
                  /* Go to next statistic */
                  statlink = SpmiNextStat(statlink);
               }  /* end while(statlink) */
            }  /* end if (statlink) */
         }
         /* recursive call to function */
         /* this gets the next context link */
         findstats(cxlink->
context);
         if (cxtlen2 == cxtlen1)
           strcpy(subcxt,"");
         else
            subcxt[cxtlen2-cxtlen1-1] = '\0';
         /* Go to next context */
         cxlink = SpmiNextCx(cxlink);
      }  /* end while(cxlink) */
   }  /* end if (cxlink) */
   return;
}
/*========================= lststats() ========================*/
/* lststats gets the TOP context handle.  This handle is then
 * passed to the findstats routine
 */
/*=============================================================*/
void lststats()
{
   SpmiCxHdl      cxhdl;
   /* Get the handle for the Top context */
   cxhdl = SpmiPathGetCx(NULL, NULL);
   /* Traverse the context and statistic links from Top */
   findstats(cxhdl);
   return;
}
/*============================  main()  =======================*/
main(int argc, char **argv)
{
   int    spmierr=0;
   /* Initialize SPMI interface */
   if ((spmierr = SpmiInit(15)) != 0)
   {
      fprintf(stderr, "Unable to initialize SPMI interface\n");
      fprintf(stderr, "%s", SpmiErrmsg);
      exit(-98);
   }
   /* Traversal routine. */
   lststats();

   /* Exit SPMI Interface */
   SpmiExit();
   if (strlen(SpmiErrmsg))
      fprintf(stderr, "%s", SpmiErrmsg);
   exit(0);
}
