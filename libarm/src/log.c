/* SPDX-License-Identifier: Apache-2.0 */
/* ARM_LOGFILE: the SDK logging agent's log, one time-stamped line per call
 * with its parameters ("17:47:39.123: arm_init: Application <...> ..."). */
#include <stdarg.h>
#include <sys/time.h>
#include <time.h>

#include "internal.h"

void ar_log(const char *fmt, ...)
{
    if (!ar_g.log)
        return;
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&ar_g.logmu);
    fprintf(ar_g.log, "%02d:%02d:%02d.%03d: ", tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000));
    vfprintf(ar_g.log, fmt, ap);
    fputc('\n', ar_g.log);
    fflush(ar_g.log);
    pthread_mutex_unlock(&ar_g.logmu);
    va_end(ap);
}

/* ar_log_values logs one line per metric present in mask. */
void ar_log_values(const char *call, const struct ar_app *a, const struct ar_tran *t, int32_t handle, const struct ar_inst *in, uint8_t mask)
{
    if (!ar_g.log)
        return;
    for (int i = 0; i < 7; i++) {
        if (!(mask & (1u << i)) || !t->types[i])
            continue;
        if (i == 6 || t->types[i] == ARM_String8)
            ar_log("%s: Application <%s> User <%s> Transaction <%s> Start_handle <%d> Metric < %s > : <%.*s>", call, a->name, a->user,
                   t->name, handle, t->names[i], i == 6 ? 32 : 8, i == 6 ? in->str : (const char *)&in->vals[i]);
        else
            ar_log("%s: Application <%s> User <%s> Transaction <%s> Start_handle <%d> Metric < %s > : <%llu>", call, a->name, a->user,
                   t->name, handle, t->names[i], (unsigned long long)in->vals[i]);
    }
}
