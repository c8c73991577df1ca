#ifndef C_PREFERENCES_ATOMICS_H
#define C_PREFERENCES_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

// Atomic operations on a 64-bit counter in memory shared between processes (a mapped file).
// Swift's `Atomic` lives only in a Swift variable and cannot address shared memory.

static inline uint64_t preferences_atomic_load(const void *address) {
    return atomic_load_explicit((const _Atomic uint64_t *)address, memory_order_acquire);
}

/// Adds one and returns the new value.
static inline uint64_t preferences_atomic_increment(void *address) {
    return atomic_fetch_add_explicit((_Atomic uint64_t *)address, 1, memory_order_acq_rel) + 1;
}

#endif
