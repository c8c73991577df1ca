// A mutex that lives in a page mapped by several processes, and that survives its holder's death.
#include "CPreferencesAtomics.h"

#include <errno.h>
#include <pthread.h>

#if defined(__linux__) && defined(__GLIBC__) && __PTHREAD_MUTEX_HAVE_PREV
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
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

bool preferences_mutex_is_set_up(const void *address) {
    // The kind glibc records for a mutex set up as above, read off one such mutex.
    static _Atomic int set_up_kind = -1;
    int kind = atomic_load(&set_up_kind);
    if (kind == -1) {
        pthread_mutex_t reference;
        if (preferences_mutex_init(&reference) != 0) {
            return false;
        }
        kind = reference.__data.__kind;
        pthread_mutex_destroy(&reference);
        atomic_store(&set_up_kind, kind);
    }
    return ((const pthread_mutex_t *)address)->__data.__kind == kind;
}

// glibc keeps the robust mutexes a thread holds on a list the kernel reads when the thread dies
// (to mark them EOWNERDEAD), linked through the mutexes themselves: the thread's head points at the
// `__next` field of the mutex locked last, each `__next` at the next one's (the lowest bit marks a
// priority-inheriting mutex), the last back at the head, and each `__prev` back one step.
//
// The list is the witness of what a lock or unlock did. Another program may shorten the lock file
// while a thread holds the mutex, and the page under it is then replaced: by the mapping guard's
// private page of zeros, or by the file's new page once it is mapped again. Locking a page of zeros
// locks a plain mutex, which glibc does not enlist, and keeps nobody else out. Unlocking one does
// not unlist the robust mutex the thread locked: the thread's next robust lock would write through
// the stale entry, into the page after the store unmapped it; and should that page come back, the
// mutex in it stays held by a live thread, and every writer of the store waits.
static __thread uintptr_t thread_list;
// What `thread_list` holds once the kernel refused the call (a sandbox that filters it): a refusal
// costs one system call per thread, not two per write.
static const uintptr_t list_refused = 1;

static struct robust_list_head *list_of_this_thread(void) {
    uintptr_t list = thread_list;
    if (list == 0) {
        size_t length = 0;
        struct robust_list_head *head = NULL;
        bool found = syscall(SYS_get_robust_list, 0, &head, &length) == 0 && head != NULL;
        list = found ? (uintptr_t)head : list_refused;
        thread_list = list;
    }
    return list == list_refused ? NULL : (struct robust_list_head *)list;
}

static uintptr_t entry_of(void *address) {
    return (uintptr_t)&((pthread_mutex_t *)address)->__data.__list.__next;
}

// Whether the entry of the mutex at `address` is the first on this thread's list: true right after
// locking it, false right after unlocking it. Without the list (the system call refused), it answers
// what a lock or unlock that worked would leave.
static bool is_first_listed(void *address, bool expected) {
    struct robust_list_head *head = list_of_this_thread();
    if (head == NULL) {
        return expected;
    }
    return ((uintptr_t)head->list.next & ~(uintptr_t)1) == entry_of(address);
}

// Waits for the mutex at most this long at a time. A waiter sleeps in the kernel on the mutex's
// word with a bit set there that tells the holder to wake it; should another program shorten the
// file meanwhile, the bit goes with the page, no unlock of the new page wakes the waiter, and it
// must look again for itself.
static const long wait_nanoseconds = 100 * 1000 * 1000;

static int lock_waiting_a_while(pthread_mutex_t *mutex) {
    int result = pthread_mutex_trylock(mutex);
    if (result != EBUSY) {
        return result;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += wait_nanoseconds;
    if (deadline.tv_nsec >= 1000 * 1000 * 1000) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000 * 1000 * 1000;
    }
    return pthread_mutex_timedlock(mutex, &deadline);
}

int preferences_mutex_lock(void *address, uintptr_t *successor) {
    pthread_mutex_t *mutex = (pthread_mutex_t *)address;
    int result = lock_waiting_a_while(mutex);
    if (result != 0 && result != EOWNERDEAD) {
        return result;
    }
    if (!is_first_listed(address, true)) {
        // Not the robust mutex it was set up as: a page of zeros.
        pthread_mutex_unlock(mutex);
        return PREFERENCES_MUTEX_LOST;
    }
    if (result == EOWNERDEAD) {
        // The dead holder's half-made change is the caller's to deal with; the mutex itself is
        // usable again once marked consistent.
        pthread_mutex_consistent(mutex);
    }
    *successor = (uintptr_t)mutex->__data.__list.__next;
    return result;
}

int preferences_mutex_unlock(void *address) {
    int result = pthread_mutex_unlock((pthread_mutex_t *)address);
    return is_first_listed(address, false) ? PREFERENCES_MUTEX_LOST : result;
}

// Takes `entry` off this thread's list, wherever it is, linking `successor` in its place: what the
// entry's own `__next` held when it was locked, for the page no longer holds that mutex.
static void unlist(struct robust_list_head *head, uintptr_t entry, uintptr_t successor) {
    uintptr_t end = (uintptr_t)&head->list;
    uintptr_t *link = (uintptr_t *)&head->list.next;
    // The kernel follows no more than this many entries either.
    for (int step = 0; step < 2048; step++) {
        uintptr_t current = *link & ~(uintptr_t)1;
        if (current == end) {
            return;
        }
        if (current == entry) {
            *link = successor;
            uintptr_t next = successor & ~(uintptr_t)1;
            if (next != end) {
                // The successor's `__prev`, the word before its `__next`.
                ((uintptr_t *)next)[-1] = (uintptr_t)link;
            }
            if ((uintptr_t)head->list_op_pending == entry) {
                head->list_op_pending = NULL;
            }
            return;
        }
        link = (uintptr_t *)current;
    }
}

void preferences_mutex_abandon(void *address, uintptr_t successor) {
    pthread_mutex_t *mutex = (pthread_mutex_t *)address;
    pid_t thread = (pid_t)syscall(SYS_gettid);
    if ((mutex->__data.__lock & FUTEX_TID_MASK) == thread) {
        // The page is the one it locked, back in place: a real unlock, which unlists it too.
        pthread_mutex_unlock(mutex);
    }
    struct robust_list_head *head = list_of_this_thread();
    if (head != NULL) {
        unlist(head, entry_of(address), successor);
    }
}
#else
// Apple platforms have no robust mutex: a lock held by a process that dies would never be
// released. The lock file's `flock` serves there instead, as it does on a C library whose robust
// list this file does not know.
bool preferences_mutex_is_supported(void) { return false; }

int preferences_mutex_init(void *address) {
    (void)address;
    return ENOTSUP;
}

bool preferences_mutex_is_set_up(const void *address) {
    (void)address;
    return false;
}

int preferences_mutex_lock(void *address, uintptr_t *successor) {
    (void)address;
    (void)successor;
    return ENOTSUP;
}

int preferences_mutex_unlock(void *address) {
    (void)address;
    return ENOTSUP;
}

void preferences_mutex_abandon(void *address, uintptr_t successor) {
    (void)address;
    (void)successor;
}
#endif
