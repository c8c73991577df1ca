// A mutex that lives in a page mapped by several processes, and that survives its holder's death.
#include "CPreferencesAtomics.h"

#include <errno.h>
#include <pthread.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int preferences_mutex_lock(void *address) {
    int result = pthread_mutex_lock((pthread_mutex_t *)address);
    if (result == EOWNERDEAD) {
        // The dead holder's half-made change is the caller's to deal with; the mutex itself is
        // usable again once marked consistent.
        pthread_mutex_consistent((pthread_mutex_t *)address);
    }
    return result;
}

// A held mutex whose page was replaced (another program shortened the lock file, and the mapping
// guard put a private page of zeros in its place, or the file was mapped again) is no longer the
// robust mutex glibc enqueued: unlocking it does not take it off the thread's list of robust
// mutexes. The next robust lock on the thread would write through that entry, into a page
// unmapped once the store closes: a crash. So after every unlock the head of the list, as the
// kernel's interface gives it once per thread, must not be this mutex.
static __thread struct robust_list_head *robust_head;

int preferences_mutex_unlock(void *address) {
    pthread_mutex_t *mutex = (pthread_mutex_t *)address;
    int result = pthread_mutex_unlock(mutex);
    if (robust_head == NULL) {
        size_t length = 0;
        if (syscall(SYS_get_robust_list, 0, &robust_head, &length) != 0) {
            robust_head = NULL;
            return result;
        }
    }
    uintptr_t entry = (uintptr_t)&mutex->__data.__list.__next;
    if (robust_head != NULL && ((uintptr_t)robust_head->list.next & ~(uintptr_t)1) == entry) {
        // Still at the head, so never dequeued. The thread holds none of this library's other
        // mutexes while it holds this one, and what stood behind the entry went with the page.
        robust_head->list.next = &robust_head->list;
        if ((uintptr_t)robust_head->list_op_pending == entry) {
            robust_head->list_op_pending = NULL;
        }
    }
    return result;
}
#else
// Apple platforms have no robust mutex: a lock held by a process that dies would never be
// released. The lock file's `flock` serves there instead.
bool preferences_mutex_is_supported(void) { return false; }

int preferences_mutex_init(void *address) {
    (void)address;
    return ENOTSUP;
}

int preferences_mutex_lock(void *address) {
    (void)address;
    return ENOTSUP;
}

int preferences_mutex_unlock(void *address) {
    (void)address;
    return ENOTSUP;
}
#endif

