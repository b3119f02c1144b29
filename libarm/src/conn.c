/* SPDX-License-Identifier: Apache-2.0 */
/* Registration with the daemon on arm.sock, and the thread that notices
 * a daemon going away and reconnects. Only this file makes system calls,
 * and never on the caller's hot path. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rundir.h"

extern char *program_invocation_short_name;

static void le16(unsigned char *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void le32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = v >> (8 * i); }
static uint32_t get32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* trusted is sa_trusted (cshared/rundir.c, trustdir.Check in Go) that
 * logs why (ARM_LOGFILE) when the reason is not the one logged last. A
 * missing directory is left to connect, which fails with ENOENT. Only the
 * connecting thread calls it: arm_init's first registration, then the
 * watch thread. */
static int trusted(const char *p)
{
    static char logged[512];
    char why[384], line[512];
    if (sa_trusted(p, why, sizeof why))
        return 1;
    snprintf(line, sizeof line, "arm: not connecting to %.100s: %s", p, why);
    if (strcmp(line, logged) != 0) {
        memcpy(logged, line, sizeof logged);
        ar_log("%s", line);
    }
    errno = EACCES;
    return 0;
}

/* Candidate sockets in the run directories of cshared/rundir.c (client/
 * rundir's order, package arm's Sockets); untrusted ones are left out. */
static int sockets(char out[SA_RUN_DIRS][108])
{
    char dirs[SA_RUN_DIRS][SA_PATH];
    int n = sa_run_dirs(dirs), k = 0;
    for (int i = 0; i < n; i++) {
        if (snprintf(out[k], 108, "%s/arm.sock", dirs[i]) >= 108)
            continue; /* longer than a socket address holds */
        if (trusted(out[k]))
            k++;
    }
    return k;
}

static int read_full(int s, unsigned char *b, size_t n)
{
    while (n > 0) {
        ssize_t k = recv(s, b, n, 0);
        if (k <= 0)
            return -1;
        b += k, n -= k;
    }
    return 0;
}

/* Refusals in a row: the watch thread then waits 10 s, doubling to 5 min,
 * so that a refused process costs the daemon next to nothing. */
static atomic_int refusals;

/* hello sends Hello and returns the mapped file of the Welcome, or NULL. */
static struct ar_ring *hello(int s)
{
    unsigned char m[8 + 8 + 256];
    const char *prog = program_invocation_short_name ? program_invocation_short_name : "";
    size_t pl = strnlen(prog, 255);
    memset(m, 0, sizeof m);
    le32(m, 8 + 2 + pl);
    le16(m + 4, 1);
    le16(m + 8, AR_VERSION);
    le32(m + 12, (uint32_t)getpid());
    le16(m + 16, pl);
    memcpy(m + 18, prog, pl);
    if (send(s, m, 18 + pl, MSG_NOSIGNAL) != (ssize_t)(18 + pl))
        return NULL;

    unsigned char b[8 + 2048];
    union { char buf[CMSG_SPACE(4 * sizeof(int))]; struct cmsghdr align; } cm;
    struct iovec iov = { b, 8 };
    struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf, .msg_controllen = sizeof cm.buf };
    ssize_t k = recvmsg(s, &h, MSG_CMSG_CLOEXEC);
    int fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (int i = 0; i < n; i++) {
                int x;
                memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof x);
                if (fd < 0)
                    fd = x;
                else
                    close(x);
            }
        }
    }
    struct ar_ring *r = NULL;
    uint32_t len = k == 8 ? get32(b) : 0;
    if (k != 8 || len > 2048 || len < 42 || b[4] != 0x81 || read_full(s, b + 8, len) != 0)
        goto out;
    const unsigned char *w = b + 8;
    int32_t status = (int32_t)get32(w);
    uint64_t gen = get64(w + 8), flen = get64(w + 16);
    uint32_t slots = get32(w + 24), apps = get32(w + 28), trans = get32(w + 32);
    if (status != 0) { /* limits, allow lists: measure into nothing, quietly */
        uint32_t ml = (uint32_t)(w[40] | w[41] << 8);
        atomic_fetch_add(&refusals, 1);
        ar_log("arm: the daemon refused this process: %.*s", (int)(ml < len - 42 ? ml : len - 42), (const char *)w + 42);
        goto out;
    }
    if (fd < 0 || gen == 0 || slots < 16 || slots > (1u << 20) || (slots & (slots - 1)) ||
        apps < 1 || apps > 4096 || trans < 1 || trans > 65536)
        goto out;
    uint64_t want = AR_HDR + (uint64_t)slots * AR_REC + (uint64_t)apps * AR_APP + (uint64_t)trans * (AR_TRAN + AR_CTR);
    struct stat st;
    if (flen != want || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != want)
        goto out;
    unsigned char *mem = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED)
        goto out;
    if (memcmp(mem, AR_MAGIC, 8) != 0 || get64(mem + 40) != gen || get32(mem + 16) != slots ||
        get32(mem + 20) != apps || get32(mem + 24) != trans) {
        munmap(mem, want);
        goto out;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        munmap(mem, want);
        goto out;
    }
    *r = (struct ar_ring){ .mem = mem, .len = want, .gen = gen, .slots = slots, .apps = apps, .trans = trans, .sock = s };
