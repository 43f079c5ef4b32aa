/* One device allocation cut into 256-byte aligned arrays (CUDA C++ files): a first pass with base NULL
 * adds up the size, a second pass with the allocation hands out the pieces in the same order. */
#ifndef GS_CARVE_H
#define GS_CARVE_H

#include <stddef.h>

struct gs_carver {
    char *base;
    size_t off;
    template <typename T>
    T *take(size_t count)
    {
        T *p = base ? (T *)(base + off) : NULL;
        off += (count * sizeof(T) + 255) & ~(size_t)255;
        return p;
    }
};

#endif
