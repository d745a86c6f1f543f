import Dispatch

/// Where the host runs readers, writers and the save engine: Dispatch threads, not Swift's
/// cooperative pool.
///
/// Reading and writing documents blocks: the engine writes synchronously, a custom writer
/// may stream a gigabyte, a lock may be waited for. The cooperative pool has one thread per
/// core; a blocking write on each of them (two saves on a 2-core machine) would stall every
/// other task of the app — down to waking from `Task.sleep` — until one finished. The host
/// therefore runs that work with this executor as its task executor preference
/// (`withTaskExecutorPreference`): the same task (its cancellation and task-local values,
/// such as the locks it holds, go along), on threads Dispatch adds as others block.
final class DocumentIOExecutor: TaskExecutor {
    static let shared = DocumentIOExecutor()

    private let queue = DispatchQueue(label: "pkgtool.document-io", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
