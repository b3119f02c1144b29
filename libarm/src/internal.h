/* SPDX-License-Identifier: Apache-2.0 */
/* Internal state of libarm. The file layout mirrors package armring
 * (docs/ARM.md); layout_test.go checks these offsets against it. */
#ifndef ARM_INTERNAL_H
#define ARM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../arm.h"

/* Only arm.h's names are the library's: the rest stay inside libarm.so,
 * and scripts/static-lib.sh makes them local in libarm.a. */
#pragma GCC visibility push(hidden)

/* The shared file. */
#define AR_MAGIC "ARMRING"
#define AR_VERSION 2
#define AR_HDR 256
#define AR_REC 128
#define AR_APP 128
#define AR_TRAN 640
#define AR_BINS 280 /* response-time bins, as armring.Bin */
#define AR_CTR (128 + AR_BINS * 8) /* a transaction's counters and totals */
#define AR_CTR_ABORTED 16
#define AR_CTR_FAILED 24
#define AR_CTR_SUM 32
#define AR_CTR_LAST 40
#define AR_CTR_MIN 48
#define AR_CTR_MAX 56
#define AR_CTR_THRESH 64 /* daemon: latency thresholds (ns) of objectives, 0 ends */
#define AR_CTR_SLOW 96   /* per threshold, good instances slower than it */
#define AR_THRESHOLDS 4
#define AR_CTR_BINS 128
#define AR_OFF_BADBUF 56
#define AR_OFF_NOSLOT 64
#define AR_OFF_HEAD 128
#define AR_OFF_TAIL 192

struct ar_rec {
    uint64_t seq;
    uint32_t tran;
    uint8_t status, flags, mask, pad;
    uint64_t dur;
    uint64_t res1;
    uint32_t ptran, pinst;
    uint16_t pagent, pvendor;
    uint32_t res2;
    uint64_t vals[6];
    char str[32];
};
_Static_assert(sizeof(struct ar_rec) == AR_REC, "record");
_Static_assert(offsetof(struct ar_rec, dur) == 16, "record dur");
_Static_assert(offsetof(struct ar_rec, ptran) == 32, "record parent");
_Static_assert(offsetof(struct ar_rec, vals) == 48, "record values");
_Static_assert(offsetof(struct ar_rec, str) == 96, "record string");

struct ar_app_entry {
    uint32_t state;
    int32_t id;
    int32_t verdict; /* the daemon's: 0 not read yet, 1 registered, AR_REFUSED */
    uint32_t res;
    char key[32];
    char descr[64];
    char res2[16];
};
_Static_assert(sizeof(struct ar_app_entry) == AR_APP, "app entry");
_Static_assert(offsetof(struct ar_app_entry, verdict) == 8, "app verdict");

/* What arm_init and arm_getid return for an application the daemon
 * refused at one of its limits (armring.VerdictRefused). */
#define AR_REFUSED (-5)
/* The byte asking the daemon to read new entries now (armring.ScanNow). */
#define AR_SCAN_NOW 'S'

struct ar_tran_entry {
    uint32_t state;
    uint32_t app;
    int32_t id;
    uint32_t res;
    char key[32];
    char descr[64];
    char detail[128];
    uint32_t types[7];
    uint32_t res2;
    char names[7][44];
    char res3[60];
};
_Static_assert(sizeof(struct ar_tran_entry) == AR_TRAN, "tran entry");
_Static_assert(offsetof(struct ar_tran_entry, types) == 240, "tran types");
_Static_assert(offsetof(struct ar_tran_entry, names) == 272, "tran names");

/* A daemon's file as mapped here; never unmapped (handles may hold it),
 * but replaced by private memory once the daemon is gone (conn.c drop). */
struct ar_ring {
    unsigned char *mem;
    uint64_t len, gen;
    uint32_t slots, apps, trans;
    int sock;
};

/* Limits of one process. */
#define AR_MAX_APPS 64
#define AR_MAX_TRANS 1024
#define AR_IDS 4096 /* id hash table, power of two, > 2 x AR_MAX_TRANS */
#define AR_MAX_INST 16384 /* instances open at once, power of two */
#define AR_NAME 128

struct ar_app {
    int32_t id;
    int uses;
    char key[32], descr[64];
    char name[AR_NAME], user[AR_NAME];
};

struct ar_tran {
    int32_t id;
    uint32_t app;
    atomic_int active;
    atomic_uint_fast64_t lost; /* ended while no daemon was connected */
    char key[32], descr[64], detail[128];
    uint32_t types[7];
    char names[7][44];
    char name[AR_NAME];
};

/* An open instance: state is (generation << 1) | busy. */
struct ar_inst {
    atomic_uint state;
    uint32_t tran;
    struct ar_ring *ring;
    uint64_t t0;
    uint8_t flags, mask;
    uint16_t pagent, pvendor;
    uint32_t ptran, pinst;
    uint64_t first[6], vals[6];
    char str[32];
};

struct ar_global {
    pthread_mutex_t mu;
    int disabled;
    struct ar_app apps[AR_MAX_APPS];
    uint32_t napps;
    struct ar_tran trans[AR_MAX_TRANS];
    uint32_t ntrans;
    atomic_int tids[AR_IDS]; /* tran id; the index is in tidx */
    uint32_t tidx[AR_IDS];
    _Atomic(struct ar_ring *) ring;
    struct ar_inst *inst;
    atomic_uint cursor;
    atomic_uint_fast64_t badbuf, noslot; /* while no daemon is connected */
    int thread;
    FILE *log;
    pthread_mutex_t logmu;
    uint8_t addr[4];
    uint16_t agent; /* the PID, for correlators */
    uint64_t retry_ns; /* ARM_RETRY: between reconnection attempts */
    uint64_t wait_ns;  /* ARM_CONNECT_WAIT: how long arm_init waits for the daemon */
};

/* state.c, the bottom of the library: every file uses it, it uses none. */
extern struct ar_global ar_g;
void ar_setup(void);
int ar_tran_index(int32_t id);
uint64_t ar_now(void);

/* ring.c */
int ar_post(struct ar_ring *r, const struct ar_rec *rec);
void ar_publish_app(struct ar_ring *r, uint32_t i, const struct ar_app *a);
void ar_publish_tran(struct ar_ring *r, uint32_t i, const struct ar_tran *t);
int32_t ar_app_verdict(struct ar_ring *r, uint32_t i);
void ar_add64(struct ar_ring *r, uint64_t off, uint64_t v);
uint64_t ar_ctr_off(struct ar_ring *r, uint32_t i);
void ar_complete(struct ar_ring *r, uint32_t i, int status, uint64_t ns);
int ar_bin(uint64_t ns);
void ar_untaken(struct ar_ring *r);
void ar_bad_buffer(void);
void ar_no_slot(void);

/* conn.c */
#define AR_IO_TIMEOUT 2000000000u /* ns: a registration's exchange, unless waiting longer */
int ar_connect(uint64_t timeout_ns);
void ar_connect_first(uint64_t wait_ns);
void ar_start_thread(void);

/* buffer.c */
int ar_parse_meta(const char *data, int32_t size, struct ar_tran *t);
int ar_parse_values(char *data, int32_t size, struct ar_inst *in, const struct ar_tran *t, int start, int32_t handle);
void ar_key(const char *name, char key[32]);
void ar_text(const char *s, char *out, size_t n);

/* log.c */
void ar_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ar_log_values(const char *call, const struct ar_app *a, const struct ar_tran *t, int32_t handle, const struct ar_inst *in, uint8_t mask);

#pragma GCC visibility pop

#endif
