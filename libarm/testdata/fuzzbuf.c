/* fuzzbuf.c - feeds data buffers from stdin to libarm (FuzzDataBuffers).
 * Each frame is: op (1 byte), length (4 bytes, little-endian), bytes.
 * op 0: arm_getid with the buffer as meta-data; 1: arm_start with it;
 * 2: arm_update; 3: arm_stop. One byte 'k' answers each frame. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm.h"

int main(void)
{
    int32 app = arm_init("fuzz", 0, 0, 0, 0);
    int32 tr = arm_getid(app, "base", 0, 0, 0, 0);
    int32 h = -1;
    unsigned char hd[5];
    int n = 0;
    while (fread(hd, 1, 5, stdin) == 5) {
        uint32_t len = hd[1] | hd[2] << 8 | hd[3] << 16 | (uint32_t)hd[4] << 24;
        if (len > 1 << 16)
            return 2;
        char *b = malloc(len ? len : 1); /* exactly len bytes: an overread is caught by the sanitizer */
        if (fread(b, 1, len, stdin) != len)
            return 2;
        char name[16];
        switch (hd[0] & 3) {
        case 0:
            snprintf(name, sizeof name, "t%d", n++ % 200);
            tr = arm_getid(app, name, "d", 0, b, (int32)len);
            break;
        case 1:
            if (h > 0)
                arm_stop(h, ARM_GOOD, 0, 0, 0);
            h = arm_start(tr, 0, b, (int32)len);
            break;
        case 2:
            arm_update(h, 0, b, (int32)len);
            break;
        case 3:
            arm_stop(h, ARM_ABORT, 0, b, (int32)len);
            h = -1;
            break;
        }
        free(b);
        putchar('k');
        fflush(stdout);
    }
    return 0;
}
