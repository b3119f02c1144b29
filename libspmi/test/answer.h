/* answer.h - the one-line answers of the test drivers (driver.c,
 * consumer.c): "ok", or "err <SpmiErrno> <SpmiErrmsg>" whatever the
 * message holds. */
#include <stdio.h>

static void fail(void)
{
   for (char *p = SpmiErrmsg; *p; p++)
      if (*p == '\n' || *p == '\r')
         *p = ' ';
   printf("err %d %s\n", SpmiErrno, SpmiErrmsg);
}

/* "ok", or the error when the call failed. */
static void answer(int ok)
{
   if (ok)
      printf("ok\n");
   else
      fail();
}
