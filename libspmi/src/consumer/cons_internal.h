/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_internal.h - the consumer half of libSpmi (sys/Spmidef.h), in
 * layers that call only downwards (TestCSourcesCallNoCircle):
 *
 *   cons_exit.c                          SpmiExit's consumer part
 *                   cons_hotread.c       reading hotsets
 *   cons_statset.c  cons_hotset.c        the sets (cons_hotset.h)
 *   cons_tree.c                          traversal
 *   cons_handles.c  cons_value.c         handle tables; times and values
 *   cons_conn.c                          SpmiInit, the control socket
 *   json.c                               the JSON reader and writer
 *
 * all above the shared ../spmi_internal.h. Not installed.
 */
#ifndef CONS_INTERNAL_H
#define CONS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "../spmi_internal.h"
#include "sys/Spmidef.h"

#pragma GCC visibility push(hidden)

/* ---- JSON (json.c) ---------------------------------------------------- */

/* The largest answer the library reads from the daemon, and the deepest
 * nesting; a longer or deeper answer is an error, never a crash. */
#define CONS_MAX_ANSWER (8u << 20)
#define JSON_MAX_DEPTH  64

enum jtype { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };

/* A parsed document: nodes in one array, linked by index (-1: none). */
struct jnode {
   enum jtype type;
   int        first, next; /* first child; next sibling */
   const char *key;        /* member name in an object, else NULL */
   const char *s;          /* string (NUL-terminated, no NUL inside), or
                            * the number's text (not terminated) */
   size_t     len;
};

struct jdoc {
   struct jnode *n;
   int           nn, cap;
   char         *strs;     /* decoded strings, NUL-terminated */
   size_t        slen, scap;
   char          err[160];
};

/* Parses len bytes of text into d (which it resets); 0, or -1 with d->err
 * saying where and why. The text is one JSON value with optional white
 * space around it; strings may not contain NUL (\u0000). */
int  json_parse(struct jdoc *d, const char *text, size_t len);
void json_free(struct jdoc *d);

/* Member key of object node o, or -1. */
int json_get(const struct jdoc *d, int o, const char *key);
/* Typed views: 0 when the node is not of the kind or out of range. */
int json_str(const struct jdoc *d, int i, const char **s);
int json_u64(const struct jdoc *d, int i, uint64_t *v);
int json_i64(const struct jdoc *d, int i, int64_t *v);
int json_f64(const struct jdoc *d, int i, double *v);
int json_int(const struct jdoc *d, int i, int *v); /* fits in int */
int json_len(const struct jdoc *d, int i);         /* elements of an array, or -1 */

/* Appends s to w as a JSON string, quotes included; json_putf appends
 * JSON text as printf formats it. */
