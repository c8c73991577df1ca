// Allocating a file's blocks ahead of writes into a mapping of it, and setting its pages up.
#include "CPreferencesAtomics.h"

#include <errno.h>
#include <fcntl.h>

int preferences_allocate(int descriptor, int64_t length) {
#if defined(__linux__)
    // The blocks are the file system's from now on: a write into the mapping can no longer meet a
    // full disk, which would end the process with SIGBUS instead of returning an error.
    return posix_fallocate(descriptor, 0, (off_t)length);
#else
    (void)descriptor;
    (void)length;
    return ENOTSUP;
#endif
}

#if defined(__linux__)
#include <sys/mman.h>
// The value Linux 5.14 gave it in its user-space headers; glibc's headers name it from 2.35 on.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#endif

int preferences_prepare_for_writing(void *address, size_t length) {
#if defined(__linux__)
    // Faults the pages in for writing now, as writing a byte to each would. Kernels before 5.14
    // refuse it with EINVAL, and the pages then fault in when first written.
    return madvise(address, length, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
#else
    (void)address;
    (void)length;
    return ENOTSUP;
#endif
}
