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
#include <notify.h>
#include <unistd.h>

// Apple platforms sleep on a Darwin notification's descriptor (see `CommitSignal`), not on the word.
bool preferences_can_wait(void) { return true; }

void preferences_wait(void *address, uint32_t expected) {
    (void)address;
    (void)expected;
}

void preferences_wake_all(void *address) { (void)address; }

int preferences_signal_register(const char *name, int *descriptor) {
    int token = -1;
    return notify_register_file_descriptor(name, descriptor, 0, &token) == NOTIFY_STATUS_OK ? token : -1;
}

void preferences_signal_wait(int descriptor) {
    int32_t token;
    (void)read(descriptor, &token, sizeof token);
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
