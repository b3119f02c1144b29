/* SPDX-License-Identifier: Apache-2.0 */
/* load.c - N threads x M transactions against libarm, with application
 * metrics (a Counter32, a Gauge32 and the string), then one aborted and
 * two failed instances per thread. Usage: load THREADS EACH [HOLD_SECONDS]
 * With HOLD_SECONDS, each thread then starts one more instance and the
 * program sleeps (in flight) before exiting without stopping it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arm.h"

static int32 tran;
static int each;

static long n_of(void *arg) { return (long)arg; }

static void *worker(void *arg)
{
    long n = (long)arg;
    arm_user_data1_t d;
    for (int i = 0; i < each; i++) {
        memset(&d, 0, sizeof d);
        d.format = ARM_FORMAT_DATA;
        d.flags[1] = ARM_METRIC_FLAG(1) | ARM_METRIC_FLAG(2);
        d.metric[0].counter32 = 1000;
        d.metric[1].gauge32 = (int32)(n + i % 5);
        int32 h = arm_start(tran, 0, (char *)&d, 88);
        if (i == 0) {
            arm_user_data2_t u;
            u.format = ARM_FORMAT_OPAQUE;
            int n = snprintf(u.string, sizeof u.string, "thread %ld started", n_of(arg));
            arm_update(h, 0, (char *)&u, 4 + n);
        }
        d.metric[0].counter32 = 1002;
        d.flags[1] = ARM_METRIC_FLAG(1) | ARM_STRING1_FLAG;
        memset(d.string1, ' ', sizeof d.string1);
        memcpy(d.string1, "part-42", 7);
        if (arm_stop(h, ARM_GOOD, 0, (char *)&d, 88) != 0) {
            fprintf(stderr, "arm_stop failed\n");
            exit(1);
        }
    }
    arm_stop(arm_start(tran, 0, 0, 0), ARM_ABORT, 0, 0, 0);
    arm_stop(arm_start(tran, 0, 0, 0), ARM_FAILED, 0, 0, 0);
    arm_stop(arm_start(tran, 0, 0, 0), ARM_FAILED, 0, 0, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: load THREADS EACH [HOLD_SECONDS]\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    each = atoi(argv[2]);
    int32 app = arm_init("Load Test", "*", 0, 0, 0);
    arm_user_data101_t meta;
    memset(&meta, 0, sizeof meta);
    meta.format = ARM_FORMAT_META;
    meta.flags[1] = ARM_METRIC_FLAG(1) | ARM_METRIC_FLAG(2) | ARM_STRING1_FLAG;
    meta.metric[0].type = ARM_Counter32;
    strcpy(meta.metric[0].name, "records written");
    meta.metric[1].type = ARM_Gauge32;
    strcpy(meta.metric[1].name, "queue length");
    meta.metric[6].type = ARM_String32;
    strcpy(meta.metric[6].name, "part number");
    tran = arm_getid(app, "Load Transaction", "many threads", 0, (char *)&meta, sizeof meta);
    if (app < 0 || tran < 0) {
        fprintf(stderr, "registration failed: %d %d\n", app, tran);
        return 1;
    }
    pthread_t t[256];
    for (long i = 0; i < threads && i < 256; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < threads && i < 256; i++)
        pthread_join(t[i], NULL);
    if (argc > 3) {
        for (int i = 0; i < threads; i++)
            arm_start(tran, 0, 0, 0);
        printf("holding\n");
        fflush(stdout);
        sleep(atoi(argv[3]));
    }
    arm_end(app, 0, 0, 0);
    printf("done %d\n", threads * each);
    return 0;
}
