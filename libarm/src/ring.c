/* SPDX-License-Identifier: Apache-2.0 */
/* The shared file: posting records, publishing names, counters. No system
 * call and no lock here: these run on the application's hot path. */
#define _GNU_SOURCE
#include <string.h>

#include "internal.h"

static _Atomic uint64_t *u64(struct ar_ring *r, uint64_t off) { return (_Atomic uint64_t *)(void *)(r->mem + off); }

static uint64_t ring_off(void) { return AR_HDR; }
static uint64_t app_off(struct ar_ring *r) { return ring_off() + (uint64_t)r->slots * AR_REC; }
static uint64_t tran_off(struct ar_ring *r) { return app_off(r) + (uint64_t)r->apps * AR_APP; }
uint64_t ar_ctr_off(struct ar_ring *r, uint32_t i) { return tran_off(r) + (uint64_t)r->trans * AR_TRAN + (uint64_t)i * AR_CTR; }

void ar_add64(struct ar_ring *r, uint64_t off, uint64_t v) { atomic_fetch_add_explicit(u64(r, off), v, memory_order_relaxed); }

/* A bounded number of retries: a corrupt ring never holds the caller. */
#define AR_SPINS 64

int ar_post(struct ar_ring *r, const struct ar_rec *rec)
{
    _Atomic uint64_t *head = u64(r, AR_OFF_HEAD);
    uint64_t pos = atomic_load_explicit(head, memory_order_relaxed);
    for (int i = 0; i < AR_SPINS; i++) {
        unsigned char *slot = r->mem + ring_off() + (pos & (r->slots - 1)) * AR_REC;
        _Atomic uint64_t *seq = (_Atomic uint64_t *)(void *)slot;
        int64_t d = (int64_t)(atomic_load_explicit(seq, memory_order_acquire) - pos);
        if (d == 0) {
            if (atomic_compare_exchange_weak_explicit(head, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed)) {
                memcpy(slot + 8, (const char *)rec + 8, AR_REC - 8);
                atomic_store_explicit(seq, pos + 1, memory_order_release);
                return 1;
            }
        } else if (d < 0) {
            return 0; /* full */
        } else {
            pos = atomic_load_explicit(head, memory_order_relaxed);
        }
    }
    return 0;
}

static void put(char *dst, size_t n, const char *s)
{
    size_t k = strnlen(s, n - 1);
    memcpy(dst, s, k);
    memset(dst + k, 0, n - k);
}

void ar_publish_app(struct ar_ring *r, uint32_t i, const struct ar_app *a)
{
    if (i >= r->apps)
        return;
    struct ar_app_entry *e = (struct ar_app_entry *)(void *)(r->mem + app_off(r) + (uint64_t)i * AR_APP);
    e->id = a->id;
    put(e->key, sizeof e->key, a->key);
    put(e->descr, sizeof e->descr, a->descr);
    atomic_store_explicit((_Atomic uint32_t *)&e->state, 1, memory_order_release);
}

int32_t ar_app_verdict(struct ar_ring *r, uint32_t i)
{
    if (!r || i >= r->apps)
        return 0;
    struct ar_app_entry *e = (struct ar_app_entry *)(void *)(r->mem + app_off(r) + (uint64_t)i * AR_APP);
    return atomic_load_explicit((_Atomic int32_t *)&e->verdict, memory_order_acquire);
}

void ar_publish_tran(struct ar_ring *r, uint32_t i, const struct ar_tran *t)
{
    if (i >= r->trans)
        return;
    struct ar_tran_entry *e = (struct ar_tran_entry *)(void *)(r->mem + tran_off(r) + (uint64_t)i * AR_TRAN);
    e->app = t->app;
    e->id = t->id;
    put(e->key, sizeof e->key, t->key);
    put(e->descr, sizeof e->descr, t->descr);
    put(e->detail, sizeof e->detail, t->detail);
    for (int k = 0; k < 7; k++) {
        e->types[k] = t->types[k];
        put(e->names[k], sizeof e->names[k], t->names[k]);
    }
    atomic_store_explicit((_Atomic uint32_t *)&e->state, 1, memory_order_release);
}

