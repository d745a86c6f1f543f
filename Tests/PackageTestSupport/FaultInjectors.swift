import Synchronization
import PackageCore

/// Fails every `step` whose path contains `pathFragment`, with `errno`.
public struct FailingStep: IOFaultInjector {
    public var step: IOStep
    public var pathFragment: String
    public var fault: InjectedFault

    public init(_ step: IOStep, pathFragment: String, fault: InjectedFault) {
        self.step = step
        self.pathFragment = pathFragment
        self.fault = fault
    }

    public func fault(before step: IOStep, path: String) -> InjectedFault? {
        step == self.step && (pathFragment.isEmpty || path.contains(pathFragment)) ? fault : nil
    }
}

/// Makes every read or write transfer only part of what was asked, and interrupts
/// (EINTR) every other call: the I/O layer must loop and retry to get everything right.
public final class StutteringIO: IOFaultInjector {
    public init() {}
    private let counter = Atomic<Int>(0)
    public func fault(before step: IOStep, path: String) -> InjectedFault? {
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
public final class CrashAfter: IOFaultInjector {
    public let limit: Int
    private let counter = Atomic<Int>(0)
    private let dead = Atomic<Bool>(false)

    public init(_ limit: Int) { self.limit = limit }

    /// Mutating steps seen so far (including the one that crashed).
    public var mutations: Int { counter.load(ordering: .relaxed) }
    public var crashed: Bool { dead.load(ordering: .relaxed) }

    public func fault(before step: IOStep, path: String) -> InjectedFault? {
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
public final class FailNth: IOFaultInjector {
    public let step: IOStep?
    public let index: Int
    public let error: Errno
    public let persistent: Bool
    private let counter = Atomic<Int>(0)
    private let fired = Atomic<Bool>(false)
    private let firedKind = Atomic<Int>(-1)
    private let firedPathStorage = Mutex<String?>(nil)

    /// `step` nil counts every mutating step.
    public init(_ step: IOStep?, index: Int, error: Errno, persistent: Bool = false) {
        self.step = step
        self.index = index
        self.error = error
        self.persistent = persistent
    }

    public var didFire: Bool { fired.load(ordering: .relaxed) }

    /// The path of the step that failed first.
    public var firedPath: String? { firedPathStorage.withLock { $0 } }

    /// The kind of step that failed first.
    public var firedStep: IOStep? {
        let index = firedKind.load(ordering: .relaxed)
        return index < 0 ? nil : IOStep.allCases[index]
    }

    public func fault(before step: IOStep, path: String) -> InjectedFault? {
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
public final class StepCounter: IOFaultInjector {
    private let counts = Mutex<[IOStep: Int]>([:])
    public init() {}
    public func fault(before step: IOStep, path: String) -> InjectedFault? {
        counts.withLock { $0[step, default: 0] += 1 }
        return nil
    }
    public func count(_ step: IOStep) -> Int { counts.withLock { $0[step, default: 0] } }
}
