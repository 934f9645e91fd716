#ifndef QUESTBAK_CLIBCEXTRAS_SHIM_H
#define QUESTBAK_CLIBCEXTRAS_SHIM_H
/// glibc functions that Swift's Glibc module does not import: malloc.h's settings, and the GNU
/// extension copy_file_range. Each is wrapped so that where it does not exist (another libc, an
/// older glibc) the call says so and the Swift side falls back.
#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#if defined(__linux__)
#include <malloc.h>
#include <unistd.h>
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 27))
/* glibc's own declaration, which unistd.h makes only under _GNU_SOURCE. */
extern ssize_t copy_file_range(int, __off64_t *, int, __off64_t *, size_t, unsigned int);
#define QUESTBAK_HAS_COPY_FILE_RANGE 1
#endif

/// Holds glibc's mmap threshold at `bytes`, which also stops glibc raising it as large blocks
/// are freed (`MallocSettings` says why a command wants that). Returns 1 when malloc took the
/// value, 0 where it did not or where malloc is not glibc's.
static inline int questbak_hold_mmap_threshold(int bytes) {
#if defined(M_MMAP_THRESHOLD)
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

/// copy_file_range(2) from the current offsets of both files, through glibc's function (not the
/// raw system call: the power-loss tests' recorder sees a copy by interposing that function).
/// -1 with errno ENOSYS where the C library has none; glibc's own returns ENOSYS on a kernel
/// without the call.
static inline long questbak_copy_file_range(int input, int output, size_t length) {
#if defined(QUESTBAK_HAS_COPY_FILE_RANGE)
    return copy_file_range(input, NULL, output, NULL, length, 0u);
#else
    (void)input; (void)output; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}

#endif
