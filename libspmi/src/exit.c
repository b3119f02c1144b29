/* SPDX-License-Identifier: Apache-2.0 */
/* exit.c - SpmiExit ends both roles of a process: the consumer's
 * connection (SpmiInit), then the supplier's registration (SpmiDdsInit).
 * The one place above both halves; neither half calls the other. */
#include <errno.h>
#include "spmi_internal.h"

void SpmiExit(void)
{
   /* The guide calls it from signal handlers: the interrupted code's
    * errno is left as it was. */
   int e = errno;

   cons_exit();
   dds_exit();
   errno = e;
}
