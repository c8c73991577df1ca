// A mutex that lives in a page mapped by several processes, and that survives its holder's death.
//
// Only the documented POSIX API: `pthread_mutexattr_setpshared`, `pthread_mutexattr_setrobust`,
// `EOWNERDEAD` and `pthread_mutex_consistent`, as LMDB uses them for its `lock.mdb`.
#include "CPreferencesAtomics.h"

#include <errno.h>
#include <pthread.h>

#if defined(__linux__) && defined(__GLIBC__)
_Static_assert(sizeof(pthread_mutex_t) <= PREFERENCES_MUTEX_SIZE, "the mutex must fit its slot in the lock page");

bool preferences_mutex_is_supported(void) { return true; }

int preferences_mutex_init(void *address) {
    pthread_mutexattr_t attributes;
    int result = pthread_mutexattr_init(&attributes);
    if (result != 0) {
        return result;
    }
    // Shared: the futex behind it is keyed by the file and offset, so it works across processes.
    // Robust: when a holder dies, the next locker is told (EOWNERDEAD) instead of waiting forever.
    result = pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
    if (result == 0) {
        result = pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
    }
    if (result == 0) {
        result = pthread_mutex_init((pthread_mutex_t *)address, &attributes);
    }
    pthread_mutexattr_destroy(&attributes);
    return result;
}

// What a lock returns, once a mutex whose last holder died (EOWNERDEAD) is made usable again: the
// dead holder's half-made change is the caller's to deal with, the mutex itself is not.
static int consistent_after(pthread_mutex_t *mutex, int result) {
    if (result != EOWNERDEAD) {
        return result;
    }
    int consistent = pthread_mutex_consistent(mutex);
    if (consistent != 0) {
        pthread_mutex_unlock(mutex);
        return consistent;
    }
    return result;
}

int preferences_mutex_lock(void *address) {
    return consistent_after((pthread_mutex_t *)address, pthread_mutex_lock((pthread_mutex_t *)address));
}

int preferences_mutex_trylock(void *address) {
    return consistent_after((pthread_mutex_t *)address, pthread_mutex_trylock((pthread_mutex_t *)address));
}

int preferences_mutex_unlock(void *address) { return pthread_mutex_unlock((pthread_mutex_t *)address); }
#else
// Where the C library has no robust, process-shared mutex (Apple platforms have neither
// `pthread_mutexattr_setrobust` nor `EOWNERDEAD`), a lock held by a process that dies would never
// be released: the lock file's `flock` serves there instead.
bool preferences_mutex_is_supported(void) { return false; }

int preferences_mutex_init(void *address) {
    (void)address;
    return ENOTSUP;
}

int preferences_mutex_lock(void *address) {
    (void)address;
    return ENOTSUP;
}

int preferences_mutex_trylock(void *address) {
    (void)address;
    return ENOTSUP;
}

int preferences_mutex_unlock(void *address) {
    (void)address;
    return ENOTSUP;
}
#endif
