/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_exit.c - the consumer part of SpmiExit (exit.c): closes the
 * connection and frees every handle and set. The top of the consumer
 * half: it calls each layer's free, and nothing calls it but exit.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include "cons_internal.h"

void cons_exit(void)
{
   if (pthread_mutex_lock(&spmi_mu) == EDEADLK) {
      /* From a signal handler inside one of our calls: only close. */
      if (cons_st.sock >= 0)
         close(cons_st.sock);
      cons_st.sock = -1;
      return;
   }
   if (cons_st.inited) {
      cons_statsets_free();
      cons_hotsets_free();
      cons_tree_free();
      cons_handles_free();
      cons_close();
   }
   pthread_mutex_unlock(&spmi_mu);
}
