/*****************************************************************************/
/* sample.c - the ARM 2.0 SDK's sample program, as the SDK guide prints it   */
/* (K&R style included); it builds against our arm.h unchanged. Ours alone: */
/* banner(), which says on stderr what the program does and where to look.   */
/*****************************************************************************/
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "arm.h"
/* The SDK's sample prints nothing and runs until killed: say so first. */
void banner()
{
   const char *d = getenv("SUBAGENT_RUN_DIR");
   fprintf(stderr, "arm-sample: the ARM 2.0 SDK's sample: a 1-second Sample_transaction, again and again, until killed\n");
   if (d && *d)
      fprintf(stderr, "arm-sample: libarm looks for the subagent daemon at %s/arm.sock", d);
   else if (getuid() == 0)
      fprintf(stderr, "arm-sample: libarm looks for the subagent daemon at /run/subagent/arm.sock");
   else
      fprintf(stderr, "arm-sample: libarm looks for the subagent daemon at $XDG_RUNTIME_DIR/subagent/arm.sock, then /run/subagent/arm.sock");
   fprintf(stderr, " (no daemon there: it measures nothing, silently)\n");
   fprintf(stderr, "arm-sample: see it: subagent get RTime/ARM/ARMsampleprogram/Sample_transaction/count; ARM_LOGFILE=/dev/stderr logs each call\n");
}
int32 appl_id = -1; /* Unique indentifer for the application */
int32 tran_id = -1; /* Unique identifier for the transaction */
void init()
{
   appl_id = arm_init("ARM sample program", /* application name */
                      "*", /* use default user */
                      0,0,0);
   if (appl_id < 0)
      printf("ARM sample program not registered.\n");
   tran_id = arm_getid(appl_id, /* application id from arm_init */
                       "Sample_transaction", /* transaction name */
                       "First Transaction in Sample program",
                       0,0,0);
   if (tran_id < 0)
      printf("Sample_transaction is not registered.\n");
} /* init */
void transaction()
{
   int32 tran_handle;
   tran_handle = arm_start(tran_id, /* transaction id from arm_getid */
                           0,0,0);
   /*********************************************/
   /* Perform actual transaction processing here*/
   /*********************************************/
   sleep(1);
   arm_stop(tran_handle, /* transaction handle from arm_start */
            ARM_GOOD, /* successful completion define = 0 */
            0,0,0);
   return;
} /* transaction */
main()
{
   int continue_processing = 1;
   banner();
   init();
   while (continue_processing)
   {
      transaction();
   }
   arm_end(appl_id, /* application id from arm_init */
           0,0,0);
   return(0);
}
