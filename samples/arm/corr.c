/* SPDX-License-Identifier: Apache-2.0 */
/* corr.c - a correlated client/server pair of processes. The client
 * starts "Request" asking for a correlator, runs "corr child" with the
 * correlator in hex, and stops when the child exits; the child starts
 * "Serve" with the parent's correlator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arm.h"

static void hex(const unsigned char *b, int n, char *out)
{
    for (int i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

int main(int argc, char **argv)
{
    arm_user_data1_t d;
    memset(&d, 0, sizeof d);
    d.format = ARM_FORMAT_DATA;
    if (argc > 2 && strcmp(argv[1], "child") == 0) {
        int32 app = arm_init("Corr Server", 0, 0, 0, 0);
        int32 tr = arm_getid(app, "Serve", 0, 0, 0, 0);
        size_t n = strlen(argv[2]) / 2;
        for (size_t i = 0; i < n && i < ARM_CORR_MAX; i++)
            sscanf(argv[2] + 2 * i, "%2hhx", (unsigned char *)&d.correlator + i);
        d.flags[0] = ARM_CORR_PARENT;
        int32 h = arm_start(tr, 0, (char *)&d, sizeof d);
        usleep(1000);
        return arm_stop(h, ARM_GOOD, 0, 0, 0) == 0 && arm_end(app, 0, 0, 0) == 0 ? 0 : 1;
    }
    int32 app = arm_init("Corr Client", 0, 0, 0, 0);
    int32 tr = arm_getid(app, "Request", 0, 0, 0, 0);
    d.flags[0] = ARM_CORR_REQUEST;
    int32 h = arm_start(tr, 0, (char *)&d, sizeof d);
    if (!(d.flags[0] & ARM_CORR_RETURNED)) {
        fprintf(stderr, "no correlator returned\n");
        return 1;
    }
    unsigned n = (unsigned char)((char *)&d.correlator)[0] << 8 | (unsigned char)((char *)&d.correlator)[1];
    char arg[2 * ARM_CORR_MAX + 1];
    hex((unsigned char *)&d.correlator, (int)n, arg);
    pid_t pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], "child", arg, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    arm_stop(h, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? ARM_GOOD : ARM_FAILED, 0, 0, 0);
    arm_end(app, 0, 0, 0);
    printf("correlator %s\n", arg);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
