import Dispatch
import PackageCore
import Synchronization

/// A fixed set of threads, each with its own S3 connection (one libcurl handle, so one
/// kept-alive TCP connection), running transfer jobs from a queue: the parallelism and the
/// throttle of a push or a pull.
///
/// Threads rather than Dispatch's pool: transfers block for as long as the network takes,
/// and `concurrentPerform` would cap them at the core count. The first job that fails
/// cancels the others (their transfers abort through libcurl's progress callback) and is
/// rethrown by `finish()`.
final class TransferWorkers: Sendable {
    typealias Job = @Sendable (S3Connection) throws -> Void

    private struct State {
        /// Queued jobs from `head` on; a job taken is cleared at once (what it holds goes
        /// with it), its slot compacted away later.
        var jobs: [Job?] = []
        var head = 0
        var closed = false
        var failure: (any Error)?
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    /// Room in the queue, when it is bounded: a producer waits for a free place.
    private let room: DispatchSemaphore?
    private let done = DispatchGroup()
    let cancellation: TransferCancellation
    private let count: Int

    /// Starts `count` threads on `configuration`. `cancellation` aborts every transfer when
    /// cancelled (by the caller, or by a failed job). `queueLimit`: how many jobs may wait
    /// at once (`submit` blocks for a place), so a producer faster than the network holds
    /// no more than that many jobs' state; nil, no limit.
    init(
        count: Int, configuration: S3Configuration, counters: TransferCounters, cancellation: TransferCancellation,
        queueLimit: Int? = nil
    ) {
        self.count = max(1, count)
        self.cancellation = cancellation
        room = queueLimit.map { DispatchSemaphore(value: max(1, $0)) }
        for _ in 0..<self.count {
            done.enter()
            DetachedThread.startRequired { [self] in
                let connection = S3Connection(configuration: configuration, counters: counters, cancellation: cancellation)
                self.run(connection)
                self.done.leave()
            }
        }
    }

    /// Queues a job, once the queue has room. After a failure, jobs are dropped (`finish()`
    /// reports the failure). Never called from a job: with a bounded queue it could wait
    /// for itself.
    func submit(_ job: @escaping Job) {
        // The threads take every job, even after a failure (they drop it): room comes back.
        room?.wait()
        state.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// Whether a job failed (or the transfers were cancelled): producers stop early.
    var hasFailed: Bool { state.withLock { $0.failure != nil } || cancellation.isCancelled }

    /// Waits for every queued job, stops the threads, and rethrows the first failure.
    func finish() throws {
        state.withLock { $0.closed = true }
        for _ in 0..<count { available.signal() }
        done.wait()
        if let failure = state.withLock({ $0.failure }) { throw failure }
        if cancellation.isCancelled { throw RemoteError(.cancelled, "cancelled") }
    }

    /// Records a failure from outside a job (a producer's), cancelling the transfers.
    func fail(_ error: any Error) {
        let first = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            state.failure = error
            return true
        }
        if first { cancellation.cancel() }
    }

    private func run(_ connection: S3Connection) {
        while true {
            available.wait()
            let next: Job?? = state.withLock { state in
                if state.head < state.jobs.count {
                    let job = state.jobs[state.head]
                    state.jobs[state.head] = nil
                    state.head += 1
                    if state.head > 64 && state.head * 2 > state.jobs.count {
                        state.jobs.removeFirst(state.head)
                        state.head = 0
                    }
                    return .some(job)
                }
                return state.closed ? .none : .some(nil)
            }
            guard let job = next else {
                available.signal()  // wake the next thread to see the closed queue
                return
            }
            guard let job else { continue }
            room?.signal()
            if hasFailed { continue }
            do {
                try job(connection)
            } catch {
                // A transfer aborted because another failed reports "cancelled": keep the cause.
                if (error as? RemoteError)?.kind == .cancelled && state.withLock({ $0.failure != nil }) { continue }
                fail(error)
            }
        }
    }
}
