import PackageCore

extension DetachedThread {
    /// Starts a thread the work cannot go on without (a transfer thread, the thread an async
    /// call runs on): the process stops when the system is out of threads. 1 MiB of stack
    /// by default, which is what a transfer thread needs.
    static func startRequired(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        do { try start(stackSize: stackSize, body) } catch {
            preconditionFailure("pthread_create failed (\(error.rawValue)): the system is out of threads")
        }
    }
}
