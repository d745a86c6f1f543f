import Synchronization

/// One running save, save as or export of the host: its cancellation flag, whether it may
/// have written anything yet, and the caller waiting for it.
///
/// `cancelSaving()` raises the flag (the save engine checks it before each file and after
/// each 1 MiB chunk it writes, and the host before each commit) and cancels the task. The
/// caller hears of the cancellation as soon as it is certain that nothing of this save can
/// reach the disk any more:
///
/// - while the write is still preparing (waiting for the lock, taking the snapshot,
///   building a wrapper, or — for a package saved in place — while the engine hashes and
///   plans before writing its first file), at once: whatever work is left is read-only, it
///   ends by itself at its first check, still under the lock, and the next save waits for it;
/// - once it writes, when it has stopped (the next file or 1 MiB chunk) and cleaned up.
///
/// The two sides meet in a Dekker handshake on sequentially consistent atomics: `cancel()`
/// raises the flag, publishes the request, then looks whether writing started;
/// `markWriting()` publishes that writing starts, then looks at the request. Either the
/// caller sees that writing started (and waits), or the writer sees the request (and its
/// first check, which follows, sees the flag).
final class SaveRun: Sendable {
    /// Raised by `cancel()`; passed to the engine and to writers.
    let cancellation = SaveCancellation()
    private let cancelRequested = Atomic<Bool>(false)
    private let writing = Atomic<Bool>(false)
    private let state = Mutex<State>(State())

    private struct State {
        var task: Task<Void, any Error>?
        var waiter: CheckedContinuation<Void, any Error>?
        var outcome: Result<Void, any Error>?
    }

    /// The task doing the write, for `cancel()` to cancel.
    func attach(_ task: Task<Void, any Error>) {
        state.withLock { $0.task = task }
    }

    /// Called before anything of this write may reach the disk.
    func markWriting() {
        writing.store(true, ordering: .sequentiallyConsistent)
        // Reading the request after publishing makes a raised flag visible to the checks
        // that follow (see the type's comment).
        _ = cancelRequested.load(ordering: .sequentiallyConsistent)
    }

    var hasStartedWriting: Bool { writing.load(ordering: .sequentiallyConsistent) }

    /// Cancels the write; answers the waiting caller at once when nothing was written.
    func cancel() {
        cancellation.cancel()
        cancelRequested.store(true, ordering: .sequentiallyConsistent)
        let task = state.withLock { $0.task }
        task?.cancel()
        if !hasStartedWriting { deliver(.failure(CancellationError())) }
    }

    /// The write ended (as it did, whatever the caller was told).
    func finish(_ result: Result<Void, any Error>) {
        deliver(result)
    }

    /// Waits until the write ends, or until a cancellation is certain to leave the disk as
    /// it was.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready = state.withLock { state -> Result<Void, any Error>? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The first outcome wins: the caller is answered once.
    private func deliver(_ result: Result<Void, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }
}
