/* SPDX-License-Identifier: Apache-2.0 */
/* pair.c - times N arm_start + arm_stop pairs on one thread and prints
 * the nanoseconds per pair (driven by BenchmarkCStartStop). Usage: pair N
 * With -t SECONDS it runs pairs in a tight loop for that long and prints
 * "pairs <count>" (the no-loss tests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arm.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int timed = argc > 2 && strcmp(argv[1], "-t") == 0;
    long n = argc > 1 && !timed ? atol(argv[1]) : 1000000;
    int32 app = arm_init("bench", 0, 0, 0, 0);
    int32 tr = arm_getid(app, "pair", 0, 0, 0, 0);
    if (timed) {
        double end = now() + atof(argv[2]);
        long pairs = 0;
        do {
            for (int i = 0; i < 4096; i++)
                if (arm_stop(arm_start(tr, 0, 0, 0), ARM_GOOD, 0, 0, 0) != 0) {
                    fprintf(stderr, "arm_stop failed\n");
                    return 1;
                }
            pairs += 4096;
        } while (now() < end);
        arm_end(app, 0, 0, 0);
        printf("pairs %ld\n", pairs);
        return 0;
    }
    for (int i = 0; i < 1000; i++)
        arm_stop(arm_start(tr, 0, 0, 0), ARM_GOOD, 0, 0, 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        arm_stop(arm_start(tr, 0, 0, 0), ARM_GOOD, 0, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    printf("%.2f\n", ns / (double)n);
    arm_end(app, 0, 0, 0);
    return 0;
}
