/* SPDX-License-Identifier: Apache-2.0 */
/* init.c - SpmiDdsInit and the supplier's part of SpmiExit: the guide's
 * tables become the Init message (docs/DDS.md §2), the shared file is
 * created, and the supplier registers. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "dds_internal.h"

static int text_ok(const char *s, size_t max, const char *what, int cx, int st)
{
   if (strnlen(s, max + 1) <= max)
      return 1;
   if (st < 0)
      spmi_err(SiBadArgument, "context %d: %s is not NUL-terminated within %zu bytes", cx, what, max + 1);
   else
      spmi_err(SiBadArgument, "context %d: statistic %d: %s is not NUL-terminated within %zu bytes", cx, st, what, max + 1);
   return 0;
}

/* Encodes one cx_create; *end gets the largest offset+size of its stats. */
static int put_cx(struct spmi_buf *w, const cx_create *c, int i, const char *what,
                  int is_tmpl, uint64_t *end)
{
   uint64_t slot = 0;

   *end = 0;
   if (!text_ok(c->path, SI_MAXLNAME - 1, "path", i, -1) ||
       !text_ok(c->descr, SI_MAXLNAME - 1, "description", i, -1))
      return SiBadArgument;
   if (c->num_stats < 0 || (c->num_stats > 0 && !c->stats)) {
      spmi_err(SiBadArgument, "%s %d (%s): %d statistics at %p", what, i, c->path,
              c->num_stats, (const void *)c->stats);
      return SiBadArgument;
   }
   if (c->inst_freq < SiNoInst || c->inst_freq > SiContInst) {
      spmi_err(SiBadArgument, "%s %d (%s): inst_freq %d is not a SiInstFreq", what, i, c->path, c->inst_freq);
      return SiBadArgument;
   }
   for (int j = 0; j < c->num_stats; j++) {
      const struct SpmiRawStat *s = &c->stats[j];
      if (!text_ok(s->name, SI_MAXNAME - 1, "name", i, j) ||
          !text_ok(s->description, SI_MAXLNAME - 1, "description", i, j))
         return SiBadArgument;
      if ((unsigned)s->value_type > SiQuantity || (unsigned)s->data_type > SiUnsign ||
          (unsigned)s->type > SiUnsign || s->offset < 0) {
         spmi_err(SiBadArgument, "%s %d (%s): statistic %s: value_type %d, data_type %d, "
                 "type %d or offset %d out of range", what, i, c->path, s->name,
                 (int)s->value_type, (int)s->data_type, (int)s->type, s->offset);
         return SiBadArgument;
      }
      if ((uint64_t)s->offset + s->size > *end)
         *end = (uint64_t)s->offset + s->size;
   }
   if (is_tmpl) {
      slot = *end > c->datasize ? *end : c->datasize;
      slot = slot < 8 ? 8 : (slot + 7) & ~(uint64_t)7;
      *end = slot;
   }
   spmi_putstr(w, c->path, strlen(c->path));
   spmi_putstr(w, c->descr, strlen(c->descr));
   spmi_put32(w, c->asnno);
   spmi_put32(w, (uint32_t)slot); /* 0 for permanent contexts */
   spmi_put8(w, (uint8_t)c->inst_freq);
   spmi_put32(w, (uint32_t)c->num_stats);
   for (int j = 0; j < c->num_stats; j++) {
      const struct SpmiRawStat *s = &c->stats[j];
      spmi_putstr(w, s->name, strlen(s->name));
      spmi_putstr(w, s->description, strlen(s->description));
      spmi_put64(w, (uint64_t)(int64_t)s->min);
      spmi_put64(w, (uint64_t)(int64_t)s->max);
      spmi_put8(w, (uint8_t)s->value_type);
      spmi_put8(w, (uint8_t)s->data_type);
      spmi_put8(w, (uint8_t)s->type);
      spmi_put32(w, s->asnno);
      spmi_put32(w, s->size);
      spmi_put32(w, (uint32_t)s->offset);
   }
   return 0;
}

int dds_build_init(CONST cx_create *cx, int ncx, CONST cx_create *ix, int nix,
                   const char *file, int size)
{
   struct spmi_buf w = {0};
   uint64_t perm = 0, maxslot = 0, end, area;
   int rc = 0;

   if (!(dds_st.slot_size = calloc(nix > 0 ? (size_t)nix : 1, sizeof *dds_st.slot_size)))
      return SiCallocFailed; /* init_locked says "out of memory" */
   dds_st.ntemplates = nix;
   dds_frame_begin(&w);
   spmi_put16(&w, DDS_PROTO);
   spmi_put16(&w, 0);
   spmi_put32(&w, 0); /* area and permanent lengths: patched below */
   spmi_put32(&w, 0);
   dds_st.gen_at = w.len;
   spmi_put64(&w, 0);
   spmi_putstr(&w, file, strlen(file));
   spmi_put32(&w, (uint32_t)ncx);
   for (int i = 0; i < ncx && !rc; i++) {
      rc = put_cx(&w, &cx[i], i, "context", 0, &end);
      if (end > perm)
         perm = end;
   }
   spmi_put32(&w, (uint32_t)nix);
   for (int i = 0; i < nix && !rc; i++) {
      rc = put_cx(&w, &ix[i], i, "volatile context", 1, &end);
      dds_st.slot_size[i] = (uint32_t)end;
      if (end > maxslot)
         maxslot = end;
   }
   /* The guide: the permanent part holds the last field any permanent
    * statistic references. The area is Size, enlarged so that it holds
    * that and one instance of the largest template. */
   perm = (perm + 7) & ~(uint64_t)7;
   area = ((uint64_t)size + 7) & ~(uint64_t)7;
   if (area < perm + maxslot)
      area = perm + maxslot;
   if (area < 8)
      area = 8;
   if (!rc && area > UINT32_MAX - sizeof(SpmiShare)) {
      spmi_err(SiBadArgument, "data area of %llu bytes is too large", (unsigned long long)area);
      rc = SiBadArgument;
   }
   if (!rc)
      rc = dds_frame_end(&w, DDS_MSG_INIT);
   if (rc) {
      free(w.b);
      return rc;
   }
   dds_st.area_len = (uint32_t)area;
   dds_st.perm_len = (uint32_t)perm;
   for (int i = 0; i < 4; i++) {
      w.b[12 + i] = (uint8_t)(area >> (8 * i));
      w.b[16 + i] = (uint8_t)(perm >> (8 * i));
   }
   dds_st.init_msg = w.b;
   dds_st.init_len = w.len;
   return 0;
}

