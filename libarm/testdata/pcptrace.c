/* pcptrace.c - the peer of BenchmarkCStartStop: N transactions through PCP's
 * trace library (pmtracebegin + pmtraceend, libpcp-trace2-dev), each end
 * sending one message to the trace PMDA (sync: and waiting for its ack).
 * One untimed pair first connects, so the PMDA counts N+1 for TAG.
 * Prints nanoseconds per pair, then keeps the connection open until its
 * standard input closes: the PMDA drops async messages still unread when
 * the client goes away.
 * Usage: pcptrace sync|async N TAG (PCP_TRACE_HOST/PCP_TRACE_PORT name the PMDA) */
#include <pcp/trace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int pair(const char *tag)
{
    int e = pmtracebegin(tag);
    if (e >= 0)
        e = pmtraceend(tag);
    if (e < 0)
        fprintf(stderr, "pcptrace: %s\n", pmtraceerrstr(e));
    return e;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    if (strcmp(argv[1], "async") == 0)
        pmtracestate(PMTRACE_STATE_ASYNC); /* must precede any other call */
    else if (strcmp(argv[1], "sync") != 0)
        return 2;
    long n = atol(argv[2]);
    const char *tag = argv[3];
    if (pair(tag) < 0) /* the first call reports a PMDA it cannot reach */
        return 1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        if (pair(tag) < 0)
            return 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
    fflush(stdout);
    while (getchar() != EOF)
        ;
    return 0;
}
