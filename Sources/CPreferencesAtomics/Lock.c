#include "CPreferencesAtomics.h"

// The slow paths of `preferences_lock` and `preferences_unlock`, taken only when another thread
// holds the lock. On Apple platforms `os_unfair_lock` has its own, and these are never called.

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void preferences_lock_contended(void *address) {
    _Atomic uint32_t *word = address;
    // Marked as having sleepers before sleeping, so that the holder's unlock wakes one. A thread
    // that finds the lock free here takes it marked so too: at worst one needless wake-up.
    while (atomic_exchange_explicit(word, 2, memory_order_acquire) != 0) {
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    }
}

void preferences_unlock_contended(void *address) {
    syscall(SYS_futex, address, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#elif !defined(__APPLE__)
#include <sched.h>

// No futex: yield until the lock is free. No platform this package supports takes this path.
void preferences_lock_contended(void *address) {
    _Atomic uint32_t *word = address;
    uint32_t expected = 0;
    while (!atomic_compare_exchange_weak_explicit(word, &expected, 1, memory_order_acquire, memory_order_relaxed)) {
        expected = 0;
        sched_yield();
    }
}

void preferences_unlock_contended(void *address) { (void)address; }
#else
void preferences_lock_contended(void *address) { (void)address; }
void preferences_unlock_contended(void *address) { (void)address; }
#endif
