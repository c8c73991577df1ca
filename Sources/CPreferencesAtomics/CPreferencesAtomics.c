// The atomic operations are `static inline` in the header; this file holds the waits on shared words.
#include "CPreferencesAtomics.h"

#if defined(__linux__)
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

// Not FUTEX_PRIVATE_FLAG: the word is in a file mapped by several processes, and a shared futex
// is keyed by the file and offset, so a wake in one process reaches sleepers in every other.
bool preferences_can_wait(void) { return true; }

void preferences_wait(void *address, uint32_t expected) {
    syscall(SYS_futex, address, FUTEX_WAIT, expected, NULL, NULL, 0);
}

void preferences_wake_all(void *address) {
    syscall(SYS_futex, address, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
#elif defined(__APPLE__)
#include <fcntl.h>
#include <notify.h>
#include <poll.h>
#include <unistd.h>

// Apple platforms cannot sleep on a shared word: they sleep on a Darwin notification's descriptor
// instead (see `CommitSignal`), through the functions below.
bool preferences_can_wait(void) { return false; }

void preferences_wait(void *address, uint32_t expected) {
    (void)address;
    (void)expected;
}

void preferences_wake_all(void *address) { (void)address; }

int preferences_signal_register(const char *name, int *descriptor) {
    int token = -1;
    if (notify_register_file_descriptor(name, descriptor, 0, &token) != NOTIFY_STATUS_OK) {
        return -1;
    }
    // Never blocking in a read, so that a wake-up reads every notification queued since the last
    // (a full pipe ends the registration); and closed in a program this process executes. Without
    // either, no registration: the caller then checks the count every 50 ms.
    int flags = fcntl(*descriptor, F_GETFL);
    if (flags == -1 || fcntl(*descriptor, F_SETFL, flags | O_NONBLOCK) == -1 ||
        fcntl(*descriptor, F_SETFD, FD_CLOEXEC) == -1) {
        (void)notify_cancel(token);
        return -1;
    }
    return token;
}

void preferences_signal_wait(int descriptor) {
    struct pollfd ready = {.fd = descriptor, .events = POLLIN};
    (void)poll(&ready, 1, -1);
    int32_t token;
    while (read(descriptor, &token, sizeof token) > 0) {
    }
}

void preferences_signal_post(const char *name) { (void)notify_post(name); }

void preferences_signal_cancel(int token) { (void)notify_cancel(token); }
#else
bool preferences_can_wait(void) { return false; }

void preferences_wait(void *address, uint32_t expected) {
    (void)address;
    (void)expected;
}

void preferences_wake_all(void *address) { (void)address; }
#endif