/* ar_bin is armring.Bin: log-linear over microseconds, 8 bins per power
 * of two, exact below 16 us, the last from 2^37 us. */
int ar_bin(uint64_t ns)
{
    uint64_t us = ns / 1000;
    if (us < 16)
        return (int)us;
    int e = 63 - __builtin_clzll(us);
    if (e > 36)
        return AR_BINS - 1;
    return ((e - 3) << 3) + (int)((us >> (e - 3)) & 7) + 8;
}

static void cas_max(_Atomic uint64_t *p, uint64_t v)
{
    uint64_t o = atomic_load_explicit(p, memory_order_relaxed);
    for (int i = 0; i < 16 && o < v; i++)
        if (atomic_compare_exchange_weak_explicit(p, &o, v, memory_order_relaxed, memory_order_relaxed))
            return;
}

/* ar_complete adds a completed instance to transaction i's totals, which
 * the daemon takes (armring.File.Take): the extremes first, then the bin,
 * then the sum of (time + 1), which the daemon reads first. */
void ar_complete(struct ar_ring *r, uint32_t i, int status, uint64_t ns)
{
    uint64_t off = ar_ctr_off(r, i);
    if (status != ARM_GOOD) {
        ar_add64(r, off + (status == ARM_ABORT ? AR_CTR_ABORTED : AR_CTR_FAILED), 1);
        return;
    }
    if (ns > (1ull << 62))
        ns = 1ull << 62;
    cas_max(u64(r, off + AR_CTR_MIN), ~ns);
    cas_max(u64(r, off + AR_CTR_MAX), ns + 1);
    ar_add64(r, off + AR_CTR_BINS + 8 * (uint64_t)ar_bin(ns), 1);
    ar_add64(r, off + AR_CTR_SUM, ns + 1);
    atomic_store_explicit(u64(r, off + AR_CTR_LAST), ns, memory_order_relaxed);
    /* After the sum: the daemon takes these before it (armring.Complete). */
    for (int k = 0; k < AR_THRESHOLDS; k++) {
        uint64_t th = atomic_load_explicit(u64(r, off + AR_CTR_THRESH + 8 * (uint64_t)k), memory_order_relaxed);
        if (th == 0)
            break;
        if (ns > th)
            ar_add64(r, off + AR_CTR_SLOW + 8 * (uint64_t)k, 1);
    }
}

/* ar_untaken counts the completions the daemon of r did not take as lost
 * (it went away). */
void ar_untaken(struct ar_ring *r)
{
    for (uint32_t i = 0; i < ar_g.ntrans && i < r->trans; i++) {
        uint64_t off = ar_ctr_off(r, i);
        uint64_t n = atomic_load(u64(r, off + AR_CTR_ABORTED)) + atomic_load(u64(r, off + AR_CTR_FAILED));
        if (atomic_load(u64(r, off + AR_CTR_SUM)))
            for (int k = 0; k < AR_BINS; k++)
                n += atomic_load(u64(r, off + AR_CTR_BINS + 8 * (uint64_t)k));
        if (n)
            atomic_fetch_add(&ar_g.trans[i].lost, n);
    }
}

static void count(uint64_t off, atomic_uint_fast64_t *local)
{
    struct ar_ring *r = atomic_load_explicit(&ar_g.ring, memory_order_acquire);
    if (r)
        ar_add64(r, off, 1);
    else
        atomic_fetch_add(local, 1);
}

void ar_bad_buffer(void) { count(AR_OFF_BADBUF, &ar_g.badbuf); }
void ar_no_slot(void) { count(AR_OFF_NOSLOT, &ar_g.noslot); }
