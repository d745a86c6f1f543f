/// Lets a save's cancellation reach code that hashes bytes in memory, deep below the save
/// source that asked for it (a `FileWrapper` tree's leaf hashes), without every layer in
/// between taking a flag. The save engine binds it for the time it asks its source for the
/// new tree; hashing checks it before each MiB.
package enum HashingCancellation {
    /// The running save's question, in a class: Swift 6.3.1's optimizer miscompiles a
    /// synchronous `withValue` that binds an optional closure to a task-local (release
    /// builds crashed in `swift_task_localValuePush` on every save); an optional class
    /// reference binds fine.
    package final class Probe: Sendable {
        let isCancelled: @Sendable () -> Bool
        init(_ isCancelled: @escaping @Sendable () -> Bool) { self.isCancelled = isCancelled }
    }

    /// The running save's probe; nil outside a save.
    @TaskLocal package static var probe: Probe?

    /// Runs `body` with `isCancelled` as the running save's cancellation (nil: none).
    package static func binding<T>(_ isCancelled: (@Sendable () -> Bool)?, _ body: () throws -> T) rethrows -> T {
        try $probe.withValue(isCancelled.map(Probe.init)) { try body() }
    }

    /// Throws `CancellationError` when the running save was cancelled.
    package static func check() throws {
        if probe?.isCancelled() == true { throw CancellationError() }
    }
}
