/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dds_internal.h - the supplier half of libSpmi (spmi_dds.h's SpmiDds*
 * calls): the registration's state, its frames and its shared file.
 * Not installed.
 */
#ifndef DDS_INTERNAL_H
#define DDS_INTERNAL_H

#include "../spmi_internal.h"

#pragma GCC visibility push(hidden)

/* Protocol constants (docs/DDS.md §2). */
#define DDS_PROTO      1
#define DDS_MSG_INIT   1
#define DDS_MSG_ADDCX  2
#define DDS_MSG_DELCX  3
#define DDS_MSG_EXIT   4
#define DDS_REPLY_BIT  0x80
#define DDS_FRAME_HEAD 8
#define DDS_MAX_FILE   4095
#define DDS_MAX_ERRMSG 1023
#define DDS_ADDCX_REPLAY 1         /* AddCx flag: the offset is asked for, even 0 */
#define DDS_HOLD_OFF_NS  1000000u  /* SpmiDdsBegin's longest wait (dds.WriterHoldOff) */

/* One live volatile context: what SpmiDdsAddCx sent, and its slot. */
struct dds_live {
   unsigned short ix;
   char           path[SI_MAXLNAME];
   char           descr[SI_MAXLNAME];
   uint32_t       asn;
   uint32_t       off;   /* slot offset in the data area */
};

/* The one registration of this process. */
struct dds_state {
   int          inited;
   SpmiShare   *hdr;        /* the mapping; the data area follows it */
   size_t       maplen;
   int          fd;         /* the shared file */
   dev_t        dev;        /* to unlink only the file we created */
   ino_t        ino;
   int          in_place;   /* an existing file rewritten: never unlinked */
   char        *path;
   int          sock;       /* -1 while disconnected */
   char         sockpath[4096];
   uint8_t     *init_msg;   /* the Init frame; its generation is patched */
   size_t       init_len;
   size_t       gen_at;     /* offset of the generation in init_msg */
   uint32_t     area_len, perm_len;
   uint32_t    *slot_size;  /* per template */
   int          ntemplates;
   struct dds_live *live;
   int          nlive, caplive;
};

extern struct dds_state dds_st;

/* Frames: spmi_put* into a buffer that starts with the 8-byte head. */
void dds_frame_begin(struct spmi_buf *w);
int  dds_frame_end(struct spmi_buf *w, uint16_t type);

/* Sends a frame (fd attached when >= 0) and reads its reply. On success
 * returns 0 with *value set; otherwise SpmiErrno is set and it returns
 * the code. A lost connection closes dds_st.sock and sets lost. */
int dds_round_trip(const uint8_t *frame, size_t len, int fd, uint64_t *value, int *lost);

/* The registration socket (wire.c): connect, close. */
int  dds_connect(void);
void dds_disconnect(void);

/* Shared file. */
int      dds_file_create(const char *path, uint32_t area_len, uint32_t perm_len);
void     dds_file_close(void); /* unmaps; removes the file if still ours */
uint64_t dds_new_gen(uint64_t old);

/* The mapping batches hold (map.c), from the outermost SpmiDdsBegin to
 * its SpmiDdsEnd; file.c publishes and retires it. */
SpmiShare *dds_map_hold(void);
void       dds_map_release(void);
void       dds_map_publish(SpmiShare *h);
void       dds_map_retire(SpmiShare *h, size_t len);

/* Init message from the guide's tables; 0 or an SPMI code. */
int dds_build_init(CONST cx_create *cx, int ncx, CONST cx_create *ix, int nix,
                   const char *file, int size);

/* Registers (Init, then every live AddCx again); 0 or an SPMI code. */
int dds_register(void);
/* Builds the AddCx frame of l into w; with replay it asks for the slot at
 * l->off (the daemon publishes it as it is), else the daemon chooses; 0 or
 * an SPMI code. */
int dds_addcx_frame(struct spmi_buf *w, const struct dds_live *l, int replay);
/* Reconnects when the daemon went away; 0 when registered. */
int dds_ready(void);

#pragma GCC visibility pop

#endif /* DDS_INTERNAL_H */
