/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sys/Spmidef.h - the SPMI guide's header for data consumers (local
 * programs that walk the hierarchy and read statistics), for the subagent
 * daemon. It includes spmi_dds.h, so one header serves both roles: the
 * error codes, SI_MAXNAME/SI_MAXLNAME, enum ValType, enum DataType, enum
 * SiInstFreq, SpmiErrno, SpmiErrmsg and SpmiExit are defined there, once.
 *
 * Link with libSpmi (-lSpmi, or bin/libSpmi.a -pthread). The library talks
 * to the daemon's control socket (subagent.sock in its run directory:
 * $SUBAGENT_RUN_DIR, else /run/subagent or $XDG_RUNTIME_DIR/subagent),
 * under the permissions of docs/SECURITY.md; docs/CONSUMERS.md describes
 * the calls.
 */
#ifndef SPMIDEF_H
#define SPMIDEF_H

#include <string.h> /* the guide's traversal example uses it without including it */
#include "../spmi_dds.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TRUE
#define TRUE  1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/* Handles: symbolic references that the library checks on every call
 * (never dereference them). They stay valid while the program runs and
 * follow the daemon across restarts; a context that went away reports
 * SiDeleted. */
typedef struct SpmiCxOpaque   *SpmiCxHdl;
typedef struct SpmiStatOpaque *SpmiStatHdl;

/* The type of the error fields: the Si... codes of spmi_dds.h. */
enum Error { SiErrorFirst = SiSuccess, SiErrorLast = SiOtherErr };

/* A context. parent is the handle of the parent context (Top's handle for
 * the top-level contexts, NULL for Top itself). */
struct SpmiCx
{
   char            name[SI_MAXNAME];         /* short name of the context   */
   char            description[SI_MAXLNAME]; /* descriptive name            */
   SpmiCxHdl       parent;                   /* handle of parent context    */
   enum SiInstFreq inst_freq;                /* instantiability of context  */
   unsigned short  asnno;                    /* ASN.1 number                */
   unsigned char   deleted;                  /* nonzero if context deleted  */
   unsigned char   dummy;                    /* alignment                   */
};

/* A statistic. data_type is SiLong or SiFloat (SiChar for the daemon's
 * text statistics, which have no numeric value: SiNoValue). */
struct SpmiStat
{
   char           name[SI_MAXNAME];         /* short name of statistic     */
   char           description[SI_MAXLNAME]; /* descriptive name            */
   long           min;                      /* default low scale value     */
   long           max;                      /* default high scale value    */
   enum ValType   value_type;               /* data type presented to API  */
   enum DataType  data_type;                /* data format presented to API*/
   unsigned short asnno;                    /* ASN.1 number                */
   unsigned short dummy;                    /* alignment                   */
};

struct SpmiCxLink
{
   void       *reserved;      /* reserved field, don't change */
   SpmiCxHdl  context;        /* handle of subcontext         */
};

struct SpmiStatLink
{
   void        *reserved;     /* reserved field, don't change */
   SpmiStatHdl stat;          /* handle of statistic          */
};

/* A statset: the time of the daemon's snapshot of the last read, and the
 * time between it and the previous read's (zero after the first). */
struct SpmiStatSet
{
   struct timeval    time;              /* time of current get         */
   struct timeval    time_change;       /* elapsed time since last get */
};

union Value
{
   long    l;
   float   f;
};

struct SpmiStatVals
{
   void              *reserved;         /* reserved field              */
   SpmiStatHdl       stat;              /* handle of statistic         */
   SpmiCxHdl         context;           /* handle of context           */
   int               ref_count;         /* count of simultaneous users */
   union Value       val;               /* counter/level data value    */
   union Value       val_change;        /* delta change if counter data*/
   enum Error        error;             /* error code                  */
};

struct SpmiHotSet
{
   struct timeval    time;              /* time of current get           */
   struct timeval    time_change;       /* elapsed time since last get   */
};

enum HotExcept {
   SiHotNoException = 0,
   SiHotException,
   SiHotTrap,
   SiHotBoth
};
/* The guide's SpmiAddSetHot page spells the first one so. */
#define SiNoHotException SiHotNoException

enum HotFeed {
   SiHotNoFeed = 0,
   SiHotThreshold,
   SiHotAlways
};

