/* SPDX-License-Identifier: Apache-2.0 */
/* arm_start, arm_update and arm_stop: no lock and no system call besides
 * reading the clock (and writing the log when ARM_LOGFILE asks for it). */
#include <string.h>

#include "internal.h"

static struct ar_inst *inst_of(int32_t handle, unsigned *state)
{
    uint32_t i = (uint32_t)handle & 0xffff, gen = (uint32_t)handle >> 16;
    if (i >= AR_MAX_INST || !ar_g.inst)
        return NULL;
    struct ar_inst *in = &ar_g.inst[i];
    unsigned s = atomic_load_explicit(&in->state, memory_order_acquire);
    if (!(s & 1) || ((s >> 1) % 32767) + 1 != gen)
        return NULL;
    *state = s;
    return in;
}

arm_start_handle_t ARM_API arm_start(arm_tran_id_t tran_id, arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size)
{
    (void)flags;
    ar_setup();
    if (ar_g.disabled)
        return 0;
    if (tran_id < 0)
        return -1;
    uint64_t t0 = ar_now();
    int idx = ar_tran_index(tran_id);
    if (idx < 0) {
        ar_log("arm_start: ERROR: tran_id <%d> is not registered", tran_id);
        return -2;
    }
    struct ar_tran *t = &ar_g.trans[idx];
    if (!atomic_load_explicit(&t->active, memory_order_relaxed)) {
        ar_log("arm_start: ERROR: Transaction <%s> is not active (arm_end ended its application)", t->name);
        return -3;
    }
    struct ar_inst *in = NULL;
    unsigned s = 0, i = 0;
    for (int k = 0; k < 64 && ar_g.inst; k++) {
        i = atomic_fetch_add_explicit(&ar_g.cursor, 1, memory_order_relaxed) & (AR_MAX_INST - 1);
        s = atomic_load_explicit(&ar_g.inst[i].state, memory_order_relaxed);
        if (!(s & 1) && atomic_compare_exchange_strong_explicit(&ar_g.inst[i].state, &s, s | 1, memory_order_acquire, memory_order_relaxed)) {
            in = &ar_g.inst[i];
            break;
        }
    }
    if (!in) {
        ar_no_slot();
        ar_log("arm_start: ERROR: Transaction <%s>: no free instance slot", t->name);
        return -4;
    }
    int32_t handle = (int32_t)(((s >> 1) % 32767 + 1) << 16 | i);
    in->tran = (uint32_t)idx;
    in->flags = in->mask = 0;
    in->ptran = in->pinst = 0, in->pagent = in->pvendor = 0;
    in->t0 = t0;
    struct ar_ring *r = atomic_load_explicit(&ar_g.ring, memory_order_acquire);
    if (r && (uint32_t)idx < r->trans)
        ar_add64(r, ar_ctr_off(r, (uint32_t)idx), 1);
    else
        r = NULL;
    in->ring = r;
    ar_parse_values(data, data_size, in, t, 1, handle);
    if (ar_g.log) {
        struct ar_app *a = &ar_g.apps[t->app];
        ar_log("arm_start: Application <%s> User <%s> Transaction <%s> = Start_handle <%d>", a->name, a->user, t->name, handle);
        ar_log_values("arm_start", a, t, handle, in, in->mask);
    }
    return handle;
}

/* handle_inst resolves the handle of arm_update and arm_stop, or returns
 * NULL with the call's result in *ret: 0 for the no-op library and for
 * PTX's null handle of a failed arm_start, -1 for a negative handle, -2
 * (logged) for one that is not an open instance. */
static struct ar_inst *handle_inst(const char *call, arm_start_handle_t h, unsigned *s, arm_ret_stat_t *ret)
{
    ar_setup();
    *ret = 0;
    if (ar_g.disabled || h == 0)
        return NULL;
    if (h < 0) {
        *ret = -1;
        return NULL;
    }
    struct ar_inst *in = inst_of(h, s);
    if (!in) {
        ar_log("%s: ERROR: Start_handle <%d> is not an open instance", call, h);
        *ret = -2;
    }
    return in;
}

