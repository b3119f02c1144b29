/* SPDX-License-Identifier: Apache-2.0 */
/* arm_init, arm_getid and arm_end: registration, under a mutex. The hot
 * calls are in inst.c; the process's state they share is state.c's. The
 * top of the library with inst.c: nothing calls either. */
#define _GNU_SOURCE
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static pthread_once_t connect_once = PTHREAD_ONCE_INIT;

static void connect_first(void)
{
    ar_connect_first(ar_g.wait_ns);
    ar_start_thread();
}

/* Ids come from the key, so a name has the same id in every process (and
 * in package arm); a collision within this process takes the next one. */
static int32_t hash_id(const char *kind, const char *k1, const char *k2)
{
    uint32_t h = 2166136261u;
    const char *parts[3] = { kind, k1, k2 };
    for (int i = 0; i < 3 && parts[i]; i++) {
        if (i > 0) {
            h ^= 0;
            h *= 16777619u;
        }
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++) {
            h ^= *p;
            h *= 16777619u;
        }
    }
    return (int32_t)(h & 0x3fffffff) + 1;
}

static void tran_insert(int32_t id, uint32_t idx)
{
    uint32_t h = (uint32_t)id & (AR_IDS - 1);
    while (atomic_load(&ar_g.tids[h]) != 0)
        h = (h + 1) & (AR_IDS - 1);
    ar_g.tidx[h] = idx;
    atomic_store_explicit(&ar_g.tids[h], id, memory_order_release);
}

static struct ar_app *app_by_id(int32_t id)
{
    for (uint32_t i = 0; i < ar_g.napps; i++)
        if (ar_g.apps[i].id == id)
            return &ar_g.apps[i];
    return NULL;
}

/* verdict is the daemon's answer to application entry ai in the current
 * file: with ARM_CONNECT_WAIT, arm_init asks the daemon to read its new
 * entry now (one byte on the connection) and waits up to that long for
 * the answer. 0: none (no daemon, or not read yet). */
