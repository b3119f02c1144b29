/* pcpbench.c - the floor of BenchmarkCStartStop: N updates of one counter
 * through PCP's memory-mapped values (mmv_inc: one store into a shared
 * file, libpcp-mmv1-dev). Prints nanoseconds per update.
 * Usage: pcpbench mmv N (PCP_TMP_DIR must hold an mmv directory) */
#include <pcp/pmapi.h>
#include <pcp/mmv_stats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double since(struct timespec a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    struct timespec a;
    if (strcmp(argv[1], "mmv") == 0) {
        pmUnits count = MMV_UNITS(0, 0, 1, 0, 0, PM_COUNT_ONE);
        mmv_registry_t *r = mmv_stats_registry("armbench", 321, 0);
        if (!r || mmv_stats_add_metric(r, "counter", 1, MMV_TYPE_U64, MMV_SEM_COUNTER, count, PM_INDOM_NULL, "c", "c") < 0)
            return 1;
        void *addr = mmv_stats_start(r);
        pmAtomValue *v = addr ? mmv_lookup_value_desc(addr, "counter", NULL) : NULL;
        if (!v)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < n; i++)
            mmv_inc(addr, v);
        printf("%.2f\n", since(a) / (double)n);
        return v->ull == (unsigned long long)n ? 0 : 1;
    }
    return 2;
}
