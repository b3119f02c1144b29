/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spmi_dds.h - the Dynamic Data Supplier API of the SPMI guide, for the
 * subagent daemon. A supplier written to the guide compiles against this
 * header in place of <sys/Spmidef.h>, calling SpmiDdsInit with the sixth
 * (size) argument the guide requires on non-AIX systems. <sys/Spmidef.h>
 * (include/sys) includes this header and adds the guide's consumer API.
 *
 * The shared file format and the registration protocol are in docs/DDS.md.
 * SpmiShare below IS the file's header: its layout is fixed (little-endian,
 * fixed-width fields at offsets that are multiples of their size), the same
 * for 32- and 64-bit processes, and checked at compile time.
 */
#ifndef SPMI_DDS_H
#define SPMI_DDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SI_MAXNAME  32  /* short names, with the NUL */
#define SI_MAXLNAME 64  /* descriptions and context paths, with the NUL */
#define SI_MAXERRMSG 1024 /* size of SpmiErrmsg */

#ifndef CONST
#define CONST const
#endif

/* SPMI error codes (SpmiErrno), from the guide's table. */
#define SiSuccess       0
#define SiInvalidCx     180 /* the referenced context doesn't exist */
#define SiNoShmPtr      181 /* unable to identify shared memory segment */
#define SiShmemFailed   182 /* unable to access shared memory */
#define SiAssumedDead   183 /* a data-supplier program appears to have terminated */
#define SiInstBusy      184 /* can't instantiate; shared memory update in progress */
#define SiNotInst       185 /* requested instantiation could not be performed */
#define SiNotInit       186 /* SPMI interface not initialized */
#define SiBadArgument   187 /* one or more arguments is invalid */
#define SiNotFound      188 /* a requested data structure doesn't exist */
#define SiNoValue       189 /* no data value returned */
#define SiInitFailed    190 /* initializing of the SPMI API failed */
#define SiSmuxFailed    191 /* context could not be exported through SMUX */
#define SiLocked        192 /* another process holds the lock; retry */
#define SiDuplicate     193 /* attempt to add a context path that already exists */
#define SiCallocFailed  194 /* memory allocation error */
#define SiNoLicense     195 /* no licence to use is installed and valid */
#define SiDeleted       196 /* the requested context has been deleted */
#define SiOtherErr      197 /* unspecified internal error */

enum ValType
{
   SiCounter,   /* field is always incremented */
   SiQuantity   /* field maintains a level     */
};

enum DataType
{
   SiULong,
   SiLong,
   SiUInt,
   SiInt,
   SiUShort,
   SiShort,
   SiChar,
   SiAddr,
   SiTimeval,
   SiFloat,
   SiDouble,
   SiPtr,
   SiUnsign
};

enum SiInstFreq
{
   SiNoInst,    /* subcontexts never change */
   SiCfgInst,   /* subcontext changes are system configuration changes */
   SiContInst   /* system operation changes subcontexts continuously */
};

struct SpmiRawStat
{
   char           name[SI_MAXNAME];         /* short name of statistic     */
   char           description[SI_MAXLNAME]; /* descriptive name            */
   long           min;                      /* default low scale value     */
   long           max;                      /* default high scale value    */
   enum ValType   value_type;               /* data type presented to API  */
   enum DataType  data_type;                /* data format presented to API*/
   unsigned short asnno;                    /* ASN.1 number                */
   unsigned short size;                     /* source data field size      */
   int            offset;                   /* source data field offset    */
   enum DataType  type;                     /* source data field format    */
   int            (*get_fun)();             /* unused, leave NULL          */
};

typedef struct
{
   char           path[SI_MAXLNAME];        /* context path name              */
   char           descr[SI_MAXLNAME];       /* context description            */
   unsigned short asnno;                    /* ASN.1 number                   */
   unsigned short datasize;                 /* size of context record         */
   CONST struct SpmiRawStat *stats;         /* Stat array pointer for context */
   int            num_stats;                /* element count of Stat array    */
   CONST struct SpmiRawStat *inst_stats;    /* unused, leave NULL             */
   int            num_inst_stats;           /* unused, leave 0                */
   int            (*inst_subs)();           /* unused, leave NULL             */
   int            inst_freq;                /* enum SiInstFreq                */
   unsigned long  level;                    /* work field                     */
   char           *area;                    /* work field                     */
   unsigned long  arealen;                  /* work field                     */
} cx_create;

/* SZ_OFF(struct tag, field, DataType) fills size, offset and type. */
#define SZ_OFF(s, f, t) \
   (unsigned short)sizeof(((struct s *)0)->f), (int)offsetof(struct s, f), t
#define STAT_L(tab) ((int)(sizeof(tab) / sizeof(struct SpmiRawStat)))
#define CX_L(tab)   ((int)(sizeof(tab) / sizeof(cx_create)))

/*
 * The shared file's header. A supplier uses SiShArea, SiShT, SiShGoAway,
 * SiShInterval and SiShSubscrib; the rest belongs to the library and the
 * daemon (the batch counters through SpmiDdsBegin and SpmiDdsEnd).
 * Offsets are in the comments; the daemon never follows SiShArea (a
 * pointer into the supplier's own mapping) and never interprets SiShT.
 */
