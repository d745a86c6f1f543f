import Dispatch
import Synchronization

/// A bounded pool of workers draining a queue that the work itself may extend.
///
/// Used where the amount of work is only discovered while doing it (a directory walk
/// finds subdirectories). Each worker has its own context (a 1 MiB buffer, say), so
/// nothing is shared on the hot path but the queue's lock. The first error stops all
/// workers and is rethrown.
package struct WorkQueue<Job: Sendable>: Sendable {
    private struct State {
        var jobs: [Job] = []
        var active = 0
        var finished = false
        var failure: (any Error)?
    }

    private final class Shared: Sendable {
        let state = Mutex(State())
        let wakeups = DispatchSemaphore(value: 0)
        let workerCount: Int
        init(workerCount: Int) { self.workerCount = workerCount }
    }

    private let shared: Shared

    private init(shared: Shared) { self.shared = shared }

    /// Whether a worker waits with nothing queued for it: a job may then use another thread
    /// of its own (the chunking helper) without taking a core from the queue's work.
    package var hasIdleWorker: Bool {
        shared.state.withLock { $0.active < shared.workerCount && $0.jobs.isEmpty }
    }

    /// Adds a job; may be called from inside a job.
    package func push(_ job: Job) {
        shared.state.withLock { $0.jobs.append(job) }
        shared.wakeups.signal()
    }

    /// Runs `process` on every job, starting from `initial`, with `workers` threads
    /// (the calling thread is one of them). Returns when the queue is empty and no job runs.
    package static func run<Context>(
        initial: [Job], workers: Int = ProcessInfoCores.active,
        makeContext: @Sendable () -> Context,
        process: @Sendable (Job, inout Context, WorkQueue<Job>) throws -> Void
    ) throws {
        let workerCount = max(1, workers)
        let shared = Shared(workerCount: workerCount)
        shared.state.withLock { $0.jobs = initial.reversed() }
        let queue = WorkQueue(shared: shared)
        let injector = IOFaultInjection.injector
        @Sendable func body(_: Int) {
            IOFaultInjection.withInjector(injector) {
                var context = makeContext()
                queue.workerLoop(&context, process: process)
            }
        }
        if workerCount == 1 {
            body(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: workerCount) { body($0) }
        }
        if let failure = shared.state.withLock({ $0.failure }) { throw failure }
    }

    private enum Next { case job(Job), wait, exit }

    private func workerLoop<Context>(
        _ context: inout Context, process: (Job, inout Context, WorkQueue<Job>) throws -> Void
    ) {
        while true {
            let next: Next = shared.state.withLock { state in
                if state.finished { return .exit }
                if let job = state.jobs.popLast() {
                    state.active += 1
                    return .job(job)
                }
                if state.active == 0 {
                    state.finished = true
                    return .exit
                }
                return .wait
            }
            switch next {
            case .exit:
                wakeEveryone()
                return
            case .wait:
                shared.wakeups.wait()
            case .job(let job):
                var failed = false
                do { try process(job, &context, self) } catch {
                    failed = true
                    shared.state.withLock { state in
                        if state.failure == nil { state.failure = error }
                        state.finished = true
                    }
                }
                let done = shared.state.withLock { state in
                    state.active -= 1
                    if state.active == 0 && state.jobs.isEmpty { state.finished = true }
                    return state.finished
                }
                if done || failed {
                    wakeEveryone()
                    return
                }
            }
        }
    }

    private func wakeEveryone() {
        for _ in 0..<shared.workerCount { shared.wakeups.signal() }
    }
}