/* One peer in a hotset reading. For a quantity val is its level; for a
 * counter val_change is its change since the previous read (the daemon
 * compares counters as rates per second, which SpmiNextHotItem returns). */
struct SpmiHotItems
{
   char              name[SI_MAXLNAME]; /* name of the peer context    */
   union Value       val;               /* counter/level data value    */
   union Value       val_change;        /* delta change if counter data*/
};

struct SpmiHotVals
{
   void              *reserved;         /* reserved field              */
   SpmiStatHdl       stat;              /* handle of statistic         */
   SpmiCxHdl         grandpa;           /* parent of the peer contexts */
   int               ref_count;         /* count of simultaneous users */
   enum Error        error;             /* error code                  */
   enum HotExcept    except_type;       /* when to send exceptions     */
   short             trap_no;           /* trap number for SNMP traps  */
   short             severity;          /* severity for exception pckt */
   enum HotFeed      feed_type;         /* when to send data feeds     */
   int               threshold;         /* threshold for what to send  */
   short             frequency;         /* max frequency of exceptions */
   short             max_responses;     /* max  # of responses to send */
   short             avail_resp;        /* # of available hot readings */
   short             count;             /* # of returned hot readings  */
   char              *path;             /* path to grandpa context     */
   struct SpmiHotItems *items;          /* array of returned readings  */
};

/* Initialize, terminate, instantiate. SpmiExit (spmi_dds.h) ends both the
 * consumer and the supplier side of the process. TimeOut is 0 or 15..600. */
int  SpmiInit(int TimeOut);
int  SpmiInstantiate(SpmiCxHdl CxHandle);

/* Traversal. */
SpmiCxHdl            SpmiPathGetCx(CONST char *CxPath, SpmiCxHdl Parent);
struct SpmiCxLink   *SpmiFirstCx(SpmiCxHdl CxHandle);
struct SpmiCxLink   *SpmiNextCx(struct SpmiCxLink *CxLink);
struct SpmiStatLink *SpmiFirstStat(SpmiCxHdl CxHandle);
struct SpmiStatLink *SpmiNextStat(struct SpmiStatLink *StatLink);
struct SpmiCx       *SpmiGetCx(SpmiCxHdl CxHandle);
struct SpmiStat     *SpmiGetStat(SpmiStatHdl StatHandle);
char                *SpmiStatGetPath(SpmiCxHdl Parent, SpmiStatHdl StatHandle, int MaxLevels);

/* Statsets. */
struct SpmiStatSet  *SpmiCreateStatSet(void);
struct SpmiStatVals *SpmiPathAddSetStat(struct SpmiStatSet *StatSet, CONST char *StatName, SpmiCxHdl Parent);
struct SpmiStatVals *SpmiAddSetStat(struct SpmiStatSet *StatSet, SpmiStatHdl StatHandle, SpmiCxHdl CxHandle);
int                  SpmiDelSetStat(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal);
int                  SpmiFreeStatSet(struct SpmiStatSet *StatSet);
int                  SpmiGetStatSet(struct SpmiStatSet *StatSet, int Force);
struct SpmiStatVals *SpmiFirstVals(struct SpmiStatSet *StatSet);
struct SpmiStatVals *SpmiNextVals(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal);
float                SpmiGetValue(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal);
struct SpmiStatVals *SpmiNextValue(struct SpmiStatSet *StatSet, struct SpmiStatVals *StatVal, float *value);

/* Hotsets. */
struct SpmiHotSet   *SpmiCreateHotSet(void);
struct SpmiHotVals  *SpmiAddSetHot(struct SpmiHotSet *HotSet, CONST char *StatName, SpmiCxHdl GrandParent,
                                   int maxresp, int threshold, int frequency, int feed_type,
                                   int excp_type, int severity, int trap_no);
int                  SpmiDelSetHot(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVal);
int                  SpmiFreeHotSet(struct SpmiHotSet *HotSet);
int                  SpmiGetHotSet(struct SpmiHotSet *HotSet, int Force);
struct SpmiHotVals  *SpmiFirstHot(struct SpmiHotSet *HotSet);
struct SpmiHotVals  *SpmiNextHot(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVals);
struct SpmiHotVals  *SpmiNextHotItem(struct SpmiHotSet *HotSet, struct SpmiHotVals *HotVals,
                                     int *index, float *value, char **name);

#ifdef __cplusplus
}
#endif

#endif /* SPMIDEF_H */
