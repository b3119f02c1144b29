/* SPDX-License-Identifier: Apache-2.0 */
/* Names and the ARM 2.0 data buffers. Every buffer comes from the
 * application and is read defensively: a wrong size or format is ignored
 * and counted (ar_bad_buffer), never trusted. */
#include <string.h>

#include "internal.h"

/* ar_key: the name without blanks, '/' and controls as '_', cut to 31
 * bytes on a UTF-8 character boundary (as armring.Key). */
void ar_key(const char *name, char key[32])
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && n < 31;) {
        size_t clen = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        if (clen == 0) { /* stray continuation or invalid lead byte: dropped */
            p++;
            continue;
        }
        size_t ok = 1;
        for (size_t i = 1; i < clen; i++)
            ok &= (p[i] & 0xC0) == 0x80;
        if (!ok) {
            p++;
            continue;
        }
        if (clen == 1) {
            if (*p == ' ' || *p == '\t') {
                p++;
                continue;
            }
            key[n++] = (*p == '/' || *p < ' ' || *p == 0x7f) ? '_' : *p;
            p++;
            continue;
        }
        if (n + clen > 31)
            break;
        memcpy(key + n, p, clen);
        n += clen, p += clen;
    }
    key[n] = 0;
}

/* ar_text: at most n-1 bytes of s, controls as blanks, cut on a character
 * boundary (as armring.Descr). */
void ar_text(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        size_t clen = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 ? 4 : 0;
        size_t ok = clen != 0;
        for (size_t i = 1; ok && i < clen; i++)
            ok &= (p[i] & 0xC0) == 0x80;
        if (!ok) {
            p++;
            continue;
        }
        if (k + clen > n - 1)
            break;
        if (clen == 1)
            out[k] = (*p < ' ' || *p == 0x7f) ? ' ' : *p;
        else
            memcpy(out + k, p, clen);
        k += clen, p += clen;
    }
    out[k] = 0;
}

static int32_t get_i32(const char *p) { int32_t v; memcpy(&v, p, 4); return v; }
static uint16_t be16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
static void put16(unsigned char *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(unsigned char *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

/* ar_parse_meta reads arm_getid's buffer (format 101) into t's
 * declarations. Returns 0, or -1 when the buffer was refused. */
int ar_parse_meta(const char *data, int32_t size, struct ar_tran *t)
{
    if (!data || size == 0)
        return 0;
    if (size < (int32_t)sizeof(arm_user_data101_t) || get_i32(data) != ARM_FORMAT_META) {
        ar_bad_buffer();
        return -1;
    }
    unsigned char mask = (unsigned char)data[5];
    int bad = 0;
    for (int i = 0; i < 7; i++) {
        if (!(mask & (0x80 >> i)))
            continue;
        const char *d = data + 8 + 48 * i;
        int32_t typ = get_i32(d);
        int ok = i == 6 ? typ == ARM_String32 : typ >= ARM_Counter32 && typ <= ARM_String8;
        if (!ok) {
            bad = 1;
            continue;
        }
        char name[44];
        memcpy(name, d + 4, 43);
        name[43] = 0;
        t->types[i] = (uint32_t)typ;
        ar_text(name, t->names[i], sizeof t->names[i]);
    }
    if (bad)
        ar_bad_buffer();
    return bad ? -1 : 0;
}

#define CORR_LEN 26
#define VENDOR_ID 32473
#define AGENT_VERSION 1

/* ar_parse_values reads a format 1 buffer of arm_start (start = 1, with
 * correlators), arm_update or arm_stop into the instance; a format 2
 * buffer (arm_update) is only logged. Returns 0 or -1 (refused). */
int ar_parse_values(char *data, int32_t size, struct ar_inst *in, const struct ar_tran *t, int start, int32_t handle)
{
    if (!data || size == 0)
        return 0;
    if (size < 8) {
        ar_bad_buffer();
        return -1;
    }
    int32_t format = get_i32(data);
    if (format == ARM_FORMAT_OPAQUE && !start && size <= 4 + 1020) {
        ar_log("arm_update: Start_handle <%d> Data <%.*s>", handle, (int)(size - 4), data + 4);
        return 0;
    }
    if (format != ARM_FORMAT_DATA || size < 88 || size > ARM_DATA_MAX) {
        ar_bad_buffer();
        return -1;
    }
    unsigned char *u = (unsigned char *)data;
    int bad = 0;
    unsigned char mask = u[5];
    for (int i = 0; i < 7; i++) {
        if (!(mask & (0x80 >> i)))
            continue;
        if (!t->types[i]) {
            bad = 1; /* a value for a field arm_getid did not declare */
            continue;
        }
        if (i == 6) {
            memcpy(in->str, data + 56, 32);
        } else {
            uint64_t v;
            memcpy(&v, data + 8 + 8 * i, 8);
            if (!(in->mask & (1u << i)))
                in->first[i] = v;
            in->vals[i] = v;
        }
        in->mask |= 1u << i;
    }
    if (start) {
        if (u[4] & ARM_TRACE_REQUEST)
            in->flags |= 2;
        if (u[4] & ARM_CORR_PARENT) {
            const unsigned char *c = u + 88;
            uint16_t n = size >= 90 ? be16(c) : 0;
            if (n >= 22 && n <= ARM_CORR_MAX && 88 + n <= size && c[2] == 1 && be16(c + 20) <= n - 22) {
                in->flags |= 1;
                in->pvendor = be16(c + 6), in->pagent = be16(c + 10);
                in->pinst = be32(c + 12), in->ptran = be32(c + 16);
            } else {
                bad = 1;
            }
        }
        u[4] &= ~ARM_CORR_RETURNED;
        if (u[4] & ARM_CORR_REQUEST) {
            if (size >= 88 + CORR_LEN) {
                unsigned char *c = u + 88;
                put16(c, CORR_LEN);
                c[2] = 1;
                c[3] = (in->flags & 2) ? 0x40 : 0;
                put16(c + 4, 1); /* IPv4 */
                put16(c + 6, VENDOR_ID);
                put16(c + 8, AGENT_VERSION);
                put16(c + 10, ar_g.agent);
                put32(c + 12, (uint32_t)handle);
                put32(c + 16, (uint32_t)t->id);
                put16(c + 20, 4);
                memcpy(c + 22, ar_g.addr, 4);
                u[4] |= ARM_CORR_RETURNED;
            } else {
                bad = 1;
            }
        }
    }
    if (bad)
        ar_bad_buffer();
    return bad ? -1 : 0;
}