void json_put_str(struct spmi_buf *w, const char *s);
void json_putf(struct spmi_buf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- connection (cons_conn.c) ----------------------------------------- */

struct cons_state {
   int      inited;
   struct jdoc doc;        /* the last answer */
   int      sock;          /* -1 while disconnected */
   unsigned gen;           /* connections made: hotsets replay when it moves */
   char     path[4096];    /* the control socket */
   char    *rbuf;          /* bytes read past the last answer */
   size_t   rlen, rcap;
};
extern struct cons_state cons_st;

/* Locks for a consumer call and clears the error; 0, or an SPMI code with
 * the error set (SiNotInit before SpmiInit, SiLocked inside a signal
 * handler that interrupted a call). */
int  cons_lock(void);
void cons_unlock(void);

/* Sends one request line (w holds the JSON object) and parses the answer
 * into cons_st.doc (node 0 is its object); 0, or the SPMI code (the
 * daemon's, passed on, or SiInitFailed when it cannot be reached,
 * SiOtherErr for a malformed answer). A broken connection is closed and
 * dialled again by the next call; with retry, a request that met a
 * connection the daemon had closed is sent once more on a new one (only
 * for requests that do not depend on the session: peek, get). w is
 * freed. */
int  cons_call(struct spmi_buf *w, int retry);
/* The code of the daemon's error object e ({"code":..,"msg":..}),
 * SiOtherErr when it has none; with msg, its message. */
int  cons_err_code(const struct jdoc *d, int e, const char **msg);
/* Connects when disconnected or when the daemon closed the connection
 * since the last call; 0 or SiInitFailed. */
int  cons_ready(void);
void cons_close(void);

/* ---- handles (cons_handles.c) ------------------------------------------ */

/* A context the program holds a handle of, in slot i of the table. */
struct cons_cx {
   struct SpmiCx        pub;
   char                *path;   /* "" for Top, "CPU/cpu0" */
   uint32_t             gen;
   int                  used, info, seen;
   struct SpmiCxLink   *links;  /* the last SpmiFirstCx listing */
   int                  nlinks;
   struct SpmiStatLink *slinks; /* the last SpmiFirstStat listing */
   int                  nslinks;
};

/* The context at a path ("" is Top, else "CPU/cpu0" with no trailing
 * slash), made when new; NULL (error set) when the table is full. */
SpmiCxHdl   cons_cx_at(const char *path);
/* The context of a handle, or NULL with SiInvalidCx set. */
struct cons_cx *cons_cx(SpmiCxHdl h);
/* The statistic handle of a descriptor (the daemon's "stat" object). */
SpmiStatHdl cons_stat_of(const struct jdoc *d, int stat);
struct SpmiStat *cons_stat(SpmiStatHdl h);

/* The slots, for the traversal: how many, slot i's context and handle,
 * the slot of a path (made when new; -1 with the error set) or of a
 * context (-1: none), the slot a call works on (never reused under it),
 * and a slot's new listing (stat: of statistics). */
int              cons_nslots(void);
struct cons_cx  *cons_slot_cx(int i);
SpmiCxHdl        cons_slot_hdl(int i);
int              cons_slot(const char *path);
int              cons_slot_of(const struct cons_cx *c);
void             cons_busy(int i);
void             cons_listed(int i, int stat);
/* The element after link in the listing that holds it (stat: a
 * SpmiStatLink); NULL at its end, or with SiBadArgument when link is none
 * of the library's. */
void *cons_next_link(const void *link, int stat);

/* "CPU/cpu0" + "/" + "idle" into out; 0, or SiBadArgument when too long
 * or a part is empty. */
int cons_join(char *out, size_t n, const char *a, const char *b);

/* ---- times and values (cons_value.c) ----------------------------------- */

/* A reading of a value, as the daemon sent it. */
struct cons_raw {
   int      kind; /* 0 none, 'u', 'i', 'f', 's' */
   uint64_t u;
   int64_t  i;
   double   f;
};

/* RFC 3339 time as Go writes it; 0 or -1. */
int    cons_parse_time(const char *s, int64_t *sec, long *nsec);
void   cons_to_timeval(struct timeval *tv, int64_t sec, long nsec);
void   cons_elapsed_tv(struct timeval *tv, double e); /* 0 <= e <= 1e9 */
long   cons_to_long(double x);                        /* clamped */
float  cons_to_float(double x);                       /* clamped */
/* A value from the daemon ({"u":..}, {"i":..}, {"f":..}, {"s":..}, null)
 * at node j; 0, or -1 for one this library does not read. */
int    cons_read_value(const struct jdoc *d, int j, struct cons_raw *r);
double cons_raw_f64(const struct cons_raw *r);
/* A counter's change from a to b (0 when it went back: a restart). */
double cons_counter_change(const struct cons_raw *a, const struct cons_raw *b);
/* r (or, with is_change, change) into the guide's union as type t. */
void   cons_put_value(union Value *u, enum DataType t, const struct cons_raw *r, double change, int is_change);

/* ---- sets (cons_statset.c, cons_hotset.c) -----------------------------
 * Set and value pointers passed back are looked up among the library's
 * own before they are used: a freed or foreign one is an error
 * (SiInvalidCx for a set, SiNotFound or SiBadArgument for a value), never
 * a crash. */

#define MAX_SETS 4096 /* statsets, and hotsets, a process keeps */

/* Each layer's part of cons_exit: frees its tables. */
void cons_statsets_free(void);
void cons_hotsets_free(void);
void cons_tree_free(void);
void cons_handles_free(void);

#define CONS_MAX_PATH 1024

#pragma GCC visibility pop

#endif /* CONS_INTERNAL_H */
