#ifndef QUESTBAK_CMALLOC_SHIM_H
#define QUESTBAK_CMALLOC_SHIM_H
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

/// Holds glibc's mmap threshold at `bytes`, which also stops glibc raising it as large blocks
/// are freed (`MallocSettings` says why a command wants that). A macro and a function that
/// Swift's Glibc module does not import, hence this header. Returns 1 when malloc took the
/// value, 0 where it did not or where malloc is not glibc's.
static inline int questbak_hold_mmap_threshold(int bytes) {
#if defined(M_MMAP_THRESHOLD)
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

#endif
