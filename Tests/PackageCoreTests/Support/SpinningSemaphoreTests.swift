import Dispatch
import Testing
@testable import PackageCore

@Suite("SpinningSemaphore")
struct SpinningSemaphoreTests {
    /// Two threads hand a bounded number of items back and forth through a ring, as the
    /// chunking helper and its reader do: once spinning, once with no spin at all, so that
    /// a wait that cannot take at once sleeps and the next signal must wake it. The ring is
    /// plain memory: only the semaphores order its writes before its reads. A hundred
    /// items wrap the ring 33 times; more only spun (a thousand took three and a half
    /// minutes of a loaded 2-core CI run, where every hand-off may wait for a time slice).
    @Test("a producer and a consumer hand over every item, whether the waits spin or sleep",
          arguments: [Duration.microseconds(200), .zero])
    func handOver(spin: Duration) {
        let slots = 3
        let items = spin == .zero ? 60 : 100
        let filled = SpinningSemaphore(value: 0, spinning: spin)
        let free = SpinningSemaphore(value: slots, spinning: spin)
        let ring = Ring(slots: slots)
        let finished = DispatchSemaphore(value: 0)
        Thread.detached {
            for index in 0..<items {
                filled.wait()
                ring.sum += ring.values[index % slots]
                ring.consumed += 1
                free.signal()
            }
            finished.signal()
        }
        for index in 0..<items {
            free.wait()
            ring.values[index % slots] = index
            filled.signal()
        }
        finished.wait()
        #expect(ring.consumed == items)
        #expect(ring.sum == items * (items - 1) / 2)
    }

    @Test("a wait with nothing to take sleeps until a signal from another thread")
    func sleepsUntilSignalled() {
        let semaphore = SpinningSemaphore(value: 0, spinning: .microseconds(50))
        let done = DispatchSemaphore(value: 0)
        Thread.detached {
            semaphore.wait()
            done.signal()
        }
        // Well past the spin: the waiter is asleep in the underlying semaphore by now.
        #expect(done.wait(timeout: .now() + .milliseconds(20)) == .timedOut)
        semaphore.signal()
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
    }
}

/// What the two threads of `handOver` share; the semaphores order every access.
private final class Ring: @unchecked Sendable {
    /// Fixed memory: one thread writes an entry while the other reads another.
    let values: UnsafeMutablePointer<Int>
    var sum = 0
    var consumed = 0
    init(slots: Int) {
        values = .allocate(capacity: slots)
        values.initialize(repeating: 0, count: slots)
    }
    deinit { values.deallocate() }
}

/// A detached thread for the tests above (Foundation is not imported here).
private enum Thread {
    static func detached(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async(execute: body)
    }
}
