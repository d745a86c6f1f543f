import Synchronization

/// The steps of the I/O layer at which a fault can be injected.
package enum IOStep: String, Sendable, CaseIterable {
    case open, create, read, write, sync, stat, readDirectory, readLink
    case rename, exchange, link, symlink, remove, removeDirectory, makeDirectory
    case setPermissions, setTimes, truncate, allocate, copy, lock

    /// Steps that change what is on disk. A crash can only matter between two of these.
    package var isMutation: Bool {
        switch self {
        case .open, .read, .stat, .readDirectory, .readLink, .lock: return false
        default: return true
        }
    }
}

/// What an injector makes a step do instead of its real work.
package enum InjectedFault: Sendable, Equatable {
    /// The call fails with this errno, changing nothing.
    case error(Errno)
    /// A read or write transfers only part of what was asked (at least one byte).
    case partialTransfer
}

/// Decides, before each I/O step, whether it fails (debug builds only: in a release build
/// the seam is compiled out and injectors are never asked).
///
/// The seam of the crash and error sweeps: every system call of the I/O layer that
/// touches the disk asks the injector of the current task first. Implementations are
/// called from any thread and must be thread-safe.
package protocol IOFaultInjector: Sendable {
    func fault(before step: IOStep, path: String) -> InjectedFault?
}

/// The fault injector in effect for the current task and its child tasks.
package enum IOFaultInjection {
    @TaskLocal package static var injector: (any IOFaultInjector)?

    /// Whether any injector was ever installed in this process: until one is, every I/O
    /// step skips the task-local lookup.
    private static let everInstalled = Atomic<Bool>(false)

    /// Runs `body` with `injector` consulted before every I/O step it performs.
    ///
    /// Work handed to other threads outside structured concurrency (Dispatch) must
    /// capture `IOFaultInjection.injector` and re-enter `withInjector` there.
    package static func withInjector<R>(
        _ injector: (any IOFaultInjector)?, _ body: () throws -> R
    ) rethrows -> R {
        if injector != nil { everInstalled.store(true, ordering: .relaxed) }
        return try $injector.withValue(injector, operation: body)
    }

    package static func withInjector<R>(
        _ injector: (any IOFaultInjector)?, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> R
    ) async rethrows -> R {
        if injector != nil { everInstalled.store(true, ordering: .relaxed) }
        return try await $injector.withValue(injector, operation: body)
    }

    /// The fault for this step, if an injector wants one. Compiled only into debug builds
    /// (where the tests run): a release build's system calls pay nothing for the seam.
    @inline(__always)
    static func check(_ step: IOStep, _ path: String) -> InjectedFault? {
        #if DEBUG
        guard everInstalled.load(ordering: .relaxed), let injector else { return nil }
        return injector.fault(before: step, path: path)
        #else
        return nil
        #endif
    }
}
