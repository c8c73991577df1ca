// Allocating a file's blocks ahead of writes into a mapping of it.
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
