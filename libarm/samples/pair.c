/* pair.c - times N arm_start + arm_stop pairs on one thread and prints
 * the nanoseconds per pair (driven by BenchmarkCStartStop). Usage: pair N */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "arm.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int32 app = arm_init("bench", 0, 0, 0, 0);
    int32 tr = arm_getid(app, "pair", 0, 0, 0, 0);
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
