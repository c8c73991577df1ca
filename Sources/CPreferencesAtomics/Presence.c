// Whether other processes have a lock file open: a lock on one byte past its page, held shared by
// every open lock file for as long as it is open, as LMDB asks of its lock file. The kernel drops
// it when the file is closed or the process dies, so a lock file nobody has open is found alone.
#define _GNU_SOURCE
#include "CPreferencesAtomics.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#if defined(__linux__) && defined(F_OFD_SETLK)
// Open file description locks: per open file, not per process, so two stores of one process on the
// same file see each other, and closing another descriptor of the file drops nothing.
static const off_t presence_offset = 4096;

static int set_presence(int descriptor, short type, int command) {
    struct flock lock = {0};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = presence_offset;
    lock.l_len = 1;
    while (fcntl(descriptor, command, &lock) != 0) {
        if (errno != EINTR) {
            return errno;
        }
    }
    return 0;
}

int preferences_presence_claim(int descriptor) {
    int result = set_presence(descriptor, F_WRLCK, F_OFD_SETLK);
    if (result == 0) {
        return 1;
    }
    if (result != EAGAIN && result != EACCES) {
        return -result;
    }
    // Others have it open; one of them may be setting the page up alone: wait for it.
    result = set_presence(descriptor, F_RDLCK, F_OFD_SETLKW);
    return result == 0 ? 0 : -result;
}

int preferences_presence_share(int descriptor) { return set_presence(descriptor, F_RDLCK, F_OFD_SETLK); }
#else
int preferences_presence_claim(int descriptor) {
    (void)descriptor;
    return -ENOTSUP;
}

int preferences_presence_share(int descriptor) {
    (void)descriptor;
    return ENOTSUP;
}
#endif
