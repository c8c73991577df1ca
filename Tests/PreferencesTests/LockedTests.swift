import Dispatch
import Foundation
import Testing

@testable import Preferences

/// The locks behind the store: what they guard is never touched by two threads at once.
struct LockedTests {
    /// Four threads add one at a time, often finding the lock held: none of their sums is lost,
    /// and no thread is ever inside while another is.
    @Test func threadsContendingForTheLockLoseNoUpdate() {
        let counter = Locked((total: 0, inside: 0, overlaps: 0))
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                for _ in 0..<50_000 {
                    counter.withLock { state in
                        let total = state.total
                        state.inside += 1
                        if state.inside > 1 {
                            state.overlaps += 1
                        }
                        state.inside -= 1
                        state.total = total + 1
                    }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let state = counter.withLock { $0 }
        #expect(state.total == 200_000)
        #expect(state.overlaps == 0)
    }

    /// A holder that sleeps keeps the others waiting, and they all go on once it lets go.
    @Test func aThreadWaitingOnAHeldLockGoesOnWhenItIsReleased() {
        let log = Locked([String]())
        let group = DispatchGroup()
        log.withLock { entries in
            DispatchQueue.global().async(group: group) {
                log.withLock { $0.append("waiter") }
            }
            usleep(50_000)
            entries.append("holder")
        }
        #expect(group.wait(timeout: .now() + 5) == .success)
        #expect(log.withLock { $0 } == ["holder", "waiter"])
    }

    /// A transaction writes inside the write lock: taking it again on the same thread goes on, and
    /// what runs after release runs once, after the outermost hold, with the lock free.
    @Test func theWriteLockIsRecursiveAndRunsItsClosureOnceAfterTheOutermostRelease() {
        let lock = WriteLock()
        let events = Locked([String]())
        lock.withLock {
            #expect(lock.isHeldOnce)
            lock.withLock {
                #expect(!lock.isHeldOnce)
                events.withLock { $0.append("inner") }
            } afterRelease: {
                events.withLock { $0.append("inner released") }
            }
            events.withLock { $0.append("outer") }
        } afterRelease: {
            // Free now: another thread takes it without waiting for this closure.
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                lock.withLock {
                    events.withLock { $0.append("other thread") }
                } afterRelease: {
                }
            }
            #expect(group.wait(timeout: .now() + 5) == .success)
            events.withLock { $0.append("outer released") }
        }
        #expect(events.withLock { $0 } == ["inner", "outer", "other thread", "outer released"])
    }

    /// A body that throws releases the lock and still runs what follows the release.
    @Test func aThrowingBodyReleasesTheWriteLock() {
        struct Failure: Error {}
        let lock = WriteLock()
        var released = false
        #expect(throws: Failure.self) {
            try lock.withLock { () throws(Failure) in
                throw Failure()
            } afterRelease: {
                released = true
            }
        }
        #expect(released)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            lock.withLock {
            } afterRelease: {
            }
        }
        #expect(group.wait(timeout: .now() + 5) == .success)
    }
}
