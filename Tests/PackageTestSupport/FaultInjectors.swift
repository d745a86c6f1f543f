import Dispatch
import Synchronization
import PackageCore

/// Fails every `step` whose path contains `pathFragment`, with `errno`.
package struct FailingStep: IOFaultInjector {
    package var step: IOStep
    package var pathFragment: String
    package var fault: InjectedFault

    package init(_ step: IOStep, pathFragment: String, fault: InjectedFault) {
        self.step = step
        self.pathFragment = pathFragment
        self.fault = fault
    }

    package func fault(before step: IOStep, path: String) -> InjectedFault? {
        step == self.step && (pathFragment.isEmpty || path.contains(pathFragment)) ? fault : nil
    }
}

/// Makes every read or write transfer only part of what was asked, and interrupts
/// (EINTR) every other call: the I/O layer must loop and retry to get everything right.
package final class StutteringIO: IOFaultInjector {
    package init() {}
    private let counter = Atomic<Int>(0)
    package func fault(before step: IOStep, path: String) -> InjectedFault? {
        let count = counter.add(1, ordering: .relaxed).newValue
        switch step {
        case .read, .write: return .partialTransfer
        default: return count % 2 == 0 ? .error(.interrupted) : nil
        }
    }
}

/// Simulates a process that dies after `limit` steps that change the disk: from then on
/// every step, reads included, fails with EIO, so nothing after the crash point (cleanup
/// included) reaches the disk. With `limit` = .max it only counts.
package final class CrashAfter: IOFaultInjector {
    package let limit: Int
    private let counter = Atomic<Int>(0)
    private let dead = Atomic<Bool>(false)

    package init(_ limit: Int) { self.limit = limit }

    /// Mutating steps seen so far (including the one that crashed).
    package var mutations: Int { counter.load(ordering: .relaxed) }
    package var crashed: Bool { dead.load(ordering: .relaxed) }

    package func fault(before step: IOStep, path: String) -> InjectedFault? {
        if dead.load(ordering: .relaxed) { return .error(.ioError) }
        guard step.isMutation else { return nil }
        let count = counter.add(1, ordering: .relaxed).newValue
        if count > limit {
            dead.store(true, ordering: .relaxed)
            return .error(.ioError)
        }
        return nil
    }
}

/// Fails the `index`-th step of kind `step` (counting from 1) with `error`, once or for
/// every later step of that kind too.
package final class FailNth: IOFaultInjector {
    package let step: IOStep?
    package let index: Int
    package let error: Errno
    package let persistent: Bool
    private let counter = Atomic<Int>(0)
    private let fired = Atomic<Bool>(false)
    private let firedKind = Atomic<Int>(-1)
    private let firedPathStorage = Mutex<String?>(nil)

    /// `step` nil counts every mutating step.
    package init(_ step: IOStep?, index: Int, error: Errno, persistent: Bool = false) {
        self.step = step
        self.index = index
        self.error = error
        self.persistent = persistent
    }

    package var didFire: Bool { fired.load(ordering: .relaxed) }

    /// The path of the step that failed first.
    package var firedPath: String? { firedPathStorage.withLock { $0 } }

    /// The kind of step that failed first.
    package var firedStep: IOStep? {
        let index = firedKind.load(ordering: .relaxed)
        return index < 0 ? nil : IOStep.allCases[index]
    }

    package func fault(before step: IOStep, path: String) -> InjectedFault? {
        let matches = self.step.map { $0 == step } ?? step.isMutation
        guard matches else { return nil }
        let count = counter.add(1, ordering: .relaxed).newValue
        if count == index || (persistent && count > index) {
            if count == index {
                firedKind.store(IOStep.allCases.firstIndex(of: step)!, ordering: .relaxed)
                firedPathStorage.withLock { $0 = path }
            }
            fired.store(true, ordering: .relaxed)
            return .error(error)
        }
        return nil
    }
}

/// Counts the I/O steps of each kind, failing none.
package final class StepCounter: IOFaultInjector {
    private let counts = Mutex<[IOStep: Int]>([:])
    package init() {}
    package func fault(before step: IOStep, path: String) -> InjectedFault? {
        counts.withLock { $0[step, default: 0] += 1 }
        return nil
    }
    package func count(_ step: IOStep) -> Int { counts.withLock { $0[step, default: 0] } }
}

/// Signals `reached` the first time a step of a kind is about to run (on the thread running
/// it), failing nothing: the hand-off that tells a test "it has got this far".
package final class SignalAtStep: IOFaultInjector {
    private let step: IOStep
    private let reached: DispatchSemaphore
    private let signalled = Atomic<Bool>(false)
    package init(_ step: IOStep, _ reached: DispatchSemaphore) {
        self.step = step
        self.reached = reached
    }
    package func fault(before step: IOStep, path: String) -> InjectedFault? {
        if step == self.step, !signalled.exchange(true, ordering: .acquiringAndReleasing) { reached.signal() }
        return nil
    }
}
