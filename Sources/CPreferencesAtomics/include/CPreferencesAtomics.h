#ifndef C_PREFERENCES_ATOMICS_H
#define C_PREFERENCES_ATOMICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Atomic operations on 64-bit words in memory shared between processes (a mapped file).
// Swift's `Atomic` lives only in a Swift variable and cannot address shared memory.

static inline uint64_t preferences_atomic_load(const void *address) {
    return atomic_load_explicit((const _Atomic uint64_t *)address, memory_order_acquire);
}

static inline void preferences_atomic_store(void *address, uint64_t value) {
    atomic_store_explicit((_Atomic uint64_t *)address, value, memory_order_release);
}

/// Adds one and returns the new value.
static inline uint64_t preferences_atomic_increment(void *address) {
    return atomic_fetch_add_explicit((_Atomic uint64_t *)address, 1, memory_order_acq_rel) + 1;
}

/// Adds one and returns the new value, ordered with every other sequentially consistent operation:
/// for counts that two sides must each see the other's change of (see `preferences_wait`).
static inline uint64_t preferences_atomic_increment_sequenced(void *address) {
    return atomic_fetch_add_explicit((_Atomic uint64_t *)address, 1, memory_order_seq_cst) + 1;
}

static inline uint64_t preferences_atomic_decrement_sequenced(void *address) {
    return atomic_fetch_sub_explicit((_Atomic uint64_t *)address, 1, memory_order_seq_cst) - 1;
}

static inline uint64_t preferences_atomic_load_sequenced(const void *address) {
    return atomic_load_explicit((const _Atomic uint64_t *)address, memory_order_seq_cst);
}

/// Stores `desired` if the word still holds `expected`, ordered with every other sequentially
/// consistent operation; returns whether it did.
static inline bool preferences_atomic_compare_exchange_sequenced(void *address, uint64_t expected, uint64_t desired) {
    return atomic_compare_exchange_strong_explicit(
        (_Atomic uint64_t *)address, &expected, desired, memory_order_seq_cst, memory_order_seq_cst);
}

/// Orders every store before it before every store after it, as seen from any process.
static inline void preferences_fence_release(void) { atomic_thread_fence(memory_order_release); }

// Waiting for another process to change a word in shared memory, without polling.

/// Whether this platform can wait on a shared word (Linux: a futex). Apple platforms cannot, and
/// wait on a Darwin notification instead (below); elsewhere a caller must poll.
bool preferences_can_wait(void);

/// Sleeps while the 32-bit word at `address` equals `expected`, until `preferences_wake_all` on the
/// same word from any process. May return early (a signal, or a spurious wake-up); check again.
void preferences_wait(void *address, uint32_t expected);

/// Wakes every thread of every process sleeping in `preferences_wait` on the word at `address`.
void preferences_wake_all(void *address);

#if defined(__APPLE__)
// Apple platforms wait through Darwin notifications (`notify.h`) instead.

/// Registers for the notification `name` with a descriptor, non-blocking and closed on `exec`, that
/// each post makes readable. Returns the registration's token, with the descriptor in `descriptor`,
/// or -1.
int preferences_signal_register(const char *name, int *descriptor);

/// Sleeps until the descriptor of a registration is readable, then reads everything queued there.
void preferences_signal_wait(int descriptor);

/// Posts the notification `name` to every process registered for it.
void preferences_signal_post(const char *name);

/// Ends a registration, closing its descriptor.
void preferences_signal_cancel(int token);
#endif

// A robust, process-shared mutex in a page mapped by several processes (Linux with glibc).

/// The bytes a mutex takes in the shared page, at most.
#define PREFERENCES_MUTEX_SIZE 64

/// Whether this platform has a robust, process-shared mutex; where it does not, lock a file.
bool preferences_mutex_is_supported(void);

/// Sets up a mutex at `address` (PREFERENCES_MUTEX_SIZE bytes, 8-aligned); returns 0 or an `errno`.
int preferences_mutex_init(void *address);

/// Locks the mutex at `address`, waiting for its holder. Returns 0; or EOWNERDEAD when its last
/// holder died holding it, in which case the caller holds it now and it is usable again (marked
/// consistent); or another `errno`, in which case nothing is held.
int preferences_mutex_lock(void *address);

/// Locks the mutex at `address` if nobody holds it, without waiting. Returns what
/// `preferences_mutex_lock` does, or EBUSY when another holds it, in which case nothing is held.
int preferences_mutex_trylock(void *address);

/// Unlocks the mutex at `address`, which the calling thread holds; returns 0 or an `errno`.
int preferences_mutex_unlock(void *address);

// Whether a lock file is open anywhere else (Linux: open file description locks).

/// Takes the lock file's presence lock: exclusively, returning 1, when no other open file holds it
/// (nobody else has the file open); else shared, returning 0, once no opener holds it exclusively.
/// Returns a negative `errno` when it cannot tell (-ENOTSUP where the platform has no such lock).
int preferences_presence_claim(int descriptor);

/// Turns an exclusive presence lock into a shared one, at once; returns 0 or an `errno`.
int preferences_presence_share(int descriptor);

/// Allocates the blocks of the file open as `descriptor` up to `length` bytes, lengthening it if
/// shorter (Linux: `posix_fallocate`). Returns 0 or an `errno`; ENOTSUP elsewhere.
int preferences_allocate(int descriptor, int64_t length);

/// Sets up the pages of a shared mapping for writing now (Linux 5.14 and later:
/// `MADV_POPULATE_WRITE`). Returns 0 or an `errno`; ENOTSUP elsewhere.
int preferences_prepare_for_writing(void *address, size_t length);

/// Whether `preferences_crc32c_update` uses the processor's CRC-32C instruction: 1 on x86-64 with
/// SSE 4.2, on Apple's arm64 processors, and on arm64 built for the CRC extension; 0 elsewhere.
int preferences_crc32c_is_accelerated(void);

/// Continues a CRC-32C over `count` bytes, without the initial or final inversion. Call it only when
/// `preferences_crc32c_is_accelerated` returns 1; elsewhere it returns `crc` unchanged.
uint32_t preferences_crc32c_update(uint32_t crc, const void *bytes, size_t count);

#endif