out:
    if (fd >= 0)
        close(fd);
    return r;
}

/* ar_connect tries each socket once, each exchange bounded by timeout_ns;
 * on success the names are published into the new file and it becomes
 * current. Returns 1 when connected. */
int ar_connect(uint64_t timeout_ns)
{
    char paths[SA_RUN_DIRS][108];
    int n = sockets(paths);
    for (int i = 0; i < n; i++) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
            return 0;
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        memcpy(a.sun_path, paths[i], strnlen(paths[i], sizeof a.sun_path - 1));
        struct timeval tv = { (time_t)(timeout_ns / 1000000000u), (suseconds_t)(timeout_ns % 1000000000u / 1000) };
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        struct ar_ring *r = NULL;
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
            r = hello(s);
        if (!r) {
            close(s);
            continue;
        }
        pthread_mutex_lock(&ar_g.mu);
        for (uint32_t k = 0; k < ar_g.napps; k++)
            ar_publish_app(r, k, &ar_g.apps[k]);
        for (uint32_t k = 0; k < ar_g.ntrans && k < r->trans; k++) {
            ar_publish_tran(r, k, &ar_g.trans[k]);
            uint64_t lost = atomic_exchange(&ar_g.trans[k].lost, 0);
            if (lost)
                ar_add64(r, ar_ctr_off(r, k) + 8, lost);
        }
        ar_add64(r, AR_OFF_BADBUF, atomic_exchange(&ar_g.badbuf, 0));
        ar_add64(r, AR_OFF_NOSLOT, atomic_exchange(&ar_g.noslot, 0));
        atomic_store_explicit(&ar_g.ring, r, memory_order_release);
        pthread_mutex_unlock(&ar_g.mu);
        ar_log("arm: connected to %s", paths[i]);
        return 1;
    }
    return 0;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ar_connect_first is arm_init's first registration: one attempt, or with
 * ARM_CONNECT_WAIT one every retry period until the daemon answers (with
 * a Welcome or a refusal) or wait_ns is over. An attempt may take the rest
 * of the wait: a daemon slow to answer is waited for, not given up on. */
void ar_connect_first(uint64_t wait_ns)
{
    uint64_t end = ar_now() + wait_ns;
    for (;;) {
        uint64_t now = ar_now(), left = end > now ? end - now : 0;
        int n = atomic_load(&refusals);
        if (ar_connect(left > AR_IO_TIMEOUT ? left : AR_IO_TIMEOUT) || atomic_load(&refusals) != n)
            return;
        now = ar_now();
        if (now >= end)
            return;
        sleep_ns(end - now < ar_g.retry_ns ? end - now : ar_g.retry_ns);
    }
}

/* drop lets the file of a daemon that went away go, once what it did not
 * take is counted: the mapping becomes private zeroed memory at the same
 * address in one step, so an instance started under it still stops
 * harmlessly, and the file is freed (the daemon counts it against this
 * user while this process maps it). On failure the file stays mapped. */
static void drop(struct ar_ring *r)
{
    mmap(r->mem, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

/* The thread waits for the daemon to close, then retries every retry
 * period (ARM_RETRY, 1 s by default), or after 10, 20, ... up to 300
 * periods while the daemon refuses. */
static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        struct ar_ring *r = atomic_load(&ar_g.ring);
        if (r) {
            struct pollfd p = { .fd = r->sock, .events = POLLIN };
            if (poll(&p, 1, -1) < 0 && errno == EINTR)
                continue;
            /* The daemon sends nothing after the Welcome: any event is its end. */
            pthread_mutex_lock(&ar_g.mu);
            atomic_store(&ar_g.ring, NULL);
            close(r->sock);
            ar_untaken(r);
            drop(r);
            pthread_mutex_unlock(&ar_g.mu);
        }
        int n = atomic_load(&refusals);
        sleep_ns(ar_g.retry_ns * (n == 0 ? 1 : n >= 6 ? 300 : 10u << (n - 1)));
        if (!atomic_load(&ar_g.ring) && (ar_connect(AR_IO_TIMEOUT) || atomic_load(&refusals) == n))
            atomic_store(&refusals, 0);
    }
    return NULL;
}

void ar_start_thread(void)
{
    if (ar_g.thread)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the application's signals go to its threads */
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, watch, NULL) == 0)
        ar_g.thread = 1;
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
