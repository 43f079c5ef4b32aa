/* Test hook of the Matrix Market reader: lower its 32-bit index limit so that the overflow checks
 * (rows, entries, symmetric expansion) can be exercised with tiny files. Not for production use. */
#ifndef GS_MMIO_TESTING_H
#define GS_MMIO_TESTING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Largest size, entry count or expanded entry count the reader accepts; limit <= 0 restores the
 * default, GS_INT_MAX = 2147483647. */
void gs_mm_testing_set_index_limit(long long limit);

#ifdef __cplusplus
}
#endif
#endif
