/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cons_internal.h - the consumer side of libSpmi (sys/Spmidef.h): the JSON
 * reader, the control-socket connection, and the handle tables shared by
 * cons_*.c. Not installed.
 */
#ifndef CONS_INTERNAL_H
#define CONS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "spmi_internal.h"
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

/* Appends s to w as a JSON string, quotes included; json_put_raw as it
 * is (JSON text). */
void json_put_str(struct dds_buf *w, const char *s);
void json_put_raw(struct dds_buf *w, const char *s);

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
extern pthread_mutex_t cons_mu;

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
int  cons_call(struct dds_buf *w, int retry);
/* Connects when disconnected or when the daemon closed the connection
 * since the last call; 0 or SiInitFailed. */
int  cons_ready(void);

/* ---- handles (cons_tree.c) -------------------------------------------- */

/* The context at a path ("" is Top, else "CPU/cpu0" with no trailing
 * slash), made when new; NULL (error set) when the table is full. */
SpmiCxHdl   cons_cx_at(const char *path);
/* The context of a handle, or NULL with SiInvalidCx set. */
struct cons_cx;
struct cons_cx *cons_cx(SpmiCxHdl h);
const char *cons_cx_path(const struct cons_cx *c);
SpmiCxHdl   cons_cx_hdl(const struct cons_cx *c);
/* The statistic handle of a descriptor (the daemon's "stat" object). */
SpmiStatHdl cons_stat_of(const struct jdoc *d, int stat);
struct SpmiStat *cons_stat(SpmiStatHdl h);
/* Frees every table (SpmiExit). */
void cons_tree_free(void);
void cons_sets_free(void);

/* "CPU/cpu0" + "/" + "idle" into out; 0, or SiBadArgument when too long
 * or a part is empty. */
int cons_join(char *out, size_t n, const char *a, const char *b);

#define CONS_MAX_PATH 1024

#pragma GCC visibility pop

#endif /* CONS_INTERNAL_H */
