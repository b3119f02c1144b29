/* SPDX-License-Identifier: Apache-2.0 */
/* volatile.c - SpmiDdsAddCx and SpmiDdsDelCx. The daemon allocates the
 * slots; the library remembers each live context (for SpmiDdsDelCx and
 * for the replay after a daemon restart), in slot order. */
#define _GNU_SOURCE
#include <string.h>
#include "dds_internal.h"

static char *area(void) { return (char *)dds_st.hdr + sizeof(SpmiShare); }

/* Sends the frame in w (built: 0, or the code its building failed with)
 * and frees it, reconnecting once if the connection was found lost while
 * sending: the daemon may have restarted since the last peek. */
static int request(struct spmi_buf *w, int built, uint64_t *v)
{
   int lost, rc = built;

   if (!rc && !(rc = dds_ready())) {
      rc = dds_round_trip(w->b, w->len, -1, v, &lost);
      if (rc && lost && dds_ready() == 0)
         rc = dds_round_trip(w->b, w->len, -1, v, &lost);
   }
   free(w->b);
   return rc;
}

static int remember(const struct dds_live *l)
{
   int i;

   if (dds_st.nlive == dds_st.caplive) {
      int cap = dds_st.caplive ? 2 * dds_st.caplive : 16;
      struct dds_live *p = realloc(dds_st.live, (size_t)cap * sizeof *p);
      if (!p)
         return -1;
      dds_st.live = p;
      dds_st.caplive = cap;
   }
   for (i = dds_st.nlive; i > 0 && dds_st.live[i - 1].off > l->off; i--)
      dds_st.live[i] = dds_st.live[i - 1];
   dds_st.live[i] = *l;
   dds_st.nlive++;
   return 0;
}

static char *add_locked(unsigned short Ix, CONST char *Path, CONST char *Descr, int Asnno)
{
   struct dds_live l = {.ix = Ix, .asn = (uint32_t)Asnno};
   struct spmi_buf w = {0};
   uint64_t off;

   if (!dds_st.inited) {
      spmi_err(SiNotInit, "SpmiDdsAddCx: SpmiDdsInit has not been called, or SpmiExit has");
      return NULL;
   }
   if (!Descr)
      Descr = "";
   if (!Path || strlen(Path) >= SI_MAXLNAME || strlen(Descr) >= SI_MAXLNAME || Asnno < 0) {
      spmi_err(SiBadArgument, "SpmiDdsAddCx: path %s, description or ASN.1 number %d invalid "
              "(at most %d bytes each, number not negative)", Path ? Path : "(null)", Asnno, SI_MAXLNAME - 1);
      return NULL;
   }
   if (Ix >= dds_st.ntemplates) {
      spmi_err(SiBadArgument, "SpmiDdsAddCx %s: ix %u, the volatile context table has %d entries",
              Path, Ix, dds_st.ntemplates);
      return NULL;
   }
   strcpy(l.path, Path);
   strcpy(l.descr, Descr);
   if (request(&w, dds_addcx_frame(&w, &l, 0), &off))
      return NULL;
   if (off < dds_st.perm_len || off % 8 || off + dds_st.slot_size[Ix] > dds_st.area_len) {
      spmi_err(SiShmemFailed, "SpmiDdsAddCx %s: the daemon returned slot offset %llu, outside the volatile part",
              Path, (unsigned long long)off);
      return NULL;
   }
   l.off = (uint32_t)off;
   if (remember(&l) < 0) {
      spmi_err(SiCallocFailed, "SpmiDdsAddCx %s: out of memory", Path);
      return NULL;
   }
   return area() + off;
}

char *SpmiDdsAddCx(unsigned short Ix, CONST char *Path, CONST char *Descr, int Asnno)
{
   char *p;

   pthread_mutex_lock(&spmi_mu);
   spmi_clear_err();
   p = add_locked(Ix, Path, Descr, Asnno);
   pthread_mutex_unlock(&spmi_mu);
   return p;
}

static int del_locked(char *Area)
{
   struct spmi_buf w = {0};
   uint64_t v;
   int i, rc;

   if (!dds_st.inited) {
      spmi_err(SiNotInit, "SpmiDdsDelCx: SpmiDdsInit has not been called, or SpmiExit has");
      return SiNotInit;
   }
   for (i = 0; i < dds_st.nlive; i++)
      if (area() + dds_st.live[i].off == Area)
         break;
   if (i == dds_st.nlive) {
      spmi_err(SiBadArgument, "SpmiDdsDelCx: %p is not the data area of a live volatile context "
              "(SpmiDdsAddCx returns it)", (void *)Area);
      return SiBadArgument;
   }
   dds_frame_begin(&w);
   spmi_put32(&w, dds_st.live[i].off);
   if ((rc = request(&w, dds_frame_end(&w, DDS_MSG_DELCX), &v)))
      return rc;
   memmove(&dds_st.live[i], &dds_st.live[i + 1], (size_t)(dds_st.nlive - i - 1) * sizeof *dds_st.live);
   dds_st.nlive--;
   return 0;
}

int SpmiDdsDelCx(char *Area)
{
   int rc;

   pthread_mutex_lock(&spmi_mu);
   spmi_clear_err();
   rc = del_locked(Area);
   pthread_mutex_unlock(&spmi_mu);
   return rc;
}
