// The atomic operations are `static inline` in the header; this file holds the waits on shared
// words and the mapping guard.
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
#else
bool preferences_can_wait(void) { return false; }

void preferences_wait(void *address, uint32_t expected) {
    (void)address;
    (void)expected;
}

void preferences_wake_all(void *address) { (void)address; }
#endif

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

enum { slot_count = 1024 };

// Registration claims a free slot with a compare-and-swap on `claimed`, fills it in, and publishes
// `start` last; the handler, which may run on any thread at any moment, skips a slot whose `start`
// is 0, so it never sees one half filled in.
static struct {
    _Atomic bool claimed;
    _Atomic uintptr_t start;
    _Atomic size_t length;
    _Atomic bool lost;
} slots[slot_count];

static struct sigaction previous_action;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static bool installed;

static void forward(int signal_number, siginfo_t *info, void *context) {
    if (previous_action.sa_flags & SA_SIGINFO) {
        previous_action.sa_sigaction(signal_number, info, context);
    } else if (previous_action.sa_handler == SIG_DFL || previous_action.sa_handler == SIG_IGN) {
        // Returning re-runs the faulting access, which faults again and now takes the default
        // action: the process stops exactly as it would have without this guard.
        sigaction(signal_number, &previous_action, NULL);
    } else {
        previous_action.sa_handler(signal_number);
    }
}

// The handler may interrupt ThreadSanitizer's runtime in the middle of an atomic operation, holding
// a lock its instrumentation of this handler's own atomics would take again: under that sanitizer
// the handler hung. Left uninstrumented, its atomics are the plain instructions they are anyway.
#if defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
__attribute__((disable_sanitizer_instrumentation))
#endif
#endif
static void handle_bus_error(int signal_number, siginfo_t *info, void *context) {
    uintptr_t address = (uintptr_t)info->si_addr;
    for (int index = 0; index < slot_count; index++) {
        uintptr_t start = atomic_load(&slots[index].start);
        if (start == 0 || address < start || address - start >= atomic_load(&slots[index].length)) {
            continue;
        }
        // Marked before the page is replaced, so that a thread finding zeros there finds the mark
        // too (a holder of the lock page's mutex must map the file again before it lets go); and
        // again after, in case another thread took the first mark and mapped the file again before
        // the zeros went in.
        atomic_store(&slots[index].lost, true);
        // mmap is a plain system call here; replacing the mapping in place keeps the address valid
        // for every thread that holds it.
        long page_size = sysconf(_SC_PAGESIZE);
        uintptr_t page = address - (address % (uintptr_t)page_size);
        void *replaced = mmap((void *)page, (size_t)page_size, PROT_READ | PROT_WRITE,
                              MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (replaced == MAP_FAILED) {
            break;
        }
        atomic_store(&slots[index].lost, true);
        return;
    }
    forward(signal_number, info, context);
}

static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handle_bus_error;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    installed = sigaction(SIGBUS, &action, &previous_action) == 0;
}

int preferences_guard_register(void *address, size_t length) {
    pthread_once(&install_once, install);
    if (!installed || address == NULL || length == 0) {
        return -1;
    }
    for (int index = 0; index < slot_count; index++) {
        bool expected = false;
        if (atomic_compare_exchange_strong(&slots[index].claimed, &expected, true)) {
            atomic_store(&slots[index].length, length);
            atomic_store(&slots[index].lost, false);
            atomic_store(&slots[index].start, (uintptr_t)address);
            return index;
        }
    }
    return -1;
}

void preferences_guard_unregister(int slot) {
    if (slot >= 0 && slot < slot_count) {
        atomic_store(&slots[slot].start, 0);
        atomic_store(&slots[slot].claimed, false);
    }
}

bool preferences_guard_take_lost(int slot) {
    return slot >= 0 && slot < slot_count && atomic_exchange(&slots[slot].lost, false);
}

void preferences_guard_mark_lost(int slot) {
    if (slot >= 0 && slot < slot_count) {
        atomic_store(&slots[slot].lost, true);
    }
}

const void *preferences_guard_mark(int slot) {
    static _Atomic bool never_set = false;
    return slot >= 0 && slot < slot_count ? (const void *)&slots[slot].lost : (const void *)&never_set;
}

bool preferences_guard_is_lost(int slot) { return preferences_guard_mark_is_set(preferences_guard_mark(slot)); }