arm_ret_stat_t ARM_API arm_update(arm_start_handle_t arm_handle, arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size)
{
    (void)flags;
    unsigned s;
    arm_ret_stat_t ret;
    struct ar_inst *in = handle_inst("arm_update", arm_handle, &s, &ret);
    if (!in)
        return ret;
    struct ar_tran *t = &ar_g.trans[in->tran];
    ar_parse_values(data, data_size, in, t, 0, arm_handle);
    if (ar_g.log) {
        struct ar_app *a = &ar_g.apps[t->app];
        ar_log("arm_update: Application <%s> User <%s> Transaction <%s> Start_handle <%d>", a->name, a->user, t->name, arm_handle);
        ar_log_values("arm_update", a, t, arm_handle, in, data ? in->mask : 0);
    }
    return 0;
}

static uint64_t charged(uint32_t type, uint64_t first, uint64_t last)
{
    switch (type) {
    case ARM_Counter32:
        return (uint32_t)((uint32_t)last - (uint32_t)first);
    case ARM_Counter64:
        return last - first;
    case ARM_CntrDivr32:
        return (uint32_t)((uint32_t)last - (uint32_t)first) | (last & 0xffffffff00000000u);
    }
    return last;
}

arm_ret_stat_t ARM_API arm_stop(arm_start_handle_t arm_handle, const arm_status_t comp_status, arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size)
{
    (void)flags;
    unsigned s;
    arm_ret_stat_t ret;
    struct ar_inst *in = handle_inst("arm_stop", arm_handle, &s, &ret);
    if (!in)
        return ret;
    if (comp_status < ARM_GOOD || comp_status > ARM_FAILED) {
        ar_log("arm_stop: ERROR: Start_handle <%d> Status <%d> is not 0, 1 or 2", arm_handle, comp_status);
        return -3;
    }
    struct ar_tran *t = &ar_g.trans[in->tran];
    ar_parse_values(data, data_size, in, t, 0, arm_handle);
    uint64_t dur = ar_now() - in->t0;
    uint32_t tran = in->tran;
    struct ar_ring *old = in->ring;
    if (ar_g.log) {
        struct ar_app *a = &ar_g.apps[t->app];
        ar_log("arm_stop: Application <%s> User <%s> Transaction <%s> Start_handle <%d> Status <%d>", a->name, a->user, t->name, arm_handle, comp_status);
        ar_log_values("arm_stop", a, t, arm_handle, in, in->mask);
    }
    /* Only an instance with metric values or a parent needs a record. */
    struct ar_rec rec;
    int detail = in->mask || (in->flags & 1);
    if (detail) {
        memset(&rec, 0, sizeof rec);
        rec.dur = dur;
        rec.tran = tran;
        rec.status = (uint8_t)comp_status;
        rec.flags = in->flags;
        rec.mask = in->mask;
        rec.ptran = in->ptran, rec.pinst = in->pinst, rec.pagent = in->pagent, rec.pvendor = in->pvendor;
        for (int i = 0; i < 6; i++)
            if (in->mask & (1u << i))
                rec.vals[i] = charged(t->types[i], in->first[i], in->vals[i]);
        memcpy(rec.str, in->str, sizeof rec.str);
    }
    /* Releasing the slot is the commit: a concurrent second stop fails here. */
    if (!atomic_compare_exchange_strong_explicit(&in->state, &s, ((s >> 1) + 1) << 1, memory_order_release, memory_order_relaxed))
        return -2;
    if (old)
        ar_add64(old, ar_ctr_off(old, tran), (uint64_t)-1);
    struct ar_ring *r = atomic_load_explicit(&ar_g.ring, memory_order_acquire);
    if (!r) {
        atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
    } else if (tran >= r->trans) {
        ar_add64(r, AR_OFF_NOSLOT, 1);
    } else {
        ar_complete(r, tran, comp_status, dur);
        if (detail && !ar_post(r, &rec))
            ar_add64(r, ar_ctr_off(r, tran) + 8, 1);
    }
    return 0;
}
