/// How one write of the host reaches its destination: everything the background part of a
/// save, save as or export needs besides the writer and its snapshots.
struct WritePlan: Sendable {
    /// Where the writer writes.
    enum Route: Sendable, Equatable {
        /// Straight to the destination: a `FileWrapperDocumentWriter`, whose write goes
        /// through the save engine (or `AtomicFile`) and is atomic by itself.
        case direct
        /// Into a `StagedDestination` beside it, committed once every write is done.
        case staged(StagedDestination.Shape)

        /// Progress units: one per write, one more for the engine's save of a staged package.
        var unitsAfterWrites: Int { self == .staged(.package) ? 1 : 0 }
    }

    /// What is done with a staged destination once written.
    enum Finish: Sendable, Equatable {
        /// Swapped in (a file) or saved into the destination by the engine (a package).
        case commit
        /// Packed as the ZIP archive at the destination (an export as `.zip`).
        case archive
    }

    var destination: WriteDestination
    var route: Route
    var finish: Finish
    var operation: DocumentError.Operation
    var durability: Durability
    var cancellation: SaveCancellation
    /// The host's running write, told before anything of it may reach the disk.
    var run: SaveRun
    /// The operation's root progress: each write takes one unit of it.
    var progress: ProgressManager
    /// A save's handoff, which learns the package's tree as saved (`FileWrapperHandoff.base`);
    /// nil for an export, which leaves the document's file as it is.
    var handoff: FileWrapperHandoff?

    /// Throws `CancellationError` when the task or the host's save was cancelled.
    static func checkCancellation(_ cancellation: SaveCancellation?) throws {
        if Task.isCancelled || cancellation?.isCancelled == true { throw CancellationError() }
    }
}
