/// Lets a save's cancellation reach code that hashes bytes in memory, deep below the save
/// source that asked for it (a `FileWrapper` tree's leaf hashes), without every layer in
/// between taking a flag. The save engine binds it for the time it asks its source for the
/// new tree; hashing checks it before each MiB.
package enum HashingCancellation {
    /// True once the running save was cancelled; nil outside a save.
    @TaskLocal package static var isCancelled: (@Sendable () -> Bool)?

    /// Throws `CancellationError` when the running save was cancelled.
    package static func check() throws {
        if isCancelled?() == true { throw CancellationError() }
    }
}