/* The tables of a registration SpmiExit ended, freed by the next
 * SpmiDdsInit: SpmiExit may run in a signal handler, where free is not
 * safe (a process that exits keeps them reachable). */
static void *parked[4];

static void free_parked(void)
{
   for (int i = 0; i < 4; i++) {
      free(parked[i]);
      parked[i] = NULL;
   }
}

/* Ends the registration: the socket, the mapping and the file (if still
 * ours), and the tables (freed now, or with park left to free_parked). */
static void reset(int park)
{
   void *tables[4] = {dds_st.init_msg, dds_st.slot_size, dds_st.live, dds_st.path};

   dds_disconnect();
   dds_file_close();
   for (int i = 0; i < 4; i++) {
      if (park)
         parked[i] = tables[i];
      else
         free(tables[i]);
   }
   dds_st = (struct dds_state){.fd = -1, .sock = -1};
}

static SpmiShare *init_locked(CONST cx_create *CxTab, int CxCnt, CONST cx_create *IxTab,
                              int IxCnt, CONST char *FileName, int Size)
{
   if (dds_st.inited) {
      spmi_err(SiBadArgument, "SpmiDdsInit: already registered with %s; call SpmiExit first", dds_st.path);
      return NULL;
   }
   free_parked();
   if (!CxTab || CxCnt <= 0 || IxCnt < 0 || (IxCnt > 0 && !IxTab) || IxCnt > 65536 || Size < 0) {
      spmi_err(SiBadArgument, "SpmiDdsInit: bad arguments: %d contexts at %p, %d volatile contexts at %p, size %d",
              CxCnt, (const void *)CxTab, IxCnt, (const void *)IxTab, Size);
      return NULL;
   }
   if (!FileName || FileName[0] != '/' || strlen(FileName) > DDS_MAX_FILE) {
      spmi_err(SiBadArgument, "SpmiDdsInit: file name %s is not an absolute path of at most %d bytes",
              FileName ? FileName : "(null)", DDS_MAX_FILE);
      return NULL;
   }
   if (dds_build_init(CxTab, CxCnt, IxTab, IxCnt, FileName, Size) == 0 &&
       (dds_st.path = strdup(FileName)) != NULL &&
       dds_file_create(FileName, dds_st.area_len, dds_st.perm_len) == 0 &&
       dds_register() == 0) {
      dds_st.inited = 1;
      return dds_st.hdr;
   }
   if (!SpmiErrno)
      spmi_err(SiCallocFailed, "out of memory");
   reset(0);
   return NULL;
}

SpmiShare *SpmiDdsInit(CONST cx_create *CxTab, int CxCnt, CONST cx_create *IxTab,
                       int IxCnt, CONST char *FileName, int Size)
{
   SpmiShare *h;

   pthread_mutex_lock(&spmi_mu);
   spmi_clear_err();
   h = init_locked(CxTab, CxCnt, IxTab, IxCnt, FileName, Size);
   pthread_mutex_unlock(&spmi_mu);
   return h;
}

/* SpmiExit's supplier part (exit.c): sends Exit (best effort: with a lost
 * connection the registration is already gone), retires the mapping
 * (map.c), and unlinks the file if it is still ours. No malloc or free:
 * the guide calls SpmiExit from signal handlers. */
void dds_exit(void)
{
   if (pthread_mutex_lock(&spmi_mu) == EDEADLK) {
      /* A signal handler interrupted our own call: the stream may be in
       * mid-frame and the state in use. Closing the socket unregisters
       * (the daemon drops a supplier at EOF); only async-signal-safe
       * calls here, and the mapping stays for the interrupted code. */
      struct stat st;
      if (dds_st.sock >= 0)
         close(dds_st.sock);
      dds_st.sock = -1;
      if (dds_st.path && dds_st.fd >= 0 && !dds_st.in_place && lstat(dds_st.path, &st) == 0 &&
          st.st_dev == dds_st.dev && st.st_ino == dds_st.ino)
         unlink(dds_st.path);
      return;
   }
   spmi_clear_err();
   if (dds_st.inited) {
      if (dds_st.sock >= 0 && !spmi_peer_closed(dds_st.sock)) {
         /* The Exit frame: its head alone (an empty body). */
         const uint8_t exit_frame[DDS_FRAME_HEAD] = {0, 0, 0, 0, DDS_MSG_EXIT, 0, 0, 0};
         uint64_t v;
         int lost;
         dds_round_trip(exit_frame, sizeof exit_frame, -1, &v, &lost);
      }
      reset(1);
      spmi_clear_err();
   }
   pthread_mutex_unlock(&spmi_mu);
}
