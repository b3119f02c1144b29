/* SPDX-License-Identifier: Apache-2.0 */
/* register.c - registration and its replay after a daemon restart.
 *
 * The daemon never sends anything unasked, so the library needs no thread:
 * before each request it peeks at the socket, and if the daemon has gone it
 * registers again on a new connection (a new generation in the same file,
 * Init, then every live volatile context). A C supplier holds raw pointers
 * into its slots, so each replayed AddCx asks for the slot it had (holes
 * left by SpmiDdsDelCx stay holes). If the new daemon refuses one, the
 * registration is given up: SiShGoAway is set and calls return
 * SiAssumedDead, as after a stamp timeout. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "dds_internal.h"

static int giveup(const struct dds_live *l, int code, uint64_t got)
{
   char why[DDS_MAX_ERRMSG + 1];

   if (code)
      snprintf(why, sizeof why, "refused it: %s", SpmiErrmsg);
   else
      snprintf(why, sizeof why, "gave it the slot at %llu", (unsigned long long)got);
   dds_disconnect();
   __atomic_store_n(&dds_st.hdr->SiShGoAway, 1, __ATOMIC_RELEASE);
   spmi_err(SiAssumedDead, "the daemon restarted; volatile context %s had the slot at %u, "
           "where the supplier writes it, and the new daemon %s: call SpmiExit and start again",
           l->path, l->off, why);
   return SiAssumedDead;
}

int dds_addcx_frame(struct spmi_buf *w, const struct dds_live *l, int replay)
{
   dds_frame_begin(w);
   spmi_put16(w, l->ix);
   spmi_putstr(w, l->path, strlen(l->path));
   spmi_putstr(w, l->descr, strlen(l->descr));
   spmi_put32(w, l->asn);
   if (replay) {
      spmi_put32(w, l->off);
      if (l->off == 0) /* 0 alone means "any" */
         spmi_put32(w, DDS_ADDCX_REPLAY);
   }
   return dds_frame_end(w, DDS_MSG_ADDCX);
}

/* Replays the live contexts, each asking for its slot. The daemon
 * publishes a requested slot as it is: the values, and the supplier's
 * writes during the replay, stay where they are, and no read sees them
 * zeroed. */
static int replay(void)
{
   struct spmi_buf w = {0};
   int rc = 0, lost = 0;

   for (int i = 0; i < dds_st.nlive && !rc; i++) {
      const struct dds_live *l = &dds_st.live[i];
      uint64_t off = 0;

      if (dds_addcx_frame(&w, l, 1) != 0) {
         spmi_err(SiCallocFailed, "out of memory replaying volatile contexts");
         rc = SiCallocFailed;
      } else {
         rc = dds_round_trip(w.b, w.len, -1, &off, &lost);
         if (!lost && (rc || off != l->off))
            rc = giveup(l, rc, off);
      }
   }
   free(w.b);
   if (rc)
      dds_disconnect(); /* consistent: all or nothing, retried later */
   return rc;
}

int dds_register(void)
{
   uint64_t gen, regno;
   int rc, lost;

   gen = dds_new_gen(__atomic_load_n(&dds_st.hdr->SiShGen, __ATOMIC_RELAXED));
   for (int i = 0; i < 8; i++)
      dds_st.init_msg[dds_st.gen_at + i] = (uint8_t)(gen >> (8 * i));
   rc = dds_connect();
   if (rc)
      return rc;
   rc = dds_round_trip(dds_st.init_msg, dds_st.init_len, dds_st.fd, &regno, &lost);
   if (rc) {
      dds_disconnect();
      return rc;
   }
   return replay();
}

int dds_ready(void)
{
   if (!dds_st.inited) {
      spmi_err(SiNotInit, "SpmiDdsInit has not been called, or SpmiExit has");
      return SiNotInit;
   }
   if (dds_st.sock >= 0 && spmi_peer_closed(dds_st.sock))
      dds_disconnect();
   if (__atomic_load_n(&dds_st.hdr->SiShGoAway, __ATOMIC_ACQUIRE)) {
      dds_disconnect();
      spmi_err(SiAssumedDead, "the daemon set SiShGoAway: call SpmiExit");
      return SiAssumedDead;
   }
   return dds_st.sock >= 0 ? 0 : dds_register();
}

int SpmiDdsCheck(void)
{
   int rc;

   pthread_mutex_lock(&spmi_mu);
   spmi_clear_err();
   rc = dds_ready();
   pthread_mutex_unlock(&spmi_mu);
   return rc;
}
