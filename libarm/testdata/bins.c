/* bins.c - prints ar_bin of each argument (nanoseconds), one a line:
 * TestCBinsAreArmringBins compares them with armring.Bin. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int ar_bin(uint64_t ns);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        printf("%d\n", ar_bin(strtoull(argv[i], NULL, 10)));
    return 0;
}
