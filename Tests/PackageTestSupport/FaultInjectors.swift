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
