import Dispatch
import Synchronization

/// A one-time signal from one side of a test to the other: "it has got this far", "go on".
///
/// The explicit hand-off that replaces sleeping and polling: whoever waits — a task
/// (`await wait(seconds:)`) or a thread (`wait(seconds:)`) — resumes exactly when the other
/// side calls `give()`, or at once when it already has. The seconds bound a wait only so
/// that a failing test ends instead of hanging; nothing is timed by them.
package final class HandOff: Sendable {
    private struct State {
        var given = false
        var tasks: [Int: CheckedContinuation<Bool, Never>] = [:]
        var nextTask = 0
        var threads: [DispatchSemaphore] = []
    }
    private let state = Mutex(State())

    package init() {}

    /// Whether `give()` was called.
    package var isGiven: Bool { state.withLock { $0.given } }

    /// Gives the signal, resuming every waiter, now and later.
    package func give() {
        let (tasks, threads) = state.withLock { state in
            state.given = true
            defer {
                state.tasks = [:]
                state.threads = []
            }
            return (state.tasks.values, state.threads)
        }
        for task in tasks { task.resume(returning: true) }
        for thread in threads { thread.signal() }
    }

    /// Suspends the task (no thread is held meanwhile) until the signal is given or `seconds`
    /// have passed; whether it was given.
    @discardableResult
    package func wait(seconds: Int) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id: Int? = state.withLock { state in
                guard !state.given else { return nil }
                state.nextTask += 1
                state.tasks[state.nextTask] = continuation
                return state.nextTask
            }
            guard let id else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [self] in
                state.withLock { $0.tasks.removeValue(forKey: id) }?.resume(returning: false)
            }
        }
    }

    /// Blocks this thread until the signal is given or `seconds` have passed (a bound so that
    /// a failing test never leaves a thread hanging); whether it was given.
    @discardableResult
    package func wait(seconds: Int) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let given = state.withLock { state in
            if !state.given { state.threads.append(semaphore) }
            return state.given
        }
        return given || semaphore.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}
