import Glibc

/// Starts a detached POSIX thread running `body`: the transfer threads, which block for as
/// long as the network takes (Dispatch's pool would cap them at the core count), without
/// bringing in Foundation's `Thread` (and with it ICU) for one call.
enum DetachedThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, stackSize)
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed (\(status)): the system is out of threads")
    }
}
