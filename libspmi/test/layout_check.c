/* Prints "field offset size" for every SpmiShare field; libspmi/layout_test.go
 * compares the output with the Go offset constants. */
#include <stdio.h>
#include "spmi_dds.h"

#define F(f) printf("%s %zu %zu\n", #f, offsetof(SpmiShare, f), sizeof(((SpmiShare *)0)->f))

int main(void)
{
   F(SiShMagic);
   F(SiShMajor);
   F(SiShMinor);
   F(SiShHdrLen);
   F(SiShAllocLen);
   F(SiShAreaOff);
   F(SiShAreaLen);
   F(SiShPermLen);
   F(SiShGen);
   F(SiShPid);
   F(SiShFlags);
   F(SiShStart);
   F(SiShArea);
   F(SiShAreaAddr);
   F(SiShT);
   F(SiShTRaw);
   F(SiShGoAway);
   F(SiShInterval);
   F(SiShSubscrib);
   F(SiShPortNo);
   F(SiShPad);
   F(SiShName);
   F(SiShBatch);
   F(SiShBatchEnd);
   F(SiShReading);
   F(SiShPad2);
   F(SiShRes);
   printf("sizeof %zu %zu\n", sizeof(SpmiShare), sizeof(SpmiShare));
   return 0;
}
