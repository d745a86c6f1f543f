import Glibc

/// Starts a detached POSIX thread: for work that blocks or spins for as long as it takes
/// (a transfer waiting on the network, the chunking helper), which Dispatch's pool would
/// cap at the core count, without bringing in Foundation's `Thread` (and with it ICU).
package enum DetachedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts a detached thread running `body`, with a stack of `stackSize` bytes (the
    /// system's default, from `ulimit -s`, when nil).
    ///
    /// - Throws: the error `pthread_create` returned (EAGAIN: the system is out of threads);
    ///   `body` is then released unrun.
    package static func start(stackSize: Int?, _ body: @escaping @Sendable () -> Void) throws(Errno) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { context in
                Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw Errno(rawValue: status)
        }
    }
}