static int32_t verdict(uint32_t ai, uint64_t wait_ns)
{
    uint64_t end = ar_now() + wait_ns;
    struct ar_ring *asked = NULL;
    for (;;) {
        struct ar_ring *r = atomic_load(&ar_g.ring);
        if (!r || ai >= r->apps)
            return 0;
        int32_t v = ar_app_verdict(r, ai);
        if (v != 0 || ar_now() >= end)
            return v;
        if (r != asked) {
            asked = r;
            char c = AR_SCAN_NOW;
            int sent = 0;
            pthread_mutex_lock(&ar_g.mu); /* the watch thread closes the socket under it */
            if (atomic_load(&ar_g.ring) == r)
                sent = send(r->sock, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1;
            pthread_mutex_unlock(&ar_g.mu);
            if (!sent)
                return 0;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

arm_appl_id_t ARM_API arm_init(arm_ptr_t *appname, arm_ptr_t *appl_user_id, arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size)
{
    (void)flags, (void)data, (void)data_size;
    ar_setup();
    if (ar_g.disabled)
        return 0;
    char key[32];
    ar_key(appname ? appname : "", key);
    if (!key[0]) {
        ar_log("arm_init: ERROR: application name <%s> has no key", appname ? appname : "(null)");
        return -1;
    }
    char user[AR_NAME] = "";
    if (appl_user_id && strcmp(appl_user_id, "*") == 0) {
        struct passwd pw, *res = NULL;
        char buf[1024];
        if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) == 0 && res)
            ar_text(res->pw_name, user, sizeof user);
    } else if (appl_user_id) {
        ar_text(appl_user_id, user, sizeof user);
    }
    pthread_mutex_lock(&ar_g.mu);
    struct ar_app *a = NULL;
    for (uint32_t i = 0; i < ar_g.napps && !a; i++)
        if (strcmp(ar_g.apps[i].key, key) == 0)
            a = &ar_g.apps[i];
    if (a) {
        a->uses++;
    } else if (ar_g.napps < AR_MAX_APPS) {
        a = &ar_g.apps[ar_g.napps];
        int32_t id = hash_id("A", key, NULL);
        while (app_by_id(id))
            id = id % 0x3fffffff + 1;
        a->id = id, a->uses = 1;
        memcpy(a->key, key, sizeof key);
        ar_text(appname, a->descr, sizeof a->descr);
        ar_text(appname, a->name, sizeof a->name);
        memcpy(a->user, user, sizeof user);
        struct ar_ring *r = atomic_load(&ar_g.ring);
        if (r)
            ar_publish_app(r, ar_g.napps, a);
        ar_g.napps++;
    }
    pthread_mutex_unlock(&ar_g.mu);
    if (!a) {
        ar_log("arm_init: ERROR: Application <%s>: more than %d applications", appname, AR_MAX_APPS);
        return -2;
    }
    pthread_once(&connect_once, connect_first);
    if (verdict((uint32_t)(a - ar_g.apps), ar_g.wait_ns) == AR_REFUSED) {
        pthread_mutex_lock(&ar_g.mu);
        if (a->uses > 0)
            a->uses--; /* a refused arm_init holds nothing: no arm_end follows */
        pthread_mutex_unlock(&ar_g.mu);
        ar_log("arm_init: ERROR: Application <%s>: refused by the daemon at one of its limits", a->name);
        return AR_REFUSED;
    }
    ar_log("arm_init: Application <%s> User <%s> = Appl_id <%d>", a->name, a->user, a->id);
    return a->id;
}

arm_tran_id_t ARM_API arm_getid(arm_appl_id_t appl_id, arm_ptr_t *tran_name, arm_ptr_t *tran_detail, arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size)
{
    (void)flags;
    ar_setup();
    if (ar_g.disabled)
        return 0;
    if (appl_id < 0)
        return -1;
    char key[32];
    ar_key(tran_name ? tran_name : "", key);
    pthread_mutex_lock(&ar_g.mu);
    struct ar_app *a = app_by_id(appl_id);
    struct ar_tran *t = NULL;
    int32_t ret = -1;
    if (!a || a->uses == 0) {
        pthread_mutex_unlock(&ar_g.mu);
        ar_log("arm_getid: ERROR: appl_id <%d> is not an active application", appl_id);
        return -2;
    }
    if (!key[0]) {
        pthread_mutex_unlock(&ar_g.mu);
        ar_log("arm_getid: ERROR: Application <%s> transaction name <%s> has no key", a->name, tran_name ? tran_name : "(null)");
        return -3;
    }
    uint32_t ai = (uint32_t)(a - ar_g.apps);
    if (ar_app_verdict(atomic_load(&ar_g.ring), ai) == AR_REFUSED) {
        pthread_mutex_unlock(&ar_g.mu);
        ar_log("arm_getid: ERROR: Application <%s>: refused by the daemon at one of its limits", a->name);
        return AR_REFUSED;
    }
    for (uint32_t i = 0; i < ar_g.ntrans && !t; i++)
        if (ar_g.trans[i].app == ai && strcmp(ar_g.trans[i].key, key) == 0)
            t = &ar_g.trans[i];
    int fresh = 0;
    if (!t && ar_g.ntrans < AR_MAX_TRANS) {
        t = &ar_g.trans[ar_g.ntrans];
        memset(t, 0, sizeof *t);
        t->app = ai;
        memcpy(t->key, key, sizeof key);
        ar_text(tran_name, t->descr, sizeof t->descr);
        ar_text(tran_name, t->name, sizeof t->name);
        ar_text(tran_detail, t->detail, sizeof t->detail);
        ar_parse_meta(data, data_size, t);
        int32_t id = hash_id("T", a->key, key);
        while (ar_tran_index(id) >= 0)
            id = id % 0x3fffffff + 1;
        t->id = id;
        tran_insert(id, ar_g.ntrans);
        struct ar_ring *r = atomic_load(&ar_g.ring);
        if (r)
            ar_publish_tran(r, ar_g.ntrans, t);
        ar_g.ntrans++;
        fresh = 1;
    }
    if (t) {
        atomic_store(&t->active, 1);
        ret = t->id;
    }
    pthread_mutex_unlock(&ar_g.mu);
    if (!t) {
        ar_log("arm_getid: ERROR: Application <%s> Transaction <%s>: more than %d transactions", a->name, tran_name, AR_MAX_TRANS);
        return -4;
    }
    ar_log("arm_getid: Application <%s> User <%s> Transaction <%s> Detail <%s>", a->name, a->user, t->name, tran_detail ? t->detail : "");
    ar_log("arm_getid: Application <%s> User <%s> Transaction <%s> = Tran_id <%d>", a->name, a->user, t->name, ret);
    for (int i = 0; fresh && i < 7; i++)
        if (t->types[i])
            ar_log("arm_getid: Application <%s> User <%s> Transaction <%s> Metric Field <%d> Type <%u> Name <%s>", a->name, a->user, t->name,
                   i + 1, t->types[i], t->names[i]);
    return ret;
}

arm_ret_stat_t ARM_API arm_end(arm_appl_id_t appl_id, arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size)
{
    (void)flags, (void)data, (void)data_size;
    ar_setup();
    if (ar_g.disabled)
        return 0;
    if (appl_id < 0)
        return -1;
    pthread_mutex_lock(&ar_g.mu);
    struct ar_app *a = app_by_id(appl_id);
    if (a && a->uses > 0 && --a->uses == 0) {
        uint32_t ai = (uint32_t)(a - ar_g.apps);
        for (uint32_t i = 0; i < ar_g.ntrans; i++)
            if (ar_g.trans[i].app == ai)
                atomic_store(&ar_g.trans[i].active, 0);
    }
    pthread_mutex_unlock(&ar_g.mu);
    if (!a) {
        ar_log("arm_end: ERROR: appl_id <%d> is not an application", appl_id);
        return -2;
    }
    ar_log("arm_end: Application <%s> User <%s> appl_id <%d>", a->name, a->user, appl_id);
    return 0;
}