typedef struct SpmiShare
{
   char              SiShMagic[8];   /*   0 "SPMIDDS\0"                      */
   int16_t           SiShMajor;      /*   8 format major version (1)         */
   int16_t           SiShMinor;      /*  10 format minor version (1)         */
   uint32_t          SiShHdrLen;     /*  12 sizeof(SpmiShare)                */
   uint32_t          SiShAllocLen;   /*  16 length of the file               */
   uint32_t          SiShAreaOff;    /*  20 offset of the data area          */
   uint32_t          SiShAreaLen;    /*  24 length of the data area          */
   uint32_t          SiShPermLen;    /*  28 permanent part of the data area  */
   uint64_t          SiShGen;        /*  32 generation, stored last          */
   int32_t           SiShPid;        /*  40 creating process                 */
   uint32_t          SiShFlags;      /*  44 reserved, 0                      */
   uint64_t          SiShStart;      /*  48 its start time (/proc stat #22)  */
   union {
      char          *SiShArea;       /*  56 the data area, in this process   */
      uint64_t       SiShAreaAddr;   /*     fixes the size on 32-bit         */
   };
   union {
      struct timeval SiShT;          /*  64 time of last area update         */
      uint64_t       SiShTRaw[2];    /*     fixes the size on 32-bit         */
   };
   volatile uint32_t SiShGoAway;     /*  80 nonzero: the daemon gave up      */
   volatile int32_t  SiShInterval;   /*  84 ms between requests for values   */
   volatile int32_t  SiShSubscrib;   /*  88 values currently requested       */
   uint16_t          SiShPortNo;     /*  92 ignored (RSi)                    */
   uint16_t          SiShPad;        /*  94 reserved, 0                      */
   char              SiShName[64];   /*  96 file name, truncated             */
   uint32_t          SiShBatch;      /* 160 batches begun (SpmiDdsBegin)     */
   uint32_t          SiShBatchEnd;   /* 164 batches ended (SpmiDdsEnd)       */
   uint32_t          SiShReading;    /* 168 odd while the daemon copies      */
   uint32_t          SiShPad2;       /* 172 reserved, 0                      */
   uint64_t          SiShRes[10];    /* 176 reserved, 0                      */
} SpmiShare;                         /* 256                                 */

#if (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) || \
    (defined(__cplusplus) && __cplusplus >= 201103L)
#ifdef __cplusplus
#define SPMI_DDS_ASSERT static_assert
#else
#define SPMI_DDS_ASSERT _Static_assert
#endif
SPMI_DDS_ASSERT(sizeof(SpmiShare) == 256, "SpmiShare is 256 bytes");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShGen) == 32, "SiShGen at 32");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShStart) == 48, "SiShStart at 48");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShArea) == 56, "SiShArea at 56");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShT) == 64, "SiShT at 64");
SPMI_DDS_ASSERT(sizeof(struct timeval) <= 16, "struct timeval fits in 16 bytes");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShGoAway) == 80, "SiShGoAway at 80");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShName) == 96, "SiShName at 96");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShBatch) == 160, "SiShBatch at 160");
SPMI_DDS_ASSERT(offsetof(SpmiShare, SiShRes) == 176, "SiShRes at 176");
#undef SPMI_DDS_ASSERT
#endif

extern int  SpmiErrno;    /* SPMI error code of the last call, 0 if none */
extern char SpmiErrmsg[]; /* its text (SI_MAXERRMSG bytes), "" if none   */

/*
 * Registers the supplier: creates FileName with a data area of Size bytes
 * (enlarged to cover every permanent statistic), sends the tables to the
 * daemon, and returns the header, or NULL with SpmiErrno and SpmiErrmsg set.
 */
SpmiShare *SpmiDdsInit(CONST cx_create *CxTab, int CxCnt,
                       CONST cx_create *IxTab, int IxCnt,
                       CONST char *FileName, int Size);

/* Adds element Ix of the volatile table as context Path; returns its data
 * area, or NULL with SpmiErrno and SpmiErrmsg set. */
char *SpmiDdsAddCx(unsigned short Ix, CONST char *Path, CONST char *Descr,
                   int Asnno);

/* Deletes the volatile context whose data area SpmiDdsAddCx returned;
 * 0 on success. */
int SpmiDdsDelCx(char *Area);

/* Unregisters, unmaps and removes the shared file; also ends the consumer
 * side (SpmiInit, sys/Spmidef.h) of the process. */
void SpmiExit(void);

/* Extension, not in the guide: registers again if the daemon went away
 * (restarted), replaying every live volatile context at its old slot, so
 * the pointers SpmiDdsAddCx returned stay valid; 0 when registered,
 * else the SPMI code (also in SpmiErrno). SpmiDdsAddCx and SpmiDdsDelCx
 * do the same before their request; a main loop that calls neither may
 * call this after each update. It costs one non-blocking recv. */
int SpmiDdsCheck(void);

/* Extension, not in the guide: a batch of updates that the daemon serves
 * whole. Values written between SpmiDdsBegin and SpmiDdsEnd are read all
 * from before or all from after the batch, never a mix:
 *
 *    SpmiDdsBegin();
 *    dataarea->reads += r;
 *    dataarea->bytes += b;
 *    SpmiDdsEnd();
 *
 * Threads may run batches at once, and batches may nest (they pair up per
 * thread; an SpmiDdsEnd without a batch open does nothing). Every
 * SpmiDdsBegin needs its SpmiDdsEnd: while a batch is open the daemon
 * serves the values of its last consistent read. Each is one atomic
 * increment, no lock and no system call; SpmiDdsBegin waits, at most a
 * millisecond, while the daemon is copying values. They neither fail nor
 * set SpmiErrno; outside a registration they do nothing. Writes outside
 * a batch are read as they happen, as before. */
void SpmiDdsBegin(void);
void SpmiDdsEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* SPMI_DDS_H */
