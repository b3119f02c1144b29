/* SPDX-License-Identifier: Apache-2.0 */
/* The process's state (ar_g), its one-time setup from the environment,
 * the clock and the transaction id table: the bottom of the library, which
 * every other file uses and which uses none of them. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

struct ar_global ar_g = { .mu = PTHREAD_MUTEX_INITIALIZER, .logmu = PTHREAD_MUTEX_INITIALIZER };
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

uint64_t ar_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void host_addr(uint8_t out[4])
{
    static const uint8_t lo[4] = { 127, 0, 0, 1 };
    memcpy(out, lo, 4);
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
            struct in_addr a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
            if ((ntohl(a.s_addr) >> 24) != 127) {
                memcpy(out, &a.s_addr, 4);
                break;
            }
        }
    }
    freeifaddrs(ifs);
}

/* env_seconds reads a number of seconds ("2", "0.05") from the
 * environment into nanoseconds, at most max_s; anything else is def. No
 * strtod: the application's locale could want a decimal comma. */
static uint64_t env_seconds(const char *name, uint64_t def, uint64_t max_s)
{
    const char *p = getenv(name);
    uint64_t whole = 0, frac = 0, scale = 1000000000u;
    if (!p || *p < '0' || *p > '9')
        return def;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((whole = whole * 10 + (uint64_t)(*p - '0')) > max_s)
            return max_s * 1000000000u;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(*p - '0') * scale;
            }
    if (*p)
        return def;
    return whole * 1000000000u + frac;
}

static void setup(void)
{
    const char *inv = getenv("INVOKE_ARM");
    if (inv && strcmp(inv, "false") == 0) {
        ar_g.disabled = 1;
        return;
    }
    const char *lf = getenv("ARM_LOGFILE");
    if (lf && *lf)
        ar_g.log = fopen(lf, "ae");
    void *m = mmap(NULL, AR_MAX_INST * sizeof(struct ar_inst), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ar_g.inst = m == MAP_FAILED ? NULL : m;
    host_addr(ar_g.addr);
    ar_g.agent = (uint16_t)getpid();
    ar_g.retry_ns = env_seconds("ARM_RETRY", 1000000000u, 3600);
    if (ar_g.retry_ns < 10000000u)
        ar_g.retry_ns = 10000000u; /* 10 ms: never a busy loop on the daemon */
    ar_g.wait_ns = env_seconds("ARM_CONNECT_WAIT", 0, 3600);
}

void ar_setup(void) { pthread_once(&setup_once, setup); }

int ar_tran_index(int32_t id)
{
    uint32_t h = (uint32_t)id & (AR_IDS - 1);
    for (int i = 0; i < AR_IDS; i++, h = (h + 1) & (AR_IDS - 1)) {
        int v = atomic_load_explicit(&ar_g.tids[h], memory_order_acquire);
        if (v == id)
            return (int)ar_g.tidx[h];
        if (v == 0)
            return -1;
    }
    return -1;
}

