/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arm.h - the ARM 2.0 API (Application Response Measurement) of the
 * subagent's libarm. Names, types and constants follow the ARM 2.0 SDK, so
 * that a program written against the SDK builds against this header
 * unchanged; link it with -larm (libarm.so or libarm.a) and its
 * transactions appear in the daemon's tree as RTime/ARM/<app>/<tran>.
 * See docs/ARM.md.
 */
#ifndef ARM_H_INCLUDED
#define ARM_H_INCLUDED

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARM_API
#define ARM_API
#endif

/* The SDK's data types: native byte order, fixed widths. */
typedef int32_t int32;
typedef uint32_t unsigned32;
typedef int64_t int64;
typedef uint64_t unsigned64;
typedef uint16_t unsigned16;
typedef uint8_t unsigned8;
typedef unsigned char bit8;

typedef int32 arm_int32_t;
typedef unsigned32 arm_unsigned32_t;
typedef int64 arm_int64_t;
typedef unsigned64 arm_unsigned64_t;
typedef unsigned16 arm_unsigned16_t;
typedef unsigned8 arm_unsigned8_t;
typedef bit8 arm_bit8_t;
typedef char arm_char_t;

/* Handles and parameters of the six calls (ids and handles are int32). */
typedef int32 arm_appl_id_t;
typedef int32 arm_tran_id_t;
typedef int32 arm_start_handle_t;
typedef int32 arm_ret_stat_t;
typedef int32 arm_flag_t;
typedef int32 arm_data_sz_t;
typedef int32 arm_status_t;
typedef char arm_ptr_t;
typedef char arm_data_t;

/* Completion status of arm_stop. */
#define ARM_GOOD 0
#define ARM_ABORT 1
#define ARM_FAILED 2

/* Metric types of the meta-data buffer. */
#define ARM_Counter32 1
#define ARM_Counter64 2
#define ARM_CntrDivr32 3
#define ARM_Gauge32 4
#define ARM_Gauge64 5
#define ARM_GaugeDivr32 6
#define ARM_NumericID32 7
#define ARM_NumericID64 8
#define ARM_String8 9
#define ARM_String32 10

/* Data buffer formats. */
#define ARM_FORMAT_DATA 1     /* arm_start, arm_update, arm_stop */
#define ARM_FORMAT_OPAQUE 2   /* arm_update: status text */
#define ARM_FORMAT_META 101   /* arm_getid: metric declarations */

/* Flags byte 0 of a format 1 buffer (abcd0000). */
#define ARM_CORR_PARENT 0x80  /* a: the application passes a parent's correlator */
#define ARM_CORR_REQUEST 0x40 /* b: the application asks for a correlator */
#define ARM_CORR_RETURNED 0x20 /* c: the agent returned one */
#define ARM_TRACE_REQUEST 0x10 /* d: trace this transaction */

/* Flags byte 1 (abcdefg0): which metrics and the string are present. */
#define ARM_METRIC_FLAG(n) (0x80 >> ((n) - 1)) /* n = 1..6 */
#define ARM_STRING1_FLAG 0x02

#define ARM_CORR_MAX 168
#define ARM_DATA_MAX 256

/* One 8-byte metric field. */
typedef union arm_metric_t {
    unsigned32 counter32;
    unsigned64 counter64;
    struct { unsigned32 count; unsigned32 divisor; } cntrdivr32;
    int32 gauge32;
    int64 gauge64;
    struct { int32 gauge; unsigned32 divisor; } gaugedivr32;
    unsigned32 numericid32;
    unsigned64 numericid64;
    char string8[8];
} arm_metric_t;

/* A metric or string description of the meta-data buffer. */
typedef struct arm_user_meta_t {
    int32 type;
    char name[44];
} arm_user_meta_t;

/* arm_getid's meta-data buffer (format 101). */
typedef struct arm_user_data101_t {
    int32 format;
    bit8 flags[4];
    arm_user_meta_t metric[7]; /* six metrics, then String #1 */
} arm_user_data101_t;

/* A correlator: its length (network order, including this field), then data. */
typedef struct arm_correlator_t {
    unsigned16 length;
    char data[ARM_CORR_MAX - 2];
} arm_correlator_t;

/* The buffer of arm_start, arm_update and arm_stop (format 1). */
typedef struct arm_user_data1_t {
    int32 format;
    bit8 flags[4];
    arm_metric_t metric[6];
    char string1[32];
    arm_correlator_t correlator;
} arm_user_data1_t;

/* arm_update's opaque buffer (format 2). */
typedef struct arm_user_data2_t {
    int32 format;
    char string[1020];
} arm_user_data2_t;

extern arm_appl_id_t ARM_API arm_init(arm_ptr_t *appname, arm_ptr_t *appl_user_id,
                                      arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size);
extern arm_tran_id_t ARM_API arm_getid(arm_appl_id_t appl_id, arm_ptr_t *tran_name, arm_ptr_t *tran_detail,
                                       arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size);
extern arm_start_handle_t ARM_API arm_start(arm_tran_id_t tran_id, arm_flag_t flags,
                                            arm_data_t *data, arm_data_sz_t data_size);
extern arm_ret_stat_t ARM_API arm_update(arm_start_handle_t arm_handle, arm_flag_t flags,
                                         arm_data_t *data, arm_data_sz_t data_size);
extern arm_ret_stat_t ARM_API arm_stop(arm_start_handle_t arm_handle, const arm_status_t comp_status,
                                       arm_flag_t flags, arm_data_t *data, arm_data_sz_t data_size);
extern arm_ret_stat_t ARM_API arm_end(arm_appl_id_t appl_id, arm_flag_t flags,
                                      arm_data_t *data, arm_data_sz_t data_size);

#ifdef __cplusplus
}
#endif
#endif
