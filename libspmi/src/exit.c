/* SPDX-License-Identifier: Apache-2.0 */
/* exit.c - SpmiExit ends both roles of a process: the consumer's
 * connection (SpmiInit), then the supplier's registration (SpmiDdsInit).
 * The one place above both halves; neither half calls the other. */
#include "spmi_internal.h"

void SpmiExit(void)
{
   cons_exit();
   dds_exit();
}
