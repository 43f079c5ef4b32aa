/* Shared pieces of the fuzz targets: the libFuzzer entry point, oracle checks that abort with a
 * message, temporary files, and configuration comparisons. */
#ifndef GS_FUZZ_UTIL_H
#define GS_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/config.h"

/* libFuzzer's entry point; every target defines it, libFuzzer or tests/fuzz/replay_main.c calls it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz oracle failed: ..." with the pending gs error and aborts (a crash for libFuzzer, a
 * failed test for the replay driver). */
void fuzz_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4), noreturn))
#endif
    ;
#define FUZZ_CHECK(cond, ...)                                                                       \
    do {                                                                                            \
        if (!(cond)) fuzz_fail(__FILE__, __LINE__, "check '" #cond "' failed: " __VA_ARGS__);       \
    } while (0)

/* A private temporary folder (created on first use, removed with its files at exit) and a path in it. */
void fuzz_temp_path(const char *name, char *buf, size_t len);
/* Writes the bytes as they are / gzip-compressed; aborts when the file cannot be written. */
void fuzz_write_file(const char *path, const uint8_t *data, size_t size);
void fuzz_write_gz(const char *path, const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (text after an embedded NUL is ignored by the C APIs). */
char *fuzz_cstring(const uint8_t *data, size_t size);

/* The configuration as libconfig text (gs_config_print without default marks), malloc'd. */
char *fuzz_config_text(const gs_config *cfg);
/* The first key whose value differs between a and b, or NULL when every value is equal. */
const char *fuzz_config_diff(const gs_config *a, const gs_config *b);
/* Printing cfg and loading the text into a fresh configuration (sweep lists allowed or not) gives
 * back every value exactly, and prints the same text again. */
void fuzz_check_config_roundtrip(const gs_config *cfg, bool lists);
/* The gs error state after a failed call: a status of the expected kinds and a non-empty message. */
void fuzz_check_error(gs_status st, const char *what);

#endif
