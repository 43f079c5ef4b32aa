/* Status codes, the error trace, and the propagation macros every fallible function uses. */
#ifndef GS_STATUS_H
#define GS_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_status {
    GS_OK = 0,
    GS_ERR_ARG,         /* a caller passed something invalid (programming or usage error) */
    GS_ERR_MEM,         /* host allocation failed */
    GS_ERR_DEVICE_MEM,  /* device allocation failed */
    GS_ERR_CUDA,        /* CUDA runtime error */
    GS_ERR_CUSPARSE,    /* cuSPARSE error */
    GS_ERR_CUBLAS,      /* cuBLAS error */
    GS_ERR_METIS,       /* METIS error */
    GS_ERR_IO,          /* a file could not be opened, read or written, or is malformed */
    GS_ERR_CONFIG,      /* configuration or option error */
    GS_ERR_UNSUPPORTED, /* valid request this build / backend cannot do */
    GS_ERR_NO_DEVICE,   /* a GPU was required but none is usable */
    GS_ERR_NUMERIC,     /* numerical failure in setup (zero pivot, singular diagonal) */
    GS_ERR_INTERRUPTED, /* SIGINT/SIGTERM */
    GS_ERR_INTERNAL     /* a bug: an invariant did not hold */
} gs_status;

/* Name of a status, e.g. "GS_ERR_IO". */
const char *gs_status_name(gs_status st);

/* Records the first error message of a failure (printf-style) with its origin; later calls while an
 * error is pending are ignored so the root cause survives. Returns st, for `return gs_error(...)`. */
gs_status gs_error_set(gs_status st, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Appends a frame (file:line expr) to the pending error's trace. */
void gs_error_push(gs_status st, const char *file, int line, const char *expr);
/* The pending error's message ("" when none) and status (GS_OK when none). */
const char *gs_error_message(void);
gs_status gs_error_status(void);
/* Prints message and trace ("  at file:line: expr") to f. */
void gs_error_print(FILE *f);
/* The pending error as a user sees it: its message, and the trace only when `trace` is asked for, when
 * the environment variable GS_DEBUG is set (not empty, not "0"; docs/user-guide.md#environment) or for
 * an internal error. */
void gs_error_print_user(FILE *f, bool trace);
/* Forgets the pending error. */
void gs_error_clear(void);

/* return GS_ERROR(GS_ERR_IO, "%s:%d: expected ...", path, line); */
#define GS_ERROR(st, ...) gs_error_set((st), __FILE__, __LINE__, __VA_ARGS__)

/* Propagate a failure to the caller, adding a trace frame. */
#define GS_CALL(expr)                                                                  \
    do {                                                                               \
        gs_status gs_call_st_ = (expr);                                                \
        if (gs_call_st_ != GS_OK) {                                                    \
            gs_error_push(gs_call_st_, __FILE__, __LINE__, #expr);                     \
            return gs_call_st_;                                                        \
        }                                                                              \
    } while (0)

/* Same, for functions with one cleanup path: stores into `st` and jumps to `cleanup`. */
#define GS_TRY(expr)                                                                   \
    do {                                                                               \
        st = (expr);                                                                   \
        if (st != GS_OK) {                                                             \
            gs_error_push(st, __FILE__, __LINE__, #expr);                              \
            goto cleanup;                                                              \
        }                                                                              \
    } while (0)

/* Jump to cleanup with a fresh error. */
#define GS_FAIL(stv, ...)                                                              \
    do {                                                                               \
        st = gs_error_set((stv), __FILE__, __LINE__, __VA_ARGS__);                     \
        goto cleanup;                                                                  \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
